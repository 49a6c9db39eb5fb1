/* tunnel: one tunnel server of the coverage lab's world (bin/tunnel).
 *
 * It serves relaylab.Tunnel/Open: each stream an agent opens is named with
 * the server's id in its first message, then carries calls one at a time.
 * Calls come from the grader (TunnelControl/Dispatch on the private socket);
 * each goes to the newest idle stream, or waits in a FIFO queue until a
 * stream answers or a new one opens. Every stream and call is recorded with
 * CLOCK_MONOTONIC instants (TunnelControl/ObserveTunnel): the judge's
 * evidence. The server runs one loop thread, so the state below is touched
 * from that thread only and takes no lock (docs/DESIGN.md, "Threads"). */
#ifndef TN_TUNNEL_H
#define TN_TUNNEL_H

#include "rl_loop.h"
#include "rl_server.h"

#include "relaylab.pb-c.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Requests above this are refused (RESOURCE_EXHAUSTED): an answer is a few
 * bytes. */
#define TN_MAX_MESSAGE 1024

typedef struct tn_stream tn_stream;

/* A stream's record: what ObserveTunnel reports. */
typedef struct tn_stream_rec {
    uint64_t id;
    int64_t opened_ns, closed_ns; /* closed_ns 0 while open */
    uint32_t calls;
    bool closed_busy, cancelled;
} tn_stream_rec;

/* A call's record. */
typedef struct tn_call_rec {
    uint64_t id; /* == index + 1 */
    uint32_t work_ms;
    int64_t dispatched_ns, handed_ns, answered_ns;
    uint64_t stream_id;
    bool lost;
} tn_call_rec;

/* The server's whole state; one per process, owned by main. */
typedef struct tn_server {
    const char *id; /* --id, borrowed */
    tn_stream_rec *streams;
    size_t nstreams, capstreams;
    tn_call_rec *calls;
    size_t ncalls, capcalls;
    size_t *queue; /* FIFO ring of call indices waiting for an idle stream */
    size_t qhead, qlen, qcap;
    tn_stream *newest;       /* open streams, newest first (prev points to older) */
    int64_t reset_ns;        /* ObserveTunnel leaves out what ended before it */
    uint64_t refused_direct; /* Open calls from elsewhere than the private socket */
} tn_server;

/* The stream handler (rl_method_start); |user| is the tn_server. Streams
 * come from the L7 proxy alone, on the private unix socket, the only
 * listener the coverage world gives a server: one opened on a TCP port
 * (a server started with --listen) went around the proxy and is refused
 * PERMISSION_DENIED and counted, with no record, so that a flood of them
 * costs the server nothing that stays. */
void tn_stream_start(rl_loop *loop, grpc_call *call, const rl_call_info *info, void *user);

/* Records a new call of |work_ms| dispatched now and hands it to the newest
 * idle stream, or queues it. Returns its id. */
uint64_t tn_dispatch(tn_server *s, uint32_t work_ms);

/* The work of call |k| (from 0) of a batch of |work_ms| +- |jitter_ms|
 * (jitter_ms <= work_ms): work_ms - J + (k * 7919) mod (2J + 1), as
 * DispatchRequest says. Pure. */
uint32_t tn_jittered_work(uint32_t work_ms, uint32_t jitter_ms, uint32_t k);

/* Fills |rep|'s repeated fields from |s| (pointers into heap arrays the
 * caller frees with tn_observe_free). */
void tn_observe(const tn_server *s, Relaylab__ObserveTunnelReply *rep);
void tn_observe_free(Relaylab__ObserveTunnelReply *rep);

/* Control handlers (control.c); |user| is the tn_server. */
void tn_dispatch_start(rl_loop *loop, grpc_call *call, const rl_call_info *info, void *user);
void tn_observe_start(rl_loop *loop, grpc_call *call, const rl_call_info *info, void *user);
void tn_reset_start(rl_loop *loop, grpc_call *call, const rl_call_info *info, void *user);

#endif
