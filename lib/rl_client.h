/* rl_client: the client side of one unary call. rl_client_batch is the call's
 * one batch and what it receives, the part every unary client of the kit
 * shares; rl_client drives it on an rl_loop (the relay's downstream calls),
 * rl_probe_call, rl_load and the grader's balance world from completion
 * queues of their own.
 *
 * The whole call is one batch: send metadata, message and close; receive
 * metadata, message and status. Asking for the initial metadata keeps the
 * status visible when a retry policy is active (docs/grpc-facts.md,
 * "Retries"). When the batch completes the owner reads status, details and
 * the reply, and finishes the struct.
 *
 * Threads: an rl_client's functions and |done| run on the thread of the loop
 * whose queue the call was created on (docs/DESIGN.md, "Threads"); an
 * rl_client_batch is used by one thread at a time. */
#ifndef RL_CLIENT_H
#define RL_CLIENT_H

#include "rl_loop.h"

#include <grpc/grpc.h>
#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stdint.h>

/* One call's batch; caller memory, embedded in the owner's per-call struct.
 * Lifecycle: rl_client_batch_init, rl_client_batch_start, and once the
 * batch completed (its tag came off the queue) or never started,
 * rl_client_batch_fini. The fields are the owner's to read. */
typedef struct rl_client_batch {
    grpc_call *call;                             /* owned from start; unref'd by fini */
    grpc_byte_buffer *req_buf;                   /* the packed request, owned */
    grpc_byte_buffer *reply_buf;                 /* the reply, owned; NULL if none arrived */
    grpc_metadata_array initial_md, trailing_md; /* received, owned */
    grpc_status_code status;                     /* UNKNOWN until the batch completed */
    grpc_slice details;                          /* the status message, owned; valid once completed */
} rl_client_batch;

/* Makes |b| empty: status UNKNOWN, nothing owned. */
void rl_client_batch_init(rl_client_batch *b);

/* Takes ownership of |call| (created by the caller with its deadline, on
 * the queue it will poll; NULL counts as a call gRPC could not create),
 * packs |req| and posts the six ops with |tag| as the batch's tag and
 * |initial_md_flags| on SEND_INITIAL_METADATA (e.g.
 * GRPC_INITIAL_METADATA_WAIT_FOR_READY). Returns 0, or RL_EGRPC when
 * |call| is NULL or gRPC refused the batch (logged): nothing was posted,
 * and |b| keeps what it owns until fini. */
int rl_client_batch_start(rl_client_batch *b, grpc_call *call, const ProtobufCMessage *req, uint32_t initial_md_flags,
                          void *tag);

/* Records the completion of the batch as the queue reported it (|ok|, the
 * event's success). A batch holding RECV_STATUS_ON_CLIENT only fails on a
 * bug in gRPC or in the batch, so a failure is not left as a half-filled
 * status: status UNKNOWN, details "the client batch failed". */
void rl_client_batch_done(rl_client_batch *b, bool ok);

/* Releases the call and everything |b| owns and leaves it as after init.
 * Never while the batch is in flight: cancel (grpc_call_cancel) and wait
 * for its tag first. Accepts a zeroed, initialised or finished struct. */
void rl_client_batch_fini(rl_client_batch *b);

typedef struct rl_client rl_client;
/* The call's status arrived (or the batch failed: see
 * rl_client_batch_done). |c| is still the owner's: call rl_client_fini
 * here or later. */
typedef void (*rl_client_done)(rl_client *c);

struct rl_client {
    rl_tag tag;            /* the one batch's tag */
    rl_client_batch batch; /* the call, and its status, details and reply */
    rl_client_done done;
    bool in_flight; /* the batch is posted and not done */
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
