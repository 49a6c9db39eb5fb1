/* Unit tests for the balance world's arithmetic (lib/worlds/rl_balance_world.c),
 * on made-up results: a backend's share over windows, the window of an
 * instant, when a joining backend took its share (from the first window
 * wholly after the join, never before), and reconnect bunches (the most in
 * any span, and spans with every client counted once each). Invalid run
 * options are refused before anything starts. The live run itself is
 * exercised by the balance rows of tests/verdicts.json and
 * tests/integration/test_lab_balance.py. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "worlds/rl_balance_world.h"
#include "rl_deadline.h"
#include "rl_err.h"

#include <string.h>

static rl_bw_result r;

#define START (5 * RL_NS_PER_SEC)
#define MS(x) ((int64_t)(x)*RL_NS_PER_MS)

/* 12 windows of 500 ms; backends 0 and 1 get 75 calls a window each; the
 * joining backend 2 gets |b2[w]|. */
static void make(const int *b2, int64_t add_ms)
{
    memset(&r, 0, sizeof r);
    r.start_ns = START;
    r.add_ns = START + MS(add_ms);
    r.nbackends = 3;
    r.nwindows = 12;
    r.window_ms = 500;
    for (size_t w = 0; w < 12; w++) {
        r.calls[w][0] = r.calls[w][1] = 75;
        r.calls[w][2] = b2[w];
    }
}

static void shares_and_windows(void **state)
{
    (void)state;
    int b2[12] = {0, 0, 0, 0, 150, 150, 0, 0, 0, 0, 0, 0};
    make(b2, 1000);
    assert_true(rl_bw_share(&r, 2, 0, 4) == 0.0);
    assert_true(rl_bw_share(&r, 2, 4, 6) == 0.5);
    assert_true(rl_bw_share(&r, 0, 0, 1) == 0.5);
    assert_true(rl_bw_share(&r, 2, 12, 20) == 0.0); /* no window: no share */
    assert_int_equal(rl_bw_window_at(&r, START - 1), 0);
    assert_int_equal(rl_bw_window_at(&r, START + MS(499)), 0);
    assert_int_equal(rl_bw_window_at(&r, START + MS(500)), 1);
    assert_int_equal(rl_bw_window_at(&r, START + MS(60000)), 11); /* clamped */
}

static void fill_counts_from_the_join(void **state)
{
    (void)state;
    double after;
    /* A third from window 4 (2.0 s) on: the span [4, 6) ends at 3.0 s,
     * 2000 ms after the join at 1.0 s. */
    int filled[12] = {0, 0, 0, 0, 75, 75, 75, 75, 75, 75, 75, 75};
    make(filled, 1000);
    assert_int_equal(rl_bw_fill_ms(&r, 2, 2, 0.25, &after), 2000);
    assert_true(after > 0.33 && after < 0.34);
    /* One connection in six (17 %) never counts as its share. */
    int one[12] = {0, 0, 0, 0, 30, 30, 30, 30, 30, 30, 30, 30};
    make(one, 1000);
    assert_int_equal(rl_bw_fill_ms(&r, 2, 2, 0.25, &after), -1);
    assert_true(after == 0.0);
    /* Calls before the join are not its share (a span must start at or
     * after it): the join at 1.2 s, so window 2 (1.0-1.5 s) is not one. */
    int early[12] = {75, 75, 75, 0, 0, 0, 0, 0, 0, 75, 75, 75};
    make(early, 1200);
    assert_int_equal(rl_bw_fill_ms(&r, 2, 2, 0.25, &after), 5500 - 1200); /* [9, 11) */
}

static void bunches_count_each_storm_once(void **state)
{
    (void)state;
    memset(&r, 0, sizeof r);
    r.start_ns = START;
    /* Six first connections together (skipped), then two storms of six
     * within 30 ms, 2 s apart, and a spread round between them. */
    int64_t t[] = {0,    1,    2,    3,    4,    5,    2000, 2005, 2010, 2015, 2020, 2030, 3000,
                   3100, 3200, 3300, 3400, 3500, 4000, 4001, 4002, 4003, 4004, 4005, 4006};
    r.nopen = sizeof t / sizeof *t;
    for (size_t i = 0; i < r.nopen; i++)
        r.open_ns[i] = START + MS(t[i]);
    int most;
    int64_t at;
    assert_int_equal(rl_bw_bunches(&r, 6, MS(50), 6, &most, &at), 2);
    assert_int_equal(most, 7);
    assert_int_equal(at, START + MS(4000));
    /* The spread round alone is no storm. */
    assert_int_equal(rl_bw_bunches(&r, 12, MS(50), 6, &most, &at), 1);
    r.nopen = 18;
    assert_int_equal(rl_bw_bunches(&r, 12, MS(50), 6, &most, &at), 0);
    assert_int_equal(most, 1);
}

static void bad_options_are_refused_before_anything_starts(void **state)
{
    (void)state;
    int ports[3] = {1, 2, 3}, rate[2] = {50, 0};
    grpc_channel *obs[3] = {NULL, NULL, NULL};
    rl_bw_options o = {.ports = ports,
                       .observers = obs,
                       .nbackends = 3,
                       .initial = 2,
                       .run_ms = 6000,
                       .window_ms = 500,
                       .nclients = 2,
                       .rate = rate,
                       .deadline_ms = 1000,
                       .tag = "t"};
    char err[128];
    assert_int_equal(rl_bw_run(&o, &r, err, sizeof err), RL_EINVAL); /* a rate of 0 */
    assert_non_null(strstr(err, "rate"));
    rate[1] = 50;
    o.initial = 4;
    assert_int_equal(rl_bw_run(&o, &r, err, sizeof err), RL_EINVAL);
    o.initial = 2;
    o.run_ms = INT64_C(500) * (RL_BW_MAX_WINDOWS + 1);
    assert_int_equal(rl_bw_run(&o, &r, err, sizeof err), RL_EINVAL);
    o.run_ms = 6000;
    o.long_ms = 700;
    o.long_deadline_ms = 600; /* a long call that cannot finish */
    assert_int_equal(rl_bw_run(&o, &r, err, sizeof err), RL_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shares_and_windows),
        cmocka_unit_test(fill_counts_from_the_join),
        cmocka_unit_test(bunches_count_each_storm_once),
        cmocka_unit_test(bad_options_are_refused_before_anything_starts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
