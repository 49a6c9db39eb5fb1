/* control: relaylab.TunnelControl, the grader's private handle on a tunnel
 * server: Dispatch (calls paced by a timer on the server's loop, so the
 * spacing holds however slowly the grader is scheduled), ObserveTunnel (the
 * records) and Reset (forget what has ended). */
#include "tunnel.h"

#include "rl_alloc.h"
#include "rl_deadline.h"
#include "rl_unary.h"

#include <stdlib.h>
#include <string.h>

/* More in one Dispatch is a grader bug, not a burst. */
#define MAX_DISPATCH 100000

typedef struct control_call {
    rl_unary u;
    tn_server *srv;
} control_call;

/* A paced batch of calls; frees itself after the last one. */
typedef struct batch {
    rl_timer timer;
    rl_loop *loop;
    tn_server *srv;
    uint32_t left, work_ms, jitter_ms, sent;
    int64_t next_ns, interval_ns;
} batch;

static void on_free(rl_unary *u)
{
    free(RL_CONTAINER_OF(u, control_call, u));
}

static void batch_fire(rl_timer *t)
{
    batch *b = RL_CONTAINER_OF(t, batch, timer);
    /* Every call whose instant has come, so a late wake-up catches up. */
    int64_t now = rl_now_ns();
    while (b->left && b->next_ns <= now) {
        tn_dispatch(b->srv, tn_jittered_work(b->work_ms, b->jitter_ms, b->sent++));
        b->left--;
        b->next_ns += b->interval_ns;
    }
    if (b->left)
        rl_timer_start(b->loop, &b->timer, b->next_ns, batch_fire);
    else
        free(b);
}

static void dispatch(rl_unary *u, ProtobufCMessage *msg)
{
    control_call *c = RL_CONTAINER_OF(u, control_call, u);
    const Relaylab__DispatchRequest *req = (const Relaylab__DispatchRequest *)msg;
    if (req->count == 0 || req->count > MAX_DISPATCH) {
        rl_unary_fail(u, GRPC_STATUS_INVALID_ARGUMENT, "Dispatch: count must be 1 to 100000");
    } else if (req->work_jitter_ms > req->work_ms) {
        rl_unary_fail(u, GRPC_STATUS_INVALID_ARGUMENT, "Dispatch: work_jitter_ms must not exceed work_ms");
    } else {
        Relaylab__DispatchReply rep = RELAYLAB__DISPATCH_REPLY__INIT;
        rep.first_call_id = c->srv->ncalls + 1;
        batch *b = rl_xcalloc(1, sizeof *b);
        b->loop = u->loop;
        b->srv = c->srv;
        b->left = req->count;
        b->work_ms = req->work_ms;
        b->jitter_ms = req->work_jitter_ms;
        b->interval_ns = (int64_t)req->interval_ms * RL_NS_PER_MS;
        b->next_ns = rl_now_ns();
        batch_fire(&b->timer);
        rl_unary_reply(u, &rep.base);
    }
    protobuf_c_message_free_unpacked(msg, NULL);
}

static void observe(rl_unary *u, ProtobufCMessage *msg)
{
    control_call *c = RL_CONTAINER_OF(u, control_call, u);
    Relaylab__ObserveTunnelReply rep = RELAYLAB__OBSERVE_TUNNEL_REPLY__INIT;
    tn_observe(c->srv, &rep);
    rep.now_ns = rl_now_ns();
    rl_unary_reply(u, &rep.base);
    tn_observe_free(&rep);
    protobuf_c_message_free_unpacked(msg, NULL);
}

static void reset(rl_unary *u, ProtobufCMessage *msg)
{
    control_call *c = RL_CONTAINER_OF(u, control_call, u);
    c->srv->reset_ns = rl_now_ns();
    Relaylab__TunnelResetReply rep = RELAYLAB__TUNNEL_RESET_REPLY__INIT;
    rl_unary_reply(u, &rep.base);
    protobuf_c_message_free_unpacked(msg, NULL);
}

static void start(rl_loop *loop, grpc_call *call, void *user, const ProtobufCMessageDescriptor *desc,
                  void (*on_request)(rl_unary *, ProtobufCMessage *), const rl_unary_ops *ops)
{
    (void)on_request;
    control_call *c = rl_xcalloc(1, sizeof *c);
    c->srv = user;
    rl_unary_start(&c->u, loop, call, desc, TN_MAX_MESSAGE, ops);
}

static const rl_unary_ops dispatch_ops = {.on_request = dispatch, .on_free = on_free};
static const rl_unary_ops observe_ops = {.on_request = observe, .on_free = on_free};
static const rl_unary_ops reset_ops = {.on_request = reset, .on_free = on_free};

void tn_dispatch_start(rl_loop *loop, grpc_call *call, const rl_call_info *info, void *user)
{
    (void)info;
    start(loop, call, user, &relaylab__dispatch_request__descriptor, dispatch, &dispatch_ops);
}

void tn_observe_start(rl_loop *loop, grpc_call *call, const rl_call_info *info, void *user)
{
    (void)info;
    start(loop, call, user, &relaylab__observe_tunnel_request__descriptor, observe, &observe_ops);
}

void tn_reset_start(rl_loop *loop, grpc_call *call, const rl_call_info *info, void *user)
{
    (void)info;
    start(loop, call, user, &relaylab__tunnel_reset_request__descriptor, reset, &reset_ops);
}
