/* rl_client: a client unary call's one batch, and its loop-driven state
 * machine; see rl_client.h. */
#include "rl_client.h"

#include "rl_err.h"
#include "rl_log.h"
#include "rl_pb.h"

#include <stddef.h>
#include <string.h>

void rl_client_batch_init(rl_client_batch *b)
{
    memset(b, 0, sizeof *b);
    grpc_metadata_array_init(&b->initial_md);
    grpc_metadata_array_init(&b->trailing_md);
    b->status = GRPC_STATUS_UNKNOWN;
    b->details = grpc_empty_slice();
}

int rl_client_batch_start(rl_client_batch *b, grpc_call *call, const ProtobufCMessage *req, uint32_t initial_md_flags,
                          void *tag)
{
    b->call = call;
    if (!call) {
        RL_ERROR("cannot start a client call: gRPC did not create it");
        return RL_EGRPC;
    }
    b->req_buf = rl_pb_pack(req);

    grpc_op ops[6];
    memset(ops, 0, sizeof ops);
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[0].flags = initial_md_flags;
    ops[1].op = GRPC_OP_SEND_MESSAGE;
    ops[1].data.send_message.send_message = b->req_buf;
    ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[3].data.recv_initial_metadata.recv_initial_metadata = &b->initial_md;
    ops[4].op = GRPC_OP_RECV_MESSAGE;
    ops[4].data.recv_message.recv_message = &b->reply_buf;
    ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    ops[5].data.recv_status_on_client.trailing_metadata = &b->trailing_md;
    ops[5].data.recv_status_on_client.status = &b->status;
    ops[5].data.recv_status_on_client.status_details = &b->details;
    grpc_call_error e = grpc_call_start_batch(call, ops, 6, tag, NULL);
    if (e != GRPC_CALL_OK) {
        RL_ERROR("cannot start a client call (grpc_call_error %d)", (int)e);
        return RL_EGRPC;
    }
    return RL_OK;
}

void rl_client_batch_done(rl_client_batch *b, bool ok)
{
    if (ok)
        return;
    b->status = GRPC_STATUS_UNKNOWN;
    grpc_slice_unref(b->details);
    b->details = grpc_slice_from_static_string("the client batch failed");
}

void rl_client_batch_fini(rl_client_batch *b)
{
    if (b->call)
        grpc_call_unref(b->call);
    if (b->req_buf)
        grpc_byte_buffer_destroy(b->req_buf);
    if (b->reply_buf)
        grpc_byte_buffer_destroy(b->reply_buf);
    grpc_metadata_array_destroy(&b->initial_md);
    grpc_metadata_array_destroy(&b->trailing_md);
    grpc_slice_unref(b->details);
    rl_client_batch_init(b);
}

static void batch_done(rl_tag *tag, bool ok)
{
    rl_client *c = RL_CONTAINER_OF(tag, rl_client, tag);
    c->in_flight = false;
    rl_client_batch_done(&c->batch, ok);
    c->done(c);
}

int rl_client_start(rl_client *c, grpc_call *call, const ProtobufCMessage *req, rl_client_done done)
{
    return rl_client_start_flags(c, call, req, 0, done);
}

int rl_client_start_flags(rl_client *c, grpc_call *call, const ProtobufCMessage *req, uint32_t initial_md_flags,
                          rl_client_done done)
{
    memset(c, 0, sizeof *c);
    c->tag.done = batch_done;
    c->done = done;
    rl_client_batch_init(&c->batch);
    c->in_flight = true;
    if (rl_client_batch_start(&c->batch, call, req, initial_md_flags, &c->tag) != RL_OK) {
        c->in_flight = false;
        rl_client_fini(c);
        return RL_EGRPC;
    }
    return RL_OK;
}

int rl_client_unpack(const rl_client *c, const ProtobufCMessageDescriptor *desc, ProtobufCMessage **out)
{
    return rl_pb_unpack(desc, c->batch.reply_buf, 0, out);
}

void rl_client_cancel(rl_client *c)
{
    if (c->in_flight)
        grpc_call_cancel(c->batch.call, NULL);
}

void rl_client_fini(rl_client *c)
{
    rl_client_batch_fini(&c->batch);
}
