/* Unit tests for the overload exercise's rules (grader/overload_judge): the
 * client's lag, gRPC's reconnect bound, what the baseline's records say,
 * and each scenario's verdict chain, branch by branch, at its boundaries
 * and with its exact feedback. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <grpc/status.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "overload_judge.h"
#include "rl_deadline.h"

#define MS RL_NS_PER_MS

static char fb[GR_FEEDBACK_MAX];

static bool starts_with(const char *text, const char *prefix)
{
    return strncmp(text, prefix, strlen(prefix)) == 0;
}

/* The overload judge's stall: only DEADLINE_EXCEEDED ends count (an OK
 * answer may come at any time before the deadline), the latest wins, and a
 * call with no status is not a measurement. */
static void client_lag_is_the_latest_deadline_end(void **state)
{
    (void)state;
    const int64_t ms = RL_NS_PER_MS, d = 10000 * ms;
    rl_load_call calls[5];
    memset(calls, 0, sizeof calls);
    for (int i = 0; i < 5; i++)
        calls[i].deadline_ns = d;
    calls[0] = (rl_load_call){.end_ns = d + 30 * ms, .deadline_ns = d, .status = GRPC_STATUS_DEADLINE_EXCEEDED};
    calls[1] = (rl_load_call){.end_ns = d + 9300 * ms, .deadline_ns = d, .status = GRPC_STATUS_OK};
    calls[2] = (rl_load_call){.end_ns = 0, .deadline_ns = d, .status = GRPC_STATUS_DEADLINE_EXCEEDED};
    assert_int_equal(gr_overload_client_lag_ms(calls, 3), 30);
    assert_true(gr_overload_client_lag_ms(calls, 3) <= GR_OVERLOAD_STALL_MS);
    calls[3] = (rl_load_call){.end_ns = d + 9292 * ms, .deadline_ns = d, .status = GRPC_STATUS_DEADLINE_EXCEEDED};
    assert_int_equal(gr_overload_client_lag_ms(calls, 4), 9292);
    assert_true(gr_overload_client_lag_ms(calls, 4) > GR_OVERLOAD_STALL_MS);
    assert_int_equal(gr_overload_client_lag_ms(calls, 0), 0);
}

/* Down 1.5 s: the attempt at 0.8-1.2 s failed, the next comes 1.6 s x
 * (1 +- 0.2) later; the bound steps up as the outage passes the shortest
 * gap (800 ms). */
static void backoff_bound_follows_the_attempts(void **state)
{
    (void)state;
    assert_int_equal(gr_overload_backoff_bound_ms(0), 1200);
    assert_int_equal(gr_overload_backoff_bound_ms(799), 1200);
    assert_int_equal(gr_overload_backoff_bound_ms(800), 1920);
    assert_int_equal(gr_overload_backoff_bound_ms(1500), 1920);
    assert_int_equal(gr_overload_backoff_bound_ms(2080), 3072);
}

/* A reply of records, in static storage. */
static Relaylab__CallRecord rec[6];
static Relaylab__CallRecord *recp[6];
static char tags[6][32];
static Relaylab__ObserveReply reply;

static Relaylab__CallRecord *add_record(const char *tag, int64_t arrival_ns, int64_t deadline_ms)
{
    size_t i = reply.n_calls++;
    relaylab__call_record__init(&rec[i]);
    snprintf(tags[i], sizeof tags[i], "%s", tag);
    rec[i].tag = tags[i];
    rec[i].arrival_ns = arrival_ns;
    rec[i].has_deadline = deadline_ms >= 0;
    rec[i].deadline_ms = deadline_ms >= 0 ? deadline_ms : 0;
    rec[i].ended = true;
    rec[i].end_ns = arrival_ns + 10 * MS;
    recp[i] = &rec[i];
    return &rec[i];
}

/* Late: no time left, or past the caller's deadline by more than
 * LATE_TOL_MS with more time than the caller had; lingering: open
 * LINGER_MS past it with more time; the warm-up is not the load's. */
static void look_reads_late_lingering_and_wasted(void **state)
{
    (void)state;
    relaylab__observe_reply__init(&reply);
    reply.calls = recp;
    rl_load_call calls[4];
    memset(calls, 0, sizeof calls);
    for (int i = 0; i < 4; i++) {
        calls[i].start_ns = 1000 * MS;
        calls[i].deadline_ns = 2000 * MS; /* 1000 ms given */
    }
    /* Past the deadline by exactly the tolerance: not late. */
    add_record("p.0", (2000 + GR_OVERLOAD_LATE_TOL_MS) * MS, -1);
    /* One ms more, with no deadline: late. */
    add_record("p.1", (2000 + GR_OVERLOAD_LATE_TOL_MS + 1) * MS, -1);
    /* Late by the clock, but with no more time than the caller had: a
     * starved relay's late read, not forwarding past the deadline. */
    add_record("p.2", 2100 * MS, 1000 + GR_OVERLOAD_LATE_TOL_MS);
    /* No time left by the relay's own clock, and wasted. */
    Relaylab__CallRecord *r = add_record("p.3", 1500 * MS, 900);
    r->no_time_left = true;
    r->wasted = true;
    add_record("p.warm", 1500 * MS, -1)->wasted = true;
    gr_overload_seen s;
    gr_overload_look("p", calls, 4, &reply, 0, &s);
    assert_int_equal(s.reached, 4);
    assert_int_equal(s.late, 2);
    assert_int_equal(s.late_max_ms, GR_OVERLOAD_LATE_TOL_MS + 1);
    assert_int_equal(s.wasted, 1);
    assert_int_equal(s.linger, 0);
    /* p.0, with no deadline, still open: lingers once now is past
     * LINGER_MS after its caller's deadline, not at it. */
    rec[0].ended = false;
    gr_overload_look("p", calls, 4, &reply, (2000 + GR_OVERLOAD_LINGER_MS) * MS, &s);
    assert_int_equal(s.linger, 0);
    gr_overload_look("p", calls, 4, &reply, (2001 + GR_OVERLOAD_LINGER_MS) * MS, &s);
    assert_int_equal(s.linger, 1);
    gr_overload_look("p", calls, 4, NULL, 0, &s);
    assert_int_equal(s.reached, 0);
}

static void refused_each_branch_and_the_fast_bound(void **state)
{
    (void)state;
    gr_overload_refused_facts f;
    memset(&f, 0, sizeof f);
    gr_overload_refused_add(&f, 2, GRPC_STATUS_UNAVAILABLE, "UNAVAILABLE");
    gr_overload_refused_add(&f, GR_OVERLOAD_FAST_MS, GRPC_STATUS_UNAVAILABLE, "UNAVAILABLE");
    assert_int_equal(gr_overload_judge_refused(&f, 10, fb, sizeof fb), GR_PASS);
    assert_string_equal(fb, "with the backend's port closed, all 10 calls failed UNAVAILABLE within 1000 ms");
    gr_overload_refused_add(&f, 3, GRPC_STATUS_INTERNAL, "INTERNAL: boom");
    gr_overload_refused_add(&f, 4, GRPC_STATUS_UNKNOWN, "UNKNOWN");
    assert_int_equal(gr_overload_judge_refused(&f, 10, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "2 of 4 calls failed fast but not with UNAVAILABLE (e.g. INTERNAL: boom) while the "
                            "backend's port was closed: pass the backend's UNAVAILABLE on, so that clients know to "
                            "try elsewhere");
    gr_overload_refused_add(&f, GR_OVERLOAD_FAST_MS + 1, GRPC_STATUS_DEADLINE_EXCEEDED, "DEADLINE_EXCEEDED");
    assert_int_equal(gr_overload_judge_refused(&f, 10, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "1 of 5 calls took over 1000 ms (up to 1001 ms, e.g. DEADLINE_EXCEEDED) while the "
                            "backend's port was closed: the relay waits for the backend (wait_for_ready, or a retry "
                            "loop until the deadline) instead of failing fast with UNAVAILABLE");
}

static void blackhole_each_branch(void **state)
{
    (void)state;
    rl_load_call calls[3];
    memset(calls, 0, sizeof calls);
    for (int i = 0; i < 3; i++) {
        calls[i].start_ns = 1000 * MS;
        calls[i].end_ns = (1000 + GR_OVERLOAD_FAST_MS / 4) * MS; /* refused at once: the bound included */
        calls[i].status = GRPC_STATUS_UNAVAILABLE;
    }
    calls[2].end_ns += MS; /* one ms more: not at once */
    gr_overload_blackhole_facts f = {.grace_ms = 2000};
    gr_overload_blackhole_count(calls, 3, &f);
    assert_int_equal(f.fast, 2);
    f.seen.reached = 1;
    assert_int_equal(gr_overload_judge_blackhole(&f, fb, sizeof fb), GR_PASS);
    assert_string_equal(fb, "with the backend blackholed, all 3 calls ended by their deadlines (2 refused at once), 1 "
                            "reached the backend, none after its caller's deadline");
    calls[1].status = GRPC_STATUS_OK;
    gr_overload_blackhole_count(calls, 3, &f);
    assert_int_equal(gr_overload_judge_blackhole(&f, fb, sizeof fb), GR_PASS);
    assert_non_null(strstr(fb, "(1 refused at once), 1 reached the backend, none after its caller's deadline (some "
                               "even succeeded: a cache?)"));
    f.seen.linger = 4;
    assert_int_equal(gr_overload_judge_blackhole(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "4 downstream calls were still open 500 ms after their caller's deadline: the relay "
                            "neither passes the deadline on nor cancels the downstream call when its caller goes");
    f.seen.late = 3;
    f.seen.late_max_ms = 480;
    assert_int_equal(gr_overload_judge_blackhole(&f, fb, sizeof fb), GR_FAIL);
    assert_non_null(strstr(fb, "3 calls reached the baseline after their caller's deadline had passed (up to 480 ms "
                               "after): "));
    calls[0].end_ns = 0;
    gr_overload_blackhole_count(calls, 3, &f);
    assert_int_equal(gr_overload_judge_blackhole(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "1 of 3 calls had no status 2000 ms after their deadline");
}

static void recovers_both_branches(void **state)
{
    (void)state;
    gr_overload_recovers_facts f = {.outage_ms = 1503, .bound_ms = 2920, .last = "UNAVAILABLE"};
    assert_int_equal(gr_overload_judge_recovers(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "no call succeeded in the 2920 ms after the backend came back (after a 1503 ms outage, "
                            "gRPC's reconnect backoff tries again within 1920 ms; the last call: UNAVAILABLE): the "
                            "relay does not reconnect to a backend that returns");
    f.recovered = true;
    f.ok_after_ms = 412;
    assert_int_equal(gr_overload_judge_recovers(&f, fb, sizeof fb), GR_PASS);
    assert_string_equal(fb, "after a 1503 ms outage, calls succeeded again 412 ms after the backend came back (bound "
                            "2920 ms: gRPC's reconnect backoff, plus 1000 ms)");
}

/* A load of |n| calls, 2000 ms deadlines from t = 0, |ok| of them OK in
 * 800 ms (in the second half from |ok| / 2 on), |waited| DEADLINE_EXCEEDED,
 * the rest RESOURCE_EXHAUSTED in 2 ms saying "busy". */
static rl_load_call *load(size_t n, size_t ok, size_t waited)
{
    rl_load_call *c = calloc(n, sizeof *c);
    for (size_t i = 0; i < n; i++) {
        c[i].start_ns = (int64_t)i * 10 * MS;
        c[i].deadline_ns = c[i].start_ns + 2000 * MS;
        if (i < ok) {
            c[i].status = GRPC_STATUS_OK;
            c[i].end_ns = c[i].start_ns + 800 * MS;
        } else if (i < ok + waited) {
            c[i].status = GRPC_STATUS_DEADLINE_EXCEEDED;
            c[i].end_ns = c[i].deadline_ns + 5 * MS;
        } else {
            c[i].status = GRPC_STATUS_RESOURCE_EXHAUSTED;
            c[i].end_ns = c[i].start_ns + 2 * MS;
            snprintf(c[i].details, sizeof c[i].details, "busy");
        }
    }
    return c;
}

static const char *const DESCRIBED = "at 100 calls/s, ten times the backend's capacity of 10/s, for 5000 ms (2000 ms "
                                     "deadlines): 40 OK (p50 800 ms, p99 800 ms), goodput 3.0/s in the second half; "
                                     "%d refused (within 2 ms, %d of them with \"busy\"), %d waited their deadline; "
                                     "the baseline saw 40 calls, 0 of them wasted; relay RSS peak 20.0 MiB";

static void overload_judges_each_reason(void **state)
{
    (void)state;
    size_t n = 500;
    rl_load_call *calls = load(n, 40, GR_OVERLOAD_LATE_TOL);
    gr_overload_outcomes c;
    gr_overload_outcomes_count(calls, n, 0, &c);
    assert_int_equal(c.ok, 40);
    assert_int_equal(c.waited, GR_OVERLOAD_LATE_TOL);
    assert_int_equal(c.fast, 500 - 40 - GR_OVERLOAD_LATE_TOL);
    gr_overload_seen s = {.reached = 40};
    gr_overload_load_facts f = {.rate = 100,
                                .capacity_per_s = 10,
                                .duration_ms = 5000,
                                .deadline_ms = 2000,
                                .grace_ms = 2000,
                                .calls = calls,
                                .n = n,
                                .c = &c,
                                .s = &s,
                                .goodput = GR_OVERLOAD_GOODPUT_SHARE * 10,
                                .peak_mib = 20};
    char want[1024];
    snprintf(want, sizeof want, DESCRIBED, c.fast, c.fast, c.waited);
    /* Every bound just met: PASS, with what the load met. */
    assert_int_equal(gr_overload_judge_load(&f, fb, sizeof fb), GR_PASS);
    assert_string_equal(fb, want);
    /* Goodput just under its share. */
    f.goodput = 2.9;
    assert_int_equal(gr_overload_judge_load(&f, fb, sizeof fb), GR_FAIL);
    assert_true(starts_with(fb, "goodput collapsed: 2.9 calls/s succeeded in the second half, under 30 % of the 10/s "
                                "the backend can serve; at 100 calls/s"));
    f.goodput = 3;
    /* One more call held to its deadline, and the calls forwarded late:
     * both named, in order. */
    c.waited++;
    s.late = GR_OVERLOAD_WASTE_TOL + 1;
    s.late_max_ms = 700;
    s.wasted = GR_OVERLOAD_WASTE_TOL + 1; /* named only when none came late */
    assert_int_equal(gr_overload_judge_load(&f, fb, sizeof fb), GR_FAIL);
    assert_non_null(strstr(fb, "26 calls reached the baseline with no time left (up to 700 ms after their caller's "
                               "deadline): the relay forwards calls whose deadline has already passed; 26 of 500 "
                               "calls waited their whole deadline (DEADLINE_EXCEEDED after up to 2005 ms)"));
    assert_null(strstr(fb, "without the time to be served"));
    s.late = 0;
    assert_int_equal(gr_overload_judge_load(&f, fb, sizeof fb), GR_FAIL);
    assert_true(starts_with(fb, "26 calls reached the baseline without the time to be served ("));
    /* The relay and the baseline waited a deadline's length for a CPU and
     * the timing reasons touched a minority: ERROR, the wait named. One ms
     * less, or unknown: FAIL. */
    f.chain_wait_ms = 2000;
    assert_int_equal(gr_overload_judge_load(&f, fb, sizeof fb), GR_ERROR);
    assert_true(starts_with(fb, "grade again: the machine was too busy. During the load the relay and the baseline "
                                "waited 2000 ms for a CPU, at least a 2000 ms deadline"));
    assert_non_null(strstr(fb, "touched under half of the calls, which such a wait can explain; at 100 calls/s"));
    /* A goodput collapse is never excused (the starters' one-call gate
     * refuses nearly every call at once, starved or not). */
    f.goodput = 2.9;
    assert_int_equal(gr_overload_judge_load(&f, fb, sizeof fb), GR_FAIL);
    f.goodput = 3;
    f.chain_wait_ms = 1999;
    assert_int_equal(gr_overload_judge_load(&f, fb, sizeof fb), GR_FAIL);
    f.chain_wait_ms = -1;
    assert_int_equal(gr_overload_judge_load(&f, fb, sizeof fb), GR_FAIL);
    /* Starved, but half the calls held to their deadline (every known
     * mistake holds 480 or more): the FAIL stands. So does half forwarded
     * late. */
    f.chain_wait_ms = 7000;
    int waited = c.waited;
    c.waited = 250;
    assert_int_equal(gr_overload_judge_load(&f, fb, sizeof fb), GR_FAIL);
    c.waited = 249;
    assert_int_equal(gr_overload_judge_load(&f, fb, sizeof fb), GR_ERROR);
    s.late = 250;
    assert_int_equal(gr_overload_judge_load(&f, fb, sizeof fb), GR_FAIL);
    s.late = 0;
    c.waited = waited;
    /* The grader's client lagged past the stall: timing alone is ERROR
     * (named the stall's, which comes first). */
    calls[45].end_ns = calls[45].deadline_ns + (GR_OVERLOAD_STALL_MS + 1) * MS;
    assert_int_equal(gr_overload_judge_load(&f, fb, sizeof fb), GR_ERROR);
    assert_true(starts_with(fb, "grade again: the machine stalled. The grader's own client saw calls end up to 2001 ms "
                                "after their deadline"));
    assert_non_null(strstr(fb, "may be the stall's; at 100 calls/s"));
    /* ... but not a wrong status or the RSS budget, which rest on no timing,
     * starved or not. */
    f.peak_mib = GR_OVERLOAD_RSS_BUDGET_MIB + 0.1;
    assert_int_equal(gr_overload_judge_load(&f, fb, sizeof fb), GR_FAIL);
    assert_non_null(strstr(fb, "; its RSS reached 256.1 MiB, over the 256 MiB budget: what it holds per waiting call "
                               "is not bounded; at 100 calls/s"));
    f.peak_mib = GR_OVERLOAD_RSS_BUDGET_MIB;
    calls[46].status = GRPC_STATUS_INTERNAL;
    free(c.lat);
    gr_overload_outcomes_count(calls, n, 0, &c);
    assert_int_equal(gr_overload_judge_load(&f, fb, sizeof fb), GR_FAIL);
    assert_non_null(strstr(fb, "; 1 calls were refused with INTERNAL: refuse with RESOURCE_EXHAUSTED (overloaded) or "
                               "UNAVAILABLE; at 100"));
    /* Calls with no status lead. */
    c.unended = 2;
    assert_int_equal(gr_overload_judge_load(&f, fb, sizeof fb), GR_FAIL);
    assert_true(starts_with(fb, "2 calls had no status 2000 ms after their deadline; "));
    free(c.lat);
    free(calls);
}

/* The refusal most calls carried, and how many: the relay's own words. */
static void common_refusal_is_the_most_said(void **state)
{
    (void)state;
    rl_load_call *calls = load(6, 1, 1);
    snprintf(calls[5].details, sizeof calls[5].details, "queue full");
    calls[5].status = GRPC_STATUS_UNAVAILABLE;
    int count;
    assert_string_equal(gr_overload_common_refusal(calls, 6, &count), "busy");
    assert_int_equal(count, 3);
    assert_string_equal(gr_overload_common_refusal(calls, 2, &count), "");
    assert_int_equal(count, 0);
    free(calls);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(client_lag_is_the_latest_deadline_end),
        cmocka_unit_test(backoff_bound_follows_the_attempts),
        cmocka_unit_test(look_reads_late_lingering_and_wasted),
        cmocka_unit_test(refused_each_branch_and_the_fast_bound),
        cmocka_unit_test(blackhole_each_branch),
        cmocka_unit_test(recovers_both_branches),
        cmocka_unit_test(overload_judges_each_reason),
        cmocka_unit_test(common_refusal_is_the_most_said),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
