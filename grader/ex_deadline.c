/* ex_deadline: the deadline exercise. A relay must give each downstream call
 * only the time its client has left (the deadline shrinks along the chain),
 * send no deadline when the client set none, stop when time runs out, and
 * call each downstream method once per Process. Every judgement compares
 * what the baseline saw (CLOCK_MONOTONIC) with the deadline instant D this
 * grader fixed itself; the tolerances and the verdicts are deadline_judge.c's. */
#include "deadline_judge.h"
#include "exercise.h"
#include "deadline_figure.h"
#include "judge.h"
#include "process.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "run.h"
#include "scenario.h"

#include <stdio.h>
#include <string.h>

/* Starts Process with |tag| and deadline |d| and waits for its status, then
 * checks that a failed status was not the submission dying. Returns 0 with
 * |c| done and the submission alive, or GR_DECIDED. */
static int call_process(gr_ctx *ctx, rl_probe_call *c, const char *tag, uint32_t lookup_ms, uint32_t steps, int64_t d,
                        gr_scenario_result *out)
{
    if (gr_process_start(ctx, c, tag, lookup_ms, steps, 10, d, out) || gr_scenario_wait(c, out))
        return GR_DECIDED;
    return gr_scenario_crash_after(ctx, c, "during Process", out);
}

/* shrinks: 2000 ms for Lookup (500 ms) then Work (2 x 10 ms). */
static int shrinks(gr_ctx *ctx, gr_scenario_result *out)
{
    const int64_t budget = 2000;
    const char *tag = gr_tag(ctx);
    rl_probe_call c;
    Relaylab__ObserveReply *obs = NULL;
    int64_t d = rl_now_ns() + budget * RL_NS_PER_MS; /* D, fixed before the call starts */
    if (call_process(ctx, &c, tag, 500, 2, d, out) || gr_process_observe(ctx, tag, &obs, out))
        goto done;

    const Relaylab__CallRecord *lk = rl_observe_find(obs, "Lookup", 0);
    const Relaylab__CallRecord *wk = rl_observe_find(obs, "Work", 0);
    gr_dl_check cl = {0}, cw = {0};
    /* The relay's own time before each call (deadline_judge.h): what a late
     * re-anchoring of the deadline can have added. */
    int64_t relay_lookup = lk ? gr_ms_between(c.start_ns, lk->arrival_ns) : 0;
    int64_t relay_work = relay_lookup;
    if (lk && wk && lk->ended && wk->arrival_ns > lk->end_ns)
        relay_work += gr_ms_between(lk->end_ns, wk->arrival_ns);
    if (lk)
        gr_dl_judge_hop("Lookup", budget, gr_ms_between(lk->arrival_ns, d), relay_lookup, lk->has_deadline,
                        lk->deadline_ms, &cl);
    if (wk)
        gr_dl_judge_hop("Work", budget, gr_ms_between(wk->arrival_ns, d), relay_work, wk->has_deadline, wk->deadline_ms,
                        &cw);
    {
        const Relaylab__CallRecord *hop[2] = {lk, wk};
        const gr_dl_check *chk[2] = {&cl, &cw};
        gr_dl_deadline_figure(out, &c, d, budget, hop, chk);
    }
    char st[200], why[256], fb[GR_FEEDBACK_MAX];
    gr_process_status_text(&c, st, sizeof st);
    gr_dl_process_facts f = {.budget_ms = budget,
                             .lookup = lk ? &cl : NULL,
                             .work = wk ? &cw : NULL,
                             .nlookup = rl_observe_count(obs, "Lookup"),
                             .nwork = rl_observe_count(obs, "Work"),
                             .status = c.batch.status,
                             .status_text = st,
                             .past_deadline = c.end_ns >= d,
                             .why = why,
                             .ms = gr_ms_between(c.start_ns, c.end_ns)};
    f.reply_ok = gr_process_reply_ok(&c, tag, why, sizeof why);
    gr_result(out, gr_dl_judge_shrinks(&f, fb, sizeof fb), "%s", fb);

done:
    return gr_scenario_done(&c, &obs);
}

/* none: no client deadline, so none downstream either. */
static int none(gr_ctx *ctx, gr_scenario_result *out)
{
    /* Lookup 50 ms + Work 10 ms: 5 s is the grader's own bound, far above
     * any runtime's overhead. */
    const int64_t bound_ms = 5000;
    const char *tag = gr_tag(ctx);
    rl_probe_call c;
    Relaylab__ObserveReply *obs = NULL;
    if (gr_process_start(ctx, &c, tag, 50, 1, 10, RL_NO_DEADLINE, out))
        goto done;
    if (rl_probe_call_wait(&c, c.start_ns + bound_ms * RL_NS_PER_MS) != RL_OK) {
        gr_scenario_cancel(&c);
        if (!gr_scenario_crash_check(ctx, false, "during Process", out))
            gr_result(out, GR_TIMEOUT, "Process did not answer within %lld ms (expected about 60 ms)",
                      (long long)bound_ms);
        goto done;
    }
    if (gr_scenario_crash_after(ctx, &c, "during Process", out) || gr_process_observe(ctx, tag, &obs, out))
        goto done;
    const Relaylab__CallRecord *lk = rl_observe_find(obs, "Lookup", 0);
    const Relaylab__CallRecord *wk = rl_observe_find(obs, "Work", 0);
    gr_dl_check cl, cw;
    if (lk)
        gr_dl_judge_hop("Lookup", -1, 0, 0, lk->has_deadline, lk->deadline_ms, &cl);
    if (wk)
        gr_dl_judge_hop("Work", -1, 0, 0, wk->has_deadline, wk->deadline_ms, &cw);
    {
        const Relaylab__CallRecord *hop[2] = {lk, wk};
        const gr_dl_check *chk[2] = {&cl, &cw};
        gr_dl_none_figure(out, &c, hop, chk);
    }
    char st[200], why[256], fb[GR_FEEDBACK_MAX];
    gr_process_status_text(&c, st, sizeof st);
    gr_dl_process_facts f = {.lookup = lk ? &cl : NULL,
                             .work = wk ? &cw : NULL,
                             .nlookup = rl_observe_count(obs, "Lookup"),
                             .nwork = rl_observe_count(obs, "Work"),
                             .status = c.batch.status,
                             .status_text = st,
                             .why = why,
                             .ms = gr_ms_between(c.start_ns, c.end_ns)};
    f.reply_ok = gr_process_reply_ok(&c, tag, why, sizeof why);
    gr_result(out, gr_dl_judge_none(&f, fb, sizeof fb), "%s", fb);
done:
    return gr_scenario_done(&c, &obs);
}

static bool lookup_ended(const Relaylab__ObserveReply *r, void *user)
{
    (void)user;
    const Relaylab__CallRecord *lk = rl_observe_find(r, "Lookup", 0);
    return lk && lk->ended;
}

static bool work_seen(const Relaylab__ObserveReply *r, void *user)
{
    (void)user;
    return rl_observe_count(r, "Work") > 0;
}

/* expires-in-lookup: 300 ms deadline, Lookup takes 1000 ms. */
/* The client's deadline in expires-in-lookup, per try. The rule needs the
 * deadline to pass while Lookup (1000 ms) runs, so the relay must reach
 * Lookup first: a relay starved of CPU may not within 300 ms (a correct
 * grpcio relay did not once, under make check on a machine with every core
 * busy), and that try tested nothing. So a try in which no Lookup came and
 * the client's deadline ended the call is tried again with more time; only
 * a relay that reaches Lookup in none of them is judged TIMEOUT. */
static const int64_t expiry_budgets_ms[] = {300, 600, 900};

static int expires_in_lookup(gr_ctx *ctx, gr_scenario_result *out)
{
    const int64_t lookup = 1000;
    const size_t ntries = sizeof expiry_budgets_ms / sizeof *expiry_budgets_ms;
    rl_probe_call c;
    Relaylab__ObserveReply *obs = NULL;
    const Relaylab__CallRecord *lk = NULL;
    int64_t budget = 0, d = 0;
    char tag[200];
    memset(&c, 0, sizeof c);
    for (size_t try = 0; try < ntries && !lk; try++) {
        budget = expiry_budgets_ms[try];
        /* Each try its own tag: a late Lookup of an earlier try is not
         * this one's. */
        if (try == 0)
            snprintf(tag, sizeof tag, "%s", gr_tag(ctx));
        else
            snprintf(tag, sizeof tag, "%s.try%zu", gr_tag(ctx), try + 1);
        if (try > 0) {
            gr_scenario_free_obs(&obs);
            rl_probe_call_fini(&c);
            memset(&c, 0, sizeof c);
        }
        d = rl_now_ns() + budget * RL_NS_PER_MS;
        if (call_process(ctx, &c, tag, (uint32_t)lookup, 1, d, out))
            goto done;
        /* The baseline ends Lookup by itself after 1000 ms at the latest, so
         * waiting until 1.5 s past that cannot cut a real Lookup short. */
        int rc = gr_process_observe_until(ctx, tag, lookup_ended, NULL, c.start_ns + (lookup + 1500) * RL_NS_PER_MS, 5,
                                          &obs);
        if (gr_scenario_observed(rc, obs, out))
            goto done;
        lk = rl_observe_find(obs, "Lookup", 0);
        if (lk)
            break;
        char st[200], fb[GR_FEEDBACK_MAX];
        gr_process_status_text(&c, st, sizeof st);
        gr_verdict v;
        if (gr_dl_judge_no_lookup(rl_observe_count(obs, "Work") > 0, c.batch.status, c.end_ns >= d, st,
                                  gr_ms_between(c.start_ns, c.end_ns), &v, fb, sizeof fb)) {
            gr_result(out, v, "%s", fb);
            goto done;
        }
    }
    char fb[GR_FEEDBACK_MAX];
    if (!lk) {
        gr_verdict v =
            gr_dl_judge_never_looked_up(ntries, expiry_budgets_ms[0], expiry_budgets_ms[ntries - 1], fb, sizeof fb);
        gr_result(out, v, "%s", fb);
        goto done;
    }
    /* A relay that ignores the deadline calls Work as soon as Lookup
     * returns: at once in C, within a few ms in Python or Node, tens of ms
     * on a loaded machine. Watching 500 ms past Lookup's end catches that
     * with a wide margin; any later Work would be a relay waiting on purpose,
     * which no mistake in this lab does. */
    int64_t lookup_end = lk->ended ? lk->end_ns : rl_now_ns();
    int64_t lookup_ms = gr_ms_between(lk->arrival_ns, lookup_end);
    bool lookup_cancelled = lk->cancelled;
    gr_scenario_free_obs(&obs);
    int rc = gr_process_observe_until(ctx, tag, work_seen, NULL,
                                      lookup_end + GR_JUDGE_LATE_CALL_WINDOW_MS * RL_NS_PER_MS, 5, &obs);
    if (gr_scenario_observed(rc, obs, out))
        goto done;
    const Relaylab__CallRecord *wk = rl_observe_find(obs, "Work", 0);
    {
        /* Lookup's record is in the earlier reply, freed above: this
         * one has it too (the same tag), ended. */
        const Relaylab__CallRecord *lk2 = rl_observe_find(obs, "Lookup", 0);
        if (lk2)
            gr_dl_expiry_figure(out, &c, d, budget, lk2, lookup_end, wk);
    }
    char st[200];
    gr_process_status_text(&c, st, sizeof st);
    gr_dl_expiry_facts f = {.budget_ms = budget,
                            .lookup_cancelled = lookup_cancelled,
                            .lookup_ms = lookup_ms,
                            .work_called = wk != NULL,
                            .work_after_ms = wk ? gr_ms_between(d, wk->arrival_ns) : 0,
                            .status = c.batch.status,
                            .status_text = st,
                            .ms = gr_ms_between(c.start_ns, c.end_ns),
                            .late_ms = gr_ms_between(d, c.end_ns)};
    gr_result(out, gr_dl_judge_expiry(&f, fb, sizeof fb), "%s", fb);
done:
    return gr_scenario_done(&c, &obs);
}

static bool extra_calls(const Relaylab__ObserveReply *r, void *user)
{
    (void)user;
    return rl_observe_count(r, "Work") > 1 || rl_observe_count(r, "Lookup") > 1;
}

/* once: one Process, exactly one Lookup and one Work. */
static int once(gr_ctx *ctx, gr_scenario_result *out)
{
    const char *tag = gr_tag(ctx);
    rl_probe_call c;
    Relaylab__ObserveReply *obs = NULL;
    int64_t d = rl_now_ns() + 5000 * RL_NS_PER_MS;
    /* Work lasts GR_DL_ONCE_WORK_MS (steps of 10 ms): a hedging relay's
     * second copy must leave before the first answers, or it is cancelled
     * unsent and the baseline sees one Work (docs/grpc-facts.md: seen with
     * a 30 ms Work and a hog on each core). */
    if (call_process(ctx, &c, tag, 0, GR_DL_ONCE_WORK_MS / 10, d, out))
        goto done;
    /* A second copy is started together with the first (hedging) or right
     * after the first failed (a retry loop): 300 ms after the answer
     * covers both with room to spare. */
    int rc = gr_process_observe_until(ctx, tag, extra_calls, NULL, rl_now_ns() + 300 * RL_NS_PER_MS, 10, &obs);
    if (gr_scenario_observed(rc, obs, out))
        goto done;
    size_t nl = rl_observe_count(obs, "Lookup"), nw = rl_observe_count(obs, "Work");
    gr_dl_once_figure(out, &c, obs, nl, nw);
    char why[256], fb[GR_FEEDBACK_MAX];
    gr_dl_process_facts f = {
        .nlookup = nl, .nwork = nw, .status = c.batch.status, .why = why, .ms = gr_ms_between(c.start_ns, c.end_ns)};
    f.reply_ok = gr_process_reply_ok(&c, tag, why, sizeof why);
    gr_result(out, gr_dl_judge_once(&f, fb, sizeof fb), "%s", fb);
done:
    return gr_scenario_done(&c, &obs);
}

/* Lanes (lanes.h): two of two scenarios, each with its own relay and
 * baseline; a handful of calls each. */
static const gr_scenario scenarios[] = {
    {"shrinks", "Work gets only the time left", shrinks, 0, 0},
    {"none", "no deadline in, none out", none, 0, 1},
    {"expires-in-lookup", "time runs out during Lookup: no Work", expires_in_lookup, 0, 1},
    {"once", "one Lookup and one Work per Process", once, 0, 0},
};

const gr_exercise gr_ex_deadline = {
    .name = "deadline",
    .summary = "deadlines shrink along the chain",
    .kind = GR_SUBMISSION_COMMAND,
    .baselines = 1,
    .scenarios = scenarios,
    .nscenarios = sizeof scenarios / sizeof scenarios[0],
};
