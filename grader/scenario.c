/* scenario: the steps scenarios share, each returning 0 or
 * GR_DECIDED; see scenario.h. */
#include "scenario.h"

#include "rl_deadline.h"
#include "rl_err.h"
#include "run.h"

#include <stdarg.h>
#include <stdio.h>

int gr_scenario_observer_failed(gr_scenario_result *out, int rc)
{
    if (rc < 0)
        return gr_result(out, GR_ERROR, "the baseline's observer did not answer (%s)", rl_strerror(rc));
    return gr_result(out, GR_ERROR, "the baseline's observer did not answer");
}

int gr_scenario_observe(gr_ctx *ctx, const char *tag, Relaylab__ObserveReply **obs, gr_scenario_result *out)
{
    *obs = NULL;
    int rc = rl_observe(gr_baseline_channel(ctx, 0), tag, GR_SCENARIO_OBSERVER_MS, obs);
    if (rc == RL_OK)
        return 0;
    gr_scenario_free_obs(obs);
    return gr_scenario_observer_failed(out, rc);
}

int gr_scenario_observed(int rc, const Relaylab__ObserveReply *obs, gr_scenario_result *out)
{
    if (rc == RL_EGRPC)
        return gr_scenario_observer_failed(out, rc);
    if (!obs)
        return gr_scenario_observer_failed(out, rc < 0 ? rc : RL_ETIMEOUT);
    return 0;
}

void gr_scenario_free_obs(Relaylab__ObserveReply **obs)
{
    if (*obs)
        relaylab__observe_reply__free_unpacked(*obs, NULL);
    *obs = NULL;
}

int gr_scenario_call(rl_probe_call *c, grpc_channel *ch, const char *method, const ProtobufCMessage *req,
                     int64_t deadline_ns, gr_scenario_result *out)
{
    if (rl_probe_call_start(c, ch, method, req, deadline_ns) != RL_OK) {
        if (out)
            gr_result(out, GR_ERROR, "cannot start the client call");
        return GR_DECIDED;
    }
    return gr_scenario_wait(c, out);
}

int gr_scenario_wait(rl_probe_call *c, gr_scenario_result *out)
{
    if (c->deadline_ns == RL_NO_DEADLINE) {
        /* A grader bug: such a call needs the scenario's own bound. */
        if (out)
            gr_result(out, GR_ERROR, "the client call has no deadline to wait for");
        return GR_DECIDED;
    }
    if (rl_probe_call_wait(c, c->deadline_ns + GR_SCENARIO_GRACE_MS * RL_NS_PER_MS) == RL_OK)
        return 0;
    if (out)
        gr_result(out, GR_ERROR, "the client call had no status %d ms after its own deadline", GR_SCENARIO_GRACE_MS);
    return GR_DECIDED;
}

int64_t gr_scenario_cancel(rl_probe_call *c)
{
    int64_t at = rl_probe_call_cancel(c);
    rl_probe_call_wait(c, rl_now_ns() + GR_SCENARIO_CANCEL_MS * RL_NS_PER_MS);
    return at;
}

int64_t gr_scenario_cancel_stream(rl_stream *s)
{
    int64_t at = rl_stream_cancel(s);
    rl_stream_wait_status(s, rl_now_ns() + GR_SCENARIO_CANCEL_MS * RL_NS_PER_MS);
    return at;
}

int64_t gr_scenario_crash_wait_ms(bool likely_dead)
{
    return likely_dead ? GR_SCENARIO_EXIT_LAG_MS : GR_SCENARIO_CRASH_LOOK_MS;
}

bool gr_scenario_status_says_dead(grpc_status_code status)
{
    return status == GRPC_STATUS_UNAVAILABLE;
}

int gr_scenario_crash_check(gr_ctx *ctx, bool likely_dead, const char *what, gr_scenario_result *out)
{
    return gr_crash_check(ctx, gr_scenario_crash_wait_ms(likely_dead), what, out) ? GR_DECIDED : 0;
}

int gr_scenario_crash_after(gr_ctx *ctx, const rl_probe_call *c, const char *what, gr_scenario_result *out)
{
    if (c->batch.status == GRPC_STATUS_OK)
        return 0;
    return gr_scenario_crash_check(ctx, gr_scenario_status_says_dead(c->batch.status), what, out);
}

int gr_scenario_done(rl_probe_call *c, Relaylab__ObserveReply **obs)
{
    if (obs)
        gr_scenario_free_obs(obs);
    if (c)
        rl_probe_call_fini(c);
    return 0;
}
