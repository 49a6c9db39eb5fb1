/* rl_tworld: the coverage lab's world, shared by the grader's `coverage`
 * exercise and `lab demo coverage`: N tunnel servers (bin/tunnel, named A,
 * B, C ...), the L7 proxy in front of them (rl_l7proxy, the only address the
 * agent is given) and the dispatcher's two primitives: which server a
 * token's calls go to ("last healthy": where the agent's newest still-open
 * stream landed, by the proxy's count) and Dispatch on that server. The
 * records are each server's (ObserveTunnel on its private unix socket).
 * The proxy's port is the world's only TCP listener: each server listens
 * on its unix socket alone, in the caller's private folder, so a stream
 * reaches a server through the proxy or not at all.
 *
 * Threads: every function is for the owner's thread (the proxy keeps its
 * own); the control calls block it, each bounded by RL_TWORLD_CALL_MS. */
#ifndef RL_TWORLD_H
#define RL_TWORLD_H

#include "relaylab.pb-c.h"
#include "rl_l7proxy.h"
#include "rl_coverage.h"
#include "rl_proc.h"

#include <grpc/grpc.h>
#include <stdbool.h>
#include <stdint.h>

#define RL_TWORLD_MAX_SERVERS RL_L7PROXY_MAX_BACKENDS
/* A control call's bound: the server answers from memory at once. */
#define RL_TWORLD_CALL_MS 10000
/* The proxy refuses streams beyond this many open at once: a quarter over
 * the rules' total cap (lib/rl_coverage.h), so an agent that keeps them
 * never meets it and one that grows without a cap cannot starve the
 * machine. */
#define RL_TWORLD_STREAM_LIMIT (RL_COV_CAP_TOTAL + RL_COV_CAP_TOTAL / 4)

typedef struct rl_tworld_options {
    const char *tunnel_bin; /* path of bin/tunnel */
    const char *sock_dir;   /* a private folder (0700) for the control sockets */
    int nservers;           /* 1..RL_TWORLD_MAX_SERVERS */
    rl_placement placement; /* the proxy's initial placement */
} rl_tworld_options;

typedef struct rl_tworld {
    int n;
    rl_proc procs[RL_TWORLD_MAX_SERVERS];
    bool running[RL_TWORLD_MAX_SERVERS];
    char ids[RL_TWORLD_MAX_SERVERS][4]; /* "A", "B" ... */
    /* "unix:DIR/tunnel-A.sock", each server's only listener: the proxy's
     * streams and the control calls (no server has a TCP port) */
    char ctl[RL_TWORLD_MAX_SERVERS][192];
    grpc_channel *ctl_ch[RL_TWORLD_MAX_SERVERS];
    rl_l7proxy *proxy;
} rl_tworld;

/* Starts the servers and the proxy (limited to RL_TWORLD_STREAM_LIMIT
 * open streams). |w| is caller memory. Returns 0, or an
 * RL_E* code with one line in |err|; either way rl_tworld_stop cleans up. */
int rl_tworld_start(rl_tworld *w, const rl_tworld_options *opt, char *err, size_t errlen);

/* The proxy's "127.0.0.1:PORT": what the agent gets as RELAYLAB_TUNNEL. */
const char *rl_tworld_addr(const rl_tworld *w);

/* New streams are placed by |p| from now on (the proxy's placement). */
void rl_tworld_set_placement(rl_tworld *w, const rl_placement *p);

/* The proxy's figures: streams placed, open and at their peak per server,
 * refused at the limit (rl_l7proxy_stats). */
void rl_tworld_stats(rl_tworld *w, rl_l7proxy_stats *out);

/* The dispatcher's choice: the server of the agent's newest still-open
 * stream (-1 when none is open). */
int rl_tworld_last_healthy(rl_tworld *w);

/* Asks server |i| for |count| calls of |work_ms| (+- |jitter_ms|, spread
 * evenly: DispatchRequest), one every |interval_ms| (paced by the server).
 * Returns 0 (the first call's id in *first_id, may be NULL) or RL_EGRPC /
 * RL_ETIMEOUT / RL_EINVAL. */
int rl_tworld_dispatch(rl_tworld *w, int i, uint32_t count, uint32_t work_ms, uint32_t jitter_ms, uint32_t interval_ms,
                       uint64_t *first_id);

/* Server |i|'s records. Returns 0 and sets *out (free with
 * relaylab__observe_tunnel_reply__free_unpacked) or an RL_E* code. */
int rl_tworld_observe(rl_tworld *w, int i, Relaylab__ObserveTunnelReply **out);

/* Stops the proxy and the servers. Safe on a zeroed or failed world. */
void rl_tworld_stop(rl_tworld *w);

#endif
