/* cancel_figure: the cancel exercise's pictures; see cancel_figure.h. */
#include "cancel_figure.h"

#include "process.h"
#include "rl_deadline.h"
#include "run.h"

#include <stdio.h>

/* The picture of a cancel on one time axis (ms since the client started
 * Process): the client's call until its cancel, when |rec| (the downstream
 * call at the baseline) ran and when it ended, against the time a relay
 * has to pass the cancel on (GR_CANCEL_MS). */
void gr_cancel_figure(gr_scenario_result *out, const rl_probe_call *c, int64_t cn, const Relaylab__CallRecord *rec,
                      const gr_cancel_check *cc)
{
    gr_figure *f = &out->figure;
    double cx = (double)(cn - c->start_ns) / 1e6;
    gr_fig_timeline(f, "When the cancel reached the baseline, and when the work stopped",
                    "ms since the client started Process");
    gr_fig_event(f, cx, "the client cancels");
    gr_fig_span_add(f, gr_fig_row(f, "client: Process"), 0, cx, GR_FIG_RAN, "Process");
    double a = (double)(rec->arrival_ns - c->start_ns) / 1e6;
    int64_t end = rec->ended ? rec->end_ns : cn + cc->observed_ms * RL_NS_PER_MS;
    double ex = (double)(end - c->start_ns) / 1e6;
    char row[GR_FIG_LABEL];
    snprintf(row, sizeof row, "%s at the baseline", rec->method);
    int r = gr_fig_row(f, row);
    gr_fig_span_add(f, r, a, cx, GR_FIG_RAN, "%s", rec->method);
    if (rec->ended)
        gr_fig_span_add(f, r, cx, ex, cc->pass ? GR_FIG_GIVEN : GR_FIG_WRONG, "%s %lld ms after the cancel",
                        rec->cancelled ? "cancelled" : "ended", (long long)cc->latency_ms);
    else
        gr_fig_span_add(f, r, cx, ex, GR_FIG_WRONG, "still running %lld ms after the cancel",
                        (long long)cc->observed_ms);
    gr_fig_span_add(f, gr_fig_row(f, "time allowed to stop"), cx, cx + GR_CANCEL_MS, GR_FIG_TRUTH, "%d ms",
                    GR_CANCEL_MS);
    if (cc->starved)
        gr_fig_caption(f, "%s stopped late while the relay and the baseline waited %lld ms for a CPU: not judged",
                       rec->method, (long long)cc->waited_ms);
    else if (cc->steps)
        gr_fig_caption(f, "%s %s after the cancel, %u of %u steps done: %s", rec->method,
                       cc->pass ? "stopped in time" : "did not stop in time", cc->steps_done, cc->steps,
                       cc->pass ? "the relay passed the cancel on" : "the relay did not pass the cancel on");
    else
        gr_fig_caption(f, "%s %s after the cancel: %s", rec->method,
                       cc->pass ? "stopped in time" : "did not stop in time",
                       cc->pass ? "the relay passed the cancel on" : "the relay did not pass the cancel on");
}

/* keeps-serving's picture (ms since the first Process started): the first
 * Process until the client cancels it, then the next Process and how it
 * ended (blue when it succeeded, red when not). */
void gr_cancel_keeps_serving_figure(gr_scenario_result *out, const rl_probe_call *c, int64_t cn,
                                    const rl_probe_call *c2, bool ok)
{
    gr_figure *f = &out->figure;
    gr_fig_timeline(f, "A cancelled Process, then the next one", "ms since the first Process started");
    double cx = (double)(cn - c->start_ns) / 1e6;
    gr_fig_event(f, cx, "the client cancels");
    gr_fig_span_add(f, gr_fig_row(f, "client: cancelled Process"), 0, cx, GR_FIG_RAN, "cancelled during Work");
    int64_t end = c2->end_ns > c2->start_ns ? c2->end_ns : rl_now_ns();
    char st[200];
    gr_process_status_text(c2, st, sizeof st);
    gr_fig_span_add(f, gr_fig_row(f, "client: next Process"), (double)(c2->start_ns - c->start_ns) / 1e6,
                    (double)(end - c->start_ns) / 1e6, ok ? GR_FIG_GIVEN : GR_FIG_WRONG, "%s in %lld ms", st,
                    (long long)gr_ms_between(c2->start_ns, end));
    if (ok)
        gr_fig_caption(f, "The next Process succeeded right after the cancel: a cancel ends one call, not the "
                          "server");
    else
        gr_fig_caption(f, "The next Process failed after a cancelled one: a cancel must end one call, not break "
                          "the server");
}

void gr_cancel_late_work_figure(gr_scenario_result *out, const rl_probe_call *c, int64_t cn,
                                const Relaylab__CallRecord *wk)
{
    if (out->figure.kind != GR_FIG_TIMELINE)
        return;
    double wa = (double)(wk->arrival_ns - c->start_ns) / 1e6;
    double we = wk->ended ? (double)(wk->end_ns - c->start_ns) / 1e6 : wa;
    gr_fig_span_add(&out->figure, gr_fig_row(&out->figure, "Work at the baseline"), wa, we, GR_FIG_WRONG,
                    "Work called after the cancel");
    gr_fig_caption(&out->figure,
                   "Work was called %lld ms after the cancel: a cancelled Process must start no "
                   "further call",
                   (long long)gr_ms_between(cn, wk->arrival_ns));
}
