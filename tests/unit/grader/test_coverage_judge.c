/* Unit tests for the coverage exercise's arithmetic (grader/coverage_judge):
 * streams and busy streams at an instant (boundaries included), the peak
 * over servers, queue waits with calls still queued, churn and evacuation
 * instants, and the ticks the growing rule needs; then each verdict rule
 * branch by branch, with its exact feedback on both sides of its bound. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "coverage_judge.h"
#include "rl_coverage.h"

#define MS 1000000LL

/* A server of up to 8 streams and 8 calls, in static storage. */
typedef struct fake {
    gr_cov_server s;
    Relaylab__TunnelStreamRecord st[8];
    Relaylab__TunnelStreamRecord *stp[8];
    Relaylab__TunnelCallRecord ca[8];
    Relaylab__TunnelCallRecord *cap[8];
} fake;

static void fake_init(fake *f)
{
    memset(f, 0, sizeof *f);
    relaylab__observe_tunnel_reply__init(&f->s);
    f->s.streams = f->stp;
    f->s.calls = f->cap;
}

static void add_stream(fake *f, int64_t open_ms, int64_t close_ms, uint32_t calls, bool cancelled)
{
    Relaylab__TunnelStreamRecord *r = &f->st[f->s.n_streams];
    relaylab__tunnel_stream_record__init(r);
    r->id = f->s.n_streams + 1;
    r->opened_ns = open_ms * MS;
    r->closed_ns = close_ms * MS;
    r->calls = calls;
    r->cancelled = cancelled;
    f->stp[f->s.n_streams++] = r;
}

static void add_call(fake *f, int64_t disp_ms, int64_t handed_ms, int64_t answered_ms, uint64_t stream)
{
    Relaylab__TunnelCallRecord *c = &f->ca[f->s.n_calls];
    relaylab__tunnel_call_record__init(c);
    c->id = f->s.n_calls + 1;
    c->dispatched_ns = disp_ms * MS;
    c->handed_ns = handed_ms * MS;
    c->answered_ns = answered_ms * MS;
    c->stream_id = stream;
    f->cap[f->s.n_calls++] = c;
}

static void streams_open_from_their_open_until_their_close(void **state)
{
    (void)state;
    fake f;
    fake_init(&f);
    add_stream(&f, 100, 0, 0, false);
    add_stream(&f, 200, 300, 0, false);
    assert_int_equal(gr_cov_streams_at(&f.s, 99 * MS), 0);
    assert_int_equal(gr_cov_streams_at(&f.s, 100 * MS), 1);
    assert_int_equal(gr_cov_streams_at(&f.s, 200 * MS), 2);
    assert_int_equal(gr_cov_streams_at(&f.s, 300 * MS - 1), 2);
    assert_int_equal(gr_cov_streams_at(&f.s, 300 * MS), 1);
}

static void busy_counts_calls_handed_and_not_answered(void **state)
{
    (void)state;
    fake f;
    fake_init(&f);
    add_stream(&f, 0, 0, 2, false);
    add_call(&f, 10, 10, 60, 1);
    add_call(&f, 20, 60, 0, 1); /* waited 40 ms, still running */
    add_call(&f, 30, 0, 0, 0);  /* queued */
    assert_int_equal(gr_cov_busy_at(&f.s, 5 * MS), 0);
    assert_int_equal(gr_cov_busy_at(&f.s, 30 * MS), 1);
    assert_int_equal(gr_cov_busy_at(&f.s, 60 * MS), 1);
    assert_int_equal(gr_cov_busy_at(&f.s, 1000 * MS), 1);
}

static void waits_count_the_queued_up_to_now(void **state)
{
    (void)state;
    fake f;
    fake_init(&f);
    add_stream(&f, 0, 0, 2, false);
    add_call(&f, 10, 10, 60, 1);
    add_call(&f, 20, 60, 0, 1);
    add_call(&f, 30, 0, 0, 0);
    gr_cov_waits w;
    gr_cov_wait_stats(&f.s, 0, INT64_MAX, 1030 * MS, &w);
    assert_int_equal(w.calls, 3);
    assert_int_equal(w.queued, 1);
    assert_int_equal(w.unanswered, 1);
    assert_int_equal(w.max_ns, 1000 * MS);
    assert_int_equal(w.max_at_ns, 30 * MS);
    assert_int_equal(w.p50_ns, 40 * MS);
    /* A window leaves out what was dispatched before it. */
    gr_cov_wait_stats(&f.s, 15 * MS, 25 * MS, 1030 * MS, &w);
    assert_int_equal(w.calls, 1);
    assert_int_equal(w.max_ns, 40 * MS);
}

static void peak_is_over_every_server_at_once(void **state)
{
    (void)state;
    fake a, b;
    fake_init(&a);
    fake_init(&b);
    add_stream(&a, 0, 500, 0, false);
    add_stream(&a, 100, 0, 0, false);
    add_stream(&b, 200, 0, 0, false);
    add_stream(&b, 600, 0, 0, false);
    const gr_cov_server *both[] = {&a.s, &b.s};
    int64_t at;
    /* 3 at 200-500 ms (a's first closes at 500), 3 again at 600. */
    assert_int_equal(gr_cov_peak_total(both, 2, 0, 10000 * MS, &at), 3);
    assert_int_equal(at, 200 * MS);
    assert_int_equal(gr_cov_peak_total(both, 2, 0, 150 * MS, NULL), 2);
    assert_int_equal(gr_cov_peak(&a.s, 0, 10000 * MS), 2);
    /* The window's start counts, with what was open before it. */
    assert_int_equal(gr_cov_peak_total(both, 2, 550 * MS, 580 * MS, NULL), 2);
}

static void young_closes_are_streams_ended_soon_after_carrying_a_call(void **state)
{
    (void)state;
    fake f;
    fake_init(&f);
    add_stream(&f, 0, 300, 1, false);  /* young, used: churn */
    add_stream(&f, 0, 300, 0, false);  /* young, never used: not churn */
    add_stream(&f, 0, 300, 1, true);   /* used, then cancelled: churn too */
    add_stream(&f, 0, 3000, 5, false); /* old: a prune */
    add_stream(&f, 0, 0, 1, false);    /* open */
    assert_int_equal(gr_cov_young_closes(&f.s, 0, 10000 * MS, 2000 * MS), 2);
    assert_int_equal(gr_cov_closed_in(&f.s, 0, 10000 * MS), 4);
    assert_int_equal(gr_cov_closed_in(&f.s, 1000 * MS, 10000 * MS), 1);
}

static void emptied_is_the_last_close_when_nothing_is_left(void **state)
{
    (void)state;
    fake f;
    fake_init(&f);
    add_stream(&f, 50, 3100, 0, false);
    add_stream(&f, 10, 3200, 0, false);
    assert_int_equal(gr_cov_emptied_at(&f.s, 0, 4000 * MS), 3200 * MS);
    assert_int_equal(gr_cov_emptied_at(&f.s, 0, 3150 * MS), 0); /* one still open */
    assert_int_equal(gr_cov_first_open(&f.s), 10 * MS);
    add_stream(&f, 3500, 0, 0, false);
    assert_int_equal(gr_cov_emptied_at(&f.s, 0, 4000 * MS), 0);
}

static void ticks_to_cover_follow_the_doubling(void **state)
{
    (void)state;
    assert_int_equal(gr_cov_opened_in(0), 0);
    assert_int_equal(gr_cov_opened_in(3), RL_COV_GROW_MIN * 7);
    /* The figure: every new stream on the busy server, a 1000-call
     * burst is in flight within 8 ticks. */
    int t = gr_cov_ticks_to_cover(1000, 0, 1.0);
    assert_true(t > 0 && t <= 8);
    /* The exercise's bursts: 300 in flight, 3 streams there (7 and 6
     * ticks: with the first and the margin, 3000 and 2750 ms); the old
     * 50 in flight took 5 and 4. */
    assert_int_equal(gr_cov_ticks_to_cover(300, 3, 1.0 / 3), 7);
    assert_int_equal(gr_cov_ticks_to_cover(300, 3, 0.8), 6);
    assert_int_equal(gr_cov_ticks_to_cover(50, 3, 1.0 / 3), 5);
    assert_int_equal(gr_cov_ticks_to_cover(50, 3, 0.8), 4);
    assert_int_equal(gr_cov_ticks_to_cover(1, 3, 0.5), 0);
    assert_int_equal(gr_cov_ticks_to_cover(10, 0, 0.0), -1);
}

static void an_answer_sooner_than_the_work_fails_by_name(void **state)
{
    (void)state;
    fake f, g;
    fake_init(&f);
    fake_init(&g);
    add_stream(&f, 0, 0, 3, false);
    /* work 500: answered 500 and 496 ms after the hand-over pass (the
     * slack is 5 ms), 494 fails; a call before t0 or unanswered counts not. */
    add_call(&f, 10, 10, 510, 1);
    add_call(&f, 20, 20, 516, 1);
    add_call(&f, 30, 30, 0, 1);
    add_call(&f, 1, 1, 2, 1);
    for (size_t i = 0; i < f.s.n_calls; i++)
        f.ca[i].work_ms = 500;
    gr_cov_early e = {0};
    gr_cov_early_add(&e, &f.s, 0, 5 * MS);
    assert_int_equal(e.answered, 2);
    assert_int_equal(e.early, 0);
    const char *names[] = {"A", "B"};
    char fb[512];
    assert_false(gr_cov_judge_work(&e, names, fb, sizeof fb));
    add_stream(&g, 0, 0, 2, false);
    add_call(&g, 40, 40, 534, 1); /* 494 ms of 500: early */
    add_call(&g, 50, 50, 51, 1);  /* 1 ms of 500: the worst */
    g.ca[0].work_ms = g.ca[1].work_ms = 500;
    gr_cov_early_add(&e, &g.s, 1, 5 * MS);
    assert_int_equal(e.answered, 4);
    assert_int_equal(e.early, 2);
    assert_int_equal(e.worst_server, 1);
    assert_int_equal(e.worst_ns, 1 * MS);
    assert_true(gr_cov_judge_work(&e, names, fb, sizeof fb));
    assert_non_null(strstr(fb, "2 of the 4 calls"));
    assert_non_null(strstr(fb, "server B was answered 1.0 ms after"));
    assert_non_null(strstr(fb, "answered before the work?"));
}

static void streams_around_the_proxy_fail_by_name_with_each_server(void **state)
{
    (void)state;
    const char *names[] = {"A", "B", "C"};
    char fb[512];
    uint64_t none[3] = {0, 0, 0};
    assert_false(gr_cov_judge_direct(none, names, 3, fb, sizeof fb));
    uint64_t some[3] = {0, 150000, 2};
    assert_true(gr_cov_judge_direct(some, names, 3, fb, sizeof fb));
    assert_non_null(strstr(fb, "150002 streams were opened straight"));
    assert_non_null(strstr(fb, "(B 150000, C 2)"));
    assert_non_null(strstr(fb, "streams around the proxy?"));
    uint64_t one[3] = {1, 0, 0};
    assert_true(gr_cov_judge_direct(one, names, 3, fb, sizeof fb));
    assert_non_null(strstr(fb, "1 stream was opened"));
}

static void steps_group_opens_less_than_the_gap_apart(void **state)
{
    (void)state;
    static fake f, g;
    fake_init(&f);
    fake_init(&g);
    /* Tick 1 at 0-2 ms (3 streams over two servers), tick 2 at 250 ms,
     * tick 3 at 500-560 ms; one before t0 and one after t1 left out. */
    add_stream(&f, 0, 0, 0, false);
    add_stream(&f, 2, 0, 0, false);
    add_stream(&g, 1, 0, 0, false);
    add_stream(&f, 250, 0, 0, false);
    add_stream(&g, 500, 0, 0, false);
    add_stream(&g, 560, 0, 0, false);
    add_stream(&f, 900, 0, 0, false);
    const gr_cov_server *both[] = {&f.s, &g.s};
    int steps[2];
    int n = gr_cov_steps(both, 2, 0, 800 * MS, steps, 2);
    assert_int_equal(n, 3); /* counted past the room, */
    assert_int_equal(steps[0], 3);
    assert_int_equal(steps[1], 1); /* the first two stored */
    int none[1];
    assert_int_equal(gr_cov_steps(both, 2, 1000 * MS, 2000 * MS, none, 1), 0);
}

static void growth_kinds_read_from_the_steps(void **state)
{
    (void)state;
    int doubling[] = {8, 16, 32, 64};
    int linear[] = {8, 8, 8, 8, 8};
    int big_linear[] = {50, 60, 55};
    int shortfall[] = {2, 2, 1, 2, 9};
    int stalled[] = {8};
    assert_int_equal(gr_cov_growth_kind(doubling, 4), GR_COV_GREW_DOUBLING);
    assert_int_equal(gr_cov_growth_kind(linear, 5), GR_COV_GREW_LINEAR);
    assert_int_equal(gr_cov_growth_kind(big_linear, 3), GR_COV_GREW_LINEAR);
    assert_int_equal(gr_cov_growth_kind(shortfall, 5), GR_COV_GREW_SHORTFALL);
    assert_int_equal(gr_cov_growth_kind(stalled, 1), GR_COV_GREW_STALLED);
    assert_int_equal(gr_cov_growth_kind(NULL, 0), GR_COV_GREW_NONE);
}

static gr_cov_burst_facts late_facts(const int *steps, int n)
{
    gr_cov_burst_facts f = {
        .server = "B",
        .others = "A and C",
        .calls = 400,
        .demand = 300,
        .ticks = 7,
        .bound_ms = 2750,
        .max_wait_ms = 4100,
        .p50_ms = 900,
        .queued = 0,
        .waited_ms = 100,
        .held = 100,
        .busy = 100,
        .idle_elsewhere = 40,
        .steps = steps,
        .nsteps = n,
        .nstored = n,
        .todo = false,
        .peak = 200,
    };
    return f;
}

static void a_late_burst_names_the_mistake_its_steps_show(void **state)
{
    (void)state;
    char fb[1024];
    bool starved;
    int linear[] = {8, 8, 8, 8, 8, 8, 8};
    gr_cov_burst_facts f = late_facts(linear, 7);
    assert_int_equal(gr_cov_judge_burst(&f, &starved, fb, sizeof fb), GR_FAIL);
    assert_false(starved);
    assert_non_null(strstr(fb, "linear growth?"));
    assert_non_null(strstr(fb, "8, 8, 8, 8, 8, 8 ... 7 steps"));
    int shortfall[] = {2, 2, 2, 2};
    f = late_facts(shortfall, 4);
    assert_int_equal(gr_cov_judge_burst(&f, &starved, fb, sizeof fb), GR_FAIL);
    assert_non_null(strstr(fb, "shortfall-only growth?"));
    /* Nothing opened with idle streams elsewhere: total sizing; with the
     * output saying TODO: the untouched starter. */
    f = late_facts(NULL, 0);
    assert_int_equal(gr_cov_judge_burst(&f, &starved, fb, sizeof fb), GR_FAIL);
    assert_non_null(strstr(fb, "streams sized as a total?"));
    f.todo = true;
    assert_int_equal(gr_cov_judge_burst(&f, &starved, fb, sizeof fb), GR_FAIL);
    assert_non_null(strstr(fb, "the starter's TODO"));
    assert_null(strstr(fb, "total?"));
}

static void a_late_cover_the_cpu_wait_explains_is_not_judged(void **state)
{
    (void)state;
    char fb[1024];
    bool starved;
    int doubling[] = {8, 16, 32, 64, 128};
    gr_cov_burst_facts f = late_facts(doubling, 5);
    /* 4100 late by 1350; a wait of 1350 explains it, 1349 does not. */
    f.waited_ms = 1350;
    assert_int_equal(gr_cov_judge_burst(&f, &starved, fb, sizeof fb), GR_ERROR);
    assert_true(starved);
    assert_non_null(strstr(fb, "waited 1350 ms for a CPU"));
    f.waited_ms = 1349;
    assert_int_equal(gr_cov_judge_burst(&f, &starved, fb, sizeof fb), GR_FAIL);
    assert_false(starved);
    assert_non_null(strstr(fb, "covered too late"));
    f.waited_ms = -1; /* unreadable: judged */
    assert_int_equal(gr_cov_judge_burst(&f, &starved, fb, sizeof fb), GR_FAIL);
    /* Linear growth over three steps or more is the rule broken, however
     * long the wait. */
    int linear[] = {8, 8, 8};
    f = late_facts(linear, 3);
    f.waited_ms = 5000;
    assert_int_equal(gr_cov_judge_burst(&f, &starved, fb, sizeof fb), GR_FAIL);
    assert_false(starved);
    /* In time: PASS, whatever the steps. */
    f.max_wait_ms = 2750;
    assert_int_equal(gr_cov_judge_burst(&f, &starved, fb, sizeof fb), GR_PASS);
    assert_non_null(strstr(fb, "bound 2750 ms: 7 ticks to cover 300 in flight + 4"));
}

static void unfillable_names_each_broken_rule_in_order(void **state)
{
    (void)state;
    char fb[512];
    gr_cov_unfill_facts f = {"B", 3, 0, 0, 0, 16, 250, 256, 0, 4000};
    assert_int_equal(gr_cov_judge_unfillable(&f, fb, sizeof fb), GR_PASS);
    assert_non_null(strstr(fb, "kept its 3 streams on unfillable server B through 4000 ms"));
    f.thrash = GR_COV_CHURN_MAX + 1;
    assert_int_equal(gr_cov_judge_unfillable(&f, fb, sizeof fb), GR_FAIL);
    assert_non_null(strstr(fb, "thrash"));
    f.peak = 257; /* the total past its bound comes first */
    assert_int_equal(gr_cov_judge_unfillable(&f, fb, sizeof fb), GR_FAIL);
    assert_non_null(strstr(fb, "growing without a cap?"));
    f.closed = 2; /* a busy server's streams closed come before both */
    f.closed_used = 1;
    assert_int_equal(gr_cov_judge_unfillable(&f, fb, sizeof fb), GR_FAIL);
    assert_non_null(strstr(fb, "evacuating a busy server?"));
    f.closed_used = 2; /* every one right after carrying a call */
    assert_int_equal(gr_cov_judge_unfillable(&f, fb, sizeof fb), GR_FAIL);
    assert_non_null(strstr(fb, "a stream per call?"));
    assert_non_null(strstr(fb, "on busy server B"));
}

static void rest_fails_below_the_reserve_before_never_pruning(void **state)
{
    (void)state;
    const char *names[] = {"A", "B", "C"};
    char fb[512];
    gr_cov_rest_facts f = {names, -1, 0, -1, 0, "A 2, B 2, C 2", 7250, 256};
    assert_int_equal(gr_cov_judge_rest(&f, fb, sizeof fb), GR_PASS);
    assert_string_equal(fb,
                        "back to A 2, B 2, C 2 streams 7250 ms after the burst (peak 256); never below the reserve");
    f.worst = 1;
    f.worst_n = 90;
    f.figures = "A 2, B 90, C 2";
    assert_int_equal(gr_cov_judge_rest(&f, fb, sizeof fb), GR_FAIL);
    assert_non_null(strstr(fb, "still held 90 streams on server B"));
    assert_non_null(strstr(fb, "never pruning?"));
    f.below = 2;
    f.below_n = 1;
    assert_int_equal(gr_cov_judge_rest(&f, fb, sizeof fb), GR_FAIL);
    assert_non_null(strstr(fb, "pruned server C down to 1 stream at rest"));
}

static void evacuation_judges_the_busy_server_then_the_idle_one(void **state)
{
    (void)state;
    char fb[640];
    gr_cov_evac_facts f = {"B", "C", 300, 0, 0, 0, 2500, 4250, 3240, 0};
    assert_int_equal(gr_cov_judge_evacuation(&f, fb, sizeof fb), GR_PASS);
    assert_non_null(strstr(fb, "server C evacuated 3240 ms after"));
    f.emptied_ms = 2499; /* before overdue (early: 2500) */
    assert_int_equal(gr_cov_judge_evacuation(&f, fb, sizeof fb), GR_FAIL);
    assert_non_null(strstr(fb, "only once overdue"));
    f.emptied_ms = -1;
    f.left = 1;
    assert_int_equal(gr_cov_judge_evacuation(&f, fb, sizeof fb), GR_FAIL);
    assert_non_null(strstr(fb, "still held 1 stream:"));
    f.closed = 1;
    assert_int_equal(gr_cov_judge_evacuation(&f, fb, sizeof fb), GR_FAIL);
    assert_non_null(strstr(fb, "evacuating a busy server?"));
    f.closed_used = 1;
    assert_int_equal(gr_cov_judge_evacuation(&f, fb, sizeof fb), GR_FAIL);
    assert_non_null(strstr(fb, "a stream per call?"));
}

static void caps_fail_per_server_then_a_flood_then_in_all(void **state)
{
    (void)state;
    const char *names[] = {"A", "B", "C"};
    char fb[512];
    int peak[3] = {RL_COV_CAP_PER_SERVER, 10, 10};
    gr_cov_caps_facts f = {names, 3, peak, RL_COV_CAP_TOTAL, 5000, 0, 5000};
    /* Every figure at its cap: within them. */
    assert_false(gr_cov_judge_caps(&f, fb, sizeof fb));
    /* All servers one over the total cap. */
    f.peak_open = RL_COV_CAP_TOTAL + 1;
    assert_true(gr_cov_judge_caps(&f, fb, sizeof fb));
    assert_string_equal(fb, "4001 of your streams were open at once: the caps are 1200 per server and 4000 in all "
                            "(growing without a cap?)");
    /* Within the total, but the balancer refused some: named as a flood. */
    f.peak_open = 900;
    f.refused = 1;
    assert_true(gr_cov_judge_caps(&f, fb, sizeof fb));
    assert_string_equal(fb, "900 of your streams were open at once; the balancer refused 1 more beyond its limit of "
                            "5000 open (a flood): the caps are 1200 per server and 4000 in all (growing without a "
                            "cap?)");
    /* More opened than the world holds at once comes before both. */
    f.refused = 0;
    f.total = 5001;
    assert_true(gr_cov_judge_caps(&f, fb, sizeof fb));
    assert_string_equal(fb, "5001 streams were opened through the balancer in this scenario (900 open at once at "
                            "the peak), more than the world holds at once (5000): a flood. The caps are 1200 per "
                            "server and 4000 in all (growing without a cap?)");
    /* A server past its cap comes first of all, the first one named. */
    peak[1] = RL_COV_CAP_PER_SERVER + 1;
    peak[2] = RL_COV_CAP_PER_SERVER + 2;
    f.refused = 7;
    assert_true(gr_cov_judge_caps(&f, fb, sizeof fb));
    assert_string_equal(fb, "1201 of your streams were open at once on server B (900 in all at the peak; the "
                            "balancer refused 7 more beyond its limit of 5000 open (a flood)): the caps are 1200 "
                            "per server and 4000 in all, and growth pauses while idle streams elsewhere reach 4x "
                            "the demand (growing without a cap?)");
}

static void churn_fails_past_the_forgiven_few(void **state)
{
    (void)state;
    char fb[400] = "";
    assert_false(gr_cov_judge_churn(GR_COV_CHURN_MAX, " during the burst", fb, sizeof fb));
    assert_string_equal(fb, "");
    assert_true(gr_cov_judge_churn(GR_COV_CHURN_MAX + 1, " during the burst", fb, sizeof fb));
    assert_string_equal(fb, "3 streams were closed younger than 2000 ms right after carrying a call during the "
                            "burst: a stream per call? Streams are long-lived: keep them, and prune only idle ones "
                            "(2000 ms old and 6000 ms unused)");
}

static void settled_fails_with_no_stream_open(void **state)
{
    (void)state;
    char fb[256] = "";
    assert_false(gr_cov_judge_settled(0, 3000, fb, sizeof fb));
    assert_string_equal(fb, "");
    assert_true(gr_cov_judge_settled(-1, 3000, fb, sizeof fb));
    assert_string_equal(fb, "the agent holds no open stream 3000 ms after its first one: it must keep its streams "
                            "open (open 8 at start)");
}

static void rest_burst_fails_lost_calls_before_unanswered_ones(void **state)
{
    (void)state;
    char fb[512];
    gr_cov_rest_burst_facts f = {"B", 100, 0, 0, 0, 12, 4200};
    assert_int_equal(gr_cov_judge_rest_burst(&f, fb, sizeof fb), GR_PASS);
    assert_string_equal(fb, "");
    f.unanswered = 1; /* one handed, not answered */
    assert_int_equal(gr_cov_judge_rest_burst(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "1 of the burst's 100 calls on server B were still unanswered 4200 ms after it began (0 "
                            "queued; 12 streams of yours there): cover the burst first (see burst-uniform), then "
                            "prune");
    f.unanswered = 0;
    f.queued = 3;
    f.held = 1;
    assert_int_equal(gr_cov_judge_rest_burst(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "3 of the burst's 100 calls on server B were still unanswered 4200 ms after it began (3 "
                            "queued; 1 stream of yours there): cover the burst first (see burst-uniform), then "
                            "prune");
    f.lost = 1; /* lost calls come first */
    assert_int_equal(gr_cov_judge_rest_burst(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "1 call was lost during the burst on server B: the agent closed streams that carried "
                            "them (1 stream of yours left there): never evacuate or prune a server with calls in "
                            "flight (evacuating a busy server?)");
    f.lost = 2;
    f.held = 0;
    assert_int_equal(gr_cov_judge_rest_burst(&f, fb, sizeof fb), GR_FAIL);
    assert_non_null(strstr(fb, "2 calls were lost during the burst on server B"));
    assert_non_null(strstr(fb, "(0 streams of yours left there)"));
}

static void evacuation_needs_streams_on_both_servers_to_begin(void **state)
{
    (void)state;
    char fb[640] = "";
    assert_false(gr_cov_judge_evac_start("B", 1, "C", 1, fb, sizeof fb));
    assert_string_equal(fb, "");
    assert_true(gr_cov_judge_evac_start("B", 2, "C", 0, fb, sizeof fb));
    assert_string_equal(fb, "when the evacuation began server B held 2 streams and C 0: every server keeps at least "
                            "the reserve (2 idle streams) and an agent opens 8 at start, so there was nothing to "
                            "evacuate. Open streams on every server the proxy places them on");
    assert_true(gr_cov_judge_evac_start("B", 0, "C", 3, fb, sizeof fb));
    assert_non_null(strstr(fb, "server B held 0 streams and C 3:"));
}

static void a_burst_covered_in_time_fails_closes_on_its_busy_server(void **state)
{
    (void)state;
    char fb[1024];
    bool starved;
    int doubling[] = {8, 16, 32, 64, 128};
    gr_cov_burst_facts f = late_facts(doubling, 5);
    f.max_wait_ms = f.bound_ms; /* in time */
    f.closed = 2;
    f.lost = 1;
    assert_int_equal(gr_cov_judge_burst(&f, &starved, fb, sizeof fb), GR_FAIL);
    assert_false(starved);
    assert_string_equal(fb, "the agent closed 2 of its streams on server B during the burst (1 call lost) while B "
                            "had calls in flight: never evacuate or prune a server with calls in flight (evacuating "
                            "a busy server?)");
    f.closed = 0; /* a lost call alone is one too */
    f.lost = 3;
    assert_int_equal(gr_cov_judge_burst(&f, &starved, fb, sizeof fb), GR_FAIL);
    assert_non_null(strstr(fb, "closed 0 of its streams on server B during the burst (3 calls lost)"));
    /* Late by a millisecond: the late cover is the verdict, as before. */
    f.max_wait_ms = f.bound_ms + 1;
    f.waited_ms = -1;
    assert_int_equal(gr_cov_judge_burst(&f, &starved, fb, sizeof fb), GR_FAIL);
    assert_non_null(strstr(fb, "calls waited 2751 ms on server B"));
    /* In time with nothing closed or lost: PASS. */
    f.max_wait_ms = f.bound_ms;
    f.lost = 0;
    assert_int_equal(gr_cov_judge_burst(&f, &starved, fb, sizeof fb), GR_PASS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(streams_open_from_their_open_until_their_close),
        cmocka_unit_test(busy_counts_calls_handed_and_not_answered),
        cmocka_unit_test(waits_count_the_queued_up_to_now),
        cmocka_unit_test(peak_is_over_every_server_at_once),
        cmocka_unit_test(young_closes_are_streams_ended_soon_after_carrying_a_call),
        cmocka_unit_test(emptied_is_the_last_close_when_nothing_is_left),
        cmocka_unit_test(ticks_to_cover_follow_the_doubling),
        cmocka_unit_test(an_answer_sooner_than_the_work_fails_by_name),
        cmocka_unit_test(streams_around_the_proxy_fail_by_name_with_each_server),
        cmocka_unit_test(steps_group_opens_less_than_the_gap_apart),
        cmocka_unit_test(growth_kinds_read_from_the_steps),
        cmocka_unit_test(a_late_burst_names_the_mistake_its_steps_show),
        cmocka_unit_test(a_late_cover_the_cpu_wait_explains_is_not_judged),
        cmocka_unit_test(unfillable_names_each_broken_rule_in_order),
        cmocka_unit_test(rest_fails_below_the_reserve_before_never_pruning),
        cmocka_unit_test(evacuation_judges_the_busy_server_then_the_idle_one),
        cmocka_unit_test(caps_fail_per_server_then_a_flood_then_in_all),
        cmocka_unit_test(churn_fails_past_the_forgiven_few),
        cmocka_unit_test(settled_fails_with_no_stream_open),
        cmocka_unit_test(rest_burst_fails_lost_calls_before_unanswered_ones),
        cmocka_unit_test(evacuation_needs_streams_on_both_servers_to_begin),
        cmocka_unit_test(a_burst_covered_in_time_fails_closes_on_its_busy_server),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
