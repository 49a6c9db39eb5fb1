/* deadline_figure: the deadline exercise's pictures; see deadline_figure.h. */
#include "deadline_figure.h"

#include "judge.h"
#include "process.h"
#include "rl_deadline.h"
#include "run.h"

#include <stdio.h>

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
void gr_dl_deadline_figure(gr_scenario_result *out, const rl_probe_call *c, int64_t d, int64_t budget,
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
void gr_dl_none_figure(gr_scenario_result *out, const rl_probe_call *c, const Relaylab__CallRecord *hop[2],
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

/* expires-in-lookup's picture (ms since the client started Process): the
 * client's deadline, the client's call until its status, Lookup at the
 * baseline, the window watched for a late Work after Lookup ended, and the
 * Work (red) if one came. */
void gr_dl_expiry_figure(gr_scenario_result *out, const rl_probe_call *c, int64_t d, int64_t budget,
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

/* once's picture (ms since the client started Process): the client's
 * call, and every Lookup and Work the baseline saw for it, each call on a
 * row of its own (as many as the figure holds): the first of each method
 * is right (blue), any more red. */
void gr_dl_once_figure(gr_scenario_result *out, const rl_probe_call *c, const Relaylab__ObserveReply *obs, size_t nl,
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
