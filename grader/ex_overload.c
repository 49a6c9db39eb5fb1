/* ex_overload: the overload and outage exercise. A relay between clients
 * and a backend that is down, blackholed or saturated must not turn that
 * into a pile of waiting calls: with the backend's port closed every call
 * fails at once with UNAVAILABLE; with the backend blackholed calls end by
 * their deadlines and none is forwarded after its deadline; when the
 * backend comes back calls succeed again within gRPC's reconnect backoff;
 * and at ten times the backend's capacity the calls the relay accepts meet
 * their deadlines, the rest are refused at once, the backend does no work
 * for callers that have gone, and the relay's memory stays bounded.
 *
 * The world is the exercise's: the baseline's Work capacity and blackhole
 * are set through its Observer (SetCapacity, SetOutage), and the closed
 * port is made by stopping the baseline and starting it again on the same
 * port (gr_stop_baseline, gr_restart_baseline). Every bound is a named
 * constant with the measurement it comes from (bench/results/overload.md),
 * in overload_judge.h with the verdicts; here are the world's numbers. */
#include "exercise.h"
#include "overload_figure.h"
#include "overload_judge.h"
#include "rl_load.h"
#include "process.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_flow.h"
#include "rl_probe.h"
#include "rl_proc.h"
#include "rl_stats.h"
#include "run.h"
#include "scenario.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The warm-up call before an outage: the relay must be connected and
 * serving before the backend goes away. */
#define WARM_DEADLINE_MS 5000

/* refused: calls while the backend's port is closed, each judged against
 * GR_OVERLOAD_FAST_MS. */
#define REFUSE_CALLS       10
#define REFUSE_SLOW_ENOUGH 2
#define REFUSE_DEADLINE_MS 3000
#define CALL_GAP_MS        50

/* blackhole: 40 calls at 20/s, each with 1 s to live; the backend accepts
 * them and never answers. */
#define BH_RATE        20.0
#define BH_DURATION_MS 2000
#define BH_DEADLINE_MS 1000

/* recovers: how long the backend stays down; calls must succeed again
 * within gRPC's reconnect backoff (gr_overload_backoff_bound_ms). */
#define OUTAGE_MS           1500
#define RECOVER_DEADLINE_MS 1000

/* overload: the baseline serves OL_CAPACITY Work calls at once, each
 * OL_STEPS x OL_STEP_MS = 800 ms, so 10 calls a second; the load offers ten
 * times that for OL_DURATION_MS, each call with OL_DEADLINE_MS to live. */
#define OL_CAPACITY       8
#define OL_STEPS          40
#define OL_STEP_MS        20
#define OL_RATE           100.0
#define OL_DURATION_MS    5000
#define OL_DEADLINE_MS    2000
#define OL_CAPACITY_PER_S ((double)OL_CAPACITY * 1000.0 / (OL_STEPS * OL_STEP_MS))
/* A call that failed DEADLINE_EXCEEDED was held by the relay for its whole
 * deadline (the client's own timer ended it) instead of refused: that is
 * judged by the status, not by when the grader saw it end, since a grader
 * starved of CPU sees every end late (measured: 3.4 s for 2 s deadlines
 * during a build at the same priority). How fast the refusals came is
 * reported, not judged, for the same reason. The relay's RSS is sampled
 * every OL_RSS_TICK_MS. */
#define OL_RSS_TICK_MS 100

/* One Observer world call (SetCapacity, SetOutage) on baseline 0. */
static int set_world(gr_ctx *ctx, const char *method, const ProtobufCMessage *req, gr_scenario_result *out)
{
    grpc_channel *ch = gr_baseline_channel(ctx, 0);
    if (!ch)
        return gr_result(out, GR_ERROR, "the baseline is not running");
    rl_probe_call c;
    int decided = 0;
    if (rl_probe_call_start(&c, ch, method, req, rl_now_ns() + GR_SCENARIO_OBSERVER_MS * RL_NS_PER_MS) != RL_OK ||
        rl_probe_call_wait(&c, c.deadline_ns + GR_SCENARIO_GRACE_MS * RL_NS_PER_MS) != RL_OK ||
        c.batch.status != GRPC_STATUS_OK)
        decided = gr_result(out, GR_ERROR, "the baseline's observer did not take %s (%s)", method,
                            c.done ? rl_status_name(c.batch.status) : "no answer");
    rl_probe_call_fini(&c);
    return decided;
}

/* A Process call that must succeed before the world changes. */
static int warm_up(gr_ctx *ctx, gr_scenario_result *out)
{
    char tag[200], why[256];
    snprintf(tag, sizeof tag, "%s.warm", gr_tag(ctx));
    rl_probe_call c;
    int decided = gr_process_start(ctx, &c, tag, 0, 1, 10, rl_now_ns() + WARM_DEADLINE_MS * RL_NS_PER_MS, out);
    if (!decided)
        decided = gr_scenario_wait(&c, out);
    if (!decided)
        decided = gr_scenario_crash_after(ctx, &c, "on the first call", out);
    if (!decided && !gr_process_reply_ok(&c, tag, why, sizeof why))
        decided = gr_result(out, GR_FAIL, "with the backend healthy, a first Process call failed: %s", why);
    rl_probe_call_fini(&c);
    return decided;
}

/* One Process call (1 x 10 ms of Work) tagged "TAG.what.i", waited for. */
static int one_call(gr_ctx *ctx, rl_probe_call *c, const char *what, int i, int64_t deadline_ms,
                    gr_scenario_result *out)
{
    char tag[200];
    snprintf(tag, sizeof tag, "%s.%s.%d", gr_tag(ctx), what, i);
    if (gr_process_start(ctx, c, tag, 0, 1, 10, rl_now_ns() + deadline_ms * RL_NS_PER_MS, out))
        return GR_DECIDED;
    return gr_scenario_wait(c, out);
}

/* refused: the backend's port is closed; every call fails fast with
 * UNAVAILABLE. */
static int refused(gr_ctx *ctx, gr_scenario_result *out)
{
    rl_probe_call c;
    memset(&c, 0, sizeof c);
    if (warm_up(ctx, out))
        goto done;
    gr_stop_baseline(ctx, 0);
    gr_overload_refused_facts f;
    memset(&f, 0, sizeof f);
    int64_t took[REFUSE_CALLS];
    /* Two calls that waited are the verdict already: no need to wait out
     * eight more deadlines. */
    for (int i = 0; i < REFUSE_CALLS && f.slow < REFUSE_SLOW_ENOUGH && !gr_interrupted(ctx); i++) {
        if (one_call(ctx, &c, "down", i, REFUSE_DEADLINE_MS, out))
            goto done;
        char st[200];
        gr_process_status_text(&c, st, sizeof st);
        took[i] = gr_ms_between(c.start_ns, c.end_ns);
        gr_overload_refused_add(&f, took[i], c.batch.status, st);
        rl_probe_call_fini(&c);
        rl_sleep_ms(CALL_GAP_MS, NULL);
    }
    /* Fast UNAVAILABLE is also what a dead relay gives: look once. */
    if (gr_scenario_crash_check(ctx, true, "while the backend was down", out))
        goto done;
    char fb[GR_FEEDBACK_MAX];
    gr_result(out, gr_overload_judge_refused(&f, REFUSE_CALLS, fb, sizeof fb), "%s", fb);
    gr_overload_refused_figure(out, took, f.made, GR_OVERLOAD_FAST_MS, REFUSE_DEADLINE_MS);
done:
    return gr_scenario_done(&c, NULL);
}

/* The baseline's records once every one of them ended, waited for until
 * |until_ns| (a relay that leaves calls open is judged on what it left). */
static int observe_all(gr_ctx *ctx, int64_t until_ns, Relaylab__ObserveReply **obs, gr_scenario_result *out)
{
    grpc_channel *ch = gr_baseline_channel(ctx, 0);
    if (!ch)
        return gr_result(out, GR_ERROR, "the baseline is not running");
    int rc = rl_observe_until(ch, "", rl_observe_all_ended, NULL, until_ns, 20, obs);
    return gr_scenario_observed(rc, *obs, out);
}

/* blackhole: the backend accepts and never answers; calls end by their
 * deadlines, and none reaches the backend after its deadline. */
static int blackhole(gr_ctx *ctx, gr_scenario_result *out)
{
    Relaylab__ObserveReply *obs = NULL;
    rl_load_call *calls = NULL;
    size_t n = 0;
    Relaylab__OutageRequest req = RELAYLAB__OUTAGE_REQUEST__INIT;
    req.mode = (char *)"blackhole";
    if (warm_up(ctx, out) || set_world(ctx, "/relaylab.Observer/SetOutage", &req.base, out))
        goto done;
    rl_load_options o = {.prefix = gr_tag(ctx),
                         .rate = BH_RATE,
                         .duration_ms = BH_DURATION_MS,
                         .deadline_ms = BH_DEADLINE_MS,
                         .steps = 1,
                         .step_ms = 10};
    if (rl_load_run(gr_submission_channel(ctx), &o, GR_SCENARIO_GRACE_MS, &calls, &n) != RL_OK) {
        gr_result(out, GR_ERROR, "cannot start the client calls");
        goto done;
    }
    int64_t last = n ? calls[n - 1].deadline_ns : rl_now_ns();
    if (observe_all(ctx, last + (GR_OVERLOAD_LINGER_MS + 500) * RL_NS_PER_MS, &obs, out) ||
        gr_scenario_crash_check(ctx, false, "with the backend blackholed", out))
        goto done;
    gr_overload_blackhole_facts f = {.grace_ms = GR_SCENARIO_GRACE_MS};
    gr_overload_blackhole_count(calls, n, &f);
    gr_overload_look(gr_tag(ctx), calls, n, obs, rl_now_ns(), &f.seen);
    char fb[GR_FEEDBACK_MAX];
    gr_result(out, gr_overload_judge_blackhole(&f, fb, sizeof fb), "%s", fb);
    gr_overload_blackhole_figure(out, gr_tag(ctx), calls, n, obs, BH_DEADLINE_MS);
done:
    free(calls);
    return gr_scenario_done(NULL, &obs);
}

/* recovers: after an outage, calls succeed again within the backoff. */
static int recovers(gr_ctx *ctx, gr_scenario_result *out)
{
    rl_probe_call c;
    memset(&c, 0, sizeof c);
    char err[512], last[200] = "no call", fb[GR_FEEDBACK_MAX];
    if (warm_up(ctx, out))
        goto done;
    int64_t down = rl_now_ns();
    gr_stop_baseline(ctx, 0);
    /* For the picture: ms since |down|. */
    gr_overload_recovery rec = {.down0_ms = -1, .ok0_ms = -1};
    for (int i = 0; rl_now_ns() < down + OUTAGE_MS * RL_NS_PER_MS && !gr_interrupted(ctx); i++) {
        if (one_call(ctx, &c, "down", i, RECOVER_DEADLINE_MS, out))
            goto done;
        rec.down0_ms = rec.down0_ms < 0 ? gr_ms_between(down, c.start_ns) : rec.down0_ms;
        rec.down1_ms = gr_ms_between(down, c.end_ns);
        rec.ndown++;
        rl_probe_call_fini(&c);
        rl_sleep_ms(CALL_GAP_MS, NULL);
    }
    if (gr_restart_baseline(ctx, 0, NULL, err, sizeof err) != RL_OK) {
        gr_result(out, GR_ERROR, "cannot start the baseline again: %s", err);
        goto done;
    }
    int64_t up = rl_now_ns();
    int64_t outage_ms = gr_ms_between(down, up);
    int64_t bound_ms = gr_overload_backoff_bound_ms(outage_ms) + GR_OVERLOAD_RECOVER_SLACK_MS;
    gr_overload_recovers_facts f = {.outage_ms = outage_ms, .bound_ms = bound_ms, .last = last};
    rec.up_ms = outage_ms;
    rec.bound_ms = bound_ms;
    for (int i = 0; rl_now_ns() < up + bound_ms * RL_NS_PER_MS && !gr_interrupted(ctx); i++) {
        if (one_call(ctx, &c, "up", i, RECOVER_DEADLINE_MS, out))
            goto done;
        rec.last_ms = gr_ms_between(down, c.end_ns);
        if (c.batch.status == GRPC_STATUS_OK) {
            rec.ok0_ms = gr_ms_between(down, c.start_ns);
            rec.ok1_ms = rec.last_ms;
            rec.ok_after_ms = gr_ms_between(up, c.end_ns);
            gr_overload_recovers_figure(out, &rec);
            f.recovered = true;
            f.ok_after_ms = rec.ok_after_ms;
            gr_result(out, gr_overload_judge_recovers(&f, fb, sizeof fb), "%s", fb);
            goto done;
        }
        gr_process_status_text(&c, last, sizeof last);
        rec.nfailed++;
        rl_probe_call_fini(&c);
        rl_sleep_ms(CALL_GAP_MS, NULL);
    }
    if (gr_scenario_crash_check(ctx, true, "after the backend came back", out))
        goto done;
    gr_result(out, gr_overload_judge_recovers(&f, fb, sizeof fb), "%s", fb);
    gr_overload_recovers_figure(out, &rec);
done:
    return gr_scenario_done(&c, NULL);
}

/* Ten times the capacity offered, the relay's RSS sampled meanwhile. */
static int offer_load(gr_ctx *ctx, rl_proc_peak *w, rl_load_call **calls, size_t *n, gr_scenario_result *out)
{
    rl_load_options o = {.prefix = gr_tag(ctx),
                         .rate = OL_RATE,
                         .duration_ms = OL_DURATION_MS,
                         .deadline_ms = OL_DEADLINE_MS,
                         .steps = OL_STEPS,
                         .step_ms = OL_STEP_MS,
                         .tick = rl_proc_peak_sample,
                         .user = w,
                         .tick_ms = OL_RSS_TICK_MS};
    if (rl_load_run(gr_submission_channel(ctx), &o, GR_SCENARIO_GRACE_MS, calls, n) != RL_OK)
        return gr_result(out, GR_ERROR, "cannot start the client calls");
    return 0;
}

static int overload(gr_ctx *ctx, gr_scenario_result *out)
{
    Relaylab__ObserveReply *obs = NULL;
    rl_load_call *calls = NULL;
    size_t n = 0;
    gr_overload_outcomes c = {0};
    Relaylab__CapacityRequest req = RELAYLAB__CAPACITY_REQUEST__INIT;
    req.max_work = OL_CAPACITY;
    if (warm_up(ctx, out) || set_world(ctx, "/relaylab.Observer/SetCapacity", &req.base, out))
        goto done;
    rl_proc_peak w = {gr_submission_pgid(ctx), 0};
    rl_proc_peak_sample(&w);
    /* The relay's and the baseline's wait for a CPU around the load
     * (overload_judge.h, "a starved chain"). */
    int64_t wait_a = gr_chain_wait_ns(ctx);
    if (offer_load(ctx, &w, &calls, &n, out))
        goto done;
    int64_t wait_b = wait_a < 0 ? -1 : gr_chain_wait_ns(ctx);
    int64_t last = n ? calls[n - 1].deadline_ns : rl_now_ns();
    if (observe_all(ctx, last + (GR_OVERLOAD_LINGER_MS + 500) * RL_NS_PER_MS, &obs, out) ||
        gr_scenario_crash_check(ctx, false, "under overload", out))
        goto done;
    int64_t t0 = n ? calls[0].start_ns : 0, half = t0 + OL_DURATION_MS / 2 * RL_NS_PER_MS;
    gr_overload_outcomes_count(calls, n, half, &c);
    gr_overload_load_figure(out, calls, n, OL_DURATION_MS, OL_CAPACITY_PER_S);
    gr_overload_seen s;
    gr_overload_look(gr_tag(ctx), calls, n, obs, rl_now_ns(), &s);
    gr_overload_load_facts f = {.rate = OL_RATE,
                                .capacity_per_s = OL_CAPACITY_PER_S,
                                .duration_ms = OL_DURATION_MS,
                                .deadline_ms = OL_DEADLINE_MS,
                                .grace_ms = GR_SCENARIO_GRACE_MS,
                                .calls = calls,
                                .n = n,
                                .c = &c,
                                .s = &s};
    f.goodput = c.ok_late_half / (OL_DURATION_MS / 2000.0); /* over the late half */
    f.peak_mib = (double)w.peak_rss / RL_MIB;
    f.chain_wait_ms = gr_waited_ms(wait_a, wait_b);
    char fb[GR_FEEDBACK_MAX];
    gr_result(out, gr_overload_judge_load(&f, fb, sizeof fb), "%s", fb);
done:
    free(c.lat);
    free(calls);
    return gr_scenario_done(NULL, &obs);
}

/* Lanes (lanes.h): the ten-times load apart from the three outage
 * scenarios, which are a handful of calls each against a baseline that is
 * down, blackholed or restarting. Each has its own relay and baseline. */
static const gr_scenario scenarios[] = {
    {"refused", "backend's port closed: calls fail fast UNAVAILABLE", refused, 0, 1},
    {"blackhole", "backend blackholed: nothing forwarded past its deadline", blackhole, 0, 2},
    {"recovers", "backend back: calls succeed within the backoff", recovers, 0, 1},
    {"overload", "ten times capacity: goodput held, the rest refused fast", overload, 0, 0},
};

const gr_exercise gr_ex_overload = {
    .name = "overload",
    .summary = "fail fast, shed load, never forward past a deadline",
    .kind = GR_SUBMISSION_COMMAND,
    .baselines = 1,
    .scenarios = scenarios,
    .nscenarios = sizeof scenarios / sizeof scenarios[0],
};
