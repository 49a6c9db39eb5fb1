/* ex_cancel: the cancellation exercise. When its client cancels, a relay
 * must cancel the downstream call in flight at once, start no further one,
 * and keep serving. The grader cancels at an instant C it records itself,
 * chosen when the baseline's observer shows the downstream call running,
 * and judges the end the baseline recorded on the same clock. */
#include "exercise.h"
#include "judge.h"
#include "leak.h"
#include "process.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "run.h"

#include <stdio.h>
#include <string.h>

#define MS RL_NS_PER_MS

/* How long the relay may take to reach the downstream call: a Python relay
 * starts in well under a second; 3 s also absorbs a loaded machine. */
#define REACH_MS 3000

typedef struct running_wait {
    const char *method;
    uint32_t min_steps;  /* Work: steps it must have done */
    rl_probe_call *call; /* stop waiting when the Process call ended */
} running_wait;

static bool is_running(const Relaylab__ObserveReply *r, void *user)
{
    running_wait *w = user;
    const Relaylab__CallRecord *rec = rl_observe_find(r, w->method, 0);
    /* Work counts as running once a step is done: the cancel then lands in
     * the middle of real work, not in the relay's call set-up. */
    if (rec && !rec->ended && (w->min_steps == 0 || rec->steps_done >= w->min_steps))
        return true;
    return rl_probe_call_wait(w->call, 0) == RL_OK; /* non-blocking check */
}

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
 * baseline. Returns 0 when it does (C not yet taken); otherwise fills |out|
 * (TIMEOUT, CRASH, FAIL or ERROR) and returns 1. */
static int start_and_reach(rl_grade_ctx *ctx, rl_probe_call *c, const char *tag, const char *method,
                           uint32_t lookup_ms, uint32_t steps, rl_scenario_result *out)
{
    if (rl_process_start(ctx, c, tag, lookup_ms, steps, 10, RL_NO_DEADLINE) != RL_OK) {
        rl_grade_result(out, RL_ERROR, "cannot start the Process call");
        return 1;
    }
    running_wait w = {.method = method, .min_steps = strcmp(method, "Work") == 0 ? 1 : 0, .call = c};
    Relaylab__ObserveReply *obs = NULL;
    int rc = rl_process_observe_until(ctx, tag, is_running, &w, c->start_ns + REACH_MS * MS, 2,
                              &obs);
    const Relaylab__CallRecord *rec = rl_observe_find(obs, method, 0);
    bool running = rc == RL_OK && rec && !rec->ended && !c->done;
    size_t nl = rl_observe_count(obs, "Lookup"), nw = rl_observe_count(obs, "Work");
    if (obs)
        relaylab__observe_reply__free_unpacked(obs, NULL);
    if (running)
        return 0;
    if (rc == RL_EGRPC)
        return rl_grade_result(out, RL_ERROR, "the baseline's observer did not answer") + 1;
    char what[96];
    snprintf(what, sizeof what, "before %s started", method);
    if (rl_grade_crash_check(ctx, c->done ? 1000 : 100, what, out))
        return 1;
    if (c->done && c->status == GRPC_STATUS_DEADLINE_EXCEEDED) {
        /* Every call start_and_reach makes has no deadline: this status is
         * the relay's own doing (judge.h). */
        char fb[RL_FEEDBACK_MAX];
        rl_judge_no_deadline_expired_feedback(rl_ms_between(c->start_ns, c->end_ns), nl, nw, fb, sizeof fb);
        return rl_grade_result(out, RL_FAIL, "%s", fb) + 1;
    }
    if (c->done) {
        char st[200];
        rl_process_status_text(c, st, sizeof st);
        return rl_grade_result(out, RL_FAIL,
                               "Process returned %s before %s ran (the baseline saw %zu Lookup and %zu Work calls)", st,
                               method, nl, nw) +
               1;
    }
    return rl_grade_result(out, RL_TIMEOUT, "%s never started within %d ms of the Process call (the baseline saw %zu "
                           "Lookup and %zu Work calls) and Process did not answer",
                           method, REACH_MS, nl, nw) +
           1;
}

/* Cancels, waits for |method| to end (up to |full_ms| + 1 s: long enough to
 * see a relay that lets it run to its natural end) and judges it. Fills
 * *cc; returns 0, or 1 with |out| filled when the scenario is over. */
static int cancel_and_judge(rl_grade_ctx *ctx, rl_probe_call *c, const char *tag, const char *method,
                            int64_t full_ms, uint32_t steps, int64_t *cancel_ns, int64_t *end_ns,
                            rl_cancel_check *cc, rl_scenario_result *out)
{
    int64_t cn = rl_probe_call_cancel(c);
    *cancel_ns = cn;
    Relaylab__ObserveReply *obs = NULL;
    int rc = rl_process_observe_until(ctx, tag, has_ended, (void *)method,
                              cn + (full_ms + 1000) * MS, 5, &obs);
    int64_t seen = rl_now_ns();
    rl_probe_call_wait(c, rl_now_ns() + 1000 * MS);
    const Relaylab__CallRecord *rec = rl_observe_find(obs, method, 0);
    if (rc == RL_EGRPC || !rec) {
        if (obs)
            relaylab__observe_reply__free_unpacked(obs, NULL);
        return rl_grade_result(out, RL_ERROR, "the baseline's observer did not answer") + 1;
    }
    char what[96];
    snprintf(what, sizeof what, "after the cancel");
    if (rl_grade_crash_check(ctx, 100, what, out)) {
        relaylab__observe_reply__free_unpacked(obs, NULL);
        return 1;
    }
    *end_ns = rec->ended ? rec->end_ns : 0;
    uint32_t max_steps = steps ? rl_judge_max_steps(rl_ms_between(rec->arrival_ns, cn), 10, steps) : 0;
    rl_judge_cancel(method, rec->ended, rec->cancelled, rec->ended ? rl_ms_between(cn, rec->end_ns) : -1,
                    rl_ms_between(cn, seen), rec->steps_done, steps, max_steps, cc);
    relaylab__observe_reply__free_unpacked(obs, NULL);
    return 0;
}

/* during-work: cancel while Work (200 x 10 ms) runs. */
static int during_work(rl_grade_ctx *ctx, rl_scenario_result *out)
{
    const char *tag = rl_grade_tag(ctx);
    rl_probe_call c;
    int64_t cn, end;
    rl_cancel_check cc;
    if (start_and_reach(ctx, &c, tag, "Work", 0, 200, out) == 0 &&
        cancel_and_judge(ctx, &c, tag, "Work", 2000, 200, &cn, &end, &cc, out) == 0) {
        char fb[256];
        rl_judge_cancel_feedback(&cc, fb, sizeof fb);
        rl_grade_result(out, cc.pass ? RL_PASS : RL_FAIL, "%s", fb);
    }
    rl_probe_call_fini(&c);
    return 0;
}

/* during-lookup: cancel while Lookup (2000 ms) runs; Work must not follow. */
static int during_lookup(rl_grade_ctx *ctx, rl_scenario_result *out)
{
    const char *tag = rl_grade_tag(ctx);
    rl_probe_call c;
    int64_t cn, end;
    rl_cancel_check cc;
    if (start_and_reach(ctx, &c, tag, "Lookup", 2000, 1, out) != 0 ||
        cancel_and_judge(ctx, &c, tag, "Lookup", 2000, 0, &cn, &end, &cc, out) != 0)
        goto done;
    /* As in deadline/expires-in-lookup: a relay that misses the cancel calls
     * Work right after Lookup returns, within ms (tens on a loaded
     * machine); 500 ms past Lookup's end (or past now, if it never ended)
     * catches it with a wide margin. */
    int64_t from = end ? end : rl_now_ns();
    Relaylab__ObserveReply *obs = NULL;
    int rc = rl_process_observe_until(ctx, tag, work_seen, NULL,
                              from + RL_JUDGE_LATE_CALL_WINDOW_MS * MS, 5, &obs);
    if (rc == RL_EGRPC) {
        rl_grade_result(out, RL_ERROR, "the baseline's observer did not answer");
    } else {
        char fb[256];
        rl_judge_cancel_feedback(&cc, fb, sizeof fb);
        const Relaylab__CallRecord *wk = rl_observe_find(obs, "Work", 0);
        if (wk)
            rl_grade_result(out, RL_FAIL, "Work was still called %lld ms after the cancel: a cancelled Process must "
                            "start no further call; %s",
                            (long long)rl_ms_between(cn, wk->arrival_ns), fb);
        else
            rl_grade_result(out, cc.pass ? RL_PASS : RL_FAIL, "%s%s", fb, cc.pass ? "; no Work after it" : "");
    }
    if (obs)
        relaylab__observe_reply__free_unpacked(obs, NULL);
done:
    rl_probe_call_fini(&c);
    return 0;
}

/* keeps-serving: after a cancelled Process, a normal one succeeds. */
static int keeps_serving(rl_grade_ctx *ctx, rl_scenario_result *out)
{
    const char *tag = rl_grade_tag(ctx);
    rl_probe_call c, c2;
    memset(&c2, 0, sizeof c2);
    if (start_and_reach(ctx, &c, tag, "Work", 0, 200, out) != 0)
        goto done;
    rl_probe_call_cancel(&c);
    rl_probe_call_wait(&c, rl_now_ns() + 1000 * MS);

    char tag2[200];
    snprintf(tag2, sizeof tag2, "%s.after", tag);
    int64_t d = rl_now_ns() + 5000 * MS;
    if (rl_process_start(ctx, &c2, tag2, 0, 1, 10, d) != RL_OK) {
        rl_grade_result(out, RL_ERROR, "cannot start the second Process call");
        goto done;
    }
    if (rl_probe_call_wait(&c2, d + 2000 * MS) != RL_OK) {
        rl_grade_result(out, RL_ERROR, "the client call had no status 2 s after its own deadline");
        goto done;
    }
    if (c2.status != GRPC_STATUS_OK &&
        rl_grade_crash_check(ctx, c2.status == GRPC_STATUS_UNAVAILABLE ? 1000 : 200, "after a cancelled Process", out))
        goto done;
    char why[256];
    if (!rl_process_reply_ok(&c2, tag2, why, sizeof why))
        rl_grade_result(out, RL_FAIL, "after a cancelled Process, the next one (5000 ms deadline) failed: %s", why);
    else
        rl_grade_result(out, RL_PASS, "after a cancelled Process, the next one succeeded in %lld ms",
                        (long long)rl_ms_between(c2.start_ns, c2.end_ns));
done:
    rl_probe_call_fini(&c2);
    rl_probe_call_fini(&c);
    return 0;
}

/* no-leak: Work steps of the cancelled calls: a relay that ignores the
 * cancel (judged by during-work, not here) holds each call for 200 ms
 * more, not for seconds. */
#define LEAK_STEPS 20

/* Process call |i|, cancelled once its Work runs on the baseline, and done
 * once that Work ended (an rl_leak_call_fn). Waiting for the end keeps one
 * call in the relay at a time whether or not it passes the cancel on, so
 * its thread pool is the same size after the batch as before it: a relay
 * that ignores the cancel would otherwise grow its pool by the calls it
 * still holds, which is not a leak. */
static int cancelled_process(rl_grade_ctx *ctx, int i, const rl_proc_sample *start, rl_scenario_result *out)
{
    (void)start; /* a relay answers or fails each call by itself; rl_leak_scenario checks for a runaway between calls */
    char tag[200];
    snprintf(tag, sizeof tag, "%s.%d", rl_grade_tag(ctx), i);
    rl_probe_call c;
    int rc = start_and_reach(ctx, &c, tag, "Work", 0, LEAK_STEPS, out);
    if (rc == 0) {
        int64_t cn = rl_probe_call_cancel(&c);
        rl_probe_call_wait(&c, rl_now_ns() + 1000 * MS);
        Relaylab__ObserveReply *obs = NULL;
        rc = rl_process_observe_until(ctx, tag, has_ended, (void *)"Work",
                              cn + (LEAK_STEPS * 10 + 1000) * MS, 5, &obs);
        if (obs)
            relaylab__observe_reply__free_unpacked(obs, NULL);
        if (rc == RL_EGRPC)
            rl_grade_result(out, RL_ERROR, "the baseline's observer did not answer");
        rc = rc == RL_EGRPC;
    }
    rl_probe_call_fini(&c);
    return rc;
}

/* no-leak: Process calls cancelled during Work leave nothing behind. */
static int no_leak(rl_grade_ctx *ctx, rl_scenario_result *out)
{
    return rl_leak_scenario(ctx, cancelled_process, "Process calls cancelled during Work", out);
}

static const rl_scenario scenarios[] = {
    {"during-work", "cancel during Work stops Work", during_work},
    {"during-lookup", "cancel during Lookup: no Work", during_lookup},
    {"keeps-serving", "serves again after a cancel", keeps_serving},
    {"no-leak", "cancelled calls leave nothing behind", no_leak},
};

const rl_exercise rl_ex_cancel = {
    .name = "cancel",
    .summary = "cancellation propagates downstream",
    .kind = RL_SUBMISSION_COMMAND,
    .needs_baseline = true,
    .scenarios = scenarios,
    .nscenarios = sizeof scenarios / sizeof scenarios[0],
};
