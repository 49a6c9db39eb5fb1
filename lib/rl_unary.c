/* rl_unary: the server side of a call with one request (unary or server
 * streaming) as an embeddable state machine; see rl_unary.h. */
#include "rl_unary.h"

#include "rl_err.h"
#include "rl_handler.h"
#include "rl_log.h"
#include "rl_pb.h"

#include <stdio.h>
#include <string.h>

/* The call was answered (which closes |life|) and every batch is back:
 * frees what it holds and hands the struct back to its owner. Never inside
 * an rl_unary_* call the owner made: until the answer, the
 * RECV_CLOSE_ON_SERVER batch holds a reference (close_done answers before
 * it drops it), so the release comes at the end of a batch's done callback,
 * or in rl_unary_start when gRPC refused both receive batches. */
static void release(rl_life *life)
{
    rl_unary *u = RL_CONTAINER_OF(life, rl_unary, life);
    if (u->req_buf)
        grpc_byte_buffer_destroy(u->req_buf);
    if (u->reply_buf)
        grpc_byte_buffer_destroy(u->reply_buf);
    if (u->msg_buf)
        grpc_byte_buffer_destroy(u->msg_buf);
    grpc_slice_unref(u->detail);
    grpc_call_unref(u->call);
    u->call = NULL;
    rl_server_call_end();
    u->ops->on_free(u);
}

static void recv_done(rl_tag *tag, bool ok)
{
    rl_unary *u = RL_CONTAINER_OF(tag, rl_unary, recv_tag);
    if (ok && !u->cancelled) {
        ProtobufCMessage *req = NULL;
        int rc = u->req_buf ? rl_pb_unpack(u->req_desc, u->req_buf, u->max_request, &req) : RL_EINVAL;
        char msg[200];
        if (rc == RL_OK) {
            u->ops->on_request(u, req);
        } else if (rc == RL_ETOOBIG) {
            snprintf(msg, sizeof msg, "%s of %zu bytes is above the limit of %zu bytes", u->req_desc->short_name,
                     grpc_byte_buffer_length(u->req_buf), u->max_request);
            rl_unary_fail(u, GRPC_STATUS_RESOURCE_EXHAUSTED, msg);
        } else {
            snprintf(msg, sizeof msg, "%s: the request is %s", u->req_desc->short_name,
                     u->req_buf ? "not a valid protobuf message" : "missing");
            rl_unary_fail(u, GRPC_STATUS_INVALID_ARGUMENT, msg);
        }
    }
    rl_life_unref(&u->life);
}

static void close_done(rl_tag *tag, bool ok)
{
    rl_unary *u = RL_CONTAINER_OF(tag, rl_unary, close_tag);
    /* A failed close batch (!ok) means the call is over just the same: it
     * counts as cancelled, so the call is answered before this batch's
     * reference goes, as release() needs. */
    if ((u->close_cancelled || !ok) && !u->answered) {
        u->cancelled = true;
        if (u->ops->on_cancel)
            u->ops->on_cancel(u);
        /* Nobody listens any more; answering here lets the call end now
         * instead of whenever the handler's own work would have finished. */
        if (!u->answered)
            rl_unary_fail(u, GRPC_STATUS_CANCELLED, "cancelled");
    }
    rl_life_unref(&u->life);
}

static void send_done(rl_tag *tag, bool ok)
{
    (void)ok;
    rl_life_unref(&RL_CONTAINER_OF(tag, rl_unary, send_tag)->life);
}

static void msg_done(rl_tag *tag, bool ok)
{
    rl_unary *u = RL_CONTAINER_OF(tag, rl_unary, msg_tag);
    grpc_byte_buffer_destroy(u->msg_buf);
    u->msg_buf = NULL;
    /* This batch's reference is dropped only after the callback, so |u|
     * stays alive through it even if the callback answers the call. */
    if (u->ops->on_sent)
        u->ops->on_sent(u, ok);
    rl_life_unref(&u->life);
}

void rl_unary_start(rl_unary *u, rl_loop *loop, grpc_call *call, const ProtobufCMessageDescriptor *req_desc,
                    size_t max_request, const rl_unary_ops *ops)
{
    memset(u, 0, sizeof *u);
    u->call = call;
    u->loop = loop;
    u->ops = ops;
    u->req_desc = req_desc;
    u->max_request = max_request;
    u->recv_tag.done = recv_done;
    u->close_tag.done = close_done;
    u->send_tag.done = send_done;
    u->msg_tag.done = msg_done;
    u->detail = grpc_empty_slice();
    rl_life_init(&u->life, release);

    /* The two batches are separate: RECV_CLOSE_ON_SERVER only completes at
     * the end of the call, and the request must not wait for it. */
    grpc_op op;
    memset(&op, 0, sizeof op);
    op.op = GRPC_OP_RECV_MESSAGE;
    op.data.recv_message.recv_message = &u->req_buf;
    bool posted = rl_life_start_batch(&u->life, call, &op, 1, &u->recv_tag) == GRPC_CALL_OK;
    memset(&op, 0, sizeof op);
    op.op = GRPC_OP_RECV_CLOSE_ON_SERVER;
    op.data.recv_close_on_server.cancelled = &u->close_cancelled;
    if (rl_life_start_batch(&u->life, call, &op, 1, &u->close_tag) != GRPC_CALL_OK) {
        RL_ERROR("cannot post RECV_CLOSE_ON_SERVER");
        posted = false;
    }
    if (!posted) {
        /* A programming error (the call was used before, say). Without the
         * close batch nothing would tell us the call ended: cancel it, and
         * never show the handler a request it could not answer safely. The
         * call counts as answered: it goes once what was posted is back. */
        grpc_call_cancel(call, NULL);
        u->cancelled = u->answered = true;
        u->status = GRPC_STATUS_CANCELLED;
        rl_life_close(&u->life);
    }
}

static int send_final(rl_unary *u, const ProtobufCMessage *reply, grpc_status_code code, const char *message)
{
    /* A second SEND_MESSAGE while a streamed one is in flight would be
     * refused by gRPC (one op of a kind at a time): the caller waits for
     * on_sent, as for rl_unary_send. */
    if (u->answered || (reply && u->msg_buf))
        return RL_EINVAL;
    u->answered = true;
    u->status = code;
    /* Answered: the struct goes once every batch is back. The close batch
     * holds |u| (see release), so nothing is freed in here. */
    rl_life_close(&u->life);
    grpc_op ops[3];
    memset(ops, 0, sizeof ops);
    size_t n = 0;
    if (!u->headers_sent)
        ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
    u->headers_sent = true;
    if (reply) {
        u->reply_buf = rl_pb_pack(reply);
        ops[n].op = GRPC_OP_SEND_MESSAGE;
        ops[n++].data.send_message.send_message = u->reply_buf;
    }
    grpc_slice_unref(u->detail);
    u->detail = message ? grpc_slice_from_copied_string(message) : grpc_empty_slice();
    ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
    ops[n].data.send_status_from_server.status = code;
    ops[n++].data.send_status_from_server.status_details = &u->detail;
    grpc_call_error e = rl_life_start_batch(&u->life, u->call, ops, n, &u->send_tag);
    if (e != GRPC_CALL_OK) {
        /* Only a programming error gets here. The call still ends, with
         * the status the handler chose. */
        RL_ERROR("cannot send the final status (grpc_call_error %d): cancelling the call", (int)e);
        grpc_call_cancel_with_status(u->call, code, message ? message : "", NULL);
        return RL_EGRPC;
    }
    return RL_OK;
}

int rl_unary_send(rl_unary *u, const ProtobufCMessage *msg)
{
    if (u->answered || u->msg_buf)
        return RL_EINVAL;
    return rl_unary_send_buffer(u, rl_pb_pack(msg));
}

int rl_unary_send_buffer(rl_unary *u, grpc_byte_buffer *buf)
{
    if (u->answered || u->msg_buf) {
        grpc_byte_buffer_destroy(buf);
        return RL_EINVAL;
    }
    grpc_op ops[2];
    memset(ops, 0, sizeof ops);
    size_t n = 0;
    if (!u->headers_sent)
        ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
    u->headers_sent = true;
    u->msg_buf = buf;
    ops[n].op = GRPC_OP_SEND_MESSAGE;
    ops[n++].data.send_message.send_message = u->msg_buf;
    grpc_call_error e = rl_life_start_batch(&u->life, u->call, ops, n, &u->msg_tag);
    if (e != GRPC_CALL_OK) {
        /* Only a programming error gets here. Cancelling makes the call end
         * the way a client's cancel would (on_cancel, then on_free), so the
         * caller has one path to handle; the close batch holds |u|. */
        RL_ERROR("cannot stream a message (grpc_call_error %d): cancelling the call", (int)e);
        grpc_byte_buffer_destroy(u->msg_buf);
        u->msg_buf = NULL;
        grpc_call_cancel(u->call, NULL);
        return RL_EGRPC;
    }
    return RL_OK;
}

int rl_unary_reply(rl_unary *u, const ProtobufCMessage *reply)
{
    return send_final(u, reply, GRPC_STATUS_OK, NULL);
}

int rl_unary_fail(rl_unary *u, grpc_status_code code, const char *message)
{
    return send_final(u, NULL, code, message);
}

int rl_unary_finish(rl_unary *u, grpc_status_code code, const char *message)
{
    return send_final(u, NULL, code, message);
}
