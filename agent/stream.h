/* stream: one Tunnel.Open stream of the agent, as a state machine on an
 * rl_loop.
 *
 * The stream owns its grpc_call and posts one batch per concern, each with
 * its own embedded tag: the start (send and receive initial metadata), the
 * status, the receive loop (one RECV_MESSAGE at a time, posted again after
 * each message), an answer's send and the half-close. The server's first
 * message names it; each later message is a call, worked for its work_ms on
 * a timer and answered on the stream (the server hands a stream one call at
 * a time; more are worked in turn). The owner learns of the naming, of each
 * answer and of the end through callbacks, and frees the stream once it
 * ended: every batch is back and no timer is armed.
 *
 * Threads: everything runs on the loop's thread (docs/DESIGN.md, "Threads"). */
#ifndef AG_STREAM_H
#define AG_STREAM_H

#include "rl_life.h"
#include "rl_loop.h"

#include <grpc/grpc.h>
#include <stdbool.h>
#include <stdint.h>

#define AG_SERVER_ID_MAX 64 /* longer server ids are cut (and logged as such) */

typedef struct ag_stream ag_stream;

/* The owner's callbacks; |user| is the one given to ag_stream_start. */
typedef struct ag_stream_events {
    void (*named)(ag_stream *s, void *user);    /* s->server_id is set; at most once */
    void (*answered)(ag_stream *s, void *user); /* an answer's send completed */
    void (*ended)(ag_stream *s, void *user);    /* over: call ag_stream_free now or later */
} ag_stream_events;

typedef struct ag_call {
    uint64_t call_id;
    uint32_t work_ms;
} ag_call;

struct ag_stream {
    rl_loop *loop;
    const ag_stream_events *ev;
    void *user;
    grpc_call *call; /* owned; unref'd by ag_stream_free */
    uint64_t id;     /* the owner's number for it, for logs */
    int server;      /* the owner's index of its server; -1 until named */
    char server_id[AG_SERVER_ID_MAX + 1];
    bool named;
    int64_t opened_ns, last_answer_ns; /* last_answer_ns == opened_ns until an answer */
    uint32_t served;                   /* answers sent */
    /* The calls handed to it and not answered yet, oldest first; the
     * oldest is being worked (its timer armed) or answered. */
    ag_call *calls;
    size_t ncalls, capcalls;
    bool sending;      /* the oldest call's answer is being sent */
    bool one_call;     /* the owner's: half-close with the first answer (stream-per-call) */
    bool close_wanted; /* half-close once no call is unanswered */
    bool half_closed;  /* SEND_CLOSE_FROM_CLIENT posted */
    bool receiving;    /* a RECV_MESSAGE is posted */
    bool status_in;    /* the status arrived: nothing more comes from the server */
    bool over;         /* |ended| ran (or the start failed before anything was posted) */
    uint64_t lost;     /* calls that arrived after the half-close: no answer possible */
    rl_life life;      /* held by each batch out and the armed work timer;
                        * closed when the status arrived; |ended| at release */
    rl_tag start_tag, status_tag, recv_tag, send_tag, close_tag;
    rl_timer work;
    grpc_byte_buffer *recv_buf, *send_buf;
    grpc_metadata_array initial_md, trailing_md;
    grpc_status_code status;
    grpc_slice details;
    ag_stream *prev, *next; /* the owner's list */
};

/* Opens the stream on |channel| with its call on |loop|'s queue (caller
 * memory |s|, zeroed or not). Returns 0, or RL_EGRPC when gRPC refused a
 * batch: the call is cancelled, and |ended| runs once what was posted came
 * back, unless nothing was (then ag_stream_over is already true and
 * |ended| never runs: free it at once). */
int ag_stream_start(ag_stream *s, grpc_channel *channel, rl_loop *loop, uint64_t id, const ag_stream_events *ev,
                    void *user);

/* Whether a call is unanswered on it. */
static inline bool ag_stream_busy(const ag_stream *s)
{
    return s->ncalls > 0;
}

/* Half-closes the stream now when no call is unanswered, else once the last
 * is answered; the server then ends it. Idempotent. */
void ag_stream_close(ag_stream *s);

/* Whether |ended| ran (nothing posted, no timer): ag_stream_free may go. */
bool ag_stream_over(const ag_stream *s);

/* Releases what the stream owns; only once it is over. The struct's memory
 * stays the caller's. */
void ag_stream_free(ag_stream *s);

#endif
