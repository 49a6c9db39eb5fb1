/* ex_flow: the flow-control exercise. A server-streaming producer must make
 * the next message only when the HTTP/2 window lets the previous one go, so
 * a reader that stalls costs it one window, not the whole stream; it must
 * stop when the client cancels, and keep serving. The grader reads with a
 * default C-core client (BDP probing on, as real clients have it) and
 * samples the submission's whole process group from /proc (rl_flow). The
 * budgets and the verdicts are flow_judge.c's. */
#include "exercise.h"
#include "flow_figure.h"
#include "flow_judge.h"
#include "leak.h"
#include "rl_alloc.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_flow.h"
#include "rl_probe.h"
#include "rl_proc.h"
#include "run.h"
#include "scenario.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The lab's request: 3000 x 64 KiB = 187.5 MiB, far above any budget. */
#define STALL_COUNT 3000
#define STALL_SIZE  65536
/* RSS moves by less than this between samples of an idle runtime. */
#define FLAT_TOL_BYTES (UINT64_C(1) << 20)
/* Stop watching past this growth: the verdict is clear and the machine is
 * shared (the driver's RLIMIT_DATA is 1 GiB). resume's stall, which no
 * memory rule judges, ends here. */
#define GIVE_UP_BYTES (UINT64_C(512) << 20)
/* A watch a memory rule judges ends once the growth passes this many
 * budgets. The judge passes a growth within the budget, and the growth is
 * the peak's, which never falls, so from the budget on the verdict is FAIL
 * whatever follows; twice the budget keeps the crossing plain in the
 * feedback and the picture. Watching on to GIVE_UP_BYTES only raised the
 * figures, at a core's cost: an unbounded Python producer's cancel watch
 * took 8.6 s and 4.7 s of its CPU a run (bench/results/class.md). */
#define PAST_BUDGETS 2
/* How long an undecided watch may go on (stall_opts). */
#define UNDECIDED_MAX_MS 30000
/* A peak rising faster than this is not done growing (stall_opts): twice
 * the flat tolerance per second. The known good producers, C, Python and
 * Node, end their watches flat; an unbounded one starved to a sixth of a
 * core still grew 13 MiB/s (bench/results/class.md). */
#define RISING_PER_S (UINT64_C(2) << 20)
/* A stalled reader's watch at its end: a peak that rose more than twice the
 * flat tolerance over the last 3 s is still growing too (stall_opts). A
 * starved producer's rate swings: a timer-paced unbounded one, 3.1 MiB/s
 * on a quiet machine, grew 20.4 MiB in 8.9 s on a loaded one (2.3 MiB/s on
 * average) yet rose under 2 MiB in the watch's last second, and passed
 * (bench/results/soak.md). A producer paced by the window is flat within
 * 1 MiB a second after its window, so it settles long before this rule can
 * apply. */
#define TREND_MS        3000
#define TREND_MIN_BYTES (UINT64_C(2) << 20)
/* A stalled reader's watch does not settle on a flat second during which
 * the group waited for a CPU more than a quarter of the time (stall_opts):
 * the soak's timer-paced unbounded producer, starved by a hog on each core,
 * made nothing for a second and passed at 1.7 MiB. A producer paced by the
 * window sleeps on it: runnable for almost none of its flat second. */
#define STARVED_PCT 25
/* Reading 187.5 MiB from a Python producer takes under 2 s here. */
#define RESUME_MS 30000
/* The slow reader takes a chunk every 5 ms (12.5 MiB/s) for 2-3 s. */
#define SLOW_EVERY_MS 5
/* cancel: many small chunks, so a producer that goes on has work for
 * seconds (1,000,000 x 256 B); let the cancel land before the CPU window. */
#define CANCEL_COUNT     1000000
#define CANCEL_SIZE      256
#define CANCEL_SETTLE_MS 300
/* no-leak: a request far larger than the calls will take (6.1 GiB, under
 * every limit of the reference streamer), so a producer that queues
 * ahead has work to leak. */
#define LEAK_COUNT 100000
#define LEAK_SIZE  65536

/* Turns a failed rl_flow_* step into a verdict: CRASH when the submission
 * died, else TIMEOUT, FAIL or ERROR by |rc|. Returns GR_DECIDED. */
static int failed(gr_ctx *ctx, int rc, const rl_stream *s, const char *err, const char *what, gr_scenario_result *out)
{
    /* A closed connection or a group gone from /proc: signs of death. */
    bool likely_dead = (s->status_done && gr_scenario_status_says_dead(s->status)) || rc == RL_ENOTFOUND;
    if (gr_scenario_crash_check(ctx, likely_dead, what, out))
        return GR_DECIDED;
    char fb[GR_FEEDBACK_MAX];
    return gr_result(out, gr_flow_judge_failed(rc, s->call != NULL, what, err, fb, sizeof fb), "%s", fb);
}

/* The submission's processes could not be read: CRASH when it died (a
 * group gone from /proc is a sign of death), else ERROR. Returns
 * GR_DECIDED. */
static int unreadable(gr_ctx *ctx, const char *what, gr_scenario_result *out)
{
    if (gr_scenario_crash_check(ctx, true, what, out))
        return GR_DECIDED;
    return gr_result(out, GR_ERROR, "cannot read the submission's processes from /proc");
}

/* One watched Produce: its options, the group's RSS watch, the stream. */
typedef struct watched {
    rl_flow_stall_opts o;
    rl_memwatch w;
    rl_stream s;
    rl_flow_stall_result res;
} watched;

/* The first chunk did not come in time (|rc|), but the group grew past the
 * budget (|wa->o.undecided_hi|) while the grader waited for it: the memory
 * rule is broken whatever the timing, so that is the verdict (a starved
 * Node producer that queues the whole stream before its event loop sends
 * any of it was reported TIMEOUT; gr_flow_first_late_over_budget). Returns
 * GR_DECIDED, or 0 when the rule does not apply. */
static int grew_before_first(const watched *wa, int rc, const char *what, gr_scenario_result *out)
{
    uint64_t growth = rl_memwatch_growth(&wa->w);
    if (!gr_flow_first_late_over_budget(rc, wa->s.received, wa->o.read_first, growth, wa->o.undecided_hi))
        return 0;
    char fb[GR_FEEDBACK_MAX];
    gr_verdict v = gr_flow_judge_grew_before_first(what, growth, wa->w.base_rss, wa->w.peak_rss, wa->o.undecided_hi, fb,
                                                   sizeof fb);
    return gr_result(out, v, "%s", fb);
}

/* A watch that ended with the RSS still rising has not shown whether the
 * producer stops: on a quiet machine every producer is flat or past its
 * budget long before, so this is a machine too busy to judge, not a PASS.
 * Returns GR_DECIDED (ERROR), or 0. */
static int still_rising(const watched *wa, gr_scenario_result *out)
{
    gr_flow_rising_facts f = {.rising = wa->res.rising,
                              .starved_pct = wa->o.starved_pct,
                              .wait_pct = wa->res.wait_pct,
                              .watched_ms = wa->res.watched_ms,
                              .growth = rl_memwatch_growth(&wa->w),
                              .rise_1s = rl_memwatch_rise(&wa->w, RL_NS_PER_SEC),
                              .rise_trend = rl_memwatch_rise(&wa->w, TREND_MS * RL_NS_PER_MS),
                              .trend_ms = TREND_MS,
                              .budget = wa->o.undecided_hi};
    char fb[GR_FEEDBACK_MAX];
    if (!gr_flow_judge_rising(&f, fb, sizeof fb))
        return 0;
    return gr_result(out, GR_ERROR, "%s", fb);
}

/* Starts the group watch and the stalled (or slow) read |wa->o| describes.
 * Returns 0, or GR_DECIDED. Finish |wa| with unwatch either way. */
static int watch(gr_ctx *ctx, watched *wa, gr_scenario_result *out)
{
    memset(&wa->w, 0, sizeof wa->w);
    memset(&wa->s, 0, sizeof wa->s);
    /* Every sample kept: the --html page plots them (gr_flow_figure). */
    if (rl_memwatch_start(&wa->w, gr_submission_pgid(ctx), FLAT_TOL_BYTES, true) != RL_OK)
        return unreadable(ctx, "before Produce", out);
    char err[400];
    char what[96];
    snprintf(what, sizeof what, "Produce(%u x %u)", wa->o.count, wa->o.size);
    int rc = rl_flow_stall(gr_submission_channel(ctx), gr_tag(ctx), &wa->o, &wa->w, &wa->s, &wa->res, err, sizeof err);
    if (rc == RL_OK)
        return 0;
    if (grew_before_first(wa, rc, what, out))
        return GR_DECIDED;
    return failed(ctx, rc, &wa->s, err, what, out);
}

static void unwatch(watched *wa)
{
    rl_stream_fini(&wa->s);
    rl_memwatch_fini(&wa->w);
}

/* The watch for a memory budget of |budget_mib|. A producer that respects
 * the window goes flat well under its budget; one that does not grows
 * past it -- given the CPU to make chunks. On a machine so loaded that an
 * unbounded producer had made only 80 MiB of queue in slow-reader's 3 s
 * (seen once, load average 21 on 2 cores), a fixed watch passed it. So a
 * watch that ends with the RSS still moving, past half the budget but not
 * past the budget, is not judged yet: it goes on until the RSS is flat or
 * past the budget (at most 30 s). The same holds for an RSS still rising
 * fast, whatever its growth: an unbounded producer starved to a sixth of
 * a core had grown only 39.6 MiB of slow-reader's 96 when its 3 s ended
 * (bench/results/class.md); one still rising at 30 s is not judged. Past
 * PAST_BUDGETS budgets the watch ends at once, decided. */
static void stall_opts(rl_flow_stall_opts *o, double budget_mib)
{
    rl_flow_stall_defaults(o);
    o->count = STALL_COUNT;
    o->size = STALL_SIZE;
    o->give_up_growth = (uint64_t)(PAST_BUDGETS * budget_mib * RL_MIB);
    o->undecided_lo = (uint64_t)(budget_mib / 2 * RL_MIB);
    o->undecided_hi = (uint64_t)(budget_mib * RL_MIB);
    o->undecided_max_ms = UNDECIDED_MAX_MS;
    o->rising_per_s = RISING_PER_S;
    o->trend_ms = TREND_MS;
    o->trend_min = TREND_MIN_BYTES;
    o->starved_pct = STARVED_PCT;
}

/* Runs the watch |wa->o| describes and judges the group's RSS growth
 * against |budget_mib|. A reader that stops (read_every_ms 0) and one that
 * keeps reading slowly differ only in the options. */
static int memory_scenario(gr_ctx *ctx, watched *wa, double budget_mib, gr_scenario_result *out)
{
    if (watch(ctx, wa, out) || still_rising(wa, out))
        goto done;
    const rl_flow_stall_opts *o = &wa->o;
    gr_flow_mem_check c;
    gr_flow_judge_memory(wa->w.base_rss, wa->w.peak_rss, wa->res.read, o->count, wa->res.watched_ms, wa->res.settled,
                         budget_mib, &c);
    char what[128], fb[GR_FEEDBACK_MAX];
    if (o->read_every_ms)
        snprintf(what, sizeof what, "with a reader taking one chunk every %d ms (%llu read, all right)",
                 (int)o->read_every_ms, (unsigned long long)wa->res.read);
    else
        snprintf(what, sizeof what, "while the reader was stalled after 1 chunk");
    gr_result(out, gr_flow_judge_watch(&c, what, fb, sizeof fb), "%s", fb);
    gr_flow_figure(out, &wa->w, &wa->o, &wa->res, budget_mib, c.pass);
done:
    unwatch(wa);
    return 0;
}

/* stall: read 1 chunk of 3000 x 64 KiB, stop reading, watch the RSS. */
static int stall(gr_ctx *ctx, gr_scenario_result *out)
{
    watched wa;
    stall_opts(&wa.o, GR_FLOW_BUDGET_MIB);
    return memory_scenario(ctx, &wa, GR_FLOW_BUDGET_MIB, out);
}

/* resume: the same stall, then read the rest: every chunk, in order, right. */
static int resume(gr_ctx *ctx, gr_scenario_result *out)
{
    watched wa;
    stall_opts(&wa.o, GR_FLOW_BUDGET_MIB);
    /* No memory rule judges this stall, so it is neither cut at the
     * budget nor watched on while undecided: it lasts until the RSS is
     * flat, GIVE_UP_BYTES or 8 s, long enough for any queue to fill. So the
     * scenario's waits (first chunk 10 s, stall 8 s, RESUME_MS) stay inside
     * the driver's GR_WATCHDOG_MS, which a stall watched on for 30 s did
     * not. */
    wa.o.give_up_growth = GIVE_UP_BYTES;
    wa.o.undecided_max_ms = wa.o.max_ms;
    if (watch(ctx, &wa, out))
        goto done;
    char err[400];
    int64_t t0 = rl_now_ns();
    int rc = rl_flow_read_rest(&wa.s, t0 + RESUME_MS * RL_NS_PER_MS, err, sizeof err);
    rl_memwatch_sample(&wa.w); /* gone: the picture ends at the stall */
    gr_flow_resume_figure(out, &wa.w, &wa.o, &wa.res, t0, rc == RL_OK);
    if (rc != RL_OK) {
        char what[128];
        snprintf(what, sizeof what, "reading again after a %.1f s stall", wa.res.watched_ms / 1000.0);
        failed(ctx, rc, &wa.s, err, what, out);
        goto done;
    }
    char fb[GR_FEEDBACK_MAX];
    gr_verdict v = gr_flow_judge_resume(wa.res.watched_ms, wa.o.count, wa.s.bytes, (rl_now_ns() - t0) / RL_NS_PER_MS,
                                        fb, sizeof fb);
    gr_result(out, v, "%s", fb);
done:
    unwatch(&wa);
    return 0;
}

/* slow-reader: take one chunk every 5 ms; memory must stay bounded too. */
static int slow_reader(gr_ctx *ctx, gr_scenario_result *out)
{
    watched wa;
    stall_opts(&wa.o, GR_FLOW_SLOW_BUDGET_MIB);
    wa.o.read_every_ms = SLOW_EVERY_MS;
    wa.o.min_ms = 2000;
    wa.o.max_ms = 3000;
    /* Here chunks flow and a garbage-collected runtime's peak creeps up
     * for a while (Node: 35 MiB, GR_FLOW_SLOW_BUDGET_MIB); the band and the
     * 2 MiB/s rule judge this watch, not the stalled reader's trend. */
    wa.o.trend_ms = 0;
    wa.o.trend_min = 0;
    wa.o.starved_pct = 0; /* a producer that sends works, and may wait */
    return memory_scenario(ctx, &wa, GR_FLOW_SLOW_BUDGET_MIB, out);
}

/* Samples |w| every 50 ms for |ms|. Returns 0 or RL_ENOTFOUND. */
static int watch_for(rl_memwatch *w, int64_t ms)
{
    int64_t until = rl_now_ns() + ms * RL_NS_PER_MS;
    for (;;) {
        if (rl_memwatch_sample(w) != RL_OK)
            return RL_ENOTFOUND;
        int64_t left = until - rl_now_ns();
        if (left <= 0)
            return RL_OK;
        rl_sleep_ms(left < 50 * RL_NS_PER_MS ? left / RL_NS_PER_MS + 1 : 50, NULL);
    }
}

/* cancel: Produce(1,000,000 x 256), read one chunk and stall until the
 * group's RSS is flat, cancel, then the group must use no CPU and a fresh
 * Produce must succeed.
 *
 * Whether the cancel stopped the work is judged from the work itself, so
 * the verdict does not depend on who wins a race: a producer that never
 * looks at the call either is still making chunks after the cancel (CPU)
 * or, on a machine fast enough to finish first, made them all for a reader
 * that had taken one (RSS, watched from before the call to the end). Only
 * a producer paced by the window is small before the cancel and idle
 * after it. */
static int cancel(gr_ctx *ctx, gr_scenario_result *out)
{
    grpc_channel *ch = gr_submission_channel(ctx);
    watched wa;
    stall_opts(&wa.o, GR_FLOW_BUDGET_MIB);
    wa.o.count = CANCEL_COUNT;
    wa.o.size = CANCEL_SIZE;
    rl_memwatch *w = &wa.w;
    const rl_flow_stall_result *res = &wa.res;
    rl_stream s2;
    memset(&s2, 0, sizeof s2);
    char err[400], fb[GR_FEEDBACK_MAX];
    if (watch(ctx, &wa, out) || still_rising(&wa, out))
        goto done;
    gr_flow_mem_check c;
    gr_flow_judge_memory(w->base_rss, w->peak_rss, res->read, wa.o.count, res->watched_ms, res->settled,
                         GR_FLOW_BUDGET_MIB, &c);
    gr_verdict v = gr_flow_judge_before_cancel(&c, res->read, fb, sizeof fb);
    if (v != GR_PASS) {
        gr_flow_figure(out, &wa.w, &wa.o, &wa.res, GR_FLOW_BUDGET_MIB, false);
        gr_result(out, v, "%s", fb);
        goto done;
    }
    int64_t cn = gr_scenario_cancel_stream(&wa.s);
    rl_proc_sample a, b;
    int64_t t0 = 0;
    /* The scheduler's run and wait times: what the group asked for, not
     * only what a busy machine gave it (gr_flow_judge_cancel). Unreadable
     * (no schedstat): judged by CPU alone. */
    int64_t run_a = 0, wait_a = 0, run_b = 0, wait_b = 0;
    bool sched = false;
    if (watch_for(w, CANCEL_SETTLE_MS) != RL_OK || rl_proc_group_sample(w->pgid, &a) != RL_OK ||
        (sched = rl_proc_group_sched(w->pgid, &run_a, &wait_a) == RL_OK, t0 = rl_now_ns(),
         watch_for(w, GR_FLOW_CANCEL_WINDOW_MS)) != RL_OK ||
        rl_proc_group_sample(w->pgid, &b) != RL_OK) {
        unreadable(ctx, "after the cancel", out);
        goto done;
    }
    if (sched)
        sched = rl_proc_group_sched(w->pgid, &run_b, &wait_b) == RL_OK;
    int64_t window_ms = (rl_now_ns() - t0) / RL_NS_PER_MS;
    int64_t cpu_ms = (b.cpu_ns - a.cpu_ns) / RL_NS_PER_MS;
    int64_t wait_ms = sched ? gr_waited_ms(wait_a, wait_b) : -1;
    gr_flow_cancel_verdict cv = gr_flow_judge_cancel(cpu_ms, wait_ms, window_ms);
    gr_flow_cancel_figure(out, w, cn, t0, t0 + window_ms * RL_NS_PER_MS, cpu_ms, window_ms, cv);
    if ((v = gr_flow_judge_cpu_after_cancel(cpu_ms, wait_ms, window_ms, CANCEL_SETTLE_MS, fb, sizeof fb)) != GR_PASS) {
        gr_result(out, v, "%s", fb);
        goto done;
    }
    gr_flow_judge_memory(w->base_rss, w->peak_rss, res->read, wa.o.count, res->watched_ms, true, GR_FLOW_BUDGET_MIB,
                         &c);
    if ((v = gr_flow_judge_after_cancel_memory(&c, fb, sizeof fb)) != GR_PASS) {
        gr_flow_figure(out, &wa.w, &wa.o, &wa.res, GR_FLOW_BUDGET_MIB, false);
        gr_result(out, v, "%s", fb);
        goto done;
    }
    /* Keeps serving: a fresh small call on the same connection. */
    int rc = rl_stream_open(&s2, ch, gr_tag(ctx), 5, 1000, rl_now_ns() + 5000 * RL_NS_PER_MS);
    if (rc == RL_OK)
        rc = rl_flow_read_rest(&s2, rl_now_ns() + 6000 * RL_NS_PER_MS, err, sizeof err);
    else
        snprintf(err, sizeof err, "cannot start the call");
    if (rc != RL_OK) {
        failed(ctx, rc, &s2, err, "after a cancelled Produce, a new Produce(5 x 1000)", out);
        goto done;
    }
    gr_result(out, gr_flow_judge_cancel_pass(res->read, c.growth_mib, cpu_ms, window_ms, fb, sizeof fb), "%s", fb);
done:
    rl_stream_fini(&s2);
    unwatch(&wa);
    return 0;
}

/* One Produce(LEAK_COUNT x LEAK_SIZE), one chunk read, cancelled, its
 * status awaited (an gr_leak_call_fn). While it waits for the chunk it
 * watches the group: one that runs away from |start| fails there. */
static int cancelled_produce(gr_ctx *ctx, int i, const rl_proc_sample *start, gr_scenario_result *out)
{
    rl_stream s;
    char what[96], err[400];
    snprintf(what, sizeof what, "cancelled Produce %d of %d", i + 1, GR_LEAK_WARMUP_CALLS + GR_LEAK_CALLS);
    int rc = rl_stream_open(&s, gr_submission_channel(ctx), gr_tag(ctx), LEAK_COUNT, LEAK_SIZE, INT64_MAX);
    bool end = false, ran_away = false;
    int64_t until = rl_now_ns() + 10000 * RL_NS_PER_MS;
    if (rc == RL_OK) {
        do {
            int64_t step = rl_now_ns() + 50 * RL_NS_PER_MS;
            rc = rl_stream_next(&s, step < until ? step : until, &end);
            rl_proc_sample now;
            if (rc == RL_ETIMEOUT && rl_proc_group_sample(gr_submission_pgid(ctx), &now) == RL_OK &&
                gr_leak_runaway(start, &now)) {
                ran_away = true;
                snprintf(err, sizeof err,
                         "while Produce(%u x %u) %d of %d had sent nothing yet, RSS grew %.1f MiB (%.1f -> %.1f MiB): "
                         "the producer makes the whole response before it sends any of it -- make each chunk when "
                         "the window lets the last one go",
                         (unsigned)LEAK_COUNT, (unsigned)LEAK_SIZE, i + 1, GR_LEAK_WARMUP_CALLS + GR_LEAK_CALLS,
                         ((double)now.rss_bytes - (double)start->rss_bytes) / RL_MIB, (double)start->rss_bytes / RL_MIB,
                         (double)now.rss_bytes / RL_MIB);
            }
        } while (rc == RL_ETIMEOUT && !ran_away && rl_now_ns() < until);
    }
    if (ran_away) {
        rl_stream_fini(&s);
        return gr_result(out, GR_FAIL, "%s", err);
    }
    if (rc == RL_OK && end) {
        rl_stream_wait_status(&s, rl_now_ns() + 1000 * RL_NS_PER_MS);
        snprintf(err, sizeof err, "the stream ended before its first chunk with %s", rl_status_name(s.status));
        rc = RL_EGRPC;
    } else if (rc == RL_ETIMEOUT) {
        snprintf(err, sizeof err, "no chunk arrived in 10 s");
    } else if (rc != RL_OK) {
        snprintf(err, sizeof err, "%s", s.error[0] ? s.error : "the call failed");
    }
    int decided = 0;
    if (rc == RL_OK)
        gr_scenario_cancel_stream(&s);
    else
        decided = failed(ctx, rc, &s, err, what, out);
    rl_stream_fini(&s);
    return decided;
}

/* no-leak: cancelled Produce calls leave nothing behind (leak.h). */
static int no_leak(gr_ctx *ctx, gr_scenario_result *out)
{
    return gr_leak_scenario(ctx, cancelled_produce, "cancelled Produce calls", out);
}

/* Lanes (lanes.h): two, one producer streaming in each at a time. Every
 * memory judge reads the producer's CPU wait (a starved producer grows
 * late, and is watched on rather than passed), so two producers share the
 * two cores, not five. */
static const gr_scenario scenarios[] = {
    {"stall", "a stalled reader costs one window", stall, 0, 1},
    {"resume", "after the stall every chunk arrives, right", resume, 0, 1},
    {"cancel", "cancel stops the producer; still serves", cancel, 0, 0},
    {"slow-reader", "a slow reader keeps memory bounded", slow_reader, 0, 0},
    {"no-leak", "cancelled calls leave nothing behind", no_leak, 0, 1},
};

const gr_exercise gr_ex_flow = {
    .name = "flow",
    .summary = "server streaming respects flow control",
    .kind = GR_SUBMISSION_COMMAND,
    .baselines = 0,
    .scenarios = scenarios,
    .nscenarios = sizeof scenarios / sizeof scenarios[0],
};
