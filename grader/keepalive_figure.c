/* keepalive_figure: the keepalive exercise's live pictures; see
 * keepalive_figure.h. */
#include "keepalive_figure.h"

#include "rl_probe.h"

#include <grpc/status.h>
#include <stdio.h>

/* Both pictures' x axis: the lab's time, which is the world's divided by
 * p->k when the lab scaled it. */
static void lab_time_xlabel(const gr_ka_picture *p, char *buf, size_t len)
{
    if (p->k > 1.0)
        snprintf(buf, len, "ms since the first call started, in the lab's time (the world's / %.0f)", p->k);
    else
        snprintf(buf, len, "ms since the first call started");
}

void gr_ka_nat_figure(gr_scenario_result *out, const gr_ka_picture *p, const gr_ka_call *first, const gr_ka_call *next,
                      bool between_calls)
{
    gr_figure *f = &out->figure;
    /* One scale: the lab's. The world's periods are drawn as the lab ran
     * them (divided by k, as the baseline and the NAT got them). */
    char xlabel[GR_FIG_LABEL];
    lab_time_xlabel(p, xlabel, sizeof xlabel);
    gr_fig_timeline(f, "The connection through the NAT", xlabel);
    double t = 0;
    bool ok = next->status == GRPC_STATUS_OK && p->dropped == 0;
    if (between_calls) {
        gr_fig_span_add(f, gr_fig_row(f, "first call"), 0, (double)first->ms, GR_FIG_RAN, "%s",
                        rl_status_name(first->status));
        t = (double)first->ms;
        gr_fig_span_add(f, gr_fig_row(f, "no call: silence"), t, t + GR_KA_QUIET_MS, GR_FIG_RAN, "%d ms",
                        GR_KA_QUIET_MS);
        gr_fig_event(f, t + (double)p->nat_ms, "the NAT forgets an idle connection (%lld ms)", (long long)p->nat_ms);
        gr_fig_span_add(f, gr_fig_row(f, "next call"), t + GR_KA_QUIET_MS, t + GR_KA_QUIET_MS + (double)next->ms,
                        ok ? GR_FIG_GIVEN : GR_FIG_WRONG, "%s after %lld ms", rl_status_name(next->status),
                        (long long)next->ms);
    } else {
        gr_fig_span_add(f, gr_fig_row(f, "a call that sends nothing"), 0, (double)next->ms,
                        ok ? GR_FIG_GIVEN : GR_FIG_WRONG, "%s after %lld ms", rl_status_name(next->status),
                        (long long)next->ms);
        gr_fig_event(f, (double)p->nat_ms, "the NAT forgets an idle connection (%lld ms)", (long long)p->nat_ms);
    }
    int64_t lab_ka = p->lab_ka;
    if (lab_ka > 0) {
        if (lab_ka != p->real_ka)
            gr_fig_span_add(f, gr_fig_row(f, "client keepalive period"), t, t + (double)lab_ka, GR_FIG_TRUTH,
                            "every %lld ms (the world's %lld ms)", (long long)lab_ka, (long long)p->real_ka);
        else
            gr_fig_span_add(f, gr_fig_row(f, "client keepalive period"), t, t + (double)lab_ka, GR_FIG_TRUTH,
                            "every %lld ms", (long long)lab_ka);
    }
    /* The caption quotes the period as the bars draw it (the lab's). */
    char ka[48];
    if (lab_ka > 0)
        snprintf(ka, sizeof ka, "%lld ms", (long long)lab_ka);
    else
        snprintf(ka, sizeof ka, "%s", p->ka);
    if (ok)
        gr_fig_caption(f, "The silence outlasted the NAT's idle timeout, yet the NAT dropped nothing: the client's "
                          "pings kept the connection alive");
    else if (p->too_many_pings)
        gr_fig_caption(f,
                       "The server answered the client's pings (every %s) with GOAWAY too_many_pings: it does not "
                       "permit pings that often",
                       ka);
    else if (p->dropped)
        gr_fig_caption(f,
                       "The NAT dropped %d connection%s in the silence: the client's keepalive (%s) did not keep "
                       "it alive",
                       p->dropped, p->dropped == 1 ? "" : "s", ka);
    else
        gr_fig_caption(f, "The call failed %s although the NAT dropped nothing", rl_status_name(next->status));
}

void gr_ka_goaway_figure(gr_scenario_result *out, const gr_ka_picture *p, const gr_ka_goaway_run *m)
{
    gr_figure *f = &out->figure;
    char xlabel[GR_FIG_LABEL];
    lab_time_xlabel(p, xlabel, sizeof xlabel);
    gr_fig_timeline(f, "Pings over calls and idle gaps, through the NAT", xlabel);
#define KMS(t) ((double)((t)-m->t0) / 1e6)
    int rc = gr_fig_row(f, "calls"), ri = gr_fig_row(f, "idle gaps");
    double end = 0;
    for (int i = 0; i < m->n; i++) {
        double a = KMS(m->start_ns[i]), b = a + (double)m->call_ms[i];
        gr_fig_span_add(f, rc, a, b, m->ok[i] ? GR_FIG_GIVEN : GR_FIG_WRONG, "%s", m->ok[i] ? "OK" : "failed");
        gr_fig_span_add(f, ri, b, KMS(m->idle_end_ns[i]), GR_FIG_RAN, NULL);
        end = KMS(m->idle_end_ns[i]);
    }
    int64_t lab_ka = m->lab_ka, lab_min = m->lab_min;
    bool goaway = p->too_many_pings;
    if (lab_ka > 0) {
        double to = (double)lab_ka < end ? (double)lab_ka : end;
        gr_fig_span_add(f, gr_fig_row(f, "client pings every"), 0, to, goaway ? GR_FIG_WRONG : GR_FIG_GIVEN,
                        "%lld ms%s", (long long)lab_ka, (double)lab_ka > end ? " (past the run)" : "");
    }
    if (m->min_drawn) {
        double to = (double)lab_min < end ? (double)lab_min : end;
        gr_fig_span_add(f, gr_fig_row(f, "server permits one every"), 0, to, GR_FIG_TRUTH, "%lld ms%s",
                        (long long)lab_min, (double)lab_min > end ? " (past the run)" : "");
    }
    int64_t at = m->goaway_ns;
    if (at)
        gr_fig_event(f, KMS(at), "GOAWAY too_many_pings");
    if (goaway && lab_ka > 0 && lab_min > 0)
        /* The bars' numbers (the lab's), not the config's world ones. */
        gr_fig_caption(f, "GOAWAY too_many_pings: the client pings every %lld ms, the server permits one per %lld ms",
                       (long long)lab_ka, (long long)lab_min);
    else if (goaway)
        gr_fig_caption(f,
                       "The server sent GOAWAY too_many_pings: the client pings every %s, more often than the "
                       "server permits",
                       p->ka);
    else if (m->failed)
        gr_fig_caption(f, "%d of %d calls failed, without a too_many_pings", m->failed, m->calls);
    else
        gr_fig_caption(f,
                       "%d calls and idle gaps, no GOAWAY: the server permits the client's pings, in calls and "
                       "between them",
                       m->calls);
#undef KMS
}
