/* rl_l7proxy: a generic HTTP/2 proxy on the C core with a placement policy
 * per new stream; see rl_l7proxy.h.
 *
 * Each proxied stream is one struct owning the server call (from
 * grpc_server_request_call, unregistered) and the client call to its
 * backend, with one tag per kind of batch: at most one op of a kind is
 * outstanding per call (docs/grpc-facts.md), so each direction pumps one
 * message at a time: receive on one side, send on the other, then receive
 * again. The backend's status goes back once its messages have all been
 * forwarded. Each batch holds the struct's life, closed once the first
 * batches are posted, so it frees itself when its last batch completed. */
#include "rl_l7proxy.h"

#include "rl_alloc.h"
#include "rl_channel.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_life.h"
#include "rl_log.h"
#include "rl_loop.h"

#include <grpc/grpc_security.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* grpc_server_request_call slots kept posted: how many new streams can be
 * accepted between two turns of the loop. */
#define ACCEPT_SLOTS 32

typedef struct pcall pcall;

typedef struct accept_slot {
    rl_tag tag;
    rl_l7proxy *px;
    grpc_call *call;
    grpc_call_details details;
    grpc_metadata_array md;
} accept_slot;

struct rl_l7proxy {
    int n;
    char addr[64];
    grpc_server *server;
    grpc_channel *backends[RL_L7PROXY_MAX_BACKENDS];
    rl_loop loop;
    pthread_t thread;
    bool thread_started;
    accept_slot slots[ACCEPT_SLOTS];
    rl_life life;  /* held by each accept slot posted and each pcall not yet
                    * freed, closed by the server's shutdown; its release
                    * shuts the queue down. Loop thread */
    bool shutting; /* the shutdown tag completed; loop thread */
    rl_tag shutdown_tag;

    pthread_mutex_t mu; /* guards what follows */
    rl_placement placement;
    int limit; /* 0: none */
    int nopen;
    uint64_t seq;
    rl_l7proxy_stats stats;
    pcall *newest; /* open streams, newest first */
};

struct pcall {
    rl_l7proxy *px;
    int backend;
    grpc_call *sc, *cc;
    grpc_call_details details;
    grpc_metadata_array req_md, c_init_md, c_trail_md;
    grpc_status_code status;
    grpc_slice status_details;
    int s_cancelled;
    grpc_byte_buffer *up_buf, *down_buf;
    rl_tag t_c_init, t_s_init, t_s_recv, t_c_send, t_c_close, t_c_recv, t_s_send, t_c_status, t_s_close, t_s_status;
    rl_life life; /* a reference per batch posted; closed once the first are */
    bool down_done, status_in, status_sent, s_init_sent, open;
    pcall *older, *newer; /* under px->mu while |open| */
};

int rl_placement_pick(const rl_placement *p, uint64_t seq, int n)
{
    if (n <= 1)
        return 0;
    bool named = p->server >= 0 && p->server < n;
    if (p->kind == RL_PLACE_SKEWED && named) {
        int pct = p->percent < 0 ? 0 : p->percent > 100 ? 100 : p->percent;
        uint64_t before = seq * (uint64_t)pct / 100, upto = (seq + 1) * (uint64_t)pct / 100;
        if (upto > before)
            return p->server;
        int j = (int)((seq - before) % (uint64_t)(n - 1));
        return j < p->server ? j : j + 1;
    }
    if (p->kind == RL_PLACE_ONLY && named)
        return p->server;
    if (p->kind == RL_PLACE_AVOID && named) {
        int j = (int)(seq % (uint64_t)(n - 1));
        return j < p->server ? j : j + 1;
    }
    return (int)(seq % (uint64_t)n);
}

void rl_placement_describe(const rl_placement *p, char *buf, size_t len)
{
    if (p->kind == RL_PLACE_SKEWED)
        snprintf(buf, len, "skewed %d%% to server %d", p->percent, p->server);
    else if (p->kind == RL_PLACE_AVOID)
        snprintf(buf, len, "none on server %d", p->server);
    else if (p->kind == RL_PLACE_ONLY)
        snprintf(buf, len, "all on server %d", p->server);
    else
        snprintf(buf, len, "uniform");
}

/* ---- the loop side ---- */

/* The server shut down, every accept slot is back and every pcall freed:
 * nothing will be posted on the queue any more. */
static void stop(rl_life *life)
{
    rl_l7proxy *px = RL_CONTAINER_OF(life, rl_l7proxy, life);
    grpc_completion_queue_shutdown(px->loop.cq);
}

static void close_open(pcall *c)
{
    rl_l7proxy *px = c->px;
    pthread_mutex_lock(&px->mu);
    if (c->open) {
        c->open = false;
        px->stats.open[c->backend]--;
        px->nopen--;
        if (c->newer)
            c->newer->older = c->older;
        else
            px->newest = c->older;
        if (c->older)
            c->older->newer = c->newer;
        px->stats.newest_open = px->newest ? px->newest->backend : -1;
    }
    pthread_mutex_unlock(&px->mu);
}

static void release(rl_life *life)
{
    pcall *c = RL_CONTAINER_OF(life, pcall, life);
    rl_l7proxy *px = c->px;
    close_open(c);
    if (c->up_buf)
        grpc_byte_buffer_destroy(c->up_buf);
    if (c->down_buf)
        grpc_byte_buffer_destroy(c->down_buf);
    if (c->cc)
        grpc_call_unref(c->cc);
    grpc_call_unref(c->sc);
    grpc_call_details_destroy(&c->details);
    grpc_metadata_array_destroy(&c->req_md);
    grpc_metadata_array_destroy(&c->c_init_md);
    grpc_metadata_array_destroy(&c->c_trail_md);
    grpc_slice_unref(c->status_details);
    free(c);
    rl_life_unref(&px->life);
}

/* Posts |n| ops on |call| under |tag|; a refusal (a bug) cancels both
 * sides so the batches already posted end. */
static bool post(pcall *c, grpc_call *call, const grpc_op *ops, size_t n, rl_tag *tag)
{
    grpc_call_error e = rl_life_start_batch(&c->life, call, ops, n, tag);
    if (e != GRPC_CALL_OK) {
        RL_ERROR("l7proxy: grpc_call_start_batch failed (%d)", (int)e);
        grpc_call_cancel(c->sc, NULL);
        if (c->cc)
            grpc_call_cancel(c->cc, NULL);
        return false;
    }
    return true;
}

static void send_status(pcall *c)
{
    if (c->status_sent || !c->status_in || !c->down_done)
        return;
    c->status_sent = true;
    grpc_op ops[2];
    memset(ops, 0, sizeof ops);
    size_t n = 0;
    if (!c->s_init_sent) {
        c->s_init_sent = true;
        ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
    }
    ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
    ops[n].data.send_status_from_server.status = c->status;
    ops[n].data.send_status_from_server.status_details = &c->status_details;
    ops[n].data.send_status_from_server.trailing_metadata_count = c->c_trail_md.count;
    ops[n++].data.send_status_from_server.trailing_metadata = c->c_trail_md.metadata;
    post(c, c->sc, ops, n, &c->t_s_status);
}

static void post_up_recv(pcall *c)
{
    grpc_op op;
    memset(&op, 0, sizeof op);
    op.op = GRPC_OP_RECV_MESSAGE;
    op.data.recv_message.recv_message = &c->up_buf;
    post(c, c->sc, &op, 1, &c->t_s_recv);
}

static void post_down_recv(pcall *c)
{
    grpc_op op;
    memset(&op, 0, sizeof op);
    op.op = GRPC_OP_RECV_MESSAGE;
    op.data.recv_message.recv_message = &c->down_buf;
    if (!post(c, c->cc, &op, 1, &c->t_c_recv))
        c->down_done = true;
}

/* The agent's message arrived (or its half-close): forward it. */
static void s_recv_done(rl_tag *tag, bool ok)
{
    pcall *c = RL_CONTAINER_OF(tag, pcall, t_s_recv);
    grpc_op op;
    memset(&op, 0, sizeof op);
    if (ok && c->up_buf) {
        op.op = GRPC_OP_SEND_MESSAGE;
        op.data.send_message.send_message = c->up_buf;
        post(c, c->cc, &op, 1, &c->t_c_send);
    } else if (ok) {
        op.op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
        post(c, c->cc, &op, 1, &c->t_c_close);
    } else {
        grpc_call_cancel(c->cc, NULL);
    }
    rl_life_unref(&c->life);
}

static void c_send_done(rl_tag *tag, bool ok)
{
    pcall *c = RL_CONTAINER_OF(tag, pcall, t_c_send);
    grpc_byte_buffer_destroy(c->up_buf);
    c->up_buf = NULL;
    if (ok)
        post_up_recv(c);
    rl_life_unref(&c->life);
}

static void c_close_done(rl_tag *tag, bool ok)
{
    (void)ok;
    rl_life_unref(&RL_CONTAINER_OF(tag, pcall, t_c_close)->life);
}

/* The backend's message arrived (or its end): forward it. */
static void c_recv_done(rl_tag *tag, bool ok)
{
    pcall *c = RL_CONTAINER_OF(tag, pcall, t_c_recv);
    if (ok && c->down_buf) {
        grpc_op op;
        memset(&op, 0, sizeof op);
        op.op = GRPC_OP_SEND_MESSAGE;
        op.data.send_message.send_message = c->down_buf;
        if (!post(c, c->sc, &op, 1, &c->t_s_send))
            c->down_done = true;
    } else {
        c->down_done = true;
        send_status(c);
    }
    rl_life_unref(&c->life);
}

/* After a batch toward the client ended: pump the next message down, or,
 * when the client is gone, stop the downward side and the backend's call. */
static void down_next(pcall *c, bool ok)
{
    if (ok) {
        post_down_recv(c);
    } else {
        c->down_done = true;
        grpc_call_cancel(c->cc, NULL);
    }
    send_status(c);
    rl_life_unref(&c->life);
}

static void s_send_done(rl_tag *tag, bool ok)
{
    pcall *c = RL_CONTAINER_OF(tag, pcall, t_s_send);
    grpc_byte_buffer_destroy(c->down_buf);
    c->down_buf = NULL;
    down_next(c, ok);
}

static void s_init_done(rl_tag *tag, bool ok)
{
    down_next(RL_CONTAINER_OF(tag, pcall, t_s_init), ok);
}

/* The backend's initial metadata: pass them on, then pump downward. */
static void c_init_done(rl_tag *tag, bool ok)
{
    pcall *c = RL_CONTAINER_OF(tag, pcall, t_c_init);
    if (ok) {
        grpc_op op;
        memset(&op, 0, sizeof op);
        op.op = GRPC_OP_SEND_INITIAL_METADATA;
        op.data.send_initial_metadata.count = c->c_init_md.count;
        op.data.send_initial_metadata.metadata = c->c_init_md.metadata;
        c->s_init_sent = true;
        if (!post(c, c->sc, &op, 1, &c->t_s_init))
            c->down_done = true;
    } else {
        c->down_done = true;
    }
    send_status(c);
    rl_life_unref(&c->life);
}

static void c_status_done(rl_tag *tag, bool ok)
{
    pcall *c = RL_CONTAINER_OF(tag, pcall, t_c_status);
    if (!ok) {
        c->status = GRPC_STATUS_UNAVAILABLE;
        grpc_slice_unref(c->status_details);
        c->status_details = grpc_slice_from_static_string("l7proxy: the backend call failed");
    }
    c->status_in = true;
    send_status(c);
    rl_life_unref(&c->life);
}

static void s_status_done(rl_tag *tag, bool ok)
{
    (void)ok;
    rl_life_unref(&RL_CONTAINER_OF(tag, pcall, t_s_status)->life);
}

static void s_close_done(rl_tag *tag, bool ok)
{
    (void)ok;
    pcall *c = RL_CONTAINER_OF(tag, pcall, t_s_close);
    /* The agent's stream is over: whatever the backend still does for it is
     * moot, and the stream no longer counts as open. */
    if (c->s_cancelled && c->cc)
        grpc_call_cancel(c->cc, NULL);
    close_open(c);
    rl_life_unref(&c->life);
}

/* Places |c| on a backend under the proxy's lock: false when the limit of
 * open streams refuses it. */
static bool place(rl_l7proxy *px, pcall *c)
{
    pthread_mutex_lock(&px->mu);
    if (px->limit && px->nopen >= px->limit) {
        px->stats.refused++;
        pthread_mutex_unlock(&px->mu);
        return false;
    }
    c->backend = rl_placement_pick(&px->placement, px->seq++, px->n);
    px->nopen++;
    if (px->nopen > px->stats.peak_open)
        px->stats.peak_open = px->nopen;
    px->stats.placed[c->backend]++;
    px->stats.open[c->backend]++;
    if (px->stats.open[c->backend] > px->stats.peak[c->backend])
        px->stats.peak[c->backend] = px->stats.open[c->backend];
    px->stats.total++;
    c->open = true;
    c->older = px->newest;
    if (px->newest)
        px->newest->newer = c;
    px->newest = c;
    px->stats.newest_open = c->backend;
    pthread_mutex_unlock(&px->mu);
    return true;
}

static bool post_close(pcall *c)
{
    grpc_op op;
    memset(&op, 0, sizeof op);
    op.op = GRPC_OP_RECV_CLOSE_ON_SERVER;
    op.data.recv_close_on_server.cancelled = &c->s_cancelled;
    return post(c, c->sc, &op, 1, &c->t_s_close);
}

/* Opens the backend's call and posts the first batches of both sides. */
static void forward(rl_l7proxy *px, pcall *c)
{
    if (!post_close(c))
        return;
    /* The parent link cancels the backend call when the agent's stream is
     * cancelled, even before RECV_CLOSE_ON_SERVER reports it. */
    c->cc = grpc_channel_create_call(px->backends[c->backend], c->sc, GRPC_PROPAGATE_CANCELLATION, px->loop.cq,
                                     c->details.method, NULL, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
    if (!c->cc) {
        grpc_call_cancel_with_status(c->sc, GRPC_STATUS_UNAVAILABLE, "l7proxy: no backend call", NULL);
        return;
    }
    grpc_op ops[2];
    memset(ops, 0, sizeof ops);
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[1].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[1].data.recv_initial_metadata.recv_initial_metadata = &c->c_init_md;
    if (!post(c, c->cc, ops, 2, &c->t_c_init))
        return;
    grpc_op op;
    memset(&op, 0, sizeof op);
    op.op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    op.data.recv_status_on_client.trailing_metadata = &c->c_trail_md;
    op.data.recv_status_on_client.status = &c->status;
    op.data.recv_status_on_client.status_details = &c->status_details;
    post(c, c->cc, &op, 1, &c->t_c_status);
    post_up_recv(c);
}

static void start_proxied(rl_l7proxy *px, accept_slot *a)
{
    pcall *c = rl_xcalloc(1, sizeof *c);
    c->px = px;
    c->sc = a->call;
    c->details = a->details;
    c->req_md = a->md;
    c->status = GRPC_STATUS_UNKNOWN;
    c->status_details = grpc_empty_slice();
    grpc_metadata_array_init(&c->c_init_md);
    grpc_metadata_array_init(&c->c_trail_md);
    c->t_c_init.done = c_init_done;
    c->t_s_init.done = s_init_done;
    c->t_s_recv.done = s_recv_done;
    c->t_c_send.done = c_send_done;
    c->t_c_close.done = c_close_done;
    c->t_c_recv.done = c_recv_done;
    c->t_s_send.done = s_send_done;
    c->t_c_status.done = c_status_done;
    c->t_s_close.done = s_close_done;
    c->t_s_status.done = s_status_done;
    rl_life_init(&c->life, release);
    rl_life_ref(&px->life);
    if (place(px, c)) {
        forward(px, c);
    } else if (post_close(c)) {
        /* Never placed: refused, and freed once the close batch is back. */
        grpc_call_cancel_with_status(c->sc, GRPC_STATUS_RESOURCE_EXHAUSTED,
                                     "l7proxy: too many streams open through this proxy", NULL);
    }
    /* The first batches are posted: from here each completion posts the
     * next, and the pcall goes with the last one (at once when gRPC took
     * none). */
    rl_life_close(&c->life);
}

static void post_accept(accept_slot *a);

static void accept_done(rl_tag *tag, bool ok)
{
    accept_slot *a = RL_CONTAINER_OF(tag, accept_slot, tag);
    rl_l7proxy *px = a->px;
    if (ok && a->call) {
        start_proxied(px, a); /* takes the call, details and metadata */
        a->call = NULL;
        grpc_call_details_init(&a->details);
        grpc_metadata_array_init(&a->md);
    }
    if (ok && !px->shutting)
        post_accept(a);
    rl_life_unref(&px->life); /* the slot's */
}

static void post_accept(accept_slot *a)
{
    rl_l7proxy *px = a->px;
    grpc_call_error e =
        grpc_server_request_call(px->server, &a->call, &a->details, &a->md, px->loop.cq, px->loop.cq, &a->tag);
    if (e == GRPC_CALL_OK)
        rl_life_ref(&px->life);
    else
        RL_ERROR("l7proxy: grpc_server_request_call failed (%d)", (int)e);
}

static void shutdown_done(rl_tag *tag, bool ok)
{
    (void)ok;
    rl_l7proxy *px = RL_CONTAINER_OF(tag, rl_l7proxy, shutdown_tag);
    px->shutting = true;
    rl_life_close(&px->life);
}

static void *run(void *arg)
{
    rl_l7proxy *px = arg;
    pthread_setname_np(pthread_self(), "rl-l7proxy");
    rl_loop_run(&px->loop);
    return NULL;
}

/* ---- the owner's side ---- */

int rl_l7proxy_start(const char *const *backends, int n, const rl_placement *initial, rl_l7proxy **out, char *err,
                     size_t errlen)
{
    *out = NULL;
    if (n < 1 || n > RL_L7PROXY_MAX_BACKENDS) {
        snprintf(err, errlen, "l7proxy: %d backends (1 to %d)", n, RL_L7PROXY_MAX_BACKENDS);
        return RL_EINVAL;
    }
    rl_l7proxy *px = rl_xcalloc(1, sizeof *px);
    px->n = n;
    pthread_mutex_init(&px->mu, NULL);
    px->placement = *initial;
    px->stats.nbackends = n;
    px->stats.newest_open = -1;
    px->shutdown_tag.done = shutdown_done;
    rl_life_init(&px->life, stop);
    /* Each backend its own connection, shared with nothing else. */
    grpc_arg barg = {.type = GRPC_ARG_INTEGER, .key = (char *)GRPC_ARG_MAX_CONCURRENT_STREAMS, .value.integer = 100000};
    grpc_channel_args bargs = {1, &barg};
    for (int i = 0; i < n; i++)
        px->backends[i] = rl_channel_isolated(backends[i], &bargs);
    rl_loop_init(&px->loop);
    /* A flood is bounded twice: per connection by the streams it may open at
     * once, and over every connection by the memory gRPC may use for them
     * (a flood of 200,000 streams on 4 connections took the process to
     * 1.4 GB while the loop refused them 32 at a time: bench/results/coverage.md). */
    grpc_resource_quota *quota = grpc_resource_quota_create("rl-l7proxy");
    grpc_resource_quota_resize(quota, RL_L7PROXY_MEMORY_BYTES);
    grpc_arg sargs[3] = {
        {.type = GRPC_ARG_INTEGER,
         .key = (char *)GRPC_ARG_MAX_CONCURRENT_STREAMS,
         .value.integer = RL_L7PROXY_STREAMS_PER_CONNECTION},
        {.type = GRPC_ARG_INTEGER, .key = (char *)GRPC_ARG_ALLOW_REUSEPORT, .value.integer = 0},
        {.type = GRPC_ARG_POINTER,
         .key = (char *)GRPC_ARG_RESOURCE_QUOTA,
         .value.pointer = {quota, grpc_resource_quota_arg_vtable()}},
    };
    grpc_channel_args sa = {3, sargs};
    px->server = grpc_server_create(&sa, NULL);
    grpc_resource_quota_unref(quota);
    grpc_server_register_completion_queue(px->server, px->loop.cq, NULL);
    grpc_server_credentials *creds = grpc_insecure_server_credentials_create();
    int port = grpc_server_add_http2_port(px->server, "127.0.0.1:0", creds);
    grpc_server_credentials_release(creds);
    if (port <= 0) {
        snprintf(err, errlen, "l7proxy: cannot bind a port on 127.0.0.1");
        grpc_server_destroy(px->server);
        rl_loop_fini(&px->loop);
        for (int i = 0; i < n; i++)
            grpc_channel_destroy(px->backends[i]);
        pthread_mutex_destroy(&px->mu);
        free(px);
        return RL_ESYS;
    }
    snprintf(px->addr, sizeof px->addr, "127.0.0.1:%d", port);
    grpc_server_start(px->server);
    for (int i = 0; i < ACCEPT_SLOTS; i++) {
        accept_slot *a = &px->slots[i];
        a->px = px;
        a->tag.done = accept_done;
        grpc_call_details_init(&a->details);
        grpc_metadata_array_init(&a->md);
        post_accept(a);
    }
    if (pthread_create(&px->thread, NULL, run, px) != 0) {
        snprintf(err, errlen, "l7proxy: cannot start its thread");
        px->thread_started = false;
        rl_l7proxy_free(px);
        return RL_ESYS;
    }
    px->thread_started = true;
    *out = px;
    return RL_OK;
}

const char *rl_l7proxy_addr(const rl_l7proxy *px)
{
    return px->addr;
}

void rl_l7proxy_set_placement(rl_l7proxy *px, const rl_placement *p)
{
    pthread_mutex_lock(&px->mu);
    px->placement = *p;
    pthread_mutex_unlock(&px->mu);
}

void rl_l7proxy_set_limit(rl_l7proxy *px, int max_open)
{
    pthread_mutex_lock(&px->mu);
    px->limit = max_open > 0 ? max_open : 0;
    pthread_mutex_unlock(&px->mu);
}

void rl_l7proxy_get_stats(rl_l7proxy *px, rl_l7proxy_stats *out)
{
    pthread_mutex_lock(&px->mu);
    *out = px->stats;
    pthread_mutex_unlock(&px->mu);
}

void rl_l7proxy_free(rl_l7proxy *px)
{
    if (!px)
        return;
    /* The shutdown tag and the cancelled calls complete on the loop, which
     * shuts its queue down once the last call is freed. */
    grpc_server_shutdown_and_notify(px->server, px->loop.cq, &px->shutdown_tag);
    grpc_server_cancel_all_calls(px->server);
    if (px->thread_started) {
        pthread_join(px->thread, NULL);
    } else {
        /* No loop ran: drain here. */
        rl_loop_run(&px->loop);
    }
    grpc_server_destroy(px->server);
    rl_loop_fini(&px->loop);
    for (int i = 0; i < px->n; i++)
        grpc_channel_destroy(px->backends[i]);
    for (int i = 0; i < ACCEPT_SLOTS; i++) {
        grpc_call_details_destroy(&px->slots[i].details);
        grpc_metadata_array_destroy(&px->slots[i].md);
    }
    pthread_mutex_destroy(&px->mu);
    free(px);
}
