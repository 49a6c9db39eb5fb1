/* rl_unary: the server side of a call with one request, as an embeddable
 * state machine: unary calls, and server-streaming calls through
 * rl_unary_send (one request in, a stream of messages out).
 *
 * A handler embeds an rl_unary in its per-call struct, starts it, and gets
 * on_request with the decoded request. It answers with rl_unary_reply or
 * rl_unary_fail, possibly much later from a timer or a downstream call. The
 * RECV_CLOSE_ON_SERVER op stays posted for the whole call, so on_cancel runs
 * within milliseconds of the client giving up or the deadline passing. When
 * every batch has completed, on_free runs once: the owner frees itself there.
 * Malformed or oversized requests are answered here (INVALID_ARGUMENT,
 * RESOURCE_EXHAUSTED) and never reach the handler.
 *
 * Threads: every function here and every callback runs on the thread of the
 * loop the call was started on (docs/DESIGN.md, "Threads").
 *
 * Lifetime: on_free runs only after the call was answered (by the handler,
 * or CANCELLED by rl_unary when the client left) and every batch completed,
 * and never inside rl_unary_reply, _send, _send_buffer, _fail or _finish:
 * the handler may go on using |u| after any of them returns, whatever it
 * returned. After on_free
 * the struct holds no gRPC resources (|call| is NULL) and stays answered: an
 * owner that keeps the embedding memory longer (the relay does, while its
 * downstream call finishes) may still read the fields and call the answer
 * functions, which return RL_EINVAL without touching gRPC.
 *
 * Uses rl_handler (it ends its calls with rl_server_call_end) and never
 * rl_server: rl_health and rl_server use it. */
#ifndef RL_UNARY_H
#define RL_UNARY_H

#include "rl_life.h"
#include "rl_loop.h"

#include <grpc/grpc.h>
#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>

typedef struct rl_unary rl_unary;

typedef struct rl_unary_ops {
    /* The decoded request; the handler owns |req| (free it with
     * protobuf_c_message_free_unpacked). Not called if the call was
     * cancelled or the request was bad. */
    void (*on_request)(rl_unary *u, ProtobufCMessage *req);
    /* The client cancelled or the deadline passed before a reply was sent.
     * May be NULL. The handler should stop its work; it may answer with a
     * status of its choice before returning (the send completes quietly),
     * else rl_unary answers CANCELLED. Either way the call is answered when
     * this returns: later rl_unary_reply/fail calls return RL_EINVAL, and
     * on_free may follow as soon as rl_unary's own batches are done, whatever
     * work the handler still has going: on_free must stop that work (timers,
     * downstream calls) or keep the embedding memory alive until it ends. */
    void (*on_cancel)(rl_unary *u);
    /* The call was answered and every batch is done: free the embedding
     * struct (see Lifetime above). Runs once. Required. */
    void (*on_free)(rl_unary *u);
    /* Streaming only: the message from rl_unary_send was accepted by
     * outgoing flow control (|ok|) or the call is gone (!|ok|). May be NULL
     * for unary handlers. */
    void (*on_sent)(rl_unary *u, bool ok);
} rl_unary_ops;

struct rl_unary {
    grpc_call *call; /* owned; unref'd before on_free */
    rl_loop *loop;
    const rl_unary_ops *ops;
    const ProtobufCMessageDescriptor *req_desc;
    size_t max_request; /* bytes; 0 = gRPC's own limit only */
    rl_tag recv_tag, close_tag, send_tag, msg_tag;
    grpc_byte_buffer *req_buf, *reply_buf;
    grpc_byte_buffer *msg_buf; /* the streamed message in flight */
    bool headers_sent;         /* initial metadata went out */
    grpc_slice detail;
    int close_cancelled;     /* written by RECV_CLOSE_ON_SERVER */
    rl_life life;            /* a reference per batch in flight; closed
                              * once answered, released into on_free */
    bool cancelled;          /* the client gave up or time ran out */
    bool answered;           /* a reply or failure has been sent */
    grpc_status_code status; /* what was sent, once answered */
};

/* Takes ownership of |call| and posts the receive batches. If gRPC refuses
 * them (a programming error, such as a call already used) the call is
 * cancelled, on_request never runs, and on_free may run before this
 * returns: start the call last in the handler's start function. */
void rl_unary_start(rl_unary *u, rl_loop *loop, grpc_call *call, const ProtobufCMessageDescriptor *req_desc,
                    size_t max_request, const rl_unary_ops *ops);

/* Sends |reply| with status OK. Returns 0; RL_EINVAL if the call was
 * already answered or a streamed message is still in flight (wait for
 * on_sent), nothing sent; or RL_EGRPC if gRPC refused the batch (a
 * programming error, logged): the call is then cancelled with status OK
 * instead. The call counts as answered after 0 and RL_EGRPC. */
int rl_unary_reply(rl_unary *u, const ProtobufCMessage *reply);

/* Streams |msg| (initial metadata go with the first one). Only one message
 * may be in flight: wait for on_sent before the next, which is exactly the
 * pacing HTTP/2 flow control asks for. Returns 0 (on_sent follows), RL_EINVAL
 * when a message is still in flight or the call was answered (nothing
 * sent), or RL_EGRPC when gRPC refused the batch (a programming error,
 * logged): the call is then cancelled, so on_cancel follows as if the
 * client had left, and on_sent does not run for this message. */
int rl_unary_send(rl_unary *u, const ProtobufCMessage *msg);

/* Streams |buf|, a message already in wire form, under the same rules and
 * return codes as rl_unary_send. For a producer that encodes its messages
 * itself (a large payload written straight into the outgoing slice, or
 * messages prepared on another thread): going through a ProtobufCMessage
 * would cost one more copy of every payload. Takes ownership of |buf| in
 * every case: it is destroyed after its send completed, or at once when
 * this returns an error. */
int rl_unary_send_buffer(rl_unary *u, grpc_byte_buffer *buf);

/* Sends |code| with |message|; as a Trailers-Only response when nothing was
 * streamed before (no headers before the status, so a client's retry
 * policy may retry it). A message still in flight is not waited for: the
 * status follows it. Returns 0, RL_EINVAL if already answered (nothing
 * sent), or RL_EGRPC if gRPC refused the batch (a programming error,
 * logged; the call is cancelled with |code| and |message| instead). The
 * call counts as answered after 0 and RL_EGRPC. */
int rl_unary_fail(rl_unary *u, grpc_status_code code, const char *message);

/* Ends the call with |code| and |message| and no further message: how a
 * server-streaming handler finishes. The same as rl_unary_fail, return codes
 * included; the name says what the handler means. */
int rl_unary_finish(rl_unary *u, grpc_status_code code, const char *message);

#endif
