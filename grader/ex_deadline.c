/* ex_deadline: the deadline exercise. A relay must give each downstream call
 * only the time its client has left (the deadline shrinks along the chain),
 * send no deadline when the client set none, stop when time runs out, and
 * call each downstream method once per Process. Every judgement compares
 * what the baseline saw (CLOCK_MONOTONIC) with the deadline instant D this
 * grader fixed itself; the tolerances and the verdicts are deadline_judge.c's. */
#include "deadline_judge.h"
#include "exercise.h"
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

/* Draws hop |name|'s record |r| (ms since the client's call |c| started;
 * one not ended by |end| runs to it): the span it ran at the baseline.
 * Returns the row for the deadline it received, with its arrival in *at. */
static int hop_rows(gr_figure *f, const char *name, const Relaylab__CallRecord *r, const rl_probe_call *c, int64_t end,
                    double *at)
{
    char row[GR_FIG_LABEL];
    double a = (double)(r->arrival_ns - c->start_ns) / 1e6;
    int64_t rend = r->ended ? r->end_ns : end;
    snprintf(row, sizeof row, "%s ran", name);
    gr_fig_span_add(f, gr_fig_row(f, row), a, (double)(rend - c->start_ns) / 1e6, GR_FIG_RAN, "%s", name);
    snprintf(row, sizeof row, "%s: deadline received", name);
    *at = a;
    return gr_fig_row(f, row);
}

/* The picture of a chain's deadlines on one time axis (ms since the client
 * started Process): the client's deadline D as a line, when each of Lookup
 * and Work ran at the baseline, and for each the deadline it received
 * (blue when right, red when wrong) against the time that truly remained
 * until D (green). A forwarded timeout shows as a red bar running past D. */
static void deadline_figure(gr_scenario_result *out, const rl_probe_call *c, int64_t d, int64_t budget,
                            const Relaylab__CallRecord *hop[2], const gr_dl_check *chk[2])
{
    static const char *const names[2] = {"Lookup", "Work"};
    gr_figure *f = &out->figure;
    double dx = (double)(d - c->start_ns) / 1e6;
    gr_fig_timeline(f, "The chain's deadlines on one time axis", "ms since the client started Process");
    gr_fig_event(f, dx, "client's deadline (%lld ms)", (long long)budget);
    int client = gr_fig_row(f, "client: Process");
    int64_t end = c->end_ns > c->start_ns ? c->end_ns : rl_now_ns();
    gr_fig_span_add(f, client, 0, (double)(end - c->start_ns) / 1e6, GR_FIG_RAN, "Process: %lld ms",
                    (long long)gr_ms_between(c->start_ns, end));
    const char *wrong = NULL;
    long long got = 0, left = 0;
    for (int i = 0; i < 2; i++) {
        char row[GR_FIG_LABEL];
        const Relaylab__CallRecord *r = hop[i];
        if (!r)
            continue;
        double a;
        int rr = hop_rows(f, names[i], r, c, end, &a);
        bool ok = chk[i]->cls == GR_DL_OK;
        /* A deadline of hours would squash the rest to nothing: cut at
         * twice the client's budget, and say so. */
        double cut = 2.0 * (double)budget;
        if (r->has_deadline && (double)r->deadline_ms > cut)
            gr_fig_span_add(f, rr, a, a + cut, GR_FIG_WRONG, "received %lld ms (cut here)", (long long)r->deadline_ms);
        else if (r->has_deadline)
            gr_fig_span_add(f, rr, a, a + (double)r->deadline_ms, ok ? GR_FIG_GIVEN : GR_FIG_WRONG, "received %lld ms",
                            (long long)r->deadline_ms);
        else
            gr_fig_span_add(f, rr, a, a, GR_FIG_WRONG, "received no deadline");
        snprintf(row, sizeof row, "%s: time that remained", names[i]);
        long long remained = (long long)gr_ms_between(r->arrival_ns, d);
        gr_fig_span_add(f, gr_fig_row(f, row), a, dx > a ? dx : a, GR_FIG_TRUTH, "%lld ms remained", remained);
        if (!ok && !wrong) {
            wrong = names[i];
            got = r->has_deadline ? (long long)r->deadline_ms : -1;
            left = remained;
        }
    }
    if (wrong && got >= 0)
        gr_fig_caption(f,
                       "%s was given %lld ms when only %lld ms remained: its red bar runs past the client's "
                       "deadline",
                       wrong, got, left);
    else if (wrong)
        gr_fig_caption(f, "%s was given no deadline although %lld ms remained of the client's", wrong, left);
    else
        gr_fig_caption(f, "Each hop's deadline (blue) ends at the client's deadline: the time left was passed on");
}

/* none's picture (ms since the client started Process): the client's
 * call, set with no deadline, and for each hop when it ran at the
 * baseline and what deadline it received: none (a blue mark) is right; a
 * deadline is a red bar of its length (cut at |cut| ms, and said so). */
static void none_figure(gr_scenario_result *out, const rl_probe_call *c, const Relaylab__CallRecord *hop[2],
                        const gr_dl_check *chk[2])
{
    static const char *const names[2] = {"Lookup", "Work"};
    gr_figure *f = &out->figure;
    gr_fig_timeline(f, "A call without a deadline, down the chain", "ms since the client started Process");
    int64_t end = c->end_ns > c->start_ns ? c->end_ns : rl_now_ns();
    double ex = (double)(end - c->start_ns) / 1e6;
    gr_fig_span_add(f, gr_fig_row(f, "client: Process, no deadline"), 0, ex, GR_FIG_RAN, "Process: %lld ms",
                    (long long)gr_ms_between(c->start_ns, end));
    double cut = ex > 100 ? 4 * ex : 400;
    const char *wrong = NULL;
    long long got = 0;
    for (int i = 0; i < 2; i++) {
        const Relaylab__CallRecord *r = hop[i];
        if (!r)
            continue;
        double a;
        int rr = hop_rows(f, names[i], r, c, end, &a);
        if (chk[i]->cls == GR_DL_OK)
            gr_fig_span_add(f, rr, a, a, GR_FIG_GIVEN, "none, as the client set none");
        else if (r->has_deadline && (double)r->deadline_ms > cut)
            gr_fig_span_add(f, rr, a, a + cut, GR_FIG_WRONG, "received %lld ms (cut here)", (long long)r->deadline_ms);
        else
            gr_fig_span_add(f, rr, a, a + (double)r->deadline_ms, GR_FIG_WRONG, "received %lld ms",
                            (long long)r->deadline_ms);
        if (chk[i]->cls != GR_DL_OK && !wrong) {
            wrong = names[i];
            got = (long long)r->deadline_ms;
        }
    }
    if (wrong)
        gr_fig_caption(f, "%s received a %lld ms deadline the client never set: with no deadline in, send none out",
                       wrong, got);
    else if (hop[0] && hop[1])
        gr_fig_caption(f, "The client set no deadline and neither Lookup nor Work received one: nothing was invented");
    else
        gr_fig_caption(f, "The client set no deadline; the baseline saw %s", hop[0] ? "no Work" : "no Lookup");
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
        deadline_figure(out, &c, d, budget, hop, chk);
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
        none_figure(out, &c, hop, chk);
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

/* expires-in-lookup's picture (ms since the client started Process): the
 * client's deadline, the client's call until its status, Lookup at the
 * baseline, the window watched for a late Work after Lookup ended, and the
 * Work (red) if one came. */
static void expiry_figure(gr_scenario_result *out, const rl_probe_call *c, int64_t d, int64_t budget,
                          const Relaylab__CallRecord *lk, int64_t lookup_end, const Relaylab__CallRecord *wk)
{
    gr_figure *f = &out->figure;
#define EX_MS(t) ((double)((t)-c->start_ns) / 1e6)
    gr_fig_timeline(f, "Time runs out while Lookup runs", "ms since the client started Process");
    gr_fig_event(f, EX_MS(d), "client's deadline (%lld ms)", (long long)budget);
    int64_t end = c->end_ns > c->start_ns ? c->end_ns : rl_now_ns();
    char st[200];
    gr_process_status_text(c, st, sizeof st);
    gr_fig_span_add(f, gr_fig_row(f, "client: Process"), 0, EX_MS(end), GR_FIG_RAN, "%s", st);
    gr_fig_span_add(f, gr_fig_row(f, "Lookup at the baseline"), EX_MS(lk->arrival_ns), EX_MS(lookup_end),
                    lk->cancelled ? GR_FIG_GIVEN : GR_FIG_RAN, "Lookup %s", lk->cancelled ? "cancelled" : "ran on");
    int wr = gr_fig_row(f, "Work at the baseline");
    gr_fig_span_add(f, gr_fig_row(f, "watched for a late Work"), EX_MS(lookup_end),
                    EX_MS(lookup_end) + GR_JUDGE_LATE_CALL_WINDOW_MS, GR_FIG_TRUTH, "%d ms",
                    GR_JUDGE_LATE_CALL_WINDOW_MS);
    if (wk) {
        double wa = EX_MS(wk->arrival_ns);
        gr_fig_span_add(f, wr, wa, wk->ended ? EX_MS(wk->end_ns) : wa, GR_FIG_WRONG, "Work after the deadline");
        gr_fig_caption(f,
                       "Work was called %lld ms after the client's deadline: once time runs out, call nothing "
                       "more",
                       (long long)gr_ms_between(d, wk->arrival_ns));
    } else {
        gr_fig_span_add(f, wr, EX_MS(lookup_end), EX_MS(lookup_end), GR_FIG_GIVEN, "no Work");
        gr_fig_caption(f, "The deadline passed during Lookup and no Work followed: the relay stopped when time ran "
                          "out");
    }
#undef EX_MS
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
            expiry_figure(out, &c, d, budget, lk2, lookup_end, wk);
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

/* once's picture (ms since the client started Process): the client's
 * call, and every Lookup and Work the baseline saw for it, each call on a
 * row of its own (as many as the figure holds): the first of each method
 * is right (blue), any more red. */
static void once_figure(gr_scenario_result *out, const rl_probe_call *c, const Relaylab__ObserveReply *obs, size_t nl,
                        size_t nw)
{
    gr_figure *f = &out->figure;
    gr_fig_timeline(f, "Every downstream call one Process made", "ms since the client started Process");
    int64_t end = c->end_ns > c->start_ns ? c->end_ns : rl_now_ns();
    gr_fig_span_add(f, gr_fig_row(f, "client: Process"), 0, (double)(end - c->start_ns) / 1e6, GR_FIG_RAN,
                    "Process: %lld ms", (long long)gr_ms_between(c->start_ns, end));
    static const char *const names[2] = {"Lookup", "Work"};
    for (int m = 0; m < 2; m++) {
        for (size_t i = 0;; i++) {
            const Relaylab__CallRecord *rec = rl_observe_find(obs, names[m], i);
            if (!rec)
                break;
            char row[GR_FIG_LABEL];
            snprintf(row, sizeof row, "%s #%zu at the baseline", names[m], i + 1);
            double a = (double)(rec->arrival_ns - c->start_ns) / 1e6;
            double e = rec->ended ? (double)(rec->end_ns - c->start_ns) / 1e6 : a;
            gr_fig_span_add(f, gr_fig_row(f, row), a, e, i == 0 ? GR_FIG_GIVEN : GR_FIG_WRONG, "%s",
                            i == 0 ? names[m] : "one call too many");
        }
    }
    if (nl == 1 && nw == 1)
        gr_fig_caption(f, "One Lookup, then one Work, for one Process: each downstream method called once");
    else
        gr_fig_caption(f,
                       "%zu Lookup and %zu Work calls for one Process: a relay calls each once (no retry loop, "
                       "no hedging)",
                       nl, nw);
}

/* once: one Process, exactly one Lookup and one Work. */
static int once(gr_ctx *ctx, gr_scenario_result *out)
{
    const char *tag = gr_tag(ctx);
    rl_probe_call c;
    Relaylab__ObserveReply *obs = NULL;
    int64_t d = rl_now_ns() + 5000 * RL_NS_PER_MS;
    if (call_process(ctx, &c, tag, 0, 1, d, out))
        goto done;
    /* A second copy is started together with the first (hedging) or right
     * after the first failed (a retry loop): 300 ms after the answer
     * covers both with room to spare. */
    int rc = gr_process_observe_until(ctx, tag, extra_calls, NULL, rl_now_ns() + 300 * RL_NS_PER_MS, 10, &obs);
    if (gr_scenario_observed(rc, obs, out))
        goto done;
    size_t nl = rl_observe_count(obs, "Lookup"), nw = rl_observe_count(obs, "Work");
    once_figure(out, &c, obs, nl, nw);
    char why[256], fb[GR_FEEDBACK_MAX];
    gr_dl_process_facts f = {
        .nlookup = nl, .nwork = nw, .status = c.batch.status, .why = why, .ms = gr_ms_between(c.start_ns, c.end_ns)};
    f.reply_ok = gr_process_reply_ok(&c, tag, why, sizeof why);
    gr_result(out, gr_dl_judge_once(&f, fb, sizeof fb), "%s", fb);
done:
    return gr_scenario_done(&c, &obs);
}

static const gr_scenario scenarios[] = {
    {"shrinks", "Work gets only the time left", shrinks, 0},
    {"none", "no deadline in, none out", none, 0},
    {"expires-in-lookup", "time runs out during Lookup: no Work", expires_in_lookup, 0},
    {"once", "one Lookup and one Work per Process", once, 0},
};

const gr_exercise gr_ex_deadline = {
    .name = "deadline",
    .summary = "deadlines shrink along the chain",
    .kind = GR_SUBMISSION_COMMAND,
    .baselines = 1,
    .scenarios = scenarios,
    .nscenarios = sizeof scenarios / sizeof scenarios[0],
};
