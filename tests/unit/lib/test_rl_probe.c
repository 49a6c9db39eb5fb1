/* Unit tests for rl_probe's Observer helpers that need no server: the
 * all-ended condition of rl_observe_until holds only when every record has
 * ended and, when asked, enough records arrived. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "relaylab.pb-c.h"
#include "rl_probe.h"

/* A reply of |n| records (at most 4), the first |ended| of them ended. */
typedef struct reply {
    Relaylab__CallRecord recs[4];
    Relaylab__CallRecord *ptrs[4];
    Relaylab__ObserveReply r;
} reply;

static void make_reply(reply *x, size_t n, size_t ended)
{
    relaylab__observe_reply__init(&x->r);
    for (size_t i = 0; i < n; i++) {
        relaylab__call_record__init(&x->recs[i]);
        x->recs[i].ended = i < ended;
        x->ptrs[i] = &x->recs[i];
    }
    x->r.n_calls = n;
    x->r.calls = x->ptrs;
}

static void all_ended_needs_every_record_ended(void **state)
{
    (void)state;
    reply x;
    make_reply(&x, 3, 3);
    assert_true(rl_observe_all_ended(&x.r, NULL));
    make_reply(&x, 3, 2);
    assert_false(rl_observe_all_ended(&x.r, NULL));
    make_reply(&x, 0, 0);
    assert_true(rl_observe_all_ended(&x.r, NULL)); /* nothing open */
}

static void all_ended_waits_for_the_calls_asked_for(void **state)
{
    (void)state;
    reply x;
    size_t want = 3;
    make_reply(&x, 2, 2);
    assert_false(rl_observe_all_ended(&x.r, &want)); /* one still to arrive */
    make_reply(&x, 3, 3);
    assert_true(rl_observe_all_ended(&x.r, &want));
    make_reply(&x, 4, 3);
    assert_false(rl_observe_all_ended(&x.r, &want));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(all_ended_needs_every_record_ended),
        cmocka_unit_test(all_ended_waits_for_the_calls_asked_for),
    };
    return cmocka_run_group_tests_name("rl_probe", tests, NULL, NULL);
}
