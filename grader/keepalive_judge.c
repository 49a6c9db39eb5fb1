/* keepalive_judge: the keepalive exercise's rules and verdicts; see
 * keepalive_judge.h. The wording is the scenarios' own: each verdict
 * function is the chain a scenario ran on what its live run measured. */
#include "keepalive_judge.h"

#include "rl_probe.h"

#include <grpc/status.h>
#include <limits.h>
#include <stdio.h>

void gr_ka_why_dropped(const gr_ka_run *r, bool between_calls, char *buf, size_t len)
{
    if (r->real_ka == INT_MAX)
        snprintf(buf, len, "the client has no keepalive (grpc.keepalive_time_ms unset)");
    else if (r->real_ka >= r->idle_ms)
        snprintf(buf, len, "the client pings every %lld ms, not more often than the %s forgets (%lld ms)",
                 (long long)r->real_ka, r->kind, (long long)r->idle_ms);
    else if (between_calls && !r->permit)
        snprintf(buf, len, "with no call in flight the client does not ping (grpc.keepalive_permit_without_calls 0)");
    else if (r->max_pings != 0)
        snprintf(buf, len,
                 "after %lld pings with no data the client holds pings back "
                 "(grpc.http2.max_pings_without_data %lld; 0 means no limit)",
                 (long long)r->max_pings, (long long)r->max_pings);
    else
        snprintf(buf, len, "the client's pings (every %lld ms) did not reach the %s in time", (long long)r->real_ka,
                 r->kind);
}

gr_verdict gr_ka_judge_idle(const gr_ka_run *r, const gr_ka_call *first, const gr_ka_call *second, char *buf,
                            size_t len)
{
    if (first->status != GRPC_STATUS_OK) {
        snprintf(buf, len, "the first call failed %s (%s): the client args do not work at all%s",
                 rl_status_name(first->status), first->details, r->note);
        return GR_FAIL;
    }
    if (second->status == GRPC_STATUS_OK && r->dropped == 0) {
        /* The NAT dropped nothing: the rule held. The call's time is the
         * machine's (1505 ms was seen with every core busy), not a verdict. */
        snprintf(buf, len, "after %d ms with no call the next call took %lld ms%s; the NAT dropped nothing%s",
                 GR_KA_QUIET_MS, (long long)second->ms, second->ms > GR_KA_FAST_MS ? " (a busy machine)" : "", r->note);
        return GR_PASS;
    }
    char why[200];
    gr_ka_why_dropped(r, true, why, sizeof why);
    snprintf(buf, len,
             "client rule broke: after %d ms with no call, the NAT (idle %lld ms) dropped %d connection%s "
             "and the next call %s after %lld ms: %s%s",
             GR_KA_QUIET_MS, (long long)r->nat_ms, r->dropped, r->dropped == 1 ? "" : "s",
             second->status == GRPC_STATUS_OK ? "succeeded only" : rl_status_name(second->status),
             (long long)second->ms, why, r->note);
    return GR_FAIL;
}

gr_verdict gr_ka_judge_quiet_call(const gr_ka_run *r, const gr_ka_call *call, bool too_many_pings, char *buf,
                                  size_t len)
{
    if (call->status == GRPC_STATUS_OK && r->dropped == 0) {
        snprintf(buf, len, "a %d ms call that sent nothing succeeded; the NAT dropped nothing%s", GR_KA_QUIET_MS,
                 r->note);
        return GR_PASS;
    }
    if (too_many_pings) {
        snprintf(buf, len,
                 "server rule broke: the server answered the pings with GOAWAY too_many_pings "
                 "during a silent call (client keepalive %s)%s",
                 r->ka, r->note);
        return GR_FAIL;
    }
    char why[200];
    gr_ka_why_dropped(r, false, why, sizeof why);
    snprintf(buf, len,
             "client rule broke: a %d ms call that sent nothing ended %s after %lld ms; the NAT (idle "
             "%lld ms) dropped %d connection%s: %s%s",
             GR_KA_QUIET_MS, rl_status_name(call->status), (long long)call->ms, (long long)r->nat_ms, r->dropped,
             r->dropped == 1 ? "" : "s", why, r->note);
    return GR_FAIL;
}

gr_verdict gr_ka_judge_no_goaway(const gr_ka_run *r, const gr_ka_goaway *g, char *buf, size_t len)
{
    if (g->too_many_pings) {
        snprintf(buf, len,
                 "server rule broke: GOAWAY too_many_pings within %d ms: the client pings every %s, the "
                 "server allows one every %lld ms (and between calls only if it permits pings without "
                 "calls) and strikes out after %lld%s",
                 GR_KA_GOAWAY_RUN_MS, r->ka, (long long)g->min_ms, (long long)g->strikes, r->note);
        return GR_FAIL;
    }
    if (g->failed) {
        snprintf(buf, len, "%d of %d calls failed, first %s%s", g->failed, g->calls, g->first_failure, r->note);
        return GR_FAIL;
    }
    snprintf(buf, len, "%d calls and idle gaps over %d ms: no too_many_pings, %d connection%s%s", g->calls,
             GR_KA_GOAWAY_RUN_MS, r->connections, r->connections == 1 ? "" : "s", r->note);
    return GR_PASS;
}
