/* test_mistake: the downstream deadline each relay mode chooses (relay/mistake.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "mistake.h"
#include "rl_deadline.h"

#include <grpc/grpc.h>
#include <signal.h>

#define MS RL_NS_PER_MS
/* An upstream call that arrived at t=100 s with a 2000 ms timeout, and a
 * downstream call made 300 ms later (after Lookup). */
static const int64_t arrival = 100 * RL_NS_PER_SEC;
static const int64_t now = 100 * RL_NS_PER_SEC + 300 * MS;

static gpr_timespec upstream_2s(void)
{
    return rl_ns_to_deadline(arrival + 2000 * MS);
}

static int64_t effective_ns(const char *mode, gpr_timespec up)
{
    const relay_mistake *m = relay_mistake_find(mode);
    assert_non_null(m);
    int64_t ns = -1;
    gpr_timespec d = relay_mistake_effective_deadline(m, up, arrival, now);
    if (rl_deadline_is_infinite(d))
        return INT64_MAX;
    assert_int_equal(rl_deadline_to_ns(d, &ns), 0);
    return ns;
}

static void correct_relay_inherits_the_upstream_deadline(void **state)
{
    (void)state;
    assert_true(effective_ns("none", upstream_2s()) == arrival + 2000 * MS);
}

static void correct_relay_forwards_no_deadline_as_none(void **state)
{
    (void)state;
    assert_true(effective_ns("none", gpr_inf_future(GPR_CLOCK_MONOTONIC)) == INT64_MAX);
}

static void correct_relay_propagates_deadline_and_cancellation(void **state)
{
    (void)state;
    const relay_mistake *m = relay_mistake_default();
    assert_string_equal(m->name, "none");
    assert_int_equal(m->propagate, GRPC_PROPAGATE_DEADLINE | GRPC_PROPAGATE_CANCELLATION);
    assert_true(m->check_before_work);
    assert_int_equal(m->work_calls, 1);
}

static void forward_timeout_restarts_the_full_timeout(void **state)
{
    (void)state;
    /* 300 ms after arrival the downstream still gets 2000 ms: 300 ms too many. */
    assert_true(effective_ns("forward-timeout", upstream_2s()) == now + 2000 * MS);
    assert_false(relay_mistake_find("forward-timeout")->propagate & GRPC_PROPAGATE_DEADLINE);
    assert_true(relay_mistake_find("forward-timeout")->propagate & GRPC_PROPAGATE_CANCELLATION);
}

static void forward_timeout_without_deadline_forwards_none(void **state)
{
    (void)state;
    assert_true(effective_ns("forward-timeout", gpr_inf_future(GPR_CLOCK_MONOTONIC)) == INT64_MAX);
}

static void drop_deadline_gives_none(void **state)
{
    (void)state;
    assert_true(effective_ns("drop-deadline", upstream_2s()) == INT64_MAX);
}

static void huge_timeout_turns_no_deadline_into_int32_max_ms(void **state)
{
    (void)state;
    assert_true(effective_ns("huge-timeout", gpr_inf_future(GPR_CLOCK_MONOTONIC)) == now + INT64_C(2147483647) * MS);
}

static void huge_timeout_with_a_deadline_is_correct(void **state)
{
    (void)state;
    assert_true(effective_ns("huge-timeout", upstream_2s()) == arrival + 2000 * MS);
}

static void ignore_cancel_keeps_the_deadline_but_not_cancellation(void **state)
{
    (void)state;
    const relay_mistake *m = relay_mistake_find("ignore-cancel");
    assert_non_null(m);
    assert_true(effective_ns("ignore-cancel", upstream_2s()) == arrival + 2000 * MS);
    assert_true(effective_ns("ignore-cancel", gpr_inf_future(GPR_CLOCK_MONOTONIC)) == INT64_MAX);
    assert_false(m->propagate & GRPC_PROPAGATE_CANCELLATION);
    assert_false(m->check_before_work);
}

static void call_twice_calls_work_twice(void **state)
{
    (void)state;
    assert_int_equal(relay_mistake_find("call-twice")->work_calls, 2);
    assert_true(effective_ns("call-twice", upstream_2s()) == arrival + 2000 * MS);
}

static void unknown_mode_is_not_found(void **state)
{
    (void)state;
    assert_null(relay_mistake_find("forward_timeout"));
    assert_null(relay_mistake_find(""));
    assert_null(relay_mistake_find("list"));
}

static void shutdown_mistakes_are_correct_relays_with_a_bad_sigterm(void **state)
{
    (void)state;
    const struct {
        const char *name;
        const rl_shutdown_hooks *hooks;
    } rows[] = {{"no-handler", &relay_shutdown_no_handler},
                {"stop-now", &relay_shutdown_stop_now},
                {"wait-forever", &relay_shutdown_wait_forever},
                {"listener-last", &relay_shutdown_listener_last}};
    const relay_mistake *good = relay_mistake_default();
    assert_null(good->shutdown);
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        const relay_mistake *m = relay_mistake_find(rows[i].name);
        assert_non_null(m);
        assert_ptr_equal(m->shutdown, rows[i].hooks);
        /* Only the shutdown differs from the correct relay. */
        assert_int_equal(m->propagate, good->propagate);
        assert_ptr_equal(m->deadline, good->deadline);
        assert_true(m->check_before_work);
        assert_int_equal(m->work_calls, 1);
    }
    /* The deadline and cancel mistakes shut down by the rule. */
    assert_null(relay_mistake_find("ignore-cancel")->shutdown);
}

/* Each shutdown mistake changes the rule's plan the way its row says, and
 * only those members: the rest of the drain is rl_server's. */
static void shutdown_hooks_change_the_plan(void **state)
{
    (void)state;
    const rl_shutdown_plan rule = {10000, 500, true, RL_SERVER_STOP_MS, NULL};
    rl_shutdown_plan p = rule;
    relay_shutdown_stop_now.at_signal(NULL, SIGTERM, &p);
    assert_int_equal(p.grace_ms, 0);
    assert_true(p.interruptible);
    assert_int_equal(p.stop_ms, RL_SERVER_STOP_MS);
    assert_null(relay_shutdown_stop_now.admitting);
    assert_null(relay_shutdown_stop_now.before_signal);

    p = rule;
    relay_shutdown_wait_forever.at_signal(NULL, SIGTERM, &p);
    assert_true(p.grace_ms < 0);
    assert_false(p.interruptible);
    assert_true(p.stop_ms < 0);
    assert_int_equal(p.drain_delay_ms, 500);

    p = rule;
    relay_shutdown_listener_last.at_signal(NULL, SIGTERM, &p);
    assert_int_equal(p.grace_ms, 10000);
    assert_true(p.interruptible);
    assert_non_null(p.note);
    /* No server call in flight here: admission would close at once. */
    assert_int_equal(rl_server_calls_in_flight(), 0);
    assert_false(relay_shutdown_listener_last.admitting(NULL));
    rl_server_hold();
    assert_true(relay_shutdown_listener_last.admitting(NULL));
    rl_server_call_end();

    assert_non_null(relay_shutdown_no_handler.before_signal);
    assert_null(relay_shutdown_no_handler.at_signal);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shutdown_mistakes_are_correct_relays_with_a_bad_sigterm),
        cmocka_unit_test(shutdown_hooks_change_the_plan),
        cmocka_unit_test(correct_relay_inherits_the_upstream_deadline),
        cmocka_unit_test(correct_relay_forwards_no_deadline_as_none),
        cmocka_unit_test(correct_relay_propagates_deadline_and_cancellation),
        cmocka_unit_test(forward_timeout_restarts_the_full_timeout),
        cmocka_unit_test(forward_timeout_without_deadline_forwards_none),
        cmocka_unit_test(drop_deadline_gives_none),
        cmocka_unit_test(huge_timeout_turns_no_deadline_into_int32_max_ms),
        cmocka_unit_test(huge_timeout_with_a_deadline_is_correct),
        cmocka_unit_test(ignore_cancel_keeps_the_deadline_but_not_cancellation),
        cmocka_unit_test(call_twice_calls_work_twice),
        cmocka_unit_test(unknown_mode_is_not_found),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
