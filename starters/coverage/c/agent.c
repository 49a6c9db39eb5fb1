/* agent.c: your tunnel agent for the relaylab `coverage` exercise (`lab show
 * coverage`), on the gRPC C core and protobuf-c. The streams are handled
 * for you: the agent dials $RELAYLAB_TUNNEL (the L7 proxy), opens
 * Tunnel.Open streams, learns each stream's server from its first message,
 * works each call it is handed for its work_ms and answers it on the same
 * stream, half-closes a stream when asked to (once its call in hand is
 * answered), and at SIGTERM closes them all and exits 0. Once a tick it
 * groups its open streams by server and calls tick(). The lesson is yours,
 * the block between the TODO markers: the sizing tick, by the handout's
 * table. `make` builds ./agent (`lab check` runs make first); `./run`
 * starts it.
 *
 * How it works: one thread, one completion queue. Every batch posted on the
 * queue carries a `tag`, a struct holding the function to call when the
 * batch completes; main() takes each completion off the queue and calls
 * tag->done(tag, ok). One struct per stream holds its grpc_call and one tag
 * per kind of batch (start, status, receive, send, half-close), and is freed
 * once its status arrived and none of its batches is pending. A call's work
 * is a due time the loop checks; the loop never sleeps past the earliest. */
#include "relaylab.pb-c.h"

#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/time.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The rules' constants at the lab's scale (the handout's table; ms). */
#define TICK_MS 250
#define RESERVE 2
#define GROW_MIN 8
#define PAUSE_FACTOR 4
#define FILL_PER_TICK 4
#define CAP_PER_SERVER 1200
#define CAP_TOTAL 4000
#define OVERDUE_MS 3000
#define EVACUATE_EVERY_MS 3000
#define EVACUATED_MS 6000
#define PRUNE_AGE_MS 2000
#define PRUNE_UNUSED_MS 6000
#define STOP_MS 1500 /* after SIGTERM, the calls in hand may finish this long */

typedef struct tag tag;
struct tag {
    void (*done)(tag *t, bool ok);
};

#define CONTAINER_OF(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

/* One Tunnel.Open stream. Read: server (its index in servers, -1 until
 * named), busy (a call in hand), opened_ms and last_used_ms (now_ms(): when it opened, when it last
 * answered a call). stream_close() half-closes it. */
typedef struct stream {
    tag on_start, on_status, on_recv, on_send, on_close;
    int pending; /* batches posted and not completed */
    grpc_call *call;
    int server;
    bool busy, closing, half_closed, status_in;
    uint64_t call_id;   /* the call in hand */
    double work_due_ms; /* when its work is done */
    double opened_ms, last_used_ms;
    grpc_byte_buffer *recv_buf, *send_buf;
    grpc_metadata_array initial_md, trailing_md;
    grpc_status_code status;
    grpc_slice details;
    struct stream *prev, *next;
} stream;

/* What the agent holds on one server: streams/nstreams (its open, named
 * streams this tick, closing ones left out), and what your tick keeps from
 * one tick to the next (add fields as you like). */
typedef struct server {
    char name[65];
    stream **streams;
    int nstreams, cap;
    int grow_last;            /* streams opened for it by growing the tick before */
    double short_idle_since;  /* when it became short and idle; < 0: not */
    double evacuated_until;
    bool is_short;            /* for your tick */
} server;

static grpc_completion_queue *cq;
static grpc_channel *channel;
static stream *streams;   /* every stream from its start to its end */
static int nstreams;
static server *servers;   /* every server a stream ever landed on */
static int nservers;
static int pending;       /* streams opened and not named yet (this tick) */
static double last_evacuation __attribute__((unused)) = -1e18; /* for your tick */
static bool stopping;

static double now_ms(void)
{
    gpr_timespec t = gpr_now(GPR_CLOCK_MONOTONIC);
    return (double)t.tv_sec * 1000.0 + t.tv_nsec / 1e6;
}

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n);
    if (!q) {
        fprintf(stderr, "agent: out of memory\n");
        abort();
    }
    return q;
}

__attribute__((unused)) static int busy_of(const server *sv)
{
    int n = 0;
    for (int i = 0; i < sv->nstreams; i++)
        n += sv->streams[i]->busy;
    return n;
}

static bool post(stream *s, const grpc_op *ops, size_t n, tag *t)
{
    if (grpc_call_start_batch(s->call, ops, n, t, NULL) != GRPC_CALL_OK) {
        grpc_call_cancel(s->call, NULL);
        return false;
    }
    s->pending++;
    return true;
}

static void maybe_free(stream *s)
{
    if (!s->status_in || s->pending > 0)
        return;
    if (s->prev)
        s->prev->next = s->next;
    else
        streams = s->next;
    if (s->next)
        s->next->prev = s->prev;
    nstreams--;
    grpc_call_unref(s->call);
    grpc_metadata_array_destroy(&s->initial_md);
    grpc_metadata_array_destroy(&s->trailing_md);
    grpc_slice_unref(s->details);
    if (s->recv_buf)
        grpc_byte_buffer_destroy(s->recv_buf);
    if (s->send_buf)
        grpc_byte_buffer_destroy(s->send_buf);
    free(s);
}

static void half_close(stream *s)
{
    if (s->half_closed || s->status_in || s->busy || s->send_buf)
        return;
    grpc_op op = {0};
    op.op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    s->half_closed = true;
    post(s, &op, 1, &s->on_close);
}

/* Half-closes |s| now, or once its call in hand is answered. */
static void stream_close(stream *s)
{
    s->closing = true;
    half_close(s);
}

static void post_recv(stream *s)
{
    grpc_op op = {0};
    op.op = GRPC_OP_RECV_MESSAGE;
    op.data.recv_message.recv_message = &s->recv_buf;
    post(s, &op, 1, &s->on_recv);
}

static int find_server(const char *name)
{
    for (int i = 0; i < nservers; i++)
        if (strcmp(servers[i].name, name) == 0)
            return i;
    servers = xrealloc(servers, (size_t)(nservers + 1) * sizeof *servers);
    server *sv = &servers[nservers];
    memset(sv, 0, sizeof *sv);
    snprintf(sv->name, sizeof sv->name, "%s", name);
    sv->short_idle_since = -1;
    return nservers++;
}

static void on_recv(tag *t, bool ok)
{
    stream *s = CONTAINER_OF(t, stream, on_recv);
    s->pending--;
    if (ok && s->recv_buf) {
        grpc_byte_buffer_reader r;
        grpc_byte_buffer_reader_init(&r, s->recv_buf);
        grpc_slice sl = grpc_byte_buffer_reader_readall(&r);
        grpc_byte_buffer_reader_destroy(&r);
        grpc_byte_buffer_destroy(s->recv_buf);
        s->recv_buf = NULL;
        Relaylab__TunnelCall *m =
            relaylab__tunnel_call__unpack(NULL, GRPC_SLICE_LENGTH(sl), GRPC_SLICE_START_PTR(sl));
        grpc_slice_unref(sl);
        if (!m) {
            grpc_call_cancel(s->call, NULL);
        } else if (s->server < 0) {
            s->server = find_server(m->server_id ? m->server_id : ""); /* the first message names it */
        } else if (!s->half_closed && m->call_id) {
            s->busy = true;
            s->call_id = m->call_id;
            s->work_due_ms = now_ms() + m->work_ms;
        }
        if (m)
            relaylab__tunnel_call__free_unpacked(m, NULL);
        if (!s->status_in)
            post_recv(s);
    }
    maybe_free(s);
}

/* The call in hand's work is done: its answer goes out. */
static void answer(stream *s)
{
    Relaylab__TunnelAnswer a = RELAYLAB__TUNNEL_ANSWER__INIT;
    a.call_id = s->call_id;
    size_t len = relaylab__tunnel_answer__get_packed_size(&a);
    grpc_slice sl = grpc_slice_malloc(len);
    relaylab__tunnel_answer__pack(&a, GRPC_SLICE_START_PTR(sl));
    s->send_buf = grpc_raw_byte_buffer_create(&sl, 1);
    grpc_slice_unref(sl);
    grpc_op op = {0};
    op.op = GRPC_OP_SEND_MESSAGE;
    op.data.send_message.send_message = s->send_buf;
    post(s, &op, 1, &s->on_send);
}

static void on_send(tag *t, bool ok)
{
    stream *s = CONTAINER_OF(t, stream, on_send);
    s->pending--;
    grpc_byte_buffer_destroy(s->send_buf);
    s->send_buf = NULL;
    s->busy = false;
    s->last_used_ms = now_ms();
    if (ok && s->closing)
        half_close(s);
    maybe_free(s);
}

static void on_status(tag *t, bool ok)
{
    (void)ok;
    stream *s = CONTAINER_OF(t, stream, on_status);
    s->pending--;
    s->status_in = true;
    s->busy = false;
    maybe_free(s);
}

static void on_simple(stream *s)
{
    s->pending--;
    maybe_free(s);
}

static void on_start(tag *t, bool ok)
{
    (void)ok;
    on_simple(CONTAINER_OF(t, stream, on_start));
}

static void on_close(tag *t, bool ok)
{
    (void)ok;
    on_simple(CONTAINER_OF(t, stream, on_close));
}

/* Opens |n| new streams (at most CAP_TOTAL in all): the proxy places them,
 * and the next tick sees where they landed. */
static void open_streams(int n)
{
    for (int i = 0; i < n && nstreams < CAP_TOTAL && !stopping; i++) {
        stream *s = calloc(1, sizeof *s);
        if (!s)
            abort();
        s->on_start.done = on_start;
        s->on_status.done = on_status;
        s->on_recv.done = on_recv;
        s->on_send.done = on_send;
        s->on_close.done = on_close;
        s->opened_ms = s->last_used_ms = now_ms();
        s->server = -1;
        s->details = grpc_empty_slice();
        grpc_metadata_array_init(&s->initial_md);
        grpc_metadata_array_init(&s->trailing_md);
        s->call = grpc_channel_create_call(channel, NULL, GRPC_PROPAGATE_DEFAULTS, cq,
                                           grpc_slice_from_static_string("/relaylab.Tunnel/Open"), NULL,
                                           gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
        s->next = streams;
        if (streams)
            streams->prev = s;
        streams = s;
        nstreams++;
        grpc_op status = {0};
        status.op = GRPC_OP_RECV_STATUS_ON_CLIENT;
        status.data.recv_status_on_client.trailing_metadata = &s->trailing_md;
        status.data.recv_status_on_client.status = &s->status;
        status.data.recv_status_on_client.status_details = &s->details;
        grpc_op start[2] = {{0}, {0}};
        start[0].op = GRPC_OP_SEND_INITIAL_METADATA;
        start[0].flags = GRPC_INITIAL_METADATA_WAIT_FOR_READY; /* the tunnel may still be coming up */
        start[1].op = GRPC_OP_RECV_INITIAL_METADATA;
        start[1].data.recv_initial_metadata.recv_initial_metadata = &s->initial_md;
        if (post(s, &status, 1, &s->on_status) && post(s, start, 2, &s->on_start))
            post_recv(s);
    }
}

static void group(void)
{
    pending = 0;
    for (int i = 0; i < nservers; i++)
        servers[i].nstreams = 0;
    for (stream *s = streams; s; s = s->next) {
        if (s->closing || s->status_in)
            continue;
        if (s->server < 0) {
            pending++;
            continue;
        }
        server *sv = &servers[s->server];
        if (sv->nstreams == sv->cap) {
            sv->cap = sv->cap ? 2 * sv->cap : 16;
            sv->streams = xrealloc(sv->streams, (size_t)sv->cap * sizeof *sv->streams);
        }
        sv->streams[sv->nstreams++] = s;
    }
}

/* >>> TODO(coverage): the sizing tick, per server (the handout's table).
 * Sizes the streams once a tick; |now| is now_ms(). servers[0..nservers)
 * are the servers, each with streams[0..nstreams) and busy_of() (its calls
 * in flight: all the demand you can see); a stream is idle when !busy.
 * Per server: covered (streams >= busy + RESERVE) nothing; growing (short,
 * calls in flight) open max(GROW_MIN, busy, shortfall), twice the last
 * tick's while it stays short, paused while idle streams on the other
 * servers reach PAUSE_FACTOR x its busy, capped; filling (short, idle) open
 * toward the reserve, FILL_PER_TICK at most; overdue (short and idle for
 * OVERDUE_MS) evacuate: stream_close() its idle streams and open as many,
 * only while another server is covered, one per EVACUATE_EVERY_MS;
 * evacuated (EVACUATED_MS after) close idle streams there, no grow or fill.
 * Prune idle streams PRUNE_AGE_MS old and unused PRUNE_UNUSED_MS, the
 * longest unused first, never below busy + RESERVE. open_streams(n) opens
 * n; `pending` streams are on their way: count them toward what you open. */
static void tick(double now)
{
    static bool warned;
    (void)now;
    if (!warned) {
        warned = true;
        fprintf(stderr, "agent: TODO in agent.c: the sizing tick does nothing yet; the agent keeps its first "
                        "streams\n");
    }
}
/* <<< TODO */

static bool take_signal(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    struct timespec zero = {0, 0};
    return sigtimedwait(&set, NULL, &zero) > 0;
}

int main(void)
{
    const char *target = getenv("RELAYLAB_TUNNEL");
    if (!target || !*target) {
        fprintf(stderr, "agent: RELAYLAB_TUNNEL is not set (host:port of the tunnel to dial)\n");
        return 2;
    }
    /* SIGTERM and SIGINT are blocked (before gRPC starts its threads) and
     * looked for by the loop. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    grpc_init();
    cq = grpc_completion_queue_create_for_next(NULL);
    grpc_channel_credentials *creds = grpc_insecure_credentials_create();
    channel = grpc_channel_create(target, creds, NULL);
    grpc_channel_credentials_release(creds);
    open_streams(GROW_MIN); /* it knows no server yet */
    double next_tick = now_ms() + TICK_MS, stop_by = 0;
    for (;;) {
        double now = now_ms(), due = next_tick;
        for (stream *s = streams; s; s = s->next)
            if (s->busy && !s->send_buf && s->work_due_ms < due)
                due = s->work_due_ms;
        if (due > now + 20)
            due = now + 20; /* look for SIGTERM at least this often */
        gpr_timespec until = gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                                          gpr_time_from_micros((int64_t)((due > now ? due - now : 0) * 1000),
                                                               GPR_TIMESPAN));
        grpc_event ev = grpc_completion_queue_next(cq, until, NULL);
        if (ev.type == GRPC_OP_COMPLETE)
            ((tag *)ev.tag)->done(ev.tag, ev.success);
        now = now_ms();
        for (stream *s = streams; s; s = s->next)
            if (s->busy && !s->send_buf && !s->status_in && s->work_due_ms <= now)
                answer(s);
        if (!stopping && take_signal()) {
            stopping = true;
            stop_by = now + STOP_MS;
            for (stream *s = streams; s; s = s->next)
                stream_close(s);
        }
        if (stopping && (nstreams == 0 || now >= stop_by))
            break;
        if (!stopping && now >= next_tick) {
            next_tick += TICK_MS;
            group();
            tick(now);
            if (nstreams == 0)
                open_streams(GROW_MIN);
        }
    }
    /* What is left is cut by the exit. */
    return 0;
}
