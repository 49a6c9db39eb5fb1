/* process: the relay's Relay.Process state machine. Each call decodes the
 * request, calls Baseline.Lookup and then Baseline.Work as children of the
 * server call (so deadline and cancellation flow down, as the mode says), and
 * answers with Work's result or the first downstream failure. Admission
 * (admission.h) comes first: a call runs when a downstream slot is free,
 * waits in the bounded queue, or is refused RESOURCE_EXHAUSTED at once; a
 * queued call whose time ran out is never forwarded. */
#ifndef RELAY_PROCESS_H
#define RELAY_PROCESS_H

#include "admission.h"
#include "mistake.h"
#include "rl_server.h"

#include <grpc/grpc.h>
#include <stddef.h>

#define RELAY_PROCESS_PATH "/relaylab.Relay/Process"
/* Larger requests are refused with RESOURCE_EXHAUSTED before decoding. */
#define RELAY_MAX_REQUEST ((size_t)64 * 1024)

/* Shared by every call on every loop; read-only once the server started. */
typedef struct relay_ctx {
    grpc_channel *channel;             /* to the baseline; borrowed, owned by main */
    void *lookup_method, *work_method; /* grpc_channel_register_call handles on |channel| */
    const relay_mistake *mistake;      /* borrowed from the static table */
    relay_gate *gate;                  /* admission control; borrowed, owned by main */
} relay_ctx;

/* Fills |ctx| for |channel|, registering the two downstream methods. */
void relay_ctx_init(relay_ctx *ctx, grpc_channel *channel, const relay_mistake *mistake, relay_gate *gate);

/* rl_method_start for Relay.Process; |user| is a relay_ctx that outlives the
 * server. Takes ownership of |call|. */
void relay_process_start(rl_loop *loop, grpc_call *call, const rl_call_info *info, void *user);

#endif
