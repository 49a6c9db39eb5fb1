/* rl_tworld: the coverage lab's world (servers, proxy, dispatcher's
 * primitives); see rl_tworld.h. */
#include "rl_tworld.h"

#include "rl_channel.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_probe.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define SERVER_READY_MS 10000
#define SERVER_GRACE_MS 300

int rl_tworld_start(rl_tworld *w, const rl_tworld_options *opt, char *err, size_t errlen)
{
    memset(w, 0, sizeof *w);
    if (opt->nservers < 1 || opt->nservers > RL_TWORLD_MAX_SERVERS) {
        snprintf(err, errlen, "the coverage world runs 1 to %d tunnel servers, not %d", RL_TWORLD_MAX_SERVERS,
                 opt->nservers);
        return RL_EINVAL;
    }
    const char *backends[RL_TWORLD_MAX_SERVERS];
    for (int i = 0; i < opt->nservers; i++) {
        /* From a local, not w->ids: gcc -O1's -Wrestrict sees w on both sides. */
        char id = (char)('A' + i);
        snprintf(w->ids[i], sizeof w->ids[i], "%c", id);
        snprintf(w->ctl[i], sizeof w->ctl[i], "unix:%s/tunnel-%c.sock", opt->sock_dir, id);
        unlink(w->ctl[i] + strlen("unix:"));
        /* No --listen: the server's one listener is its private socket, in
         * a folder the agent's sandbox does not show, so the agent has no
         * address to go around the proxy to; the readiness line names the
         * socket. */
        const char *argv[] = {opt->tunnel_bin, "--id", w->ids[i], "--control", w->ctl[i], NULL};
        rl_proc_options po = {.argv = argv, .kill_with_parent = true};
        w->n = i + 1;
        w->running[i] = true;
        char ready[sizeof w->ctl[i]];
        int rc = rl_proc_start_server(&w->procs[i], &po, SERVER_READY_MS, ready, sizeof ready, err, errlen);
        if (rc == RL_OK && strncmp(ready, "unix:", 5) != 0) {
            snprintf(err, errlen, "tunnel server %s listens on %s: its unix socket should be its only listener",
                     w->ids[i], ready);
            rc = RL_EINVAL;
        }
        if (rc != RL_OK)
            return rc;
        w->ctl_ch[i] = rl_channel_isolated(w->ctl[i], NULL);
        /* The proxy reaches each server on that socket. */
        backends[i] = w->ctl[i];
    }
    int rc = rl_l7proxy_start(backends, w->n, &opt->placement, &w->proxy, err, errlen);
    if (rc == RL_OK)
        rl_l7proxy_set_limit(w->proxy, RL_TWORLD_STREAM_LIMIT);
    return rc;
}

const char *rl_tworld_addr(const rl_tworld *w)
{
    return w->proxy ? rl_l7proxy_addr(w->proxy) : "";
}

void rl_tworld_set_placement(rl_tworld *w, const rl_placement *p)
{
    rl_l7proxy_set_placement(w->proxy, p);
}

void rl_tworld_stats(rl_tworld *w, rl_l7proxy_stats *out)
{
    rl_l7proxy_get_stats(w->proxy, out);
}

int rl_tworld_last_healthy(rl_tworld *w)
{
    rl_l7proxy_stats st;
    rl_l7proxy_get_stats(w->proxy, &st);
    return st.newest_open;
}

static int call(rl_tworld *w, int i, const char *method, const ProtobufCMessage *req,
                const ProtobufCMessageDescriptor *desc, ProtobufCMessage **out)
{
    if (i < 0 || i >= w->n || !w->ctl_ch[i])
        return RL_EINVAL;
    rl_probe_call c;
    memset(&c, 0, sizeof c);
    int rc = rl_probe_call_start(&c, w->ctl_ch[i], method, req, rl_now_ns() + RL_TWORLD_CALL_MS * RL_NS_PER_MS);
    if (rc == RL_OK)
        rc = rl_probe_call_wait(&c, rl_now_ns() + (RL_TWORLD_CALL_MS + 1000) * RL_NS_PER_MS);
    if (rc == RL_OK && c.batch.status != GRPC_STATUS_OK)
        rc = c.batch.status == GRPC_STATUS_DEADLINE_EXCEEDED ? RL_ETIMEOUT : RL_EGRPC;
    if (rc == RL_OK)
        rc = rl_probe_call_reply(&c, desc, out);
    rl_probe_call_fini(&c);
    return rc;
}

int rl_tworld_dispatch(rl_tworld *w, int i, uint32_t count, uint32_t work_ms, uint32_t jitter_ms, uint32_t interval_ms,
                       uint64_t *first_id)
{
    Relaylab__DispatchRequest req = RELAYLAB__DISPATCH_REQUEST__INIT;
    req.count = count;
    req.work_ms = work_ms;
    req.work_jitter_ms = jitter_ms;
    req.interval_ms = interval_ms;
    ProtobufCMessage *rep = NULL;
    int rc = call(w, i, "/relaylab.TunnelControl/Dispatch", &req.base, &relaylab__dispatch_reply__descriptor, &rep);
    if (rc == RL_OK && first_id)
        *first_id = ((Relaylab__DispatchReply *)rep)->first_call_id;
    if (rep)
        protobuf_c_message_free_unpacked(rep, NULL);
    return rc;
}

int rl_tworld_observe(rl_tworld *w, int i, Relaylab__ObserveTunnelReply **out)
{
    Relaylab__ObserveTunnelRequest req = RELAYLAB__OBSERVE_TUNNEL_REQUEST__INIT;
    *out = NULL;
    return call(w, i, "/relaylab.TunnelControl/ObserveTunnel", &req.base, &relaylab__observe_tunnel_reply__descriptor,
                (ProtobufCMessage **)out);
}

void rl_tworld_stop(rl_tworld *w)
{
    rl_l7proxy_free(w->proxy);
    w->proxy = NULL;
    for (int i = 0; i < w->n; i++) {
        if (w->ctl_ch[i])
            grpc_channel_destroy(w->ctl_ch[i]);
        w->ctl_ch[i] = NULL;
        if (w->running[i]) {
            rl_proc_stop(&w->procs[i], SERVER_GRACE_MS);
            rl_proc_fini(&w->procs[i]);
            unlink(w->ctl[i] + strlen("unix:"));
        }
        w->running[i] = false;
    }
}
