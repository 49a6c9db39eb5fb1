/* overload_figure: the overload exercise's pictures; see overload_figure.h. */
#include "overload_figure.h"

#include "rl_deadline.h"

#include <stdlib.h>
#include <string.h>

void gr_overload_refused_figure(gr_scenario_result *out, const int64_t *ms, int n, int fast_ms, int deadline_ms)
{
    if (n <= 0)
        return;
    double x[GR_FIG_MAX_POINTS], y[GR_FIG_MAX_POINTS];
    int64_t worst = 0;
    int k = 0;
    for (; k < n && k < GR_FIG_MAX_POINTS; k++) {
        x[k] = k + 1;
        y[k] = (double)ms[k];
        worst = ms[k] > worst ? ms[k] : worst;
    }
    gr_figure *f = &out->figure;
    gr_fig_plot(f, "The backend's port closed: how long each call took to fail", "call (in the order made)",
                "ms from the call's start to its status");
    gr_fig_series_add(f, "time to the status", x, y, (size_t)k);
    gr_fig_ref(f, fast_ms, "bound: fail within %d ms", fast_ms);
    gr_fig_ref(f, deadline_ms, "each call's deadline: %d ms", deadline_ms);
    if (worst > fast_ms)
        gr_fig_caption(f, "Calls took up to %lld ms, past the %d ms bound: the relay waits for a backend that is down",
                       (long long)worst, fast_ms);
    else if (out->verdict == GR_FAIL)
        gr_fig_caption(f, "Every call failed fast (within %lld ms), but not all with UNAVAILABLE: pass it on",
                       (long long)worst);
    else
        gr_fig_caption(f, "Every call failed within %lld ms, far under the %d ms bound: the relay fails fast",
                       (long long)worst, fast_ms);
}

/* Adds the series of the points with y[i] >= 0 (the rest: not measured). */
static void measured_series(gr_figure *f, const char *label, const double *x, const double *y, size_t n)
{
    double xs[GR_FIG_MAX_POINTS], ys[GR_FIG_MAX_POINTS];
    size_t k = 0;
    for (size_t i = 0; i < n && k < GR_FIG_MAX_POINTS; i++)
        if (y[i] >= 0) {
            xs[k] = x[i];
            ys[k++] = y[i];
        }
    if (k)
        gr_fig_series_add(f, label, xs, ys, k);
}

void gr_overload_blackhole_figure(gr_scenario_result *out, const char *prefix, const rl_load_call *calls, size_t n,
                                  const Relaylab__ObserveReply *obs, int deadline_ms)
{
    if (!n)
        return;
    n = n > GR_FIG_MAX_POINTS ? GR_FIG_MAX_POINTS : n;
    double x[GR_FIG_MAX_POINTS], status[GR_FIG_MAX_POINTS], arrived[GR_FIG_MAX_POINTS], ended[GR_FIG_MAX_POINTS];
    int64_t t0 = calls[0].start_ns, now = rl_now_ns();
    for (size_t i = 0; i < n; i++) {
        x[i] = (double)(calls[i].start_ns - t0) / RL_NS_PER_SEC;
        status[i] = calls[i].end_ns ? (double)(calls[i].end_ns - calls[i].start_ns) / RL_NS_PER_MS : -1;
        arrived[i] = ended[i] = -1;
    }
    /* The latest record of each call: a call forwarded twice is as late
     * as its later copy. */
    for (size_t k = 0; obs && k < obs->n_calls; k++) {
        const Relaylab__CallRecord *r = obs->calls[k];
        long i = rl_load_index(prefix, r->tag);
        if (i < 0 || (size_t)i >= n)
            continue;
        double a = (double)(r->arrival_ns - calls[i].start_ns) / RL_NS_PER_MS;
        double e = (double)((r->ended ? r->end_ns : now) - calls[i].start_ns) / RL_NS_PER_MS;
        arrived[i] = a > arrived[i] ? a : arrived[i];
        ended[i] = e > ended[i] ? e : ended[i];
    }
    gr_figure *f = &out->figure;
    gr_fig_plot(f, "The backend blackholed: each call against its deadline",
                "seconds into the load (by each call's start)", "ms after the call's start");
    measured_series(f, "status at the client", x, status, n);
    measured_series(f, "reached the backend", x, arrived, n);
    measured_series(f, "downstream call ended", x, ended, n);
    gr_fig_ref(f, deadline_ms, "each call's deadline: %d ms", deadline_ms);
    if (out->verdict == GR_PASS)
        gr_fig_caption(f, "Every call ended by its deadline, and none reached the backend after it: nothing forwarded "
                          "late");
    else if (strstr(out->feedback, "reached the baseline after"))
        gr_fig_caption(f, "Arrivals above the deadline line: calls forwarded after their caller had given up");
    else if (strstr(out->feedback, "still open"))
        gr_fig_caption(f, "Downstream calls ended long after the deadline: neither deadline nor cancel passed on");
    else
        gr_fig_caption(f, "Calls with no point at the client had no status: the relay held them past the deadline");
}

void gr_overload_recovers_figure(gr_scenario_result *out, const gr_overload_recovery *r)
{
    gr_figure *f = &out->figure;
    gr_fig_timeline(f, "The backend down, then back: the first success against the bound",
                    "ms since the backend's port closed");
    int back = gr_fig_row(f, "the backend");
    gr_fig_span_add(f, back, 0, (double)r->up_ms, GR_FIG_RAN, "port closed: %lld ms", (long long)r->up_ms);
    if (r->ndown)
        gr_fig_span_add(f, gr_fig_row(f, "calls while it was down"), (double)r->down0_ms, (double)r->down1_ms,
                        GR_FIG_RAN, "%d calls", r->ndown);
    int after = gr_fig_row(f, "calls after it came back");
    if (r->ok0_ms >= 0) {
        if (r->nfailed)
            gr_fig_span_add(f, after, (double)r->up_ms, (double)r->ok0_ms, GR_FIG_RAN, "%d failed", r->nfailed);
        gr_fig_span_add(f, after, (double)r->ok0_ms, (double)r->ok1_ms, GR_FIG_GIVEN, "first OK");
    } else {
        gr_fig_span_add(f, after, (double)r->up_ms, (double)r->last_ms, GR_FIG_WRONG, "%d failed, none OK", r->nfailed);
    }
    gr_fig_span_add(f, gr_fig_row(f, "the bound"), (double)r->up_ms, (double)(r->up_ms + r->bound_ms), GR_FIG_TRUTH,
                    "reconnect backoff + slack: %lld ms", (long long)r->bound_ms);
    gr_fig_event(f, (double)r->up_ms, "backend back");
    if (r->ok0_ms >= 0)
        gr_fig_caption(f, "The first call succeeded %lld ms after the backend came back, within the %lld ms bound",
                       (long long)r->ok_after_ms, (long long)r->bound_ms);
    else
        gr_fig_caption(f, "No call succeeded in the %lld ms after the backend came back: the relay does not reconnect",
                       (long long)r->bound_ms);
}

void gr_overload_load_figure(gr_scenario_result *out, const rl_load_call *calls, size_t n, int duration_ms,
                             double capacity_per_s)
{
    enum { WIN_MS = 250, MAX_WIN = GR_FIG_MAX_POINTS };
    static double x[MAX_WIN], offered[MAX_WIN], ok[MAX_WIN], refused[MAX_WIN], waited[MAX_WIN];
    const int64_t nwin = duration_ms / WIN_MS + 1 < MAX_WIN ? duration_ms / WIN_MS + 1 : MAX_WIN;
    if (!n)
        return;
    memset(offered, 0, sizeof offered);
    memset(ok, 0, sizeof ok);
    memset(refused, 0, sizeof refused);
    memset(waited, 0, sizeof waited);
    int64_t t0 = calls[0].start_ns;
    size_t used = 0;
    const double per_s = 1000.0 / WIN_MS;
    for (size_t i = 0; i < n; i++) {
        int64_t w = (calls[i].start_ns - t0) / (WIN_MS * RL_NS_PER_MS);
        if (w < 0 || w >= nwin)
            continue;
        used = (size_t)w + 1 > used ? (size_t)w + 1 : used;
        offered[w] += per_s;
        if (calls[i].end_ns && calls[i].status == GRPC_STATUS_OK)
            ok[w] += per_s;
        else if (calls[i].status == GRPC_STATUS_DEADLINE_EXCEEDED || !calls[i].end_ns)
            waited[w] += per_s;
        else
            refused[w] += per_s;
    }
    for (size_t w = 0; w < used; w++)
        x[w] = ((double)w + 0.5) * WIN_MS / 1000.0;
    gr_figure *f = &out->figure;
    gr_fig_plot(f, "Ten times the capacity: what became of the calls", "seconds into the load (by each call's start)",
                "calls per second");
    gr_fig_series_add(f, "OK (goodput)", x, ok, used);
    gr_fig_series_add(f, "refused fast", x, refused, used);
    gr_fig_series_add(f, "waited their deadline", x, waited, used);
    /* Last, so drawn on top: the other three add up to it, and one of
     * them often equals it. */
    gr_fig_series_add(f, "offered (all calls)", x, offered, used);
    gr_fig_ref(f, capacity_per_s, "backend capacity: %.0f calls/s", capacity_per_s);
    gr_fig_caption(f, "Goodput should hold near the capacity line and the rest be refused fast; calls that wait "
                      "their deadline are the mistake");
}
