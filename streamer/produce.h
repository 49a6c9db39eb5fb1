/* produce: the server side of one Streamer.Produce call, as a state machine.
 *
 * The reference producer makes chunk seq+1 only when the send of chunk seq
 * has completed, that is when HTTP/2 flow control accepted its bytes. A
 * reader that stops reading therefore stops the producer after one window's
 * worth of chunks (4-8 MiB once the client's BDP probing grew the window),
 * and the call holds at most one prepared chunk. RECV_CLOSE_ON_SERVER stays
 * posted for the whole call (the call is an rl_unary), so a cancel stops
 * production at once.
 *
 * With |unbounded| set, chunks come instead from a thread that builds all of
 * them as fast as it can into an unbounded queue (chunkq.h): the classic
 * mistake the flow-control lab grades against. produce uses chunkq, never
 * the other way round: the queue gets the chunk builder and the counter of
 * queued bytes from st_chunkq_start. */
#ifndef STREAMER_PRODUCE_H
#define STREAMER_PRODUCE_H

#include "relaylab.pb-c.h"
#include "rl_server.h"

#include <grpc/grpc.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Limits on one request. A Chunk of the largest size, with its field headers
 * (at most 16 bytes), still fits a default client's 4 MiB receive limit; the
 * count and total bound one call's work (16 GiB is minutes of loopback
 * streaming), so a typo cannot make the server stream for hours. */
#define ST_PRODUCE_MAX_SIZE  (4u * 1024 * 1024 - 64)
#define ST_PRODUCE_MAX_COUNT 1000000u
#define ST_PRODUCE_MAX_TOTAL (UINT64_C(16) << 30)

typedef struct st_produce_config {
    bool unbounded; /* the mistake: a producer thread and an unbounded queue */
    bool log_calls; /* one INFO line per call end, with memory figures */
} st_produce_config;

/* Counters over every call, updated atomically; for --stats. */
typedef struct st_produce_stats {
    uint64_t calls;        /* calls accepted */
    uint64_t active;       /* calls not yet freed */
    uint64_t sent;         /* chunks whose send completed */
    uint64_t queued_bytes; /* bytes built but not yet sent (unbounded mode) */
} st_produce_stats;

/* Decides whether |req| is acceptable. Returns GRPC_STATUS_OK, or
 * INVALID_ARGUMENT (size or count above its limit) or RESOURCE_EXHAUSTED
 * (count * size above the total) with a message saying what to change in
 * |msg|. */
grpc_status_code st_produce_check(const Relaylab__ProduceRequest *req, char *msg, size_t msglen);

/* Builds chunk |seq| of |size| payload bytes as a byte buffer the caller owns
 * (grpc_byte_buffer_destroy after its send completes). Thread-safe. */
grpc_byte_buffer *st_produce_chunk(uint64_t seq, uint32_t size);

/* The rl_method_start handler for /relaylab.Streamer/Produce; |user| is a
 * const st_produce_config * that must outlive the server. */
void st_produce_start(rl_loop *loop, grpc_call *call, const rl_call_info *info, void *user);

/* A snapshot of the counters. */
void st_produce_stats_get(st_produce_stats *out);

#endif
