/* streamer.c: your producer for the relaylab `flow` exercise (`lab show
 * flow`), on the gRPC C core and protobuf-c. The server is set up for you:
 * it listens on $RELAYLAB_LISTEN and stops cleanly on SIGTERM, and
 * send_chunk() makes a chunk's bytes and sends it. The lesson is yours: the
 * block between the TODO markers. `make` builds ./streamer (`lab check` runs
 * make first); `./run` starts it.
 *
 * How it works: one thread, one completion queue. Every operation batch
 * posted on the queue carries a `tag`, a struct holding the function to
 * call when the batch completes; main() takes each completion off the queue
 * and calls tag->done(tag, ok). One struct per Produce call (scall) holds
 * everything of that call, with one tag per kind of batch, and is freed when
 * the call has ended and none of its batches is still pending. */
#include "relaylab.pb-c.h"

#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/time.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct tag tag;
struct tag {
    void (*done)(tag *t, bool ok);
};

/* The struct that holds the tag |ptr| points at (|member| names the tag). */
#define CONTAINER_OF(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

/* One Produce call. */
typedef struct scall {
    tag on_arrival;   /* a Produce call arrived (or the server is shutting down) */
    tag on_closed;    /* the call ended: finished, cancelled, or past its deadline */
    tag on_sent;      /* the chunk send_chunk() sent has gone */
    tag on_finished;  /* our status was sent */
    int pending;      /* batches posted and not yet completed */
    bool closed;      /* on_closed ran */
    int cancelled;    /* 1 once the client went away or its deadline passed */

    grpc_call *call;
    gpr_timespec deadline;
    grpc_metadata_array request_md;
    grpc_byte_buffer *request_buf;
    Relaylab__ProduceRequest *request; /* the decoded request: tag, count, size */

    uint64_t next_seq;          /* yours: e.g. the next chunk to send */
    bool metadata_sent;         /* the first batch carries the initial metadata */
    bool sending;               /* a chunk is on its way (on_sent pending) */
    bool finished;              /* finish() was called */
    grpc_byte_buffer *send_buf; /* the chunk being sent */
    grpc_slice status_details;
} scall;

static grpc_server *server;
static grpc_completion_queue *cq;
static void *produce_method; /* the registered /relaylab.Streamer/Produce */
static int live_calls;       /* scalls not yet freed */
static volatile sig_atomic_t sigterm;

/* ---- what your code calls ------------------------------------------------ */

/* Marks the helpers below that only your code calls: until it does, they
 * are unused, which -Wall -Werror would otherwise stop the build for. */
#define HELPER __attribute__((unused)) static

/* Sends chunk |seq| of |size| payload bytes, payload[i] = (seq * 31 + i) mod
 * 251 as the handout defines them. chunk_sent(sc, ok) runs once it has gone
 * (gRPC took it within the stream's flow-control window), with ok false when
 * the call ended first. One chunk at a time: returns 0, or -1 when a chunk
 * is still on its way or the call was finished. */
HELPER int send_chunk(scall *sc, uint64_t seq, uint32_t size)
{
    if (sc->sending || sc->finished)
        return -1;
    uint8_t *bytes = malloc(size ? size : 1);
    if (!bytes)
        abort();
    for (uint32_t i = 0; i < size; i++)
        bytes[i] = (uint8_t)((seq * 31 + i) % 251);
    Relaylab__Chunk chunk = RELAYLAB__CHUNK__INIT;
    chunk.seq = seq;
    chunk.payload.data = bytes;
    chunk.payload.len = size;
    size_t len = protobuf_c_message_get_packed_size(&chunk.base);
    grpc_slice s = grpc_slice_malloc(len);
    protobuf_c_message_pack(&chunk.base, GRPC_SLICE_START_PTR(s));
    free(bytes);
    grpc_byte_buffer_destroy(sc->send_buf);
    sc->send_buf = grpc_raw_byte_buffer_create(&s, 1);
    grpc_slice_unref(s);

    grpc_op ops[2];
    memset(ops, 0, sizeof ops);
    size_t n = 0;
    if (!sc->metadata_sent) {
        ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
        sc->metadata_sent = true;
    }
    ops[n].op = GRPC_OP_SEND_MESSAGE;
    ops[n++].data.send_message.send_message = sc->send_buf;
    sc->sending = true;
    sc->pending++;
    if (grpc_call_start_batch(sc->call, ops, n, &sc->on_sent, NULL) != GRPC_CALL_OK) {
        fprintf(stderr, "streamer: gRPC refused a send\n");
        abort();
    }
    return 0;
}

/* Ends the stream with |status| and |details| (after the chunks sent).
 * Only the first call counts. */
static void finish(scall *sc, grpc_status_code status, const char *details)
{
    if (sc->finished)
        return;
    sc->finished = true;
    sc->status_details = grpc_slice_from_copied_string(details ? details : "");
    grpc_op ops[2];
    memset(ops, 0, sizeof ops);
    size_t n = 0;
    if (!sc->metadata_sent) {
        ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
        sc->metadata_sent = true;
    }
    ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
    ops[n].data.send_status_from_server.status = status;
    ops[n++].data.send_status_from_server.status_details = &sc->status_details;
    sc->pending++;
    if (grpc_call_start_batch(sc->call, ops, n, &sc->on_finished, NULL) != GRPC_CALL_OK)
        sc->pending--; /* the call is already over */
}

/* What the server calls: your code, below. */
static void produce(scall *sc);
static void chunk_sent(scall *sc, bool ok);

/* >>> TODO(flow): send the chunks as flow control lets them go.
 * produce() runs when a Produce call arrives: sc->request holds count and
 * size. Send sc->request->count chunks, seq = 0 .. count-1, in order, with
 * send_chunk(sc, seq, size), then finish(sc, GRPC_STATUS_OK, "").
 * send_chunk() sends one chunk at a time: chunk_sent(sc, ok) runs when it
 *   has gone, and that is when the next one may be made (sc->next_seq is
 *   yours to count with). A stalled reader holds that moment back, which is
 *   the point: nothing piles up in memory.
 * Stop when the client cancels (ok is false, or sc->cancelled is 1).
 * Refuse what you cannot serve: size above 4 MiB - 64 or count above
 *   1,000,000 with GRPC_STATUS_INVALID_ARGUMENT, as the reference does. */
static void produce(scall *sc)
{
    finish(sc, GRPC_STATUS_UNIMPLEMENTED, "TODO in streamer.c: produce() sends no chunks yet (see its TODO block)");
}

static void chunk_sent(scall *sc, bool ok)
{
    (void)sc, (void)ok;
}
/* <<< TODO */

/* ---- the server ---------------------------------------------------------- */

static ProtobufCMessage *unpack(grpc_byte_buffer *bb, const ProtobufCMessageDescriptor *desc)
{
    grpc_byte_buffer_reader r;
    if (!bb || !grpc_byte_buffer_reader_init(&r, bb))
        return NULL;
    grpc_slice all = grpc_byte_buffer_reader_readall(&r);
    grpc_byte_buffer_reader_destroy(&r);
    ProtobufCMessage *m = protobuf_c_message_unpack(desc, NULL, GRPC_SLICE_LENGTH(all), GRPC_SLICE_START_PTR(all));
    grpc_slice_unref(all);
    return m;
}

/* Frees |sc| once its call has ended and no batch of it is pending: then no
 * completion can refer to it any more. */
static void free_if_finished(scall *sc)
{
    if (sc->pending > 0 || !sc->closed)
        return;
    if (sc->call)
        grpc_call_unref(sc->call);
    grpc_metadata_array_destroy(&sc->request_md);
    grpc_byte_buffer_destroy(sc->request_buf);
    if (sc->request)
        protobuf_c_message_free_unpacked(&sc->request->base, NULL);
    grpc_byte_buffer_destroy(sc->send_buf);
    grpc_slice_unref(sc->status_details);
    free(sc);
    live_calls--;
}

static void on_sent(tag *t, bool ok)
{
    scall *sc = CONTAINER_OF(t, scall, on_sent);
    sc->pending--;
    sc->sending = false;
    chunk_sent(sc, ok);
    free_if_finished(sc);
}

static void on_finished(tag *t, bool ok)
{
    (void)ok; /* false when the call was already over */
    scall *sc = CONTAINER_OF(t, scall, on_finished);
    sc->pending--;
    free_if_finished(sc);
}

static void on_closed(tag *t, bool ok)
{
    (void)ok;
    scall *sc = CONTAINER_OF(t, scall, on_closed);
    sc->pending--;
    sc->closed = true;
    free_if_finished(sc);
}

static void wait_for_call(void);

static void on_arrival(tag *t, bool ok)
{
    scall *sc = CONTAINER_OF(t, scall, on_arrival);
    sc->pending--;
    if (!ok) { /* the server is shutting down: no call came */
        sc->closed = true;
        free_if_finished(sc);
        return;
    }
    wait_for_call(); /* be ready for the next one */
    grpc_op op;
    memset(&op, 0, sizeof op);
    op.op = GRPC_OP_RECV_CLOSE_ON_SERVER;
    op.data.recv_close_on_server.cancelled = &sc->cancelled;
    sc->pending++;
    if (grpc_call_start_batch(sc->call, &op, 1, &sc->on_closed, NULL) != GRPC_CALL_OK) {
        fprintf(stderr, "streamer: gRPC refused a server batch\n");
        abort();
    }
    sc->request = (Relaylab__ProduceRequest *)unpack(sc->request_buf, &relaylab__produce_request__descriptor);
    if (!sc->request)
        finish(sc, GRPC_STATUS_INVALID_ARGUMENT, "not a ProduceRequest");
    else
        produce(sc);
}

/* Asks gRPC for the next Produce call, in a new scall. */
static void wait_for_call(void)
{
    scall *sc = calloc(1, sizeof *sc);
    if (!sc)
        abort();
    live_calls++;
    sc->on_arrival.done = on_arrival;
    sc->on_closed.done = on_closed;
    sc->on_sent.done = on_sent;
    sc->on_finished.done = on_finished;
    sc->status_details = grpc_empty_slice();
    grpc_metadata_array_init(&sc->request_md);
    sc->pending++;
    grpc_server_request_registered_call(server, produce_method, &sc->call, &sc->deadline, &sc->request_md,
                                        &sc->request_buf, cq, cq, &sc->on_arrival);
}

static void on_sigterm(int sig)
{
    (void)sig;
    sigterm = 1;
}

static gpr_timespec in_ms(int ms)
{
    return gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(ms, GPR_TIMESPAN));
}

int main(void)
{
    const char *listen = getenv("RELAYLAB_LISTEN");
    if (!listen || !*listen)
        listen = "127.0.0.1:0";
    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigterm;
    sigaction(SIGTERM, &sa, NULL);

    grpc_init();
    cq = grpc_completion_queue_create_for_next(NULL);
    server = grpc_server_create(NULL, NULL);
    produce_method = grpc_server_register_method(server, "/relaylab.Streamer/Produce", NULL,
                                                 GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER, 0);
    grpc_server_register_completion_queue(server, cq, NULL);
    grpc_server_credentials *screds = grpc_insecure_server_credentials_create();
    int port = grpc_server_add_http2_port(server, listen, screds);
    grpc_server_credentials_release(screds);
    if (port <= 0) {
        fprintf(stderr, "streamer: cannot listen on %s\n", listen);
        return 1;
    }
    grpc_server_start(server);
    wait_for_call();
    const char *colon = strrchr(listen, ':');
    printf("streamer listening on %.*s:%d\n", colon ? (int)(colon - listen) : 0, listen, port);
    fflush(stdout);

    /* The loop. SIGTERM (the grader's stop): take no new calls, give the
     * running ones 1 s, then cancel what is left and exit 0. */
    tag shutdown_done = {NULL};
    bool stopping = false, shut = false, cut = false;
    gpr_timespec give_up = gpr_inf_future(GPR_CLOCK_MONOTONIC);
    while (!shut || live_calls > 0) {
        if (sigterm && !stopping) {
            stopping = true;
            grpc_server_shutdown_and_notify(server, cq, &shutdown_done);
            give_up = in_ms(1000);
        }
        /* Cancelling also closes idle connections, which shutdown would
         * otherwise wait for. */
        if (stopping && !cut && (live_calls == 0 || gpr_time_cmp(gpr_now(GPR_CLOCK_MONOTONIC), give_up) >= 0)) {
            grpc_server_cancel_all_calls(server);
            cut = true;
        }
        grpc_event ev = grpc_completion_queue_next(cq, in_ms(50), NULL);
        if (ev.type != GRPC_OP_COMPLETE)
            continue;
        if (ev.tag == &shutdown_done)
            shut = true;
        else
            ((tag *)ev.tag)->done(ev.tag, ev.success);
    }
    grpc_server_destroy(server);
    grpc_completion_queue_shutdown(cq);
    while (grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL).type != GRPC_QUEUE_SHUTDOWN)
        ;
    grpc_completion_queue_destroy(cq);
    grpc_shutdown();
    return 0;
}
