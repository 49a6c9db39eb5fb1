/* stream: one Tunnel.Open stream's state machine; see stream.h. */
#include "stream.h"

#include "relaylab.pb-c.h"
#include "rl_alloc.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_life.h"
#include "rl_log.h"
#include "rl_pb.h"

#include <grpc/byte_buffer.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>
#include <stdlib.h>
#include <string.h>

/* A call's work is the world's promise (the grader's tunnel servers); the
 * bound only keeps a wrong one from arming a timer for days. */
#define WORK_MAX_MS 600000u
/* A TunnelCall is three small fields; anything much larger is not one. */
#define CALL_MAX_BYTES 4096

/* The status arrived (which closes |life|), no batch is out and no work
 * timer armed: the stream is over, and the owner may free it. */
static void release(rl_life *life)
{
    ag_stream *s = RL_CONTAINER_OF(life, ag_stream, life);
    s->over = true;
    s->ev->ended(s, s->user);
}

static int post(ag_stream *s, const grpc_op *ops, size_t n, rl_tag *tag)
{
    grpc_call_error e = rl_life_start_batch(&s->life, s->call, ops, n, tag);
    if (e != GRPC_CALL_OK) {
        RL_ERROR("stream %llu: gRPC refused a batch (%d)", (unsigned long long)s->id, (int)e);
        return RL_EGRPC;
    }
    return RL_OK;
}

static void post_recv(ag_stream *s)
{
    grpc_op op = {0};
    op.op = GRPC_OP_RECV_MESSAGE;
    op.data.recv_message.recv_message = &s->recv_buf;
    if (post(s, &op, 1, &s->recv_tag) == RL_OK)
        s->receiving = true;
    else
        grpc_call_cancel(s->call, NULL);
}

static void half_close(ag_stream *s)
{
    if (s->half_closed || s->status_in || s->ncalls > 0 || s->sending)
        return;
    grpc_op op = {0};
    op.op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    s->half_closed = true;
    if (post(s, &op, 1, &s->close_tag) != RL_OK)
        grpc_call_cancel(s->call, NULL);
}

static void work_done(rl_timer *t);

/* The work timer holds the stream's life while it is armed. */
static void start_work(ag_stream *s)
{
    uint32_t ms = s->calls[0].work_ms < WORK_MAX_MS ? s->calls[0].work_ms : WORK_MAX_MS;
    if (!rl_timer_armed(&s->work))
        rl_life_ref(&s->life);
    rl_timer_start(s->loop, &s->work, rl_now_ns() + (int64_t)ms * RL_NS_PER_MS, work_done);
}

static void stop_work(ag_stream *s)
{
    if (!rl_timer_armed(&s->work))
        return;
    rl_timer_stop(s->loop, &s->work);
    rl_life_unref(&s->life);
}

/* Sends the oldest call's answer. */
static void send_answer(ag_stream *s)
{
    Relaylab__TunnelAnswer a = RELAYLAB__TUNNEL_ANSWER__INIT;
    a.call_id = s->calls[0].call_id;
    s->send_buf = rl_pb_pack(&a.base);
    grpc_op ops[2] = {{0}, {0}};
    ops[0].op = GRPC_OP_SEND_MESSAGE;
    ops[0].data.send_message.send_message = s->send_buf;
    /* A one-call stream ends its side with its answer, in one batch: the
     * server learns of both together, so it has the least chance to hand
     * the stream another call it could no longer answer. */
    size_t n = 1;
    if (s->one_call && s->ncalls == 1) {
        ops[1].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
        n = 2;
    }
    if (post(s, ops, n, &s->send_tag) == RL_OK) {
        s->sending = true;
        if (n == 2)
            s->half_closed = s->close_wanted = true;
        return;
    }
    grpc_byte_buffer_destroy(s->send_buf);
    s->send_buf = NULL;
    grpc_call_cancel(s->call, NULL);
}

/* The oldest call's work is done: its answer goes out. */
static void work_done(rl_timer *t)
{
    ag_stream *s = RL_CONTAINER_OF(t, ag_stream, work);
    if (!s->status_in && s->ncalls > 0)
        send_answer(s);
    rl_life_unref(&s->life); /* the timer's */
}

static void sent(rl_tag *tag, bool ok)
{
    ag_stream *s = RL_CONTAINER_OF(tag, ag_stream, send_tag);
    s->sending = false;
    grpc_byte_buffer_destroy(s->send_buf);
    s->send_buf = NULL;
    if (ok && s->ncalls > 0) {
        s->served++;
        s->last_answer_ns = rl_now_ns();
        memmove(s->calls, s->calls + 1, (s->ncalls - 1) * sizeof *s->calls);
        s->ncalls--;
        s->ev->answered(s, s->user);
        if (s->ncalls > 0 && !s->status_in)
            start_work(s);
        else if (s->close_wanted)
            half_close(s);
    }
    rl_life_unref(&s->life);
}

/* Copies the server's name, cut to AG_SERVER_ID_MAX and with anything
 * unprintable as '?': it goes into log lines that the demo and tests parse. */
static void set_server_id(ag_stream *s, const char *id)
{
    size_t n = strlen(id);
    if (n > AG_SERVER_ID_MAX) {
        RL_WARN("stream %llu: a server id of %zu bytes, cut to %d", (unsigned long long)s->id, n, AG_SERVER_ID_MAX);
        n = AG_SERVER_ID_MAX;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)id[i];
        s->server_id[i] = c > ' ' && c < 0x7f ? (char)c : '?';
    }
    s->server_id[n] = '\0';
}

static void on_message(ag_stream *s, const Relaylab__TunnelCall *m)
{
    if (!s->named) {
        if (!m->server_id || !*m->server_id || m->call_id != 0) {
            RL_WARN("stream %llu: the server's first message does not name it; cancelling the stream",
                    (unsigned long long)s->id);
            grpc_call_cancel(s->call, NULL);
            return;
        }
        set_server_id(s, m->server_id);
        s->named = true;
        s->ev->named(s, s->user);
        return;
    }
    if (m->call_id == 0)
        return; /* a name again, or nothing: no call to answer */
    if (s->half_closed) {
        /* The server handed a call to a stream this agent had already
         * closed: there is no way left to answer it on this stream. */
        s->lost++;
        RL_WARN("stream %llu on %s: call %llu arrived after the half-close; it cannot be answered",
                (unsigned long long)s->id, s->server_id, (unsigned long long)m->call_id);
        return;
    }
    RL_GROW(s->calls, s->ncalls, s->capcalls, 2);
    s->calls[s->ncalls++] = (ag_call){m->call_id, m->work_ms};
    if (s->ncalls == 1)
        start_work(s);
}

static void received(rl_tag *tag, bool ok)
{
    ag_stream *s = RL_CONTAINER_OF(tag, ag_stream, recv_tag);
    s->receiving = false;
    grpc_byte_buffer *buf = s->recv_buf;
    s->recv_buf = NULL;
    if (ok && buf) {
        ProtobufCMessage *msg = NULL;
        if (rl_pb_unpack(&relaylab__tunnel_call__descriptor, buf, CALL_MAX_BYTES, &msg) == RL_OK) {
            on_message(s, (const Relaylab__TunnelCall *)msg);
            protobuf_c_message_free_unpacked(msg, NULL);
        } else {
            RL_WARN("stream %llu: a message that is not a TunnelCall; cancelling the stream",
                    (unsigned long long)s->id);
            grpc_call_cancel(s->call, NULL);
        }
        grpc_byte_buffer_destroy(buf);
        if (!s->status_in)
            post_recv(s);
    }
    /* No message: the server ended its side; the status follows. */
    rl_life_unref(&s->life);
}

static void status_done(rl_tag *tag, bool ok)
{
    ag_stream *s = RL_CONTAINER_OF(tag, ag_stream, status_tag);
    (void)ok; /* a status batch fails only on a bug; it is over either way */
    s->status_in = true;
    stop_work(s);
    if (s->status != GRPC_STATUS_OK && rl_log_enabled(RL_LOG_DEBUG)) {
        char *d = grpc_slice_to_c_string(s->details);
        RL_DEBUG("stream %llu%s%s ended %d: %s", (unsigned long long)s->id, s->named ? " on " : "", s->server_id,
                 (int)s->status, d);
        gpr_free(d);
    }
    /* Nothing more comes from the server: the stream ends once what it
     * still has out (the last batches, a work timer) is back. */
    rl_life_close(&s->life);
    rl_life_unref(&s->life);
}

static void started(rl_tag *tag, bool ok)
{
    (void)ok;
    rl_life_unref(&RL_CONTAINER_OF(tag, ag_stream, start_tag)->life);
}

static void closed(rl_tag *tag, bool ok)
{
    (void)ok;
    rl_life_unref(&RL_CONTAINER_OF(tag, ag_stream, close_tag)->life);
}

int ag_stream_start(ag_stream *s, grpc_channel *channel, rl_loop *loop, uint64_t id, const ag_stream_events *ev,
                    void *user)
{
    memset(s, 0, sizeof *s);
    s->loop = loop;
    s->ev = ev;
    s->user = user;
    s->id = id;
    s->server = -1;
    s->opened_ns = s->last_answer_ns = rl_now_ns();
    s->status = GRPC_STATUS_UNKNOWN;
    s->details = grpc_empty_slice();
    grpc_metadata_array_init(&s->initial_md);
    grpc_metadata_array_init(&s->trailing_md);
    s->start_tag.done = started;
    s->status_tag.done = status_done;
    s->recv_tag.done = received;
    s->send_tag.done = sent;
    s->close_tag.done = closed;
    rl_life_init(&s->life, release);
    s->call = grpc_channel_create_call(channel, NULL, GRPC_PROPAGATE_DEFAULTS, loop->cq,
                                       grpc_slice_from_static_string("/relaylab.Tunnel/Open"), NULL,
                                       gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    if (!s->call) {
        s->status_in = true;
        s->over = true;
        return RL_EGRPC;
    }
    /* Wait for a ready connection: the tunnel may still be coming up, and a
     * stream that fails at once would only be opened again next tick. */
    grpc_op start[2] = {{0}, {0}};
    start[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    start[0].flags = GRPC_INITIAL_METADATA_WAIT_FOR_READY;
    start[1].op = GRPC_OP_RECV_INITIAL_METADATA;
    start[1].data.recv_initial_metadata.recv_initial_metadata = &s->initial_md;
    grpc_op status = {0};
    status.op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    status.data.recv_status_on_client.trailing_metadata = &s->trailing_md;
    status.data.recv_status_on_client.status = &s->status;
    status.data.recv_status_on_client.status_details = &s->details;
    if (post(s, &status, 1, &s->status_tag) != RL_OK) {
        s->status_in = true;
        s->over = true;
        return RL_EGRPC;
    }
    if (post(s, start, 2, &s->start_tag) != RL_OK) {
        grpc_call_cancel(s->call, NULL);
        return RL_EGRPC;
    }
    post_recv(s);
    return s->receiving ? RL_OK : RL_EGRPC;
}

void ag_stream_close(ag_stream *s)
{
    s->close_wanted = true;
    half_close(s);
}

bool ag_stream_over(const ag_stream *s)
{
    return s->over;
}

void ag_stream_free(ag_stream *s)
{
    if (!s)
        return;
    if (s->call)
        grpc_call_unref(s->call);
    s->call = NULL;
    grpc_metadata_array_destroy(&s->initial_md);
    grpc_metadata_array_destroy(&s->trailing_md);
    grpc_slice_unref(s->details);
    s->details = grpc_empty_slice();
    if (s->recv_buf)
        grpc_byte_buffer_destroy(s->recv_buf);
    if (s->send_buf)
        grpc_byte_buffer_destroy(s->send_buf);
    s->recv_buf = s->send_buf = NULL;
    free(s->calls);
    s->calls = NULL;
    s->ncalls = s->capcalls = 0;
}
