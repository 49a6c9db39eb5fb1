/* test_limit: the arithmetic of the relay's adaptive limit (relay/limit.c):
 * the gradient step, where it settles in front of a backend of K slots,
 * its floor, ceiling and clamps, the pause in probing after a fall, the
 * windows (only calls started in one
 * count), no growth while the limit is not in use, and the probe that
 * re-measures the shortest round trip. Instants are made up: no clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "limit.h"

#define MS INT64_C(1000000)

/* The mean round trip through a backend of |slots| that queues the rest,
 * each call |service_ns| on a slot, with |limit| calls sent to it. */
static int64_t backend_rtt(double limit, unsigned slots, int64_t service_ns)
{
    return limit <= slots ? service_ns : (int64_t)((double)service_ns * limit / slots);
}

/* Feeds |n| calls that started at |start| and took |rtt| each, ending at
 * |start| + |rtt|; returns how many closed a window. */
static int feed(relay_limit *l, int n, int64_t start, int64_t rtt)
{
    int closed = 0;
    for (int i = 0; i < n; i++)
        relay_limit_started(l, start);
    for (int i = 0; i < n; i++)
        closed += relay_limit_ended(l, start, start + rtt, RELAY_RTT_SERVED);
    return closed;
}

static void a_backend_as_fast_as_its_minimum_doubles_the_limit(void **state)
{
    (void)state;
    /* 0.3 ms at best, 0.5 ms now: within the 5 ms target, the gradient is
     * clamped to 2. */
    assert_true(relay_limit_next(8, 300 * MS / 1000, 500 * MS / 1000) == 8 * 2.0 + RELAY_LIMIT_HEADROOM);
}

static void a_latency_twice_the_minimum_shrinks_the_limit(void **state)
{
    (void)state;
    /* 800 ms at best, 1600 ms now: gradient (800 + target) / 1600, and no
     * headroom while it falls. */
    double next = relay_limit_next(40, 800 * MS, 1600 * MS);
    double want = 40 * (800.0 + (double)RELAY_LIMIT_TARGET_NS / MS) / 1600;
    assert_true(next > want - 0.01 && next < want + 0.01);
    /* Ten times: clamped to halving. */
    assert_true(relay_limit_next(100, 800 * MS, 8000 * MS) == 100 * 0.5);
}

static void the_limit_stays_between_floor_and_ceiling(void **state)
{
    (void)state;
    assert_true(relay_limit_next(RELAY_LIMIT_MIN, 800 * MS, 8000 * MS) == RELAY_LIMIT_MIN);
    assert_true(relay_limit_next(RELAY_LIMIT_MAX, 1 * MS, 1 * MS) == RELAY_LIMIT_MAX);
    /* Nothing measured yet: no step. */
    assert_true(relay_limit_next(20, 0, 5 * MS) == 20);
}

static void stays_at_a_slow_backends_slots(void **state)
{
    (void)state;
    /* The overload lab: 8 slots, 800 ms a call. Started at 8, the limit
     * probes one call more and comes back: the backend never queues more
     * than one of ours. */
    double limit = 8;
    for (int i = 0; i < 50; i++) {
        limit = relay_limit_next(limit, 800 * MS, backend_rtt(limit, 8, 800 * MS));
        assert_true(limit >= RELAY_LIMIT_MIN && limit < 9.5);
    }
    /* 40 slots: it climbs from 8 to them, a call a step, and stays there. */
    limit = 8;
    for (int i = 0; i < 60; i++)
        limit = relay_limit_next(limit, 800 * MS, backend_rtt(limit, 40, 800 * MS));
    assert_true(limit > 40 && limit < 40 * (800.0 + (double)RELAY_LIMIT_TARGET_NS / MS) / 800 + 1.5);
}

static void no_probe_for_a_while_after_the_limit_fell(void **state)
{
    (void)state;
    relay_limit l;
    int64_t t = 1000 * MS;
    relay_limit_init(&l, 9, t);
    relay_limit_busy(&l, 9);
    assert_int_equal(feed(&l, 1, t - 900 * MS, 800 * MS), 0); /* the minimum, from before */
    /* 9 in flight on 8 slots of 800 ms: 900 ms; the limit falls to 8. */
    assert_int_equal(feed(&l, 5, t + 1, 900 * MS), 1);
    assert_int_equal(relay_limit_get(&l), 8);
    /* Then on target (a gradient of 1): no probe for RELAY_LIMIT_HOLD
     * windows... */
    int64_t on_target = 800 * MS + RELAY_LIMIT_TARGET_NS;
    for (int i = 0; i < RELAY_LIMIT_HOLD; i++) {
        relay_limit_busy(&l, 8);
        assert_int_equal(feed(&l, 5, l.window_ns + 1, on_target), 1);
        assert_int_equal(relay_limit_get(&l), 8);
    }
    /* ...then one call more. */
    relay_limit_busy(&l, 8);
    assert_int_equal(feed(&l, 5, l.window_ns + 1, on_target), 1);
    assert_int_equal(relay_limit_get(&l), 9);
}

static void a_fast_backend_lets_the_limit_grow_to_the_ceiling(void **state)
{
    (void)state;
    double limit = 8;
    for (int i = 0; i < 20; i++)
        limit = relay_limit_next(limit, 300 * MS / 1000, 2 * MS);
    assert_true(limit == RELAY_LIMIT_MAX);
}

static void a_window_waits_for_every_call_of_its_cohort(void **state)
{
    (void)state;
    relay_limit l;
    int64_t t = 1000 * MS;
    relay_limit_init(&l, 8, t);
    relay_limit_busy(&l, 8);
    /* Three calls start in the window's first 100 ms; the first two come
     * back at once (they found free slots), the third was queued. */
    for (int i = 0; i < 3; i++)
        relay_limit_started(&l, t + 10 * MS);
    relay_limit_started(&l, t + 150 * MS); /* after the cohort: not waited for */
    assert_false(relay_limit_ended(&l, t + 10 * MS, t + 200 * MS, RELAY_RTT_SERVED));
    assert_false(relay_limit_ended(&l, t + 10 * MS, t + 200 * MS, RELAY_RTT_SERVED));
    assert_int_equal(relay_limit_get(&l), 8);
    /* The queued one closes the window, and its time is the median's. */
    assert_true(relay_limit_ended(&l, t + 10 * MS, t + 1500 * MS, RELAY_RTT_SERVED));
    assert_int_equal(l.steps, 1);
    assert_true(l.last_ns == 190 * MS);
    /* A cohort that only failed says nothing: no step. */
    relay_limit_started(&l, l.window_ns + 1);
    assert_false(relay_limit_ended(&l, l.window_ns + 1, l.window_ns + 200 * MS, RELAY_RTT_NONE));
    assert_int_equal(l.steps, 1);
}

static void calls_started_before_the_window_do_not_count(void **state)
{
    (void)state;
    relay_limit l;
    int64_t t = 1000 * MS;
    relay_limit_init(&l, 8, t);
    relay_limit_busy(&l, 8);
    assert_int_equal(feed(&l, 5, t + 99 * MS, 1 * MS), 1);
    int64_t w = l.window_ns;
    /* Slow calls that began under the old limit end now: they lower no
     * limit, but a shorter one would still count for the minimum. */
    for (int i = 0; i < 20; i++)
        assert_false(relay_limit_ended(&l, w - 50 * MS, w + 850 * MS, RELAY_RTT_SERVED));
    assert_int_equal(l.samples, 0);
    assert_int_equal(relay_limit_get(&l), 17);
    assert_true(l.min_rtt_ns == 1 * MS);
}

static void an_idle_limit_does_not_grow(void **state)
{
    (void)state;
    relay_limit l;
    int64_t t = 1000 * MS;
    relay_limit_init(&l, 8, t);
    /* At most 7 of 8 in use: fast answers say nothing about 16. */
    relay_limit_busy(&l, 7);
    assert_int_equal(feed(&l, 5, t + 1, 1 * MS), 0);
    assert_int_equal(feed(&l, 1, t + 2, 100 * MS), 1); /* past 100 ms: the window closes */
    assert_int_equal(relay_limit_get(&l), 8);
    /* All of it in use: it may. */
    relay_limit_busy(&l, 8);
    assert_int_equal(feed(&l, 5, l.window_ns + 1, 1 * MS), 0);
    assert_int_equal(feed(&l, 1, l.window_ns + 2, 100 * MS), 1);
    assert_int_equal(relay_limit_get(&l), 17);
}

static void a_call_cut_short_by_its_deadline_is_no_minimum(void **state)
{
    (void)state;
    relay_limit l;
    int64_t t = 1000 * MS;
    relay_limit_init(&l, 8, t);
    assert_int_equal(feed(&l, 1, t - 900 * MS, 800 * MS), 0);
    /* It ran out after 50 ms: a lower bound, it counts in the window... */
    relay_limit_started(&l, t + 1);
    relay_limit_started(&l, t + 1);
    assert_false(relay_limit_ended(&l, t + 1, t + 50 * MS, RELAY_RTT_BOUND));
    assert_int_equal(l.samples, 1);
    /* ...but the shortest round trip is still the served call's. */
    assert_true(l.min_rtt_ns == 800 * MS);
}

static void the_probe_re_measures_the_minimum_at_the_floor(void **state)
{
    (void)state;
    relay_limit l;
    int64_t t = 1000 * MS;
    relay_limit_init(&l, 8, t);
    relay_limit_busy(&l, 8);
    assert_int_equal(feed(&l, 5, t + 1, 100 * MS), 1);
    assert_true(l.min_rtt_ns == 100 * MS);
    unsigned before = relay_limit_get(&l);
    /* The backend became slower for good (300 ms), long after: the first
     * window past the probe instant drops the limit to the floor... */
    int64_t late = t + RELAY_LIMIT_PROBE_NS + 1000 * MS;
    assert_int_equal(feed(&l, 5, late, 300 * MS), 1);
    assert_true(l.probing);
    assert_int_equal(relay_limit_get(&l), RELAY_LIMIT_MIN);
    /* ...and the calls started during the probe give the new minimum; the
     * limit comes back to where it was before the probe. */
    unsigned resume = (unsigned)l.resume;
    assert_true(resume < before); /* 300 ms against 100 ms shrank it first */
    assert_int_equal(feed(&l, 5, l.window_ns + 1, 300 * MS), 1);
    assert_false(l.probing);
    assert_true(l.min_rtt_ns == 300 * MS);
    assert_int_equal(relay_limit_get(&l), resume);
    assert_true(l.next_probe_ns > late);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_backend_as_fast_as_its_minimum_doubles_the_limit),
        cmocka_unit_test(a_latency_twice_the_minimum_shrinks_the_limit),
        cmocka_unit_test(the_limit_stays_between_floor_and_ceiling),
        cmocka_unit_test(stays_at_a_slow_backends_slots),
        cmocka_unit_test(no_probe_for_a_while_after_the_limit_fell),
        cmocka_unit_test(a_fast_backend_lets_the_limit_grow_to_the_ceiling),
        cmocka_unit_test(a_window_waits_for_every_call_of_its_cohort),
        cmocka_unit_test(calls_started_before_the_window_do_not_count),
        cmocka_unit_test(an_idle_limit_does_not_grow),
        cmocka_unit_test(a_call_cut_short_by_its_deadline_is_no_minimum),
        cmocka_unit_test(the_probe_re_measures_the_minimum_at_the_floor),
    };
    return cmocka_run_group_tests_name("relay adaptive limit", tests, NULL, NULL);
}
