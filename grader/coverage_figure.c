/* coverage_figure: the sampling and the stream series the coverage
 * pictures share (coverage_figure.h). */
#include "coverage_figure.h"

#include "rl_deadline.h"

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

double gr_cov_oldest_wait_ms(const gr_cov_server *s, int64_t t0, int64_t t)
{
    int64_t w = 0;
    for (size_t k = 0; k < s->n_calls; k++) {
        const Relaylab__TunnelCallRecord *c = s->calls[k];
        if (c->dispatched_ns < t0 || c->dispatched_ns > t || (c->handed_ns && c->handed_ns <= t))
            continue;
        if (t - c->dispatched_ns > w)
            w = t - c->dispatched_ns;
    }
    return (double)w / RL_NS_PER_MS;
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
        snprintf(label, sizeof label, "streams on %s%s", names[i], i == b ? " (the busy server)" : "");
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
