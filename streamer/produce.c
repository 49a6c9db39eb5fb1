/* produce: Streamer.Produce, one call's state machine; see produce.h.
 *
 * The call itself (request, RECV_CLOSE_ON_SERVER, one message in flight, the
 * status, releasing the call) is an embedded rl_unary; this file adds only
 * the producer's part: the plan from the request, the next chunk, the
 * unbounded mode's queue and its retry timer, and the counters. Everything
 * runs on the call's loop thread: no locks. */
#include "produce.h"

#include "chunkq.h"
#include "rl_alloc.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_log.h"
#include "rl_memstats.h"
#include "rl_payload.h"
#include "rl_unary.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How long the unbounded sender waits before looking at an empty queue
 * again. Only the mistake's mode polls, and its thread is rarely behind. */
#define QUEUE_POLL_NS (1 * RL_NS_PER_MS)

/* A ProduceRequest is a few bytes; anything much larger is not one. */
#define PRODUCE_MAX_REQUEST 4096

static atomic_uint_fast64_t stat_calls, stat_active, stat_sent;
static atomic_int_fast64_t stat_queued;

typedef struct produce_call {
    rl_unary u;     /* the call; on_free frees this struct */
    rl_timer retry; /* unbounded mode: armed while the queue is empty */
    const st_produce_config *cfg;
    st_chunkq *queue; /* unbounded mode only; NULL once production stopped */
    uint32_t count, size;
    uint64_t seq; /* next chunk to send; == count once all sent */
    int64_t start_ns;
    char tag[64];
} produce_call;

grpc_status_code st_produce_check(const Relaylab__ProduceRequest *req, char *msg, size_t msglen)
{
    if (req->size > ST_PRODUCE_MAX_SIZE) {
        snprintf(msg, msglen, "size %" PRIu32 " is above the limit of %u bytes per chunk; ask for smaller chunks",
                 req->size, ST_PRODUCE_MAX_SIZE);
        return GRPC_STATUS_INVALID_ARGUMENT;
    }
    if (req->count > ST_PRODUCE_MAX_COUNT) {
        snprintf(msg, msglen, "count %" PRIu32 " is above the limit of %u chunks per call", req->count,
                 ST_PRODUCE_MAX_COUNT);
        return GRPC_STATUS_INVALID_ARGUMENT;
    }
    uint64_t total = (uint64_t)req->count * req->size;
    if (total > ST_PRODUCE_MAX_TOTAL) {
        snprintf(msg, msglen,
                 "count %" PRIu32 " x size %" PRIu32 " = %" PRIu64 " bytes is above the limit of %" PRIu64
                 " bytes per call; split it into several calls",
                 req->count, req->size, total, ST_PRODUCE_MAX_TOTAL);
        return GRPC_STATUS_RESOURCE_EXHAUSTED;
    }
    return GRPC_STATUS_OK;
}

grpc_byte_buffer *st_produce_chunk(uint64_t seq, uint32_t size)
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

void st_produce_stats_get(st_produce_stats *out)
{
    out->calls = atomic_load(&stat_calls);
    out->active = atomic_load(&stat_active);
    out->sent = atomic_load(&stat_sent);
    int64_t q = atomic_load(&stat_queued);
    out->queued_bytes = q > 0 ? (uint64_t)q : 0;
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

static void on_free(rl_unary *u)
{
    produce_call *c = RL_CONTAINER_OF(u, produce_call, u);
    /* Only armed if the call ended without on_cancel; a timer must never
     * outlive the memory it is embedded in. */
    rl_timer_stop(u->loop, &c->retry);
    st_chunkq_free(c->queue);
    /* close_cancelled rather than u->cancelled: a client that gave up after
     * the status was posted still counts as a cancelled call here. */
    bool cancelled = u->close_cancelled != 0;
    int64_t ms = (rl_now_ns() - c->start_ns) / RL_NS_PER_MS;
    if (c->cfg->log_calls) {
        rl_memstats m;
        rl_memstats_read(&m);
        RL_INFO("call tag=%s count=%" PRIu32 " size=%" PRIu32 " sent=%" PRIu64 " status=%s ms=%lld"
                " allocated=%lld resident=%lld rss=%lld",
                c->tag, c->count, c->size, c->seq, cancelled ? "CANCELLED" : status_name(u->status), (long long)ms,
                (long long)m.allocated, (long long)m.resident, (long long)m.rss);
    } else {
        RL_DEBUG("call tag=%s sent=%" PRIu64 "/%" PRIu32 " cancelled=%d ms=%lld", c->tag, c->seq, c->count,
                 (int)cancelled, (long long)ms);
    }
    free(c);
    atomic_fetch_sub(&stat_active, 1);
}

/* Ends production: joins the unbounded mode's thread and frees every chunk
 * it queued, now rather than when the call's last batch completes. */
static void stop_production(produce_call *c)
{
    rl_timer_stop(c->u.loop, &c->retry);
    st_chunkq_free(c->queue);
    c->queue = NULL;
}

static void send_next(produce_call *c);

static void retry_fire(rl_timer *t)
{
    produce_call *c = RL_CONTAINER_OF(t, produce_call, retry);
    if (!c->u.answered)
        send_next(c);
}

/* Sends chunk c->seq: the only place a chunk is made (paced mode) or taken
 * off the queue (unbounded mode). Called once the previous send completed,
 * so the call holds at most one chunk of its own. */
static void send_next(produce_call *c)
{
    grpc_byte_buffer *chunk;
    if (c->cfg->unbounded) {
        chunk = st_chunkq_pop(c->queue);
        if (!chunk) {
            rl_timer_start(c->u.loop, &c->retry, rl_now_ns() + QUEUE_POLL_NS, retry_fire);
            return;
        }
    } else {
        chunk = st_produce_chunk(c->seq, c->size);
    }
    /* Only a programming error fails here; rl_unary then cancels the call,
     * which ends through on_cancel like a client's cancel. */
    if (rl_unary_send_buffer(&c->u, chunk) != RL_OK)
        RL_ERROR("cannot send chunk %" PRIu64 " of call %s", c->seq, c->tag);
}

static void on_sent(rl_unary *u, bool ok)
{
    produce_call *c = RL_CONTAINER_OF(u, produce_call, u);
    if (ok) {
        c->seq++;
        atomic_fetch_add(&stat_sent, 1);
    }
    if (!ok || u->answered) {
        /* The client left (rl_unary answered CANCELLED after on_cancel),
         * or the send failed and the cancel is on its way. */
        stop_production(c);
    } else if (c->seq == c->count) {
        rl_unary_finish(u, GRPC_STATUS_OK, NULL);
    } else {
        send_next(c);
    }
}

static void on_request(rl_unary *u, ProtobufCMessage *msg)
{
    produce_call *c = RL_CONTAINER_OF(u, produce_call, u);
    Relaylab__ProduceRequest *req = (Relaylab__ProduceRequest *)msg;
    char why[256];
    snprintf(c->tag, sizeof c->tag, "%s", req->tag[0] ? req->tag : "-");
    grpc_status_code code = st_produce_check(req, why, sizeof why);
    c->count = req->count;
    c->size = req->size;
    protobuf_c_message_free_unpacked(msg, NULL);
    if (code != GRPC_STATUS_OK) {
        rl_unary_fail(u, code, why);
    } else if (c->count == 0) {
        rl_unary_finish(u, GRPC_STATUS_OK, NULL);
    } else {
        if (c->cfg->unbounded)
            c->queue = st_chunkq_start(c->count, c->size, st_produce_chunk, &stat_queued);
        send_next(c);
    }
}

/* A send in flight completes by itself (on_sent, usually with ok false); a
 * queue wait has nothing in flight, and the queued chunks have no reader. */
static void on_cancel(rl_unary *u)
{
    stop_production(RL_CONTAINER_OF(u, produce_call, u));
}

static const rl_unary_ops produce_ops = {on_request, on_cancel, on_free, on_sent};

void st_produce_start(rl_loop *loop, grpc_call *call, const rl_call_info *info, void *user)
{
    (void)info;
    produce_call *c = rl_xcalloc(1, sizeof *c);
    c->cfg = user;
    c->start_ns = rl_now_ns();
    snprintf(c->tag, sizeof c->tag, "-");
    atomic_fetch_add(&stat_calls, 1);
    atomic_fetch_add(&stat_active, 1);
    rl_unary_start(&c->u, loop, call, &relaylab__produce_request__descriptor, PRODUCE_MAX_REQUEST, &produce_ops);
}
