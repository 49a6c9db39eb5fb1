/* retry_figure: the retry exercise's pictures; see retry_figure.h. */
#include "retry_figure.h"

#include "rl_probe.h"

#include <stdio.h>

/* The picture of one call through the config's channel (ms since the
 * client started it): the call as the client saw it, and each attempt of
 * |rpc| the baseline saw, red when it was one too many (|want| attempts
 * were right; 0: no bound), grey when the baseline failed it on purpose,
 * blue when it answered; the caller's deadline as an event. Rows past the
 * figure's room are summed in the last. */
void gr_retry_attempts_figure(gr_scenario_result *out, const char *rpc, int64_t start_ns, int64_t end_ns,
                              grpc_status_code status, const Relaylab__ObserveReply *obs, int64_t budget_ms,
                              size_t want)
{
    gr_figure *f = &out->figure;
    size_t n = rl_observe_count(obs, rpc);
    gr_fig_timeline(f, "Each attempt the baseline saw, against the caller's deadline", "ms since the call started");
    double end = end_ns > start_ns ? (double)(end_ns - start_ns) / 1e6 : 0;
    gr_fig_span_add(f, gr_fig_row(f, "client: the call"), 0, end, status == GRPC_STATUS_OK ? GR_FIG_GIVEN : GR_FIG_RAN,
                    "%s after %.0f ms", rl_status_name(status), end);
    gr_fig_event(f, (double)budget_ms, "the caller's deadline (%lld ms)", (long long)budget_ms);
    enum { SHOWN = GR_FIG_MAX_ROWS - 2 };
    for (size_t i = 0; i < n && i < SHOWN; i++) {
        const Relaylab__CallRecord *r = rl_observe_find(obs, rpc, i);
        double a = (double)(r->arrival_ns - start_ns) / 1e6;
        double b = r->ended && r->end_ns > r->arrival_ns ? (double)(r->end_ns - start_ns) / 1e6 : a;
        char row[GR_FIG_LABEL];
        snprintf(row, sizeof row, "attempt %zu at the baseline", i + 1);
        bool extra = want && i >= want;
        gr_fig_span_add(f, gr_fig_row(f, row), a, b,
                        extra        ? GR_FIG_WRONG
                        : r->faulted ? GR_FIG_RAN
                                     : GR_FIG_GIVEN,
                        "%s%s%s", r->ended ? rl_status_name((grpc_status_code)r->status) : "running",
                        r->faulted ? " (injected)" : "", extra ? ": one too many" : "");
    }
    if (n > SHOWN) {
        const Relaylab__CallRecord *first = rl_observe_find(obs, rpc, SHOWN), *last = rl_observe_find(obs, rpc, n - 1);
        gr_fig_span_add(f, gr_fig_row(f, "later attempts"), (double)(first->arrival_ns - start_ns) / 1e6,
                        (double)(last->arrival_ns - start_ns) / 1e6, want && n > want ? GR_FIG_WRONG : GR_FIG_RAN,
                        "%zu more", n - SHOWN);
    }
    if (n == 0)
        gr_fig_caption(f, "No attempt reached the baseline: the client got %s", rl_status_name(status));
    else if (want && n > want)
        gr_fig_caption(f, "%zu attempts of %s where %zu were right; the client got %s", n, rpc, want,
                       rl_status_name(status));
    else
        gr_fig_caption(f, "%zu attempt%s of %s; the client got %s after %.0f ms", n, n == 1 ? "" : "s", rpc,
                       rl_status_name(status), end);
}
