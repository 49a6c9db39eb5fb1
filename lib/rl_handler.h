/* rl_handler: the contract between a server and its method handlers: what a
 * handler learns of a new call, the handler's signature, a method table's
 * row, and the process-wide count of server calls handed to handlers and not
 * yet released, which rl_server's drain waits for.
 *
 * It sits below the modules that serve calls (rl_unary, rl_health, rl_server,
 * in that order: each uses the ones before it and never one after it), so
 * that a handler module can end its calls without calling up into rl_server.
 * The counting functions keep their rl_server_ names: every program's
 * handlers call them as the server's. */
#ifndef RL_HANDLER_H
#define RL_HANDLER_H

#include "rl_loop.h"

#include <grpc/grpc.h>
#include <stdbool.h>
#include <stdint.h>

/* What a handler learns of a new call. Valid only during the start call. */
typedef struct rl_call_info {
    const char *method;                  /* full path, "/relaylab.Baseline/Lookup" */
    gpr_timespec deadline;               /* infinite when the caller set none */
    const grpc_metadata_array *metadata; /* the client's initial metadata */
    int64_t arrival_ns;                  /* CLOCK_MONOTONIC when accepted */
} rl_call_info;

/* Starts handling |call| on |loop|; the handler owns |call| and must
 * eventually grpc_call_unref it. |user| is the rl_method's. */
typedef void (*rl_method_start)(rl_loop *loop, grpc_call *call, const rl_call_info *info, void *user);

typedef struct rl_method {
    const char *path;
    rl_method_start start;
    void *user;
    /* Served only to callers on rl_server_options.private_listen when that
     * is set (answered PERMISSION_DENIED elsewhere); ignored without it. */
    bool private_only;
} rl_method;

/* Every handler calls this once when it releases a server call it was given
 * (rl_unary does it for its calls). The drain uses the count: gRPC's shutdown
 * otherwise waits several seconds for idle clients to hang up, so once no call
 * is in flight rl_server_wait disconnects them at once; and the loops' queues
 * are shut down only once it is 0, since a batch started on a queue that is
 * shut down aborts the process. */
void rl_server_call_end(void);

/* Counts one more piece of work on the loops that the drain must wait for,
 * ended by one more rl_server_call_end: a handler whose calls downstream may
 * outlive its server call (they end a few ms after the cancel reached them)
 * holds one from its start to its last completion. */
void rl_server_hold(void);

/* Server calls handed to handlers and not yet released (and holds), across
 * the process: what the drain waits for. Any thread. */
long rl_server_calls_in_flight(void);

/* Ends |call| at once with |code| and |msg| (copied), without handing it to
 * a handler: what a server answers to a method it does not serve, or a
 * handler to a caller it refuses. Takes |call| (unreferenced when the
 * batch completes) and ends it as a handler would (rl_server_call_end). */
void rl_server_reject(grpc_call *call, grpc_status_code code, const char *msg);

#endif
