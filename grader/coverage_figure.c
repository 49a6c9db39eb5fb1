/* coverage_figure: the sampling and the stream series the coverage
 * pictures share (coverage_figure.h). */
#include "coverage_figure.h"

#include "rl_deadline.h"

#include "rl_coverage.h"

#include <stdio.h>

size_t gr_cov_fig_samples(int64_t t0, int64_t t1, int64_t *step)
{
    int64_t span = t1 > t0 ? t1 - t0 : 0;
    int64_t s = span / (GR_FIG_MAX_POINTS - 1);
    if (s < 25 * RL_NS_PER_MS)
        s = 25 * RL_NS_PER_MS;
    *step = s;
    size_t n = (size_t)(span / s) + 1;
    return n > GR_FIG_MAX_POINTS ? GR_FIG_MAX_POINTS : n;
}

int gr_cov_queued_at(const gr_cov_server *s, int64_t t0, int64_t t)
{
    int q = 0;
    for (size_t k = 0; k < s->n_calls; k++) {
        const Relaylab__TunnelCallRecord *c = s->calls[k];
        q += c->dispatched_ns >= t0 && c->dispatched_ns <= t && (!c->handed_ns || c->handed_ns > t);
    }
    return q;
}

void gr_cov_fig_streams(gr_figure *f, gr_cov_server *const *servers, const char *const *names, int n, int b, int64_t t0,
                        int64_t t1)
{
    int64_t step;
    size_t ns = gr_cov_fig_samples(t0, t1, &step);
    double x[GR_FIG_MAX_POINTS], y[GR_FIG_MAX_POINTS];
    for (int j = 0; j < n; j++) {
        int i = b < 0 ? j : j == 0 ? b : j <= b ? j - 1 : j;
        for (size_t k = 0; k < ns; k++) {
            x[k] = (double)((int64_t)k * step) / RL_NS_PER_SEC;
            y[k] = gr_cov_streams_at(servers[i], t0 + (int64_t)k * step);
        }
        char label[48];
        snprintf(label, sizeof label, "streams on %s%s", names[i], i == b ? ", the busy server" : "");
        gr_fig_series_add(f, label, x, y, ns);
    }
}

void gr_cov_evacuation_figure(gr_scenario_result *out, gr_cov_server *const *servers, const char *const *names, int n,
                              int b, int c, const gr_cov_evac_times *t, int closed_b)
{
    gr_figure *f = &out->figure;
    int64_t s0 = t->c_since < t->t0 ? t->c_since : t->t0;
#define SEC(x) ((double)((x)-s0) / RL_NS_PER_SEC)
    char title[GR_FIG_LABEL];
    snprintf(title, sizeof title, "Server %s idle and short, server %s busy: which one is evacuated", names[c],
             names[b]);
    gr_fig_plot(f, title, "seconds from the idle server's first stream", "streams open");
    /* The two servers the rule is about, alone: the third, where every
     * new stream lands, holds tens and would flatten their 1 and 0. */
    int64_t step;
    size_t ns = gr_cov_fig_samples(s0, t->now, &step);
    double x[GR_FIG_MAX_POINTS], y[GR_FIG_MAX_POINTS];
    const int which[2] = {b, c};
    for (int j = 0; j < 2 && j < n; j++) {
        for (size_t k = 0; k < ns; k++) {
            x[k] = (double)((int64_t)k * step) / RL_NS_PER_SEC;
            y[k] = gr_cov_streams_at(servers[which[j]], s0 + (int64_t)k * step);
        }
        char label[48];
        snprintf(label, sizeof label, "streams on %s (%s)", names[which[j]], j ? "idle, short" : "calls in flight");
        gr_fig_series_add(f, label, x, y, ns);
    }
    gr_fig_event(f, SEC(t->t0), "calls start on %s", names[b]);
    gr_fig_event(f, SEC(t->overdue), "%s overdue", names[c]);
    gr_fig_event(f, SEC(t->evac_by), "evacuate by (+ slack)");
    if (t->emptied)
        gr_fig_event(f, SEC(t->emptied), "%s emptied", names[c]);
#undef SEC
    if (out->verdict == GR_PASS)
        gr_fig_caption(f, "%s, idle and short, was evacuated once overdue; %s, with calls in flight, kept its streams",
                       names[c], names[b]);
    else if (closed_b)
        gr_fig_caption(f, "Streams on %s were closed while its calls were in flight: a busy server is never overdue",
                       names[b]);
    else if (!t->emptied)
        gr_fig_caption(f, "%s stayed short and idle past overdue and kept its streams: it must be evacuated", names[c]);
    else if (t->early)
        gr_fig_caption(f, "%s was evacuated before it was overdue: until then, fill it toward the reserve", names[c]);
    else
        gr_fig_caption(f, "The streams per server while %s was idle and %s busy: the feedback says what broke",
                       names[c], names[b]);
}

/* The burst's picture: the streams on each server from the burst's start
 * |t0| to |now| against what covers the busy server |b|'s calls. One
 * quantity more beside the counts: the longest queue wait, judged against
 * its bound, is given in the caption (ms would need a third axis). */
void gr_cov_burst_figure(gr_scenario_result *out, gr_cov_server *const *servers, const char *const *names, int n, int b,
                         int64_t t0, int64_t now, int64_t bound_ns, const gr_cov_waits *w, int calls, int demand,
                         int burst_ms, bool skewed)
{
    gr_figure *f = &out->figure;
    char title[GR_FIG_LABEL];
    snprintf(title, sizeof title, "A burst of %d calls on server %s, new streams placed %s", calls, names[b],
             skewed ? "80 % on it" : "evenly");
    gr_fig_plot(f, title, "seconds from the burst's first call", "streams open, calls queued");
    gr_cov_fig_streams(f, servers, names, n, b, t0, now);
    /* The calls queued at the busy server beside the streams (a call
     * queued is a stream missing), so a late cover shows as the queue the
     * streams did not absorb; with what covers the demand, read on the
     * calls' own axis when a failing agent's few streams would be a flat
     * line at 0 beside hundreds of calls (gr_fig_own_scale). */
    int64_t step;
    size_t ns = gr_cov_fig_samples(t0, now, &step);
    double x[GR_FIG_MAX_POINTS], y[GR_FIG_MAX_POINTS];
    for (size_t k = 0; k < ns; k++) {
        int64_t t = t0 + (int64_t)k * step;
        x[k] = (double)((int64_t)k * step) / RL_NS_PER_SEC;
        y[k] = gr_cov_queued_at(servers[b], t0, t);
    }
    char label[GR_FIG_LABEL];
    snprintf(label, sizeof label, "calls queued on %s", names[b]);
    int queued = gr_fig_series_add(f, label, x, y, ns);
    int covered = f->nrefs;
    gr_fig_ref(f, demand + RL_COV_RESERVE, "covered: %d in flight + reserve %d", demand, RL_COV_RESERVE);
    gr_fig_own_scale(f, queued, covered, "streams open", "calls");
    gr_fig_event(f, burst_ms / 1000.0, "last call sent");
    if (w->max_ns <= bound_ns)
        gr_fig_caption(f,
                       "%s's streams grew to cover its calls: the longest wait (%lld ms) stayed under the bound "
                       "(%lld ms)",
                       names[b], (long long)(w->max_ns / RL_NS_PER_MS), (long long)(bound_ns / RL_NS_PER_MS));
    else
        gr_fig_caption(f,
                       "Calls waited at %s past the bound (longest %lld ms, bound %lld ms): its streams did not "
                       "grow with its calls",
                       names[b], (long long)(w->max_ns / RL_NS_PER_MS), (long long)(bound_ns / RL_NS_PER_MS));
}

/* The rest scenario's picture: the streams on each server from the
 * burst's start |t0| to the check, against the reserve and the most a
 * server may hold at the check; |below| and |worst| as judged (-1: none). */
void gr_cov_rest_figure(gr_scenario_result *out, gr_cov_server *const *servers, const char *const *names, int n, int b,
                        int64_t t0, int64_t t_end, int64_t check, int below, int below_n, int worst, int worst_n)
{
    gr_figure *f = &out->figure;
    gr_fig_plot(f, "Streams per server after a burst, back to the reserve", "seconds from the burst's first call",
                "streams open");
    gr_cov_fig_streams(f, servers, names, n, b, t0, check);
    gr_fig_ref(f, RL_COV_RESERVE, "reserve: %d per server (never below)", RL_COV_RESERVE);
    gr_fig_ref(f, 2 * RL_COV_RESERVE, "judged: at most %d per server at the check", 2 * RL_COV_RESERVE);
    gr_fig_event(f, (double)(t_end - t0) / RL_NS_PER_SEC, "the burst's last answer");
    gr_fig_event(f, (double)(check - t0) / RL_NS_PER_SEC, "check: %d ms unused + margin", RL_COV_PRUNE_UNUSED_MS);
    if (below >= 0)
        gr_fig_caption(f, "Server %s was pruned to %d, below the reserve: the next call there waits for a new stream",
                       names[below], below_n);
    else if (worst >= 0)
        gr_fig_caption(f,
                       "Server %s still held %d streams at the check: idle streams were not pruned back to the "
                       "reserve",
                       names[worst], worst_n);
    else
        gr_fig_caption(f,
                       "Every server went back to the reserve once its streams were unused for %d ms, and "
                       "never below it",
                       RL_COV_PRUNE_UNUSED_MS);
}

/* The unfillable scenario's picture: the streams on each server and in
 * all from |t0| to |now|, against the judged bound on the total (the
 * total and the bound on an axis of their own when they are orders of
 * magnitude above the servers' streams). */
void gr_cov_unfillable_figure(gr_scenario_result *out, gr_cov_server *const *servers, const char *const *names, int n,
                              int b, int64_t t0, int64_t now, int bound, int peak, bool kept)
{
    gr_figure *f = &out->figure;
    char title[GR_FIG_LABEL];
    snprintf(title, sizeof title, "Calls on server %s, where no new stream can land", names[b]);
    gr_fig_plot(f, title, "seconds from the first call", "streams open");
    gr_cov_fig_streams(f, servers, names, n, b, t0, now);
    int64_t step;
    size_t ns = gr_cov_fig_samples(t0, now, &step);
    double x[GR_FIG_MAX_POINTS], y[GR_FIG_MAX_POINTS];
    for (size_t k = 0; k < ns; k++) {
        x[k] = (double)((int64_t)k * step) / RL_NS_PER_SEC;
        y[k] = 0;
        for (int i = 0; i < n; i++)
            y[k] += gr_cov_streams_at(servers[i], t0 + (int64_t)k * step);
    }
    int total = gr_fig_series_add(f, "streams in all", x, y, ns);
    int judged = f->nrefs;
    gr_fig_ref(f, bound, "judged: at most %d in all", bound);
    /* The total and its bound on their own axis when an agent that paused
     * holds a few streams a server against a bound in the hundreds: on
     * one axis the busy server's kept streams are a line at 0. */
    gr_fig_own_scale(f, total, judged, "streams open on each server", "streams in all");
    if (peak > bound)
        gr_fig_caption(f,
                       "The total grew past the bound (%d streams): growth must pause once idle streams elsewhere "
                       "reach %dx the busy server's demand",
                       peak, RL_COV_PAUSE_FACTOR);
    else if (!kept)
        gr_fig_caption(f, "Streams on %s were closed while its calls waited: keep the busy server's streams", names[b]);
    else
        gr_fig_caption(f, "Growth paused under the bound and %s kept its streams: opening more cannot move placement",
                       names[b]);
}

void gr_cov_rest_early_figure(gr_scenario_result *out, gr_cov_server *const *servers, const char *const *names, int n,
                              int b, int64_t t0, int64_t now)
{
    gr_figure *f = &out->figure;
    gr_fig_plot(f, "Streams per server during the burst before the rest", "seconds from the burst's first call",
                "streams open");
    gr_cov_fig_streams(f, servers, names, n, b, t0, now);
    gr_fig_ref(f, RL_COV_RESERVE, "reserve: %d per server (never below)", RL_COV_RESERVE);
    gr_fig_caption(f, "The burst on %s broke a rule before anything was left to prune: the verdict says which",
                   names[b]);
}
