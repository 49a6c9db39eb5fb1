/* ex_cancel: the cancellation exercise. When its client cancels, a relay
 * must cancel the downstream call in flight at once, start no further one,
 * and keep serving. The grader cancels at an instant C it records itself,
 * chosen when the baseline's observer shows the downstream call running,
 * and judges the end the baseline recorded on the same clock, by
 * cancel_judge.c's rules. */
#include "cancel_judge.h"
#include "exercise.h"
#include "cancel_figure.h"
#include "judge.h"
#include "leak.h"
#include "process.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_proc_sample.h"
#include "run.h"
#include "scenario.h"

#include <stdio.h>
#include <string.h>

static bool has_ended(const Relaylab__ObserveReply *r, void *user)
{
    const Relaylab__CallRecord *rec = rl_observe_find(r, (const char *)user, 0);
    return rec && rec->ended;
}

static bool work_seen(const Relaylab__ObserveReply *r, void *user)
{
    (void)user;
    return rl_observe_count(r, "Work") > 0;
}

/* Starts Process (no deadline) and waits until |method| runs on the
 * baseline (process.h). */
static int start_and_reach(gr_ctx *ctx, rl_probe_call *c, const char *tag, const char *method, uint32_t lookup_ms,
                           uint32_t steps, gr_scenario_result *out)
{
    return gr_process_start_and_reach(ctx, c, tag, method, lookup_ms, steps, 10, GR_PROCESS_REACH_MS, out);
}

/* Cancels, waits for |method| to end (up to |full_ms| + 1 s: long enough to
 * see a relay that lets it run to its natural end) and judges it. Fills
 * *cc; returns 0, or GR_DECIDED. */
static int cancel_and_judge(gr_ctx *ctx, rl_probe_call *c, const char *tag, const char *method, int64_t full_ms,
                            uint32_t steps, int64_t *cancel_ns, int64_t *end_ns, gr_cancel_check *cc,
                            gr_scenario_result *out)
{
    /* A chain waiting for a CPU passes a cancel on late through no fault
     * of the relay's (gr_cancel_starved): its wait is read around. */
    int64_t wait_a = gr_chain_wait_ns(ctx);
    int64_t cn = rl_probe_call_cancel(c);
    *cancel_ns = cn;
    Relaylab__ObserveReply *obs = NULL;
    int rc =
        gr_process_observe_until(ctx, tag, has_ended, (void *)method, cn + (full_ms + 1000) * RL_NS_PER_MS, 5, &obs);
    int64_t seen = rl_now_ns();
    int64_t wait_b = wait_a < 0 ? -1 : gr_chain_wait_ns(ctx);
    rl_probe_call_wait(c, rl_now_ns() + GR_SCENARIO_CANCEL_MS * RL_NS_PER_MS);
    const Relaylab__CallRecord *rec = rl_observe_find(obs, method, 0);
    /* The record of a call the observer showed running cannot be missing
     * unless the observer failed. */
    int decided = gr_scenario_observed(rc, rec ? obs : NULL, out);
    if (!decided)
        decided = gr_scenario_crash_check(ctx, false, "after the cancel", out);
    if (!decided) {
        /* NOLINTNEXTLINE(clang-analyzer-core.NullDereference): gr_scenario_observed decided on a NULL rec */
        *end_ns = rec->ended ? rec->end_ns : 0;
        uint32_t max_steps = steps ? gr_cancel_max_steps(gr_ms_between(rec->arrival_ns, cn), 10, steps) : 0;
        gr_cancel_judge_stop(method, rec->ended, rec->cancelled, rec->ended ? gr_ms_between(cn, rec->end_ns) : -1,
                             gr_ms_between(cn, seen), rec->steps_done, steps, max_steps, cc);
        gr_cancel_starved(cc, gr_waited_ms(wait_a, wait_b));
        gr_cancel_figure(out, c, cn, rec, cc);
    }
    gr_scenario_free_obs(&obs);
    return decided;
}

/* A cancel passed on late only because the machine starved the chain
 * says nothing (gr_cancel_starved): it is measured again, under a
 * tag of its own, up to CANCEL_ATTEMPTS times, and is ERROR only when
 * every attempt was starved. A load that starves one attempt seldom
 * starves three in a row (the soak's one such FAIL in 6,670 tests). */
#define CANCEL_ATTEMPTS 3

/* One attempt of a scenario under |tag|: its verdict into |out|, and
 * *starved set when that verdict is the starved ERROR. */
typedef int (*cancel_attempt)(gr_ctx *ctx, const char *tag, gr_scenario_result *out, bool *starved);

static int until_not_starved(gr_ctx *ctx, cancel_attempt attempt, gr_scenario_result *out)
{
    char tag[256];
    for (int k = 1;; k++) {
        /* The baseline keeps the records of the attempt before: each has
         * a tag of its own (gr_process_start notes it as the grader's). */
        if (k == 1)
            snprintf(tag, sizeof tag, "%s", gr_tag(ctx));
        else
            snprintf(tag, sizeof tag, "%s.a%d", gr_tag(ctx), k);
        bool starved = false;
        int rc = attempt(ctx, tag, out, &starved);
        if (!starved || gr_interrupted(ctx))
            return rc;
        if (k == CANCEL_ATTEMPTS) {
            char note[64];
            snprintf(note, sizeof note, "starved in all %d attempts", CANCEL_ATTEMPTS);
            gr_feedback_append(out, note);
            return rc;
        }
    }
}

/* during-work: cancel while Work (200 x 10 ms) runs. */
static int during_work_attempt(gr_ctx *ctx, const char *tag, gr_scenario_result *out, bool *starved)
{
    rl_probe_call c;
    int64_t cn, end;
    gr_cancel_check cc;
    if (start_and_reach(ctx, &c, tag, "Work", 0, 200, out) ||
        cancel_and_judge(ctx, &c, tag, "Work", 2000, 200, &cn, &end, &cc, out))
        goto done;
    char fb[GR_FEEDBACK_MAX];
    gr_result(out, gr_cancel_verdict(&cc, "", starved, fb, sizeof fb), "%s", fb);
done:
    return gr_scenario_done(&c, NULL);
}

static int during_work(gr_ctx *ctx, gr_scenario_result *out)
{
    return until_not_starved(ctx, during_work_attempt, out);
}

/* during-lookup: cancel while Lookup (2000 ms) runs; Work must not follow. */
static int during_lookup_attempt(gr_ctx *ctx, const char *tag, gr_scenario_result *out, bool *starved)
{
    rl_probe_call c;
    Relaylab__ObserveReply *obs = NULL;
    int64_t cn, end;
    gr_cancel_check cc;
    if (start_and_reach(ctx, &c, tag, "Lookup", 2000, 1, out) ||
        cancel_and_judge(ctx, &c, tag, "Lookup", 2000, 0, &cn, &end, &cc, out))
        goto done;
    /* As in deadline/expires-in-lookup: a relay that misses the cancel calls
     * Work right after Lookup returns, within ms (tens on a loaded
     * machine); 500 ms past Lookup's end (or past now, if it never ended)
     * catches it with a wide margin. */
    int64_t from = end ? end : rl_now_ns();
    int rc = gr_process_observe_until(ctx, tag, work_seen, NULL, from + GR_JUDGE_LATE_CALL_WINDOW_MS * RL_NS_PER_MS, 5,
                                      &obs);
    if (gr_scenario_observed(rc, obs, out))
        goto done;
    const Relaylab__CallRecord *wk = rl_observe_find(obs, "Work", 0);
    if (wk)
        gr_cancel_late_work_figure(out, &c, cn, wk);
    char fb[GR_FEEDBACK_MAX];
    gr_verdict v =
        gr_cancel_judge_lookup(&cc, wk != NULL, wk ? gr_ms_between(cn, wk->arrival_ns) : 0, starved, fb, sizeof fb);
    gr_result(out, v, "%s", fb);
done:
    return gr_scenario_done(&c, &obs);
}

static int during_lookup(gr_ctx *ctx, gr_scenario_result *out)
{
    return until_not_starved(ctx, during_lookup_attempt, out);
}

/* keeps-serving: after a cancelled Process, a normal one succeeds. */
static int keeps_serving(gr_ctx *ctx, gr_scenario_result *out)
{
    const char *tag = gr_tag(ctx);
    rl_probe_call c, c2;
    memset(&c2, 0, sizeof c2);
    if (start_and_reach(ctx, &c, tag, "Work", 0, 200, out))
        goto done;
    int64_t cn = gr_scenario_cancel(&c);

    char tag2[200];
    snprintf(tag2, sizeof tag2, "%s.after", tag);
    int64_t d = rl_now_ns() + 5000 * RL_NS_PER_MS;
    if (gr_process_start(ctx, &c2, tag2, 0, 1, 10, d, out) || gr_scenario_wait(&c2, out) ||
        gr_scenario_crash_after(ctx, &c2, "after a cancelled Process", out))
        goto done;
    char why[256];
    bool ok = gr_process_reply_ok(&c2, tag2, why, sizeof why);
    gr_cancel_keeps_serving_figure(out, &c, cn, &c2, ok);
    char fb[GR_FEEDBACK_MAX];
    gr_result(out, gr_cancel_judge_keeps_serving(ok, why, gr_ms_between(c2.start_ns, c2.end_ns), fb, sizeof fb), "%s",
              fb);
done:
    gr_scenario_done(&c2, NULL);
    return gr_scenario_done(&c, NULL);
}

/* no-leak: Work steps of the cancelled calls: a relay that ignores the
 * cancel (judged by during-work, not here) holds each call for 200 ms
 * more, not for seconds. */
#define LEAK_STEPS    20
#define LEAK_ATTEMPTS 3

/* Process call |i|, cancelled once its Work runs on the baseline, and done
 * once that Work ended (an gr_leak_call_fn). Waiting for the end keeps one
 * call in the relay at a time whether or not it passes the cancel on, so
 * its thread pool is the same size after the batch as before it: a relay
 * that ignores the cancel would otherwise grow its pool by the calls it
 * still holds, which is not a leak. */
static int cancelled_process(gr_ctx *ctx, int i, const rl_proc_sample *start, gr_scenario_result *out)
{
    (void)start; /* a relay answers or fails each call by itself; gr_leak_scenario checks for a runaway between calls */
    char tag[200];
    rl_probe_call c;
    Relaylab__ObserveReply *obs = NULL;
    /* A 200 ms Work can run and end unseen by a starved grader: that call
     * left nothing to judge, so another one takes its place. */
    int decided = GR_PROCESS_MISSED;
    for (int attempt = 0; decided == GR_PROCESS_MISSED && attempt < LEAK_ATTEMPTS; attempt++) {
        if (attempt)
            rl_probe_call_fini(&c);
        snprintf(tag, sizeof tag, "%s.%d.%d", gr_tag(ctx), i, attempt);
        decided = gr_process_try_reach(ctx, &c, tag, "Work", 0, LEAK_STEPS, 10, GR_PROCESS_REACH_MS, out);
    }
    if (decided == GR_PROCESS_MISSED)
        decided = gr_result(out, GR_ERROR,
                            "Work ran and ended unseen %d times in a row (cancelled call %d): the machine "
                            "is too busy to time this scenario -- grade again",
                            LEAK_ATTEMPTS, i + 1);
    if (!decided) {
        int64_t cn = gr_scenario_cancel(&c);
        int rc = gr_process_observe_until(ctx, tag, has_ended, (void *)"Work",
                                          cn + (LEAK_STEPS * 10 + 1000) * RL_NS_PER_MS, 5, &obs);
        decided = gr_scenario_observed(rc, obs, out);
    }
    gr_scenario_done(&c, &obs);
    return decided;
}

/* no-leak: Process calls cancelled during Work leave nothing behind. */
static int no_leak(gr_ctx *ctx, gr_scenario_result *out)
{
    return gr_leak_scenario(ctx, cancelled_process, "Process calls cancelled during Work", out);
}

/* Lanes (lanes.h): two of two scenarios, each with its own relay and
 * baseline; a Work missed by a starved grader is tried again (the chain's
 * CPU wait is read). */
static const gr_scenario scenarios[] = {
    {"during-work", "cancel during Work stops Work", during_work, 0, 0},
    {"during-lookup", "cancel during Lookup: no Work", during_lookup, 0, 0},
    {"keeps-serving", "serves again after a cancel", keeps_serving, 0, 1},
    {"no-leak", "cancelled calls leave nothing behind", no_leak, 0, 1},
};

const gr_exercise gr_ex_cancel = {
    .name = "cancel",
    .summary = "cancellation propagates downstream",
    .kind = GR_SUBMISSION_COMMAND,
    .baselines = 1,
    .scenarios = scenarios,
    .nscenarios = sizeof scenarios / sizeof scenarios[0],
};

/* ---- cancel-missed: the grader's own test of a grader that missed Work ----
 * The same scenarios with the baseline's observer told to hide the first
 * N Work calls while they run (Observer/HideRunning), so the grader misses
 * them as one starved past a whole Work call would: no-leak must make
 * another call in place of each missed one (PASS for a good relay after 2
 * misses, ERROR after 3), and during-work must say ERROR, never the
 * relay's FAIL. Found only with GR_TEST_EXERCISES_ENV set (exercise.h). */

/* Tells baseline 0 to hide the next |calls| Work calls while they run. */
static int hide_running_work(gr_ctx *ctx, uint32_t calls, gr_scenario_result *out)
{
    Relaylab__HideRunningRequest req = RELAYLAB__HIDE_RUNNING_REQUEST__INIT;
    req.method = (char *)"Work";
    req.calls = calls;
    rl_probe_call c;
    int decided = 0;
    if (rl_probe_call_start(&c, gr_baseline_channel(ctx, 0), "/relaylab.Observer/HideRunning", &req.base,
                            rl_now_ns() + GR_SCENARIO_OBSERVER_MS * RL_NS_PER_MS) != RL_OK ||
        rl_probe_call_wait(&c, c.deadline_ns + GR_SCENARIO_GRACE_MS * RL_NS_PER_MS) != RL_OK ||
        c.batch.status != GRPC_STATUS_OK)
        decided = gr_result(out, GR_ERROR, "the baseline's observer did not take HideRunning (%s)",
                            c.done ? rl_status_name(c.batch.status) : "no answer");
    rl_probe_call_fini(&c);
    return decided;
}

static int no_leak_missed_twice(gr_ctx *ctx, gr_scenario_result *out)
{
    return hide_running_work(ctx, LEAK_ATTEMPTS - 1, out) || no_leak(ctx, out);
}

static int no_leak_missed_every_try(gr_ctx *ctx, gr_scenario_result *out)
{
    return hide_running_work(ctx, LEAK_ATTEMPTS, out) || no_leak(ctx, out);
}

static int during_work_missed(gr_ctx *ctx, gr_scenario_result *out)
{
    return hide_running_work(ctx, 1, out) || during_work(ctx, out);
}

static const gr_scenario missed_scenarios[] = {
    {"no-leak-missed-twice", "no-leak, Work unseen twice: tried again", no_leak_missed_twice, 0, 0},
    {"no-leak-missed-every-try", "no-leak, Work unseen every try: ERROR", no_leak_missed_every_try, 0, 0},
    {"during-work-missed", "during-work, Work unseen: ERROR", during_work_missed, 0, 0},
};

const gr_exercise gr_ex_cancel_missed = {
    .name = "cancel-missed",
    .summary = "the grader's own test: cancel's scenarios when it missed Work running",
    .kind = GR_SUBMISSION_COMMAND,
    .baselines = 1,
    .scenarios = missed_scenarios,
    .nscenarios = sizeof missed_scenarios / sizeof missed_scenarios[0],
};
