/* produce: Streamer.Produce, one call's state machine; see produce.h.
 *
 * Batches a call may have outstanding, each with its own tag: the request
 * (recv), RECV_CLOSE_ON_SERVER (close, posted for the whole call), one send
 * (a chunk, or the final status), and in unbounded mode a retry timer while
 * the queue is momentarily empty. |pending| counts them; the call is freed
 * when it drops to zero. Everything runs on the loop thread: no locks. */
#include "produce.h"

#include "chunkq.h"
#include "memstats.h"
#include "rl_alloc.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_log.h"
#include "rl_payload.h"
#include "rl_pb.h"
#include "rl_server.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How long the unbounded sender waits before looking at an empty queue
 * again. Only the mistake's mode polls, and its thread is rarely behind. */
#define QUEUE_POLL_NS (1 * RL_NS_PER_MS)

static atomic_uint_fast64_t stat_calls, stat_active, stat_sent;
static atomic_int_fast64_t stat_queued;

typedef struct produce_call {
    rl_tag recv_tag, close_tag, send_tag;
    rl_timer retry;                /* unbounded mode: armed while the queue is empty */
    rl_loop *loop;
    grpc_call *call;               /* owned; unref'd when pending reaches 0 */
    const rl_produce_config *cfg;
    grpc_byte_buffer *req_buf;     /* the request, until decoded */
    grpc_byte_buffer *out;         /* the one prepared chunk, until its send completes */
    rl_chunkq *queue;              /* unbounded mode only */
    grpc_slice detail;             /* status message, alive until the call is freed */
    int close_cancelled;           /* written by RECV_CLOSE_ON_SERVER */
    unsigned pending;              /* batches posted (and timer armed) not yet done */
    uint32_t count, size;
    uint64_t seq;                  /* next chunk to send; == count once all sent */
    bool cancelled;                /* the client gave up or the deadline passed */
    bool headers_sent;
    bool finished;                 /* the status has been posted */
    grpc_status_code status;
    int64_t start_ns;
    char tag[64];
} produce_call;

#define CALL_OF(ptr, field) ((produce_call *)((char *)(ptr) - offsetof(produce_call, field)))

grpc_status_code rl_produce_check(const Relaylab__ProduceRequest *req, char *msg, size_t msglen)
{
    if (req->size > RL_PRODUCE_MAX_SIZE) {
        snprintf(msg, msglen, "size %" PRIu32 " is above the limit of %u bytes per chunk; ask for smaller chunks",
                 req->size, RL_PRODUCE_MAX_SIZE);
        return GRPC_STATUS_INVALID_ARGUMENT;
    }
    if (req->count > RL_PRODUCE_MAX_COUNT) {
        snprintf(msg, msglen, "count %" PRIu32 " is above the limit of %u chunks per call", req->count,
                 RL_PRODUCE_MAX_COUNT);
        return GRPC_STATUS_INVALID_ARGUMENT;
    }
    uint64_t total = (uint64_t)req->count * req->size;
    if (total > RL_PRODUCE_MAX_TOTAL) {
        snprintf(msg, msglen,
                 "count %" PRIu32 " x size %" PRIu32 " = %" PRIu64 " bytes is above the limit of %" PRIu64
                 " bytes per call; split it into several calls",
                 req->count, req->size, total, RL_PRODUCE_MAX_TOTAL);
        return GRPC_STATUS_RESOURCE_EXHAUSTED;
    }
    return GRPC_STATUS_OK;
}

grpc_byte_buffer *rl_produce_chunk(uint64_t seq, uint32_t size)
{
    /* The payload is built in place in the outgoing slice: a Chunk's wire
     * form is field 1 (varint seq) then field 2 (length-delimited bytes), and
     * writing the two headers by hand spares a second copy of |size| bytes.
     * An empty payload is left out, as proto3 does. */
    Relaylab__Chunk head = RELAYLAB__CHUNK__INIT;
    head.seq = seq;
    size_t head_len = protobuf_c_message_get_packed_size(&head.base);
    uint8_t lenbuf[10];
    size_t len_len = 0;
    for (uint32_t v = size; len_len == 0 || v; v >>= 7)
        lenbuf[len_len++] = (uint8_t)((v & 0x7f) | (v >> 7 ? 0x80 : 0));
    size_t total = head_len + (size ? 1 + len_len + size : 0);
    grpc_slice slice = grpc_slice_malloc(total);
    uint8_t *p = GRPC_SLICE_START_PTR(slice);
    protobuf_c_message_pack(&head.base, p);
    p += head_len;
    if (size) {
        *p++ = (2 << 3) | 2; /* field 2, wire type 2 (length-delimited) */
        memcpy(p, lenbuf, len_len);
        p += len_len;
        rl_payload_fill(p, size, seq);
    }
    grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&slice, 1);
    grpc_slice_unref(slice);
    return bb;
}

void rl_produce_stats_get(rl_produce_stats *out)
{
    out->calls = atomic_load(&stat_calls);
    out->active = atomic_load(&stat_active);
    out->sent = atomic_load(&stat_sent);
    int64_t q = atomic_load(&stat_queued);
    out->queued_bytes = q > 0 ? (uint64_t)q : 0;
}

void rl_produce_stats_queued(int64_t delta)
{
    atomic_fetch_add(&stat_queued, delta);
}

static const char *status_name(grpc_status_code s)
{
    switch (s) {
    case GRPC_STATUS_OK: return "OK";
    case GRPC_STATUS_CANCELLED: return "CANCELLED";
    case GRPC_STATUS_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case GRPC_STATUS_RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    default: return "OTHER";
    }
}

static void call_free(produce_call *c)
{
    rl_chunkq_free(c->queue);
    if (c->req_buf)
        grpc_byte_buffer_destroy(c->req_buf);
    grpc_slice_unref(c->detail);
    grpc_call_unref(c->call);
    rl_server_call_end();
    int64_t ms = (rl_now_ns() - c->start_ns) / RL_NS_PER_MS;
    if (c->cfg->log_calls) {
        rl_memstats m;
        rl_memstats_read(&m);
        RL_INFO("call tag=%s count=%" PRIu32 " size=%" PRIu32 " sent=%" PRIu64 " status=%s ms=%lld"
                " allocated=%lld resident=%lld rss=%lld",
                c->tag, c->count, c->size, c->seq, c->cancelled ? "CANCELLED" : status_name(c->status),
                (long long)ms, (long long)m.allocated, (long long)m.resident, (long long)m.rss);
    } else {
        RL_DEBUG("call tag=%s sent=%" PRIu64 "/%" PRIu32 " cancelled=%d ms=%lld", c->tag, c->seq, c->count,
                 (int)c->cancelled, (long long)ms);
    }
    free(c);
    atomic_fetch_sub(&stat_active, 1);
}

static void settle(produce_call *c)
{
    if (--c->pending == 0)
        call_free(c);
}

/* Posts the final status; Trailers-Only when no chunk went out. */
static void finish(produce_call *c, grpc_status_code code, const char *message)
{
    grpc_op ops[2];
    memset(ops, 0, sizeof ops);
    size_t n = 0;
    if (!c->headers_sent) {
        ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
        c->headers_sent = true;
    }
    grpc_slice_unref(c->detail);
    c->detail = message ? grpc_slice_from_copied_string(message) : grpc_empty_slice();
    ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
    ops[n].data.send_status_from_server.status = code;
    ops[n++].data.send_status_from_server.status_details = &c->detail;
    c->finished = true;
    c->status = code;
    c->pending++;
    if (grpc_call_start_batch(c->call, ops, n, &c->send_tag, NULL) != GRPC_CALL_OK) {
        RL_ERROR("cannot send the final status of call %s", c->tag);
        settle(c);
    }
}

static void send_next(produce_call *c);

static void retry_fire(rl_timer *t)
{
    produce_call *c = (produce_call *)((char *)t - offsetof(produce_call, retry));
    if (!c->cancelled)
        send_next(c);
    settle(c); /* the timer's own count; send_next took its own */
}

/* Sends chunk c->seq: the only place a chunk is made (paced mode) or taken
 * off the queue (unbounded mode). Called once the previous send completed. */
static void send_next(produce_call *c)
{
    if (c->queue) {
        c->out = rl_chunkq_pop(c->queue);
        if (!c->out) {
            c->pending++;
            rl_timer_start(c->loop, &c->retry, rl_now_ns() + QUEUE_POLL_NS, retry_fire);
            return;
        }
    } else {
        c->out = rl_produce_chunk(c->seq, c->size);
    }
    grpc_op ops[2];
    memset(ops, 0, sizeof ops);
    size_t n = 0;
    if (!c->headers_sent) {
        ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
        c->headers_sent = true;
    }
    ops[n].op = GRPC_OP_SEND_MESSAGE;
    ops[n++].data.send_message.send_message = c->out;
    c->pending++;
    if (grpc_call_start_batch(c->call, ops, n, &c->send_tag, NULL) != GRPC_CALL_OK) {
        RL_ERROR("cannot send chunk %" PRIu64 " of call %s", c->seq, c->tag);
        grpc_byte_buffer_destroy(c->out);
        c->out = NULL;
        grpc_call_cancel(c->call, NULL);
        settle(c);
    }
}

static void send_done(rl_tag *tag, bool ok)
{
    produce_call *c = CALL_OF(tag, send_tag);
    if (c->out) {
        grpc_byte_buffer_destroy(c->out);
        c->out = NULL;
        if (ok) {
            c->seq++;
            atomic_fetch_add(&stat_sent, 1);
        }
        if (!ok || c->cancelled) {
            /* The client left: stop here, and let the queue thread go now
             * rather than when the last batch completes. */
            rl_chunkq_free(c->queue);
            c->queue = NULL;
        } else if (c->seq == c->count) {
            finish(c, GRPC_STATUS_OK, NULL);
        } else {
            send_next(c);
        }
    }
    settle(c);
}

static void recv_done(rl_tag *tag, bool ok)
{
    produce_call *c = CALL_OF(tag, recv_tag);
    if (!ok || c->cancelled) {
        settle(c);
        return;
    }
    ProtobufCMessage *msg = NULL;
    char why[256];
    /* A ProduceRequest is a few bytes; anything much larger is not one. */
    int rc = c->req_buf ? rl_pb_unpack(&relaylab__produce_request__descriptor, c->req_buf, 4096, &msg) : RL_EINVAL;
    if (c->req_buf) {
        grpc_byte_buffer_destroy(c->req_buf);
        c->req_buf = NULL;
    }
    if (rc != RL_OK) {
        finish(c, rc == RL_ETOOBIG ? GRPC_STATUS_RESOURCE_EXHAUSTED : GRPC_STATUS_INVALID_ARGUMENT,
               rc == RL_ETOOBIG ? "ProduceRequest is above the limit of 4096 bytes"
                                : "ProduceRequest: the request is missing or not a valid protobuf message");
        settle(c);
        return;
    }
    Relaylab__ProduceRequest *req = (Relaylab__ProduceRequest *)msg;
    snprintf(c->tag, sizeof c->tag, "%s", req->tag[0] ? req->tag : "-");
    grpc_status_code code = rl_produce_check(req, why, sizeof why);
    c->count = req->count;
    c->size = req->size;
    protobuf_c_message_free_unpacked(msg, NULL);
    if (code != GRPC_STATUS_OK) {
        finish(c, code, why);
    } else if (c->count == 0) {
        finish(c, GRPC_STATUS_OK, NULL);
    } else {
        if (c->cfg->unbounded)
            c->queue = rl_chunkq_start(c->count, c->size);
        send_next(c);
    }
    settle(c);
}

static void close_done(rl_tag *tag, bool ok)
{
    (void)ok;
    produce_call *c = CALL_OF(tag, close_tag);
    if (c->close_cancelled) {
        c->cancelled = true;
        /* A send in flight completes (with ok false) by itself and frees its
         * chunk there; a queue wait has nothing to finish, so end it now. */
        if (rl_timer_armed(&c->retry)) {
            rl_timer_stop(c->loop, &c->retry);
            settle(c);
        }
        if (!c->out) {
            rl_chunkq_free(c->queue);
            c->queue = NULL;
        }
    }
    settle(c);
}

void rl_produce_start(rl_loop *loop, grpc_call *call, const rl_call_info *info, void *user)
{
    (void)info;
    produce_call *c = rl_xcalloc(1, sizeof *c);
    c->recv_tag.done = recv_done;
    c->close_tag.done = close_done;
    c->send_tag.done = send_done;
    c->loop = loop;
    c->call = call;
    c->cfg = user;
    c->detail = grpc_empty_slice();
    c->start_ns = rl_now_ns();
    snprintf(c->tag, sizeof c->tag, "-");
    atomic_fetch_add(&stat_calls, 1);
    atomic_fetch_add(&stat_active, 1);

    /* Separate batches: RECV_CLOSE_ON_SERVER completes only at the end of
     * the call (or at a cancel), and the request must not wait for it. */
    grpc_op op;
    memset(&op, 0, sizeof op);
    op.op = GRPC_OP_RECV_MESSAGE;
    op.data.recv_message.recv_message = &c->req_buf;
    c->pending = 1; /* held by this function until both batches are posted */
    c->pending++;
    if (grpc_call_start_batch(call, &op, 1, &c->recv_tag, NULL) != GRPC_CALL_OK)
        c->pending--;
    memset(&op, 0, sizeof op);
    op.op = GRPC_OP_RECV_CLOSE_ON_SERVER;
    op.data.recv_close_on_server.cancelled = &c->close_cancelled;
    c->pending++;
    if (grpc_call_start_batch(call, &op, 1, &c->close_tag, NULL) != GRPC_CALL_OK) {
        RL_ERROR("cannot post RECV_CLOSE_ON_SERVER");
        c->pending--;
    }
    settle(c);
}
