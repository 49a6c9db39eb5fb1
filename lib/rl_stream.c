/* rl_stream: a paced, checking Produce reader; see rl_stream.h. */
#include "rl_stream.h"

#include "relaylab.pb-c.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_life.h"
#include "rl_payload.h"
#include "rl_pb.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define STREAM_OF(ptr, field) ((rl_stream *)((char *)(ptr)-offsetof(rl_stream, field)))

/* A Chunk of the largest size the reference allows is just under 4 MiB; the
 * reader takes what a default client takes. */
#define MAX_CHUNK_BYTES ((size_t)4 * 1024 * 1024)

static void start_done(rl_tag *tag, bool ok)
{
    (void)ok;
    rl_life_unref(&STREAM_OF(tag, start_tag)->life);
}

static void msg_done(rl_tag *tag, bool ok)
{
    rl_stream *s = STREAM_OF(tag, msg_tag);
    s->msg_posted = false;
    s->msg_ready = true;
    s->msg_ok = ok;
    rl_life_unref(&s->life);
}

static void status_done(rl_tag *tag, bool ok)
{
    (void)ok;
    rl_stream *s = STREAM_OF(tag, status_tag);
    s->status_done = true;
    rl_life_unref(&s->life);
}

/* Dispatches events until |stop(s)| holds or |until_ns| passed. */
static bool pump(rl_stream *s, int64_t until_ns, bool (*stop)(const rl_stream *))
{
    while (!(stop && stop(s))) {
        int64_t now = rl_now_ns();
        if (now >= until_ns)
            return false;
        /* Short waits keep a huge |until_ns| from overflowing gpr's clock
         * arithmetic and let an idle caller come back on time. */
        int64_t wait = until_ns - now < 100 * RL_NS_PER_MS ? until_ns - now : 100 * RL_NS_PER_MS;
        grpc_event ev = grpc_completion_queue_next(s->cq, rl_ns_to_deadline(now + wait), NULL);
        if (ev.type == GRPC_OP_COMPLETE)
            ((rl_tag *)ev.tag)->done(ev.tag, ev.success != 0);
        else if (ev.type == GRPC_QUEUE_SHUTDOWN)
            return false;
    }
    return true;
}

int rl_stream_open(rl_stream *s, grpc_channel *ch, const char *tag, uint32_t count, uint32_t size, int64_t deadline_ns)
{
    memset(s, 0, sizeof *s);
    s->start_tag.done = start_done;
    s->msg_tag.done = msg_done;
    s->status_tag.done = status_done;
    s->details = grpc_empty_slice();
    rl_life_init(&s->life, NULL); /* rl_stream_fini waits for the release */
    grpc_metadata_array_init(&s->initial_md);
    grpc_metadata_array_init(&s->trailing_md);
    s->count = count;
    s->size = size;
    s->cq = grpc_completion_queue_create_for_next(NULL);
    gpr_timespec deadline =
        deadline_ns == INT64_MAX ? gpr_inf_future(GPR_CLOCK_MONOTONIC) : rl_ns_to_deadline(deadline_ns);
    grpc_slice method = grpc_slice_from_static_string("/relaylab.Streamer/Produce");
    s->call = grpc_channel_create_call(ch, NULL, GRPC_PROPAGATE_DEFAULTS, s->cq, method, NULL, deadline, NULL);
    grpc_slice_unref(method);
    if (!s->call)
        return RL_EGRPC;

    Relaylab__ProduceRequest req = RELAYLAB__PRODUCE_REQUEST__INIT;
    req.tag = (char *)(tag ? tag : "");
    req.count = count;
    req.size = size;
    s->send_buf = rl_pb_pack(&req.base);
    s->open_ns = rl_now_ns();

    grpc_op ops[4];
    memset(ops, 0, sizeof ops);
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[1].op = GRPC_OP_SEND_MESSAGE;
    ops[1].data.send_message.send_message = s->send_buf;
    ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    /* Without RECV_INITIAL_METADATA the retry machinery may hold the status
     * back (docs/grpc-facts.md, client calls). */
    ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[3].data.recv_initial_metadata.recv_initial_metadata = &s->initial_md;
    if (rl_life_start_batch(&s->life, s->call, ops, 4, &s->start_tag) != GRPC_CALL_OK)
        return RL_EGRPC;
    memset(ops, 0, sizeof ops);
    ops[0].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    ops[0].data.recv_status_on_client.trailing_metadata = &s->trailing_md;
    ops[0].data.recv_status_on_client.status = &s->status;
    ops[0].data.recv_status_on_client.status_details = &s->details;
    if (rl_life_start_batch(&s->life, s->call, ops, 1, &s->status_tag) != GRPC_CALL_OK) {
        grpc_call_cancel(s->call, NULL);
        return RL_EGRPC;
    }
    return RL_OK;
}

static bool msg_arrived(const rl_stream *s)
{
    return s->msg_ready;
}

static int check_chunk(rl_stream *s, grpc_byte_buffer *buf)
{
    ProtobufCMessage *m = NULL;
    int rc = rl_pb_unpack(&relaylab__chunk__descriptor, buf, MAX_CHUNK_BYTES, &m);
    if (rc != RL_OK) {
        snprintf(s->error, sizeof s->error, "message %" PRIu64 " (%zu bytes) is not a valid Chunk", s->received,
                 grpc_byte_buffer_length(buf));
        return RL_EINVAL;
    }
    Relaylab__Chunk *c = (Relaylab__Chunk *)m;
    size_t bad = 0;
    rc = RL_EINVAL;
    if (c->seq != s->received) {
        snprintf(s->error, sizeof s->error,
                 "message %" PRIu64 " carries seq %" PRIu64 " (chunks must come in order from 0)", s->received, c->seq);
    } else if (s->received >= s->count) {
        snprintf(s->error, sizeof s->error, "chunk %" PRIu64 " is one more than the %" PRIu32 " asked for", c->seq,
                 s->count);
    } else if (rl_payload_check(c->payload.data, c->payload.len, c->seq, s->size, &bad) != RL_OK) {
        if (c->payload.len != s->size && bad == (c->payload.len < s->size ? c->payload.len : s->size))
            snprintf(s->error, sizeof s->error, "chunk %" PRIu64 " has %zu payload bytes, not %" PRIu32, c->seq,
                     c->payload.len, s->size);
        else
            snprintf(s->error, sizeof s->error, "chunk %" PRIu64 " byte %zu is %u, not (seq*31+i) mod 251 = %u", c->seq,
                     bad, (unsigned)c->payload.data[bad], (unsigned)rl_payload_byte(c->seq, bad));
    } else {
        rc = RL_OK;
        s->received++;
        s->bytes += c->payload.len;
    }
    protobuf_c_message_free_unpacked(m, NULL);
    return rc;
}

int rl_stream_next(rl_stream *s, int64_t until_ns, bool *end)
{
    *end = false;
    if (s->ended) {
        *end = true;
        return RL_OK;
    }
    if (!s->msg_posted && !s->msg_ready) {
        grpc_op op;
        memset(&op, 0, sizeof op);
        op.op = GRPC_OP_RECV_MESSAGE;
        op.data.recv_message.recv_message = &s->recv_buf;
        if (rl_life_start_batch(&s->life, s->call, &op, 1, &s->msg_tag) != GRPC_CALL_OK) {
            snprintf(s->error, sizeof s->error, "gRPC refused a RECV_MESSAGE");
            return RL_EGRPC;
        }
        s->msg_posted = true;
    }
    if (!pump(s, until_ns, msg_arrived))
        return RL_ETIMEOUT;
    s->msg_ready = false;
    grpc_byte_buffer *buf = s->recv_buf;
    s->recv_buf = NULL;
    if (!s->msg_ok || !buf) {
        s->ended = true;
        *end = true;
        if (buf)
            grpc_byte_buffer_destroy(buf);
        return RL_OK;
    }
    int64_t now = rl_now_ns();
    if (!s->first_ns)
        s->first_ns = now;
    s->last_ns = now;
    int rc = check_chunk(s, buf);
    grpc_byte_buffer_destroy(buf);
    return rc;
}

void rl_stream_idle(rl_stream *s, int64_t until_ns)
{
    pump(s, until_ns, NULL);
}

int64_t rl_stream_cancel(rl_stream *s)
{
    int64_t now = rl_now_ns();
    if (s->call)
        grpc_call_cancel(s->call, NULL);
    return now;
}

static bool status_arrived(const rl_stream *s)
{
    return s->status_done;
}

int rl_stream_wait_status(rl_stream *s, int64_t until_ns)
{
    /* The status waits behind unread messages, so drain them unchecked. */
    while (!s->status_done) {
        if (!s->ended && !s->msg_posted) {
            if (s->msg_ready) {
                s->msg_ready = false;
                if (s->recv_buf)
                    grpc_byte_buffer_destroy(s->recv_buf);
                else
                    s->ended = true;
                s->recv_buf = NULL;
                if (!s->msg_ok)
                    s->ended = true;
                continue;
            }
            grpc_op op;
            memset(&op, 0, sizeof op);
            op.op = GRPC_OP_RECV_MESSAGE;
            op.data.recv_message.recv_message = &s->recv_buf;
            if (rl_life_start_batch(&s->life, s->call, &op, 1, &s->msg_tag) != GRPC_CALL_OK)
                s->ended = true;
            else
                s->msg_posted = true;
        }
        bool (*stop)(const rl_stream *) = s->ended ? status_arrived : msg_arrived;
        if (!pump(s, until_ns, stop) && rl_now_ns() >= until_ns)
            return s->status_done ? RL_OK : RL_ETIMEOUT;
    }
    return RL_OK;
}

void rl_stream_details(const rl_stream *s, char *buf, size_t len)
{
    if (!len)
        return;
    size_t n = GRPC_SLICE_LENGTH(s->details);
    if (n >= len)
        n = len - 1;
    memcpy(buf, GRPC_SLICE_START_PTR(s->details), n);
    buf[n] = '\0';
}

void rl_stream_fini(rl_stream *s)
{
    if (s->cq) {
        if (s->call && !s->status_done)
            grpc_call_cancel(s->call, NULL);
        rl_life_close(&s->life);
        int64_t give_up = rl_now_ns() + 5 * RL_NS_PER_SEC;
        while (!rl_life_released(&s->life) && rl_now_ns() < give_up) {
            grpc_event ev = grpc_completion_queue_next(s->cq, rl_deadline_after_ms(100), NULL);
            if (ev.type == GRPC_OP_COMPLETE)
                ((rl_tag *)ev.tag)->done(ev.tag, ev.success != 0);
        }
    }
    if (s->recv_buf)
        grpc_byte_buffer_destroy(s->recv_buf);
    s->recv_buf = NULL;
    if (s->call)
        grpc_call_unref(s->call);
    s->call = NULL;
    if (s->send_buf)
        grpc_byte_buffer_destroy(s->send_buf);
    s->send_buf = NULL;
    grpc_metadata_array_destroy(&s->initial_md);
    grpc_metadata_array_destroy(&s->trailing_md);
    grpc_slice_unref(s->details);
    s->details = grpc_empty_slice();
    if (s->cq) {
        grpc_completion_queue_shutdown(s->cq);
        while (grpc_completion_queue_next(s->cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL).type != GRPC_QUEUE_SHUTDOWN)
            ;
        grpc_completion_queue_destroy(s->cq);
        s->cq = NULL;
    }
}
