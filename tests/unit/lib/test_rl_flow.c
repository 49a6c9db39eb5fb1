/* Unit tests for rl_flow's watch rules: when a stalled-reader watch goes
 * on, settles, gives up or ends (rl_flow_stall_step), including the two
 * undecided cases a starved producer falls into (growth high in the band,
 * or still rising fast), and how far the peak rose in the last second
 * (rl_memwatch_rise), over the ring of recent samples and on this very
 * process growing; the stalled reader's trend rule (a peak still climbing
 * over 3 s, whatever its last second), and its starved rule (a flat
 * second while the group waited for a CPU settles nothing). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <time.h>
#include <unistd.h>

#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_flow.h"

#define MIB (UINT64_C(1) << 20)
#define MS  (INT64_C(1000000))

/* The grader's slow-reader watch: 2-3 s, band (48, 96] MiB, 2 MiB/s. */
static void slow_reader_opts(rl_flow_stall_opts *o)
{
    rl_flow_stall_defaults(o);
    o->min_ms = 2000;
    o->max_ms = 3000;
    o->undecided_lo = 48 * MIB;
    o->undecided_hi = 96 * MIB;
    o->undecided_max_ms = 30000;
    o->rising_per_s = 2 * MIB;
}

static void settles_when_flat_after_min(void **state)
{
    (void)state;
    rl_flow_stall_opts o;
    slow_reader_opts(&o);
    assert_int_equal(rl_flow_stall_step(&o, 1999 * MS, 1 * MIB, 1500 * MS, 0, 0, -1), RL_FLOW_GO_ON);
    assert_int_equal(rl_flow_stall_step(&o, 2000 * MS, 1 * MIB, 1000 * MS, 0, 0, -1), RL_FLOW_SETTLED);
    assert_int_equal(rl_flow_stall_step(&o, 2500 * MS, 1 * MIB, 999 * MS, 0, 0, -1), RL_FLOW_GO_ON);
    /* flat at the end counts, even past max_ms and in the band */
    assert_int_equal(rl_flow_stall_step(&o, 5000 * MS, 60 * MIB, 1000 * MS, 0, 0, -1), RL_FLOW_SETTLED);
}

static void gives_up_past_the_bound(void **state)
{
    (void)state;
    rl_flow_stall_opts o;
    slow_reader_opts(&o);
    o.give_up_growth = 512 * MIB;
    assert_int_equal(rl_flow_stall_step(&o, 100 * MS, 513 * MIB, 0, 100 * MIB, 0, -1), RL_FLOW_GAVE_UP);
    assert_int_equal(rl_flow_stall_step(&o, 100 * MS, 512 * MIB, 0, 100 * MIB, 0, -1), RL_FLOW_GO_ON);
}

static void ends_at_max_when_decided(void **state)
{
    (void)state;
    rl_flow_stall_opts o;
    slow_reader_opts(&o);
    /* low and not rising: a wobbling good producer, judged at 3 s */
    assert_int_equal(rl_flow_stall_step(&o, 3000 * MS, 5 * MIB, 200 * MS, 1 * MIB, 0, -1), RL_FLOW_ENDED);
    /* past the budget: decided (FAIL) */
    assert_int_equal(rl_flow_stall_step(&o, 3000 * MS, 97 * MIB, 0, 20 * MIB, 0, -1), RL_FLOW_ENDED);
}

static void undecided_goes_on_until_its_bound(void **state)
{
    (void)state;
    rl_flow_stall_opts o;
    slow_reader_opts(&o);
    /* high in the band, moving */
    assert_int_equal(rl_flow_stall_step(&o, 3000 * MS, 49 * MIB, 0, 0, 0, -1), RL_FLOW_GO_ON);
    /* low but rising fast: the starved unbounded producer (39.6 MiB at 3 s) */
    assert_int_equal(rl_flow_stall_step(&o, 3000 * MS, 40 * MIB, 0, 13 * MIB, 0, -1), RL_FLOW_GO_ON);
    assert_int_equal(rl_flow_stall_step(&o, 3000 * MS, 40 * MIB, 0, 2 * MIB, 0, -1), RL_FLOW_ENDED);
    assert_int_equal(rl_flow_stall_step(&o, 29999 * MS, 40 * MIB, 0, 13 * MIB, 0, -1), RL_FLOW_GO_ON);
    assert_int_equal(rl_flow_stall_step(&o, 30000 * MS, 40 * MIB, 0, 13 * MIB, 0, -1), RL_FLOW_RISING);
    assert_int_equal(rl_flow_stall_step(&o, 30000 * MS, 60 * MIB, 0, 1 * MIB, 0, -1), RL_FLOW_ENDED);
    /* past the band's top it is decided, rising or not */
    assert_int_equal(rl_flow_stall_step(&o, 5000 * MS, 97 * MIB, 0, 18 * MIB, 0, -1), RL_FLOW_ENDED);
    assert_int_equal(rl_flow_stall_step(&o, 30000 * MS, 97 * MIB, 0, 18 * MIB, 0, -1), RL_FLOW_ENDED);
    /* without a band (the lab's and the bench's watches) nothing is undecided */
    o.undecided_hi = 0;
    assert_int_equal(rl_flow_stall_step(&o, 3000 * MS, 40 * MIB, 0, 13 * MIB, 0, -1), RL_FLOW_ENDED);
    /* nor without the rising rule */
    slow_reader_opts(&o);
    o.rising_per_s = 0;
    assert_int_equal(rl_flow_stall_step(&o, 3000 * MS, 40 * MIB, 0, 13 * MIB, 0, -1), RL_FLOW_ENDED);
}

/* The grader's stall watch: 1.5-8 s, band (24, 48] MiB, 2 MiB/s, and a
 * peak that rose over 2 MiB in the last 3 s is still growing. */
static void stall_opts(rl_flow_stall_opts *o)
{
    rl_flow_stall_defaults(o);
    o->undecided_lo = 24 * MIB;
    o->undecided_hi = 48 * MIB;
    o->undecided_max_ms = 30000;
    o->rising_per_s = 2 * MIB;
    o->trend_ms = 3000;
    o->trend_min = 2 * MIB;
}

static void a_trend_still_climbing_is_undecided(void **state)
{
    (void)state;
    rl_flow_stall_opts o;
    stall_opts(&o);
    /* The soak's wrong PASS: 20.4 MiB at 8.9 s, under 2 MiB in the last
     * second, still climbing over 3 s: watched on. */
    assert_int_equal(rl_flow_stall_step(&o, 8900 * MS, 20 * MIB, 0, 1 * MIB, 6 * MIB, -1), RL_FLOW_GO_ON);
    /* The edge: a rise of exactly 2 MiB in 3 s is not climbing. */
    assert_int_equal(rl_flow_stall_step(&o, 8000 * MS, 20 * MIB, 0, 1 * MIB, 2 * MIB, -1), RL_FLOW_ENDED);
    assert_int_equal(rl_flow_stall_step(&o, 8000 * MS, 20 * MIB, 0, 1 * MIB, 2 * MIB + 1, -1), RL_FLOW_GO_ON);
    /* Before max_ms nothing is undecided yet. */
    assert_int_equal(rl_flow_stall_step(&o, 7999 * MS, 20 * MIB, 0, 0, 0, -1), RL_FLOW_GO_ON);
    /* Flat for a second but climbing over 3 s is not settled (the soak's
     * second wrong PASS: 2 MiB in 1.7 s, "flat"); not climbing, it is. */
    assert_int_equal(rl_flow_stall_step(&o, 1700 * MS, 2 * MIB + 1, 1000 * MS, 0, 2 * MIB + 1, -1), RL_FLOW_GO_ON);
    assert_int_equal(rl_flow_stall_step(&o, 1700 * MS, 2 * MIB, 1000 * MS, 0, 2 * MIB, -1), RL_FLOW_SETTLED);
    assert_int_equal(rl_flow_stall_step(&o, 8000 * MS, 20 * MIB, 1000 * MS, 0, 6 * MIB, -1), RL_FLOW_GO_ON);
    assert_int_equal(rl_flow_stall_step(&o, 8000 * MS, 20 * MIB, 1000 * MS, 0, 0, -1), RL_FLOW_SETTLED);
    /* Still climbing at the bound: undecided (ERROR), never PASS. */
    assert_int_equal(rl_flow_stall_step(&o, 29999 * MS, 40 * MIB, 0, 1 * MIB, 3 * MIB, -1), RL_FLOW_GO_ON);
    assert_int_equal(rl_flow_stall_step(&o, 30000 * MS, 40 * MIB, 0, 1 * MIB, 3 * MIB, -1), RL_FLOW_RISING);
    assert_int_equal(rl_flow_stall_step(&o, 30000 * MS, 20 * MIB, 0, 0, 1 * MIB, -1), RL_FLOW_ENDED);
    /* Past the budget it is decided (FAIL), climbing or not. */
    assert_int_equal(rl_flow_stall_step(&o, 12000 * MS, 48 * MIB + 1, 0, 3 * MIB, 9 * MIB, -1), RL_FLOW_ENDED);
    /* Without the rule (trend_ms or trend_min 0) the trend is not looked at. */
    o.trend_ms = 0;
    assert_int_equal(rl_flow_stall_step(&o, 8900 * MS, 20 * MIB, 0, 1 * MIB, 6 * MIB, -1), RL_FLOW_ENDED);
    stall_opts(&o);
    o.trend_min = 0;
    assert_int_equal(rl_flow_stall_step(&o, 8900 * MS, 20 * MIB, 0, 1 * MIB, 6 * MIB, -1), RL_FLOW_ENDED);
}

/* A flat second while the group waited for a CPU does not settle the
 * stalled reader's watch (the soak's wrong PASS: a timer-paced unbounded
 * producer starved by the hogs, 1.7 MiB grown, "flat" for a second), and at
 * the bound it is undecided (ERROR), never a PASS. */
static void a_starved_flat_second_does_not_settle(void **state)
{
    (void)state;
    rl_flow_stall_opts o;
    stall_opts(&o);
    o.starved_pct = 25;
    assert_int_equal(rl_flow_stall_step(&o, 1500 * MS, 1 * MIB + MIB / 2, 1000 * MS, 0, 0, 80), RL_FLOW_GO_ON);
    /* The edge: a quarter of the second waited is not starved. */
    assert_int_equal(rl_flow_stall_step(&o, 1500 * MS, 1 * MIB, 1000 * MS, 0, 0, 26), RL_FLOW_GO_ON);
    assert_int_equal(rl_flow_stall_step(&o, 1500 * MS, 1 * MIB, 1000 * MS, 0, 0, 25), RL_FLOW_SETTLED);
    /* Unknown (no schedstat): judged as before. */
    assert_int_equal(rl_flow_stall_step(&o, 1500 * MS, 1 * MIB, 1000 * MS, 0, 0, -1), RL_FLOW_SETTLED);
    /* Starved at max_ms, however low: watched on, and undecided at the end. */
    assert_int_equal(rl_flow_stall_step(&o, 8000 * MS, 2 * MIB, 1000 * MS, 0, 0, 60), RL_FLOW_GO_ON);
    assert_int_equal(rl_flow_stall_step(&o, 30000 * MS, 2 * MIB, 1000 * MS, 0, 0, 60), RL_FLOW_RISING);
    /* Given a CPU again and flat, it settles. */
    assert_int_equal(rl_flow_stall_step(&o, 9000 * MS, 2 * MIB, 1000 * MS, 0, 0, 3), RL_FLOW_SETTLED);
    /* Past the budget it is decided (FAIL), starved or not. */
    assert_int_equal(rl_flow_stall_step(&o, 8000 * MS, 48 * MIB + 1, 0, 0, 0, 90), RL_FLOW_ENDED);
    /* Without the rule, or without a band, the wait is not looked at. */
    o.starved_pct = 0;
    assert_int_equal(rl_flow_stall_step(&o, 1500 * MS, 1 * MIB, 1000 * MS, 0, 0, 90), RL_FLOW_SETTLED);
    stall_opts(&o);
    o.starved_pct = 25;
    o.undecided_hi = 0;
    assert_int_equal(rl_flow_stall_step(&o, 1500 * MS, 1 * MIB, 1000 * MS, 0, 0, 90), RL_FLOW_SETTLED);
}

/* A watch whose ring holds (t ms, peak MiB) pairs, oldest first. */
static void fill(rl_memwatch *w, const int64_t *t_ms, const uint64_t *peak_mib, size_t n)
{
    memset(w, 0, sizeof *w);
    for (size_t i = 0; i < n; i++) {
        w->recent[w->recent_head].t_ns = t_ms[i] * MS;
        w->recent[w->recent_head].peak = peak_mib[i] * MIB;
        w->recent_head = (w->recent_head + 1) % RL_MEMWATCH_RECENT;
        if (w->recent_n < RL_MEMWATCH_RECENT)
            w->recent_n++;
    }
    w->peak_rss = peak_mib[n - 1] * MIB;
}

static void rise_over_the_last_second(void **state)
{
    (void)state;
    rl_memwatch w;
    const int64_t t[] = {0, 500, 1000, 1500, 2000, 2500};
    const uint64_t p[] = {10, 20, 30, 31, 31, 33};
    fill(&w, t, p, 6);
    /* from the newest sample at least 1 s old (t 1500: 31 MiB) */
    assert_int_equal(rl_memwatch_rise(&w, 1000 * MS), 2 * MIB);
    assert_int_equal(rl_memwatch_rise(&w, 2000 * MS), 13 * MIB);
    /* older than every sample kept: from the oldest */
    assert_int_equal(rl_memwatch_rise(&w, 60000 * MS), 23 * MIB);
    fill(&w, t, p, 1);
    assert_int_equal(rl_memwatch_rise(&w, 1000 * MS), 0);
}

static void rise_after_the_ring_wraps(void **state)
{
    (void)state;
    rl_memwatch w;
    enum { N = RL_MEMWATCH_RECENT + 40 };
    int64_t t[N];
    uint64_t p[N];
    for (size_t i = 0; i < N; i++) {
        t[i] = (int64_t)i * 50; /* every 50 ms */
        p[i] = 100 + i;         /* 1 MiB a sample: 20 MiB/s */
    }
    fill(&w, t, p, N);
    assert_int_equal(w.recent_n, RL_MEMWATCH_RECENT);
    assert_int_equal(rl_memwatch_rise(&w, 1000 * MS), 20 * MIB);
}

/* This process grows by 32 MiB between two real samples of its group. */
static void rise_of_a_real_group(void **state)
{
    (void)state;
    rl_memwatch w;
    assert_int_equal(rl_memwatch_start(&w, getpgrp(), MIB, false), RL_OK);
    size_t n = 32 * (size_t)MIB;
    char *block = malloc(n);
    assert_non_null(block);
    memset(block, 1, n);
    assert_int_equal(rl_memwatch_sample(&w), RL_OK);
    assert_true(rl_memwatch_rise(&w, 1000 * MS) >= 30 * MIB);
    assert_true(rl_memwatch_growth(&w) >= 30 * MIB);
    free(block);
    rl_memwatch_fini(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(settles_when_flat_after_min),
        cmocka_unit_test(gives_up_past_the_bound),
        cmocka_unit_test(ends_at_max_when_decided),
        cmocka_unit_test(undecided_goes_on_until_its_bound),
        cmocka_unit_test(a_trend_still_climbing_is_undecided),
        cmocka_unit_test(a_starved_flat_second_does_not_settle),
        cmocka_unit_test(rise_over_the_last_second),
        cmocka_unit_test(rise_after_the_ring_wraps),
        cmocka_unit_test(rise_of_a_real_group),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
