/* Unit tests for rl_deadline: "no deadline" stays distinct from every finite
 * one, remaining time rounds down and never goes negative, the wire
 * rounding steps match gRPC's grpc-timeout encoding, and a sleep outlasts
 * signals unless one asks it to stop. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "rl_deadline.h"
#include "rl_err.h"

#include <signal.h>
#include <string.h>
#include <sys/time.h>

static void infinite_deadline_has_no_remaining_time(void **state)
{
    (void)state;
    int64_t ms = 42;
    gpr_timespec inf = gpr_inf_future(GPR_CLOCK_MONOTONIC);
    assert_true(rl_deadline_is_infinite(inf));
    assert_int_equal(rl_deadline_remaining_ms(inf, rl_now_ns(), &ms), RL_EINVAL);
    assert_int_equal(ms, 42); /* untouched */
    assert_true(rl_deadline_is_infinite(rl_deadline_after_ms(-1)));
}

static void remaining_rounds_down(void **state)
{
    (void)state;
    int64_t now = 5 * RL_NS_PER_SEC;
    gpr_timespec d = rl_ns_to_deadline(now + 1500 * RL_NS_PER_MS + 999999);
    int64_t ms;
    assert_int_equal(rl_deadline_remaining_ms(d, now, &ms), RL_OK);
    assert_int_equal(ms, 1500);
}

static void remaining_never_negative(void **state)
{
    (void)state;
    int64_t now = 5 * RL_NS_PER_SEC;
    int64_t ms = -7;
    assert_int_equal(rl_deadline_remaining_ms(rl_ns_to_deadline(now - RL_NS_PER_SEC), now, &ms), RL_OK);
    assert_int_equal(ms, 0);
}

static void ns_round_trip(void **state)
{
    (void)state;
    int64_t ns = 123 * RL_NS_PER_SEC + 456789;
    int64_t back = 0;
    assert_int_equal(rl_deadline_to_ns(rl_ns_to_deadline(ns), &back), RL_OK);
    assert_int_equal(back, ns);
}

static void deadline_after_is_on_the_monotonic_clock(void **state)
{
    (void)state;
    int64_t before = rl_now_ns();
    int64_t d;
    assert_int_equal(rl_deadline_to_ns(rl_deadline_after_ms(100), &d), RL_OK);
    assert_true(d >= before + 100 * RL_NS_PER_MS);
    assert_true(d <= rl_now_ns() + 100 * RL_NS_PER_MS);
    /* gRPC's monotonic clock is the same clock. */
    gpr_timespec g = gpr_now(GPR_CLOCK_MONOTONIC);
    int64_t gns = g.tv_sec * RL_NS_PER_SEC + g.tv_nsec;
    assert_true(gns >= before && gns <= rl_now_ns());
}

static void wire_rounding_steps(void **state)
{
    (void)state;
    assert_int_equal(rl_wire_rounding_ms(0), 0);
    assert_int_equal(rl_wire_rounding_ms(999), 0);
    assert_int_equal(rl_wire_rounding_ms(1000), 10);
    assert_int_equal(rl_wire_rounding_ms(9999), 10);
    assert_int_equal(rl_wire_rounding_ms(10000), 100);
    assert_int_equal(rl_wire_rounding_ms(99999), 100);
    assert_int_equal(rl_wire_rounding_ms(100000), 1000);
}

static volatile sig_atomic_t alarms;
static volatile sig_atomic_t stop;

static void on_alarm(int sig)
{
    (void)sig;
    alarms++;
    stop = 1;
}

/* SIGALRM every |every_ms| (0: off), without SA_RESTART, so each one
 * interrupts nanosleep. */
static void alarm_every(int64_t every_ms)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = every_ms ? on_alarm : SIG_DFL;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, (long)every_ms * 1000}, {0, (long)every_ms * 1000}};
    setitimer(ITIMER_REAL, &it, NULL);
}

static void sleep_outlasts_signals(void **state)
{
    (void)state;
    alarms = 0;
    alarm_every(10);
    int64_t t0 = rl_now_ns();
    rl_sleep_ms(100, NULL);
    int64_t slept = rl_now_ns() - t0;
    alarm_every(0);
    assert_true(alarms > 0);
    assert_true(slept >= 100 * RL_NS_PER_MS);
}

static void sleep_ends_when_asked_to_stop(void **state)
{
    (void)state;
    stop = 0;
    alarm_every(20);
    int64_t t0 = rl_now_ns();
    rl_sleep_ms(60000, &stop);
    int64_t slept = rl_now_ns() - t0;
    alarm_every(0);
    assert_true(stop);
    assert_true(slept < 30000 * RL_NS_PER_MS); /* far less than asked */
}

static void sleep_of_nothing_returns(void **state)
{
    (void)state;
    int64_t t0 = rl_now_ns();
    rl_sleep_ms(0, NULL);
    rl_sleep_ms(-5, NULL);
    assert_true(rl_now_ns() - t0 < 1000 * RL_NS_PER_MS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(infinite_deadline_has_no_remaining_time),
        cmocka_unit_test(remaining_rounds_down),
        cmocka_unit_test(remaining_never_negative),
        cmocka_unit_test(ns_round_trip),
        cmocka_unit_test(deadline_after_is_on_the_monotonic_clock),
        cmocka_unit_test(wire_rounding_steps),
        cmocka_unit_test(sleep_outlasts_signals),
        cmocka_unit_test(sleep_ends_when_asked_to_stop),
        cmocka_unit_test(sleep_of_nothing_returns),
    };
    return cmocka_run_group_tests_name("rl_deadline", tests, NULL, NULL);
}
