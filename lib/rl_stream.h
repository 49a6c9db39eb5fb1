/* rl_stream: the client side of one Streamer.Produce call, read one chunk at
 * a time from a single thread, checking every chunk's number and bytes.
 *
 * The caller decides the pace: rl_stream_next reads one chunk, and between
 * reads rl_stream_idle keeps the call's private completion queue polled (so
 * the transport keeps reading the socket, answering BDP pings and granting
 * window the way a live but busy client does) without asking for a message.
 * That is the "reader stalled" of the flow-control lab: the application does
 * not read, the connection is healthy. Shared by the grader's flow exercise,
 * `lab compare-memory` and bin/bench-streamer.
 *
 * Threads: unlike the loop modules, any thread may use a stream (its queue is
 * private), one thread at a time. */
#ifndef RL_STREAM_H
#define RL_STREAM_H

#include "rl_life.h"
#include "rl_loop.h"

#include <grpc/grpc.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct rl_stream {
    grpc_completion_queue *cq; /* owned; private to this call */
    grpc_call *call;           /* owned; NULL before open and after fini */
    rl_tag start_tag, msg_tag, status_tag;
    grpc_metadata_array initial_md, trailing_md;
    grpc_byte_buffer *send_buf;         /* the request, until fini */
    grpc_byte_buffer *recv_buf;         /* written by the RECV_MESSAGE op */
    grpc_status_code status;            /* valid once status_done */
    grpc_slice details;                 /* status message, valid once status_done */
    uint32_t count, size;               /* what was asked for */
    uint64_t received;                  /* chunks read and found right, in order */
    uint64_t bytes;                     /* their payload bytes */
    rl_life life;                       /* a reference per batch out; fini closes it
                                         * and waits for the release */
    bool msg_posted;                    /* a RECV_MESSAGE is outstanding */
    bool msg_ready;                     /* it completed and was not consumed yet */
    bool msg_ok;                        /* its success flag */
    bool ended;                         /* the server closed the stream (no more chunks) */
    bool status_done;                   /* the status arrived */
    int64_t open_ns, first_ns, last_ns; /* CLOCK_MONOTONIC: open, first chunk, last chunk */
    char error[256];                    /* what was wrong with the data, set with RL_EINVAL */
} rl_stream;

/* Starts Produce(tag, count, size) on |ch| with absolute deadline
 * |deadline_ns| (INT64_MAX: none). |s| is caller memory; finish it with
 * rl_stream_fini even when this fails. Returns 0 or RL_EGRPC. */
int rl_stream_open(rl_stream *s, grpc_channel *ch, const char *tag, uint32_t count, uint32_t size, int64_t deadline_ns);

/* Reads the next chunk, waiting until |until_ns| at most. Returns 0 with
 * *end false when a right chunk arrived (s->received counts it), 0 with *end
 * true when the stream is over (the status then follows: rl_stream_wait_status),
 * RL_ETIMEOUT when nothing came in time (the read stays posted and the next
 * call goes on waiting for it), or RL_EINVAL when the chunk was malformed,
 * out of order or had a wrong byte (s->error says which), or RL_EGRPC when
 * gRPC refused the read (s->error says so). */
int rl_stream_next(rl_stream *s, int64_t until_ns, bool *end);

/* Polls the call's queue until |until_ns| without asking for a message. A
 * read already posted by rl_stream_next may complete meanwhile; the next
 * rl_stream_next consumes it. */
void rl_stream_idle(rl_stream *s, int64_t until_ns);

/* Cancels the call. Returns the CLOCK_MONOTONIC instant of the cancel. */
int64_t rl_stream_cancel(rl_stream *s);

/* Waits until the status arrived or |until_ns| passed: 0 or RL_ETIMEOUT.
 * Chunks still in flight are discarded, not checked. */
int rl_stream_wait_status(rl_stream *s, int64_t until_ns);

/* Copies the status message into |buf| (NUL-terminated, truncated). */
void rl_stream_details(const rl_stream *s, char *buf, size_t len);

/* Cancels a call still running, waits (bounded, 5 s) for its batches, and
 * releases everything. Safe on a zeroed or finished struct. */
void rl_stream_fini(rl_stream *s);

#endif
