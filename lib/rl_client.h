/* rl_client: the client side of one unary call on an rl_loop, as an
 * embeddable state machine (the relay's downstream calls use it).
 *
 * The whole call is one batch: send metadata, message and close; receive
 * metadata, message and status. Asking for the initial metadata keeps the
 * status visible when a retry policy is active (docs/grpc-facts.md,
 * "Retries"). When the batch completes the loop calls |done|; the owner then
 * reads status, details and the reply, and calls rl_client_fini.
 *
 * Threads: every function here and |done| run on the thread of the loop
 * whose queue the call was created on (docs/DESIGN.md, "Threads"). */
#ifndef RL_CLIENT_H
#define RL_CLIENT_H

#include "rl_loop.h"

#include <grpc/grpc.h>
#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct rl_client rl_client;
/* The call's status arrived (or the batch failed: status UNKNOWN, details
 * "the client batch failed"). |c| is still the owner's: call rl_client_fini
 * here or later. */
typedef void (*rl_client_done)(rl_client *c);

struct rl_client {
    rl_tag tag;                     /* the one batch's tag */
    grpc_call *call;                /* owned; unref'd by rl_client_fini */
    rl_client_done done;
    grpc_metadata_array initial_md, trailing_md;
    grpc_byte_buffer *req_buf;      /* owned */
    grpc_byte_buffer *reply_buf;    /* the reply, NULL if none arrived */
    grpc_status_code status;        /* valid once done */
    grpc_slice details;             /* status message, valid once done */
    const char *error_string;       /* gRPC's debug string, gpr_free'd by fini */
    bool in_flight;                 /* the batch is posted and not done */
};

/* Starts the call on |call| (created by the caller with
 * grpc_channel_create_call on the loop's queue; ownership passes to |c|)
 * with request |req|. |done| runs when the status arrives. Returns 0, or
 * RL_EGRPC when gRPC refused the batch (|c| is then already finished). */
int rl_client_start(rl_client *c, grpc_call *call, const ProtobufCMessage *req, rl_client_done done);

/* rl_client_start with |initial_md_flags| on the SEND_INITIAL_METADATA op
 * (GRPC_INITIAL_METADATA_WAIT_FOR_READY: wait for a ready connection
 * instead of failing UNAVAILABLE at once; the overload lab's mistake). */
int rl_client_start_flags(rl_client *c, grpc_call *call, const ProtobufCMessage *req, uint32_t initial_md_flags,
                          rl_client_done done);

/* Decodes the reply as |desc|; returns 0 and sets *out (free it with
 * protobuf_c_message_free_unpacked), or RL_EINVAL when no valid reply came. */
int rl_client_unpack(const rl_client *c, const ProtobufCMessageDescriptor *desc, ProtobufCMessage **out);

/* Cancels the call if its batch is still in flight; |done| still runs. */
void rl_client_cancel(rl_client *c);

/* Releases the call and its buffers; call after |done| ran (never while
 * the batch is in flight: cancel and wait for |done| first). Accepts a
 * zeroed or finished struct. */
void rl_client_fini(rl_client *c);

#endif
