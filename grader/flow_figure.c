/* flow_figure: the flow exercise's pictures; see flow_figure.h. */
#include "flow_figure.h"

#include "rl_alloc.h"

#include <stdlib.h>

/* The picture of a watch: the group's RSS over time against the budget
 * line (the RSS at the start plus |budget_mib|), with the moment the
 * reader stalled (or began to read slowly) marked. */
void gr_flow_figure(gr_scenario_result *out, const rl_memwatch *w, const rl_flow_stall_opts *o,
                    const rl_flow_stall_result *res, double budget_mib, bool pass)
{
    if (!w->npoints)
        return;
    size_t n = w->npoints;
    double *x = rl_xmalloc(n * sizeof *x), *y = rl_xmalloc(n * sizeof *y);
    for (size_t i = 0; i < n; i++) {
        x[i] = (double)w->points[i].t_ns / 1e9;
        y[i] = (double)w->points[i].rss / RL_MIB;
    }
    gr_figure *f = &out->figure;
    gr_fig_plot(f, "The producer's memory while the reader holds back", "seconds since Produce was called",
                "RSS of the submission's processes (MiB)");
    gr_fig_series_add(f, "RSS of the submission", x, y, n);
    double base = (double)w->base_rss / RL_MIB;
    gr_fig_ref(f, base + budget_mib, "budget: %.0f MiB over the start (%.0f MiB)", budget_mib, base + budget_mib);
    double stall_s = (double)res->first_chunk_ms / 1000.0;
    if (o->read_every_ms)
        gr_fig_event(f, stall_s, "reader takes 1 chunk every %d ms", (int)o->read_every_ms);
    else
        gr_fig_event(f, stall_s, "reader stalls after chunk %u", o->read_first ? o->read_first : 1);
    double peak = (double)w->peak_rss / RL_MIB;
    if (pass)
        gr_fig_caption(f,
                       "RSS levels off %.1f MiB over the start, under the %.0f MiB budget: the producer waits "
                       "for the window",
                       peak - base, budget_mib);
    else
        gr_fig_caption(f,
                       "RSS climbs %.1f MiB over the start, past the %.0f MiB budget: the producer does not "
                       "wait for the window",
                       peak - base, budget_mib);
    free(x);
    free(y);
}

void gr_flow_resume_figure(gr_scenario_result *out, const rl_memwatch *w, const rl_flow_stall_opts *o,
                           const rl_flow_stall_result *res, int64_t t0, bool ok)
{
    gr_flow_figure(out, w, o, res, GR_FLOW_BUDGET_MIB, true);
    gr_figure *f = &out->figure;
    if (f->kind != GR_FIG_PLOT)
        return;
    gr_fig_event(f, (double)(t0 - w->t0_ns) / 1e9, "the reader reads again");
    /* Not sampled while it reads: the line between is a join, and the end
     * of the read is marked so that it reads as one. */
    if (w->npoints && w->points[w->npoints - 1].t_ns > t0 - w->t0_ns)
        gr_fig_event(f, (double)w->points[w->npoints - 1].t_ns / 1e9, "%s", ok ? "all chunks read" : "the read failed");
    if (ok)
        gr_fig_caption(f,
                       "After the stall all %u chunks arrived in order, every byte right: a stalled stream "
                       "resumes intact",
                       o->count);
    else
        gr_fig_caption(f,
                       "After the stall the rest of the %u chunks did not all arrive right: a paused producer "
                       "resumes",
                       o->count);
}

/* cancel's picture after the cancel: the CPU the group used since Produce
 * was called, from every sample of the watch, with the cancel and the
 * judged window [|win0|, |win1|] marked: a producer that stopped is flat
 * from the cancel on. */
void gr_flow_cancel_figure(gr_scenario_result *out, const rl_memwatch *w, int64_t cn, int64_t win0, int64_t win1,
                           int64_t cpu_ms, int64_t window_ms, gr_flow_cancel_verdict cv)
{
    size_t n = w->npoints;
    if (!n)
        return;
    double *x = rl_xmalloc(n * sizeof *x), *y = rl_xmalloc(n * sizeof *y);
    for (size_t i = 0; i < n; i++) {
        x[i] = (double)w->points[i].t_ns / 1e9;
        y[i] = (double)(w->points[i].cpu_ns - w->base_cpu_ns) / 1e6;
    }
    gr_figure *f = &out->figure;
    gr_fig_plot(f, "The producer's CPU before and after the client cancels", "seconds since Produce was called",
                "CPU used by the submission's processes (ms)");
    gr_fig_series_add(f, "CPU used since Produce was called", x, y, n);
    gr_fig_event(f, (double)(cn - w->t0_ns) / 1e9, "the client cancels");
    gr_fig_event(f, (double)(win0 - w->t0_ns) / 1e9, "judged window starts");
    gr_fig_event(f, (double)(win1 - w->t0_ns) / 1e9, "judged window ends");
    if (cv == GR_FLOW_STARVED)
        gr_fig_caption(f,
                       "Too little CPU after the cancel (%lld ms in %lld ms) to show whether the producer "
                       "stopped",
                       (long long)cpu_ms, (long long)window_ms);
    else if (cv == GR_FLOW_STOPPED)
        gr_fig_caption(f,
                       "CPU goes flat after the cancel (%lld ms used in the %lld ms window): the producer "
                       "stopped when the call ended",
                       (long long)cpu_ms, (long long)window_ms);
    else
        gr_fig_caption(f,
                       "CPU keeps climbing after the cancel (%lld ms in the %lld ms window): the producer "
                       "goes on for nobody",
                       (long long)cpu_ms, (long long)window_ms);
    free(x);
    free(y);
}
