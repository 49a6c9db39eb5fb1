/* rl_client: client-side unary call state machine; see rl_client.h. */
#include "rl_client.h"

#include "rl_err.h"
#include "rl_log.h"
#include "rl_pb.h"

#include <grpc/support/alloc.h>
#include <stddef.h>
#include <string.h>

static void batch_done(rl_tag *tag, bool ok)
{
    rl_client *c = RL_CONTAINER_OF(tag, rl_client, tag);
    c->in_flight = false;
    /* A batch holding RECV_STATUS_ON_CLIENT always succeeds; a failure here
     * would be a bug in gRPC or in our batch, so make it visible as UNKNOWN. */
    if (!ok) {
        c->status = GRPC_STATUS_UNKNOWN;
        grpc_slice_unref(c->details);
        c->details = grpc_slice_from_static_string("the client batch failed");
    }
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
    c->call = call;
    c->done = done;
    c->status = GRPC_STATUS_UNKNOWN;
    c->details = grpc_empty_slice();
    grpc_metadata_array_init(&c->initial_md);
    grpc_metadata_array_init(&c->trailing_md);
    c->req_buf = rl_pb_pack(req);

    grpc_op ops[6];
    memset(ops, 0, sizeof ops);
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[0].flags = initial_md_flags;
    ops[1].op = GRPC_OP_SEND_MESSAGE;
    ops[1].data.send_message.send_message = c->req_buf;
    ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[3].data.recv_initial_metadata.recv_initial_metadata = &c->initial_md;
    ops[4].op = GRPC_OP_RECV_MESSAGE;
    ops[4].data.recv_message.recv_message = &c->reply_buf;
    ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    ops[5].data.recv_status_on_client.trailing_metadata = &c->trailing_md;
    ops[5].data.recv_status_on_client.status = &c->status;
    ops[5].data.recv_status_on_client.status_details = &c->details;
    ops[5].data.recv_status_on_client.error_string = &c->error_string;
    c->in_flight = true;
    grpc_call_error e = grpc_call_start_batch(call, ops, 6, &c->tag, NULL);
    if (e != GRPC_CALL_OK) {
        RL_ERROR("cannot start a client call (grpc_call_error %d)", (int)e);
        c->in_flight = false;
        rl_client_fini(c);
        return RL_EGRPC;
    }
    return RL_OK;
}

int rl_client_unpack(const rl_client *c, const ProtobufCMessageDescriptor *desc, ProtobufCMessage **out)
{
    return rl_pb_unpack(desc, c->reply_buf, 0, out);
}

void rl_client_cancel(rl_client *c)
{
    if (c->in_flight)
        grpc_call_cancel(c->call, NULL);
}

void rl_client_fini(rl_client *c)
{
    if (!c->call)
        return;
    grpc_metadata_array_destroy(&c->initial_md);
    grpc_metadata_array_destroy(&c->trailing_md);
    if (c->req_buf)
        grpc_byte_buffer_destroy(c->req_buf);
    if (c->reply_buf)
        grpc_byte_buffer_destroy(c->reply_buf);
    grpc_slice_unref(c->details);
    gpr_free((void *)c->error_string);
    grpc_call_unref(c->call);
    c->call = NULL;
    c->req_buf = c->reply_buf = NULL;
    c->error_string = NULL;
    c->details = grpc_empty_slice();
}
