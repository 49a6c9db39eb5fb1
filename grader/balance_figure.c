/* balance_figure: the balance pictures and their arithmetic; see
 * balance_figure.h. */
#include "balance_figure.h"

#include "rl_deadline.h"

#include <limits.h>
#include <stdio.h>

size_t gr_bal_rate_so_far(const int64_t *open_ns, size_t nopen, size_t skip, int64_t start_ns, int64_t window_ns,
                          size_t nwin, int nclients, double scale, double *x, double *y)
{
    if (nclients <= 0 || window_ns <= 0)
        return 0;
    size_t k = skip; /* the next open not yet counted */
    for (size_t w = 0; w < nwin; w++) {
        int64_t end = start_ns + (int64_t)(w + 1) * window_ns;
        while (k < nopen && open_ns[k] <= end)
            k++;
        double world_min = (double)(end - start_ns) * scale / (60.0 * RL_NS_PER_SEC);
        x[w] = (double)(end - start_ns) * scale / RL_NS_PER_SEC;
        y[w] = (double)(k > skip ? k - skip : 0) / nclients / world_min;
    }
    return nwin;
}

size_t gr_bal_bunch_sizes(const int64_t *open_ns, size_t nopen, size_t skip, int64_t start_ns, int64_t span_ns,
                          double scale, double *x, double *y, size_t max)
{
    size_t n = 0, j = skip;
    for (size_t i = skip; i < nopen && n < max; i++) {
        if (j < i)
            j = i;
        while (j < nopen && open_ns[j] - open_ns[i] <= span_ns)
            j++;
        x[n] = (double)(open_ns[i] - start_ns) * scale / RL_NS_PER_SEC;
        y[n++] = (double)(j - i);
    }
    return n;
}

/* The picture of fills: the joining backend's share of the calls over
 * (world) time, against the fair share and the judged minimum, with the
 * instant it joined and the bound for taking its share. */
void gr_bal_fills_figure(gr_scenario_result *out, const gr_bal_live *l)
{
    if (!l->nshare)
        return;
    gr_figure *f = &out->figure;
    gr_fig_plot(f, "The joining backend's share of the calls", "seconds of world time (the lab runs 30x faster)",
                "backend 3's share of the calls (%)");
    gr_fig_series_add(f, "backend 3 of 3", l->share_x, l->share_y, l->nshare);
    gr_fig_ref(f, 100.0 / 3, "fair share: 33 %%");
    gr_fig_ref(f, 100 * GR_BAL_FAIR_MIN, "judged: %.0f %% or more", 100 * GR_BAL_FAIR_MIN);
    gr_fig_event(f, GR_BAL_WORLD_ADD_MS / 1000.0, "backend 3 joins");
    gr_fig_event(f, (GR_BAL_WORLD_ADD_MS + GR_BAL_WORLD_FILL_MS) / 1000.0, "bound: %d s later",
                 GR_BAL_WORLD_FILL_MS / 1000);
    if (l->fill_ms >= 0 && l->fill_ms <= GR_BAL_WORLD_FILL_MS / GR_BAL_LAB_SCALE)
        gr_fig_caption(f,
                       "The new backend reached its share %lld s after it joined: connections were re-made "
                       "through the balancer",
                       (long long)(l->fill_ms * GR_BAL_LAB_SCALE / 1000));
    else
        gr_fig_caption(f, "The new backend did not reach its share in time: connections made once stay where they "
                          "are");
}

/* The picture of no-failures, in world seconds from a GOAWAY: the long
 * call the run kept in flight (90 % of the world's longest deadline)
 * against the grace the config gives it before the connection closes,
 * red when long calls were cut. */
void gr_bal_no_failures_figure(gr_scenario_result *out, const gr_bal_live *l)
{
    gr_figure *f = &out->figure;
    double call_s = (double)l->longest_ms * 0.9 / 1000, grace_s = (double)l->grace_ms / 1000;
    bool infinite = l->grace_ms >= INT_MAX;
    if (l->reconnects == 0) {
        /* No connection was re-made: no GOAWAY came, and none is drawn. */
        gr_fig_timeline(f, "No GOAWAY came: the long call never met a connection's end",
                        "seconds of world time after the call starts");
        gr_fig_span_add(f, gr_fig_row(f, "long call in flight"), 0, call_s, GR_FIG_RAN, "runs up to %.0f s", call_s);
        gr_fig_caption(f, "No connection was re-made (0 reconnects): no GOAWAY, so no grace was put to the test");
        return;
    }
    gr_fig_timeline(f, "A GOAWAY with a long call in flight: the grace against the call",
                    "seconds of world time after the GOAWAY");
    gr_fig_event(f, 0, "GOAWAY (max_connection_age %s)", l->age);
    gr_fig_span_add(f, gr_fig_row(f, "long call in flight"), 0, call_s, GR_FIG_RAN, "runs up to %.0f s", call_s);
    gr_fig_span_add(f, gr_fig_row(f, "the grace"), 0, infinite ? call_s * 1.2 : grace_s,
                    l->failed_long ? GR_FIG_WRONG : GR_FIG_GIVEN, "%s", l->grace);
    if (!infinite)
        gr_fig_event(f, grace_s, "connection closed");
    if (l->failed == 0)
        gr_fig_caption(f, "None of %d calls failed across %d reconnects: the grace outlasts the longest call", l->sent,
                       l->reconnects);
    else if (l->failed_long && l->grace_ms < l->longest_ms)
        gr_fig_caption(f, "%d long calls were cut: the connection closes %s after the GOAWAY, before they end",
                       l->failed_long, l->grace);
    else
        gr_fig_caption(f, "%d of %d calls failed as connections were re-made (%d of them long)", l->failed, l->sent,
                       l->failed_long);
}

/* The picture of churn: reconnects per client per world minute so far,
 * at the end of each window, against the most allowed. */
void gr_bal_churn_figure(gr_scenario_result *out, const gr_bal_live *l, double limit)
{
    if (!l->nrate)
        return;
    gr_figure *f = &out->figure;
    gr_fig_plot(f, "How often each client reconnects", "seconds of world time (the lab runs 30x faster)",
                "reconnects per client per minute, so far");
    gr_fig_series_add(f, l->open_log_full ? "reconnects so far (the log filled)" : "reconnects so far", l->rate_x,
                      l->rate_y, l->nrate);
    gr_fig_ref(f, limit, "at most %.0f: a connection lives %d s or more", limit, GR_BAL_WORLD_MIN_LIFE_MS / 1000);
    gr_fig_event(f, GR_BAL_WORLD_ADD_MS / 1000.0, "backend 3 joins");
    if (l->per_client_min <= limit)
        gr_fig_caption(f, "%.1f reconnects per client per minute, under %.0f: connections live long enough",
                       l->per_client_min, limit);
    else
        gr_fig_caption(f, "%.1f reconnects per client per minute, over %.0f: max_connection_age %s is too short",
                       l->per_client_min, limit, l->age);
}

/* The picture of no-storm: for each reconnect, how many came within
 * the storm span of it, against every client at once. */
void gr_bal_storm_figure(gr_scenario_result *out, const gr_bal_live *l)
{
    gr_figure *f = &out->figure;
    char label[GR_FIG_LABEL];
    snprintf(label, sizeof label, "reconnects within %.1f s of each", GR_BAL_WORLD_STORM_MS / 1000.0);
    gr_fig_plot(f, "Do the clients reconnect all at once?", "seconds of world time (the lab runs 30x faster)",
                "reconnects within the span");
    if (l->nbunch) {
        gr_fig_series_add(f, label, l->bunch_x, l->bunch_y, l->nbunch);
    } else if (l->nrate) { /* no reconnect at all: a flat zero over the run */
        double x[2] = {0, l->rate_x[l->nrate - 1]}, y[2] = {0, 0};
        gr_fig_series_add(f, "no reconnect", x, y, 2);
    }
    gr_fig_ref(f, GR_BAL_NCLIENTS, "every client (%d) at once: a storm", GR_BAL_NCLIENTS);
    if (l->storms < 2)
        gr_fig_caption(f, "At most %d reconnects within %.1f s, %d round%s of all %d: the jitter spreads them",
                       l->storm, GR_BAL_WORLD_STORM_MS / 1000.0, l->storms, l->storms == 1 ? "" : "s", GR_BAL_NCLIENTS);
    else
        gr_fig_caption(f, "%d rounds in which all %d clients reconnected within %.1f s: GOAWAY storms", l->storms,
                       GR_BAL_NCLIENTS, GR_BAL_WORLD_STORM_MS / 1000.0);
}
