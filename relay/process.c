/* process: Relay.Process, server call in, Lookup then Work out; see process.h.
 *
 * One process_call per upstream call, living on the loop that accepted it.
 * At most one downstream call is in flight at a time and the upstream is
 * normally answered only after it ended. When the client gives up, the
 * upstream is answered at once (rl_unary finishes its side right after
 * on_cancel) and the downstream call, a child of the server call, is
 * cancelled by gRPC. The struct is freed when both the rl_unary (all its
 * batches) and the downstream call are done: on_free closes |life|, and the
 * downstream call and a place in the admission queue hold it. */
#include "process.h"

#include "relaylab.pb-c.h"
#include "rl_alloc.h"
#include "rl_client.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_life.h"
#include "rl_log.h"
#include "rl_unary.h"

#include <grpc/support/alloc.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct process_call {
    rl_unary u;     /* the upstream call; its on_free closes |life| */
    rl_client down; /* the downstream call, valid while |down_busy| */
    const relay_ctx *ctx;
    rl_loop *loop;
    grpc_call *parent;     /* our own ref on the server call, so it stays a
                            * valid parent for as long as this struct lives
                            * (rl_unary drops its ref when cancelled) */
    gpr_timespec deadline; /* upstream deadline, infinite when none */
    int64_t arrival_ns;
    Relaylab__ProcessRequest *req; /* owned; NULL until on_request */
    unsigned works;                /* Work calls started */
    rl_life life;                  /* closed at |u|'s on_free; held while
                                    * |down_busy| and while queued for a slot */
    bool down_busy;
    relay_waiter waiter; /* its place in the admission queue */
    bool queued;         /* waiting for a slot (holds |life|) */
    bool has_slot;       /* holds an admission slot until its downstream part ends */
    bool served;         /* Work answered OK: a service-time sample */
    bool ran_out;        /* a downstream call ended DEADLINE_EXCEEDED: its
                          * time is a lower bound of the backend's latency */
    int64_t slot_ns;     /* when it got its slot */
} process_call;

static process_call *from_unary(rl_unary *u)
{
    return RL_CONTAINER_OF(u, process_call, u);
}

static process_call *from_client(rl_client *c)
{
    return RL_CONTAINER_OF(c, process_call, down);
}

/* The upstream call is over (on_free closed |life|), no downstream call is
 * in flight and the queue let go: nothing can reach |p| any more. */
static void release(rl_life *life)
{
    process_call *p = RL_CONTAINER_OF(life, process_call, life);
    if (p->req)
        protobuf_c_message_free_unpacked(&p->req->base, NULL);
    grpc_call_unref(p->parent);
    free(p);
    rl_server_call_end(); /* the hold taken in relay_process_start */
}

/* Answers upstream with the downstream's failure, keeping its code. Like
 * every answer here it is a no-op when on_cancel already answered. */
static void fail_from(process_call *p, const char *what)
{
    char *details = grpc_slice_to_c_string(p->down.batch.details);
    char msg[512];
    snprintf(msg, sizeof msg, "%s failed: %s", what, details);
    gpr_free(details);
    rl_unary_fail(&p->u, p->down.batch.status, msg);
}

/* Starts a downstream call to |method| with |msg|. The server call is the
 * parent, so with GRPC_PROPAGATE_DEADLINE gRPC sets min(own, parent's) and
 * with GRPC_PROPAGATE_CANCELLATION a client that gives up cancels the child
 * within milliseconds (this needs RECV_CLOSE_ON_SERVER outstanding on the
 * parent, which rl_unary keeps posted). Returns 0 or RL_EGRPC. */
static int call_down(process_call *p, void *method, const ProtobufCMessage *msg, rl_client_done done)
{
    const relay_mistake *m = p->ctx->mistake;
    gpr_timespec deadline = m->deadline(p->deadline, p->arrival_ns, rl_now_ns());
    grpc_call *call = grpc_channel_create_registered_call(p->ctx->channel, m->propagate ? p->parent : NULL,
                                                          m->propagate, p->loop->cq, method, deadline, NULL);
    if (!call)
        return RL_EGRPC;
    uint32_t flags = m->wait_for_ready ? GRPC_INITIAL_METADATA_WAIT_FOR_READY : 0;
    if (rl_client_start_flags(&p->down, call, msg, flags, done) != RL_OK)
        return RL_EGRPC;
    p->down_busy = true;
    rl_life_ref(&p->life);
    return RL_OK;
}

static void work_done(rl_client *c);

/* The downstream part of the call is over (no call in flight, none to
 * come): gives its slot back, which may start queued calls. */
static void slot_done(process_call *p)
{
    if (!p->has_slot || p->down_busy)
        return;
    p->has_slot = false;
    int64_t took_ns = rl_now_ns() - p->slot_ns;
    relay_gate_done(p->ctx->gate, p->loop, &p->waiter, p->served ? took_ns / RL_NS_PER_MS : -1,
                    p->served    ? RELAY_RTT_SERVED
                    : p->ran_out ? RELAY_RTT_BOUND
                                 : RELAY_RTT_NONE);
}

static void start_work(process_call *p)
{
    const relay_mistake *m = p->ctx->mistake;
    if (m->check_before_work) {
        /* The propagated cancellation would stop Work at once, but starting it
         * at all would still show up downstream as a call nobody wants. */
        if (p->u.cancelled) {
            rl_unary_fail(&p->u, GRPC_STATUS_CANCELLED, "the client cancelled before Work started");
            return;
        }
        int64_t left_ms;
        if (rl_deadline_remaining_ms(p->deadline, rl_now_ns(), &left_ms) == RL_OK && left_ms <= 0) {
            rl_unary_fail(&p->u, GRPC_STATUS_DEADLINE_EXCEEDED, "no time left for Work after Lookup");
            return;
        }
    }
    Relaylab__WorkRequest wreq = RELAYLAB__WORK_REQUEST__INIT;
    wreq.tag = p->req->tag;
    wreq.steps = p->req->steps;
    wreq.step_ms = p->req->step_ms;
    p->works++;
    if (call_down(p, p->ctx->work_method, &wreq.base, work_done) != RL_OK)
        rl_unary_fail(&p->u, GRPC_STATUS_INTERNAL, "the relay could not start Work");
}

static void lookup_done(rl_client *c)
{
    process_call *p = from_client(c);
    p->down_busy = false;
    p->ran_out |= c->batch.status == GRPC_STATUS_DEADLINE_EXCEEDED;
    bool ok = c->batch.status == GRPC_STATUS_OK;
    if (!ok)
        fail_from(p, "Lookup");
    rl_client_fini(c); /* before start_work reuses |c| for Work */
    if (ok)
        start_work(p);
    slot_done(p);
    rl_life_unref(&p->life);
}

static void work_done(rl_client *c)
{
    process_call *p = from_client(c);
    p->down_busy = false;
    p->ran_out |= c->batch.status == GRPC_STATUS_DEADLINE_EXCEEDED;
    RL_DEBUG("Work %u of %s ended with status %d", p->works, p->req->tag, (int)c->batch.status);
    if (p->works < p->ctx->mistake->work_calls) {
        /* The call-twice bug: a "retry" whatever the outcome was. */
        rl_client_fini(c);
        start_work(p);
        slot_done(p);
        rl_life_unref(&p->life);
        return;
    }
    if (c->batch.status != GRPC_STATUS_OK) {
        fail_from(p, "Work");
    } else {
        ProtobufCMessage *msg = NULL;
        if (rl_client_unpack(c, &relaylab__work_reply__descriptor, &msg) != RL_OK) {
            rl_unary_fail(&p->u, GRPC_STATUS_INTERNAL, "Work's reply is not a valid WorkReply");
        } else {
            Relaylab__WorkReply *wrep = (Relaylab__WorkReply *)msg;
            Relaylab__ProcessReply rep = RELAYLAB__PROCESS_REPLY__INIT;
            rep.tag = wrep->tag;
            rep.steps_done = wrep->steps_done;
            rl_unary_reply(&p->u, &rep.base);
            p->served = true;
            protobuf_c_message_free_unpacked(msg, NULL);
        }
    }
    rl_client_fini(c);
    slot_done(p);
    rl_life_unref(&p->life);
}

/* With a slot: the downstream part starts with Lookup. */
static void start_lookup(process_call *p)
{
    p->slot_ns = rl_now_ns();
    Relaylab__LookupRequest lreq = RELAYLAB__LOOKUP_REQUEST__INIT;
    lreq.tag = p->req->tag;
    lreq.delay_ms = p->req->lookup_delay_ms;
    if (call_down(p, p->ctx->lookup_method, &lreq.base, lookup_done) != RL_OK) {
        rl_unary_fail(&p->u, GRPC_STATUS_INTERNAL, "the relay could not start Lookup");
        slot_done(p);
    }
}

/* A queued call got its slot (on its own loop). The correct relay forwards
 * it only if its client is still there with time enough for the service;
 * work the backend does for a caller that has gone is waste. */
static void on_grant(relay_waiter *w)
{
    process_call *p = RL_CONTAINER_OF(w, process_call, waiter);
    p->queued = false;
    if (w->closing) {
        rl_unary_fail(&p->u, GRPC_STATUS_UNAVAILABLE,
                      "the relay is shutting down: the call was queued and never started, try again");
        rl_life_unref(&p->life); /* the queue's reference */
        return;
    }
    if (w->evicted) {
        char msg[160];
        snprintf(msg, sizeof msg,
                 "the relay is overloaded: the call can no longer be served in time (service about %lld ms)",
                 (long long)relay_gate_service_ms(p->ctx->gate));
        rl_unary_fail(&p->u, GRPC_STATUS_RESOURCE_EXHAUSTED, msg);
        rl_life_unref(&p->life); /* the queue's reference */
        return;
    }
    p->has_slot = true;
    if (!p->ctx->mistake->unbounded_queue) {
        int64_t left_ms, service_ms = relay_gate_service_ms(p->ctx->gate);
        bool timed = rl_deadline_remaining_ms(p->deadline, rl_now_ns(), &left_ms) == RL_OK;
        if (p->u.cancelled || p->u.answered) {
            slot_done(p);
        } else if (timed && left_ms <= 0) {
            rl_unary_fail(&p->u, GRPC_STATUS_DEADLINE_EXCEEDED, "the call's time ran out in the relay's queue");
            slot_done(p);
        } else if (timed && left_ms < relay_gate_margin_ms(service_ms)) {
            char msg[160];
            snprintf(msg, sizeof msg,
                     "the relay is overloaded: after the queue %lld ms are left, the service takes %lld ms",
                     (long long)left_ms, (long long)service_ms);
            rl_unary_fail(&p->u, GRPC_STATUS_RESOURCE_EXHAUSTED, msg);
            slot_done(p);
        } else {
            start_lookup(p);
        }
    } else {
        start_lookup(p); /* the mistake: whatever time is left, if any */
    }
    rl_life_unref(&p->life); /* the queue's reference */
}

static void on_request(rl_unary *u, ProtobufCMessage *req)
{
    process_call *p = from_unary(u);
    p->req = (Relaylab__ProcessRequest *)req;
    int64_t deadline_ns;
    if (rl_deadline_to_ns(p->deadline, &deadline_ns) != RL_OK)
        deadline_ns = INT64_MAX;
    char why[256];
    switch (relay_gate_admit(p->ctx->gate, p->loop, &p->waiter, on_grant, deadline_ns, why, sizeof why)) {
    case RELAY_ADMIT_RUN:
        p->has_slot = true;
        start_lookup(p);
        break;
    case RELAY_ADMIT_QUEUED:
        RL_DEBUG("Process %s queued for a slot", p->req->tag);
        p->queued = true;
        rl_life_ref(&p->life);
        break;
    case RELAY_ADMIT_REFUSED: rl_unary_fail(u, GRPC_STATUS_RESOURCE_EXHAUSTED, why); break;
    case RELAY_ADMIT_CLOSED: rl_unary_fail(u, GRPC_STATUS_UNAVAILABLE, why); break;
    }
}

static void on_cancel(rl_unary *u)
{
    process_call *p = from_unary(u);
    /* A queued call whose client left leaves the queue at once (its place
     * and memory are for calls that can still be served); the mistake
     * leaves it there until its turn. */
    bool left = p->queued && !p->ctx->mistake->unbounded_queue && relay_gate_leave(p->ctx->gate, &p->waiter);
    /* The downstream call in flight is a child of this one, so gRPC cancels
     * it (unless the mode leaves GRPC_PROPAGATE_CANCELLATION out). Answer now:
     * rl_unary finishes the call right after this returns, and nobody is
     * listening to the status any more. */
    RL_DEBUG("Process cancelled upstream%s", from_unary(u)->down_busy ? " with a downstream call in flight" : "");
    rl_unary_fail(u, GRPC_STATUS_CANCELLED, "the client cancelled or its deadline passed");
    if (left) {
        p->queued = false;
        rl_life_unref(&p->life); /* the queue's; |p| is not closed before on_free */
    }
}

static void on_free(rl_unary *u)
{
    rl_life_close(&from_unary(u)->life);
}

static const rl_unary_ops process_ops = {.on_request = on_request, .on_cancel = on_cancel, .on_free = on_free};

void relay_ctx_init(relay_ctx *ctx, grpc_channel *channel, const relay_mistake *mistake, relay_gate *gate)
{
    ctx->channel = channel;
    ctx->mistake = mistake;
    ctx->gate = gate;
    /* Registered methods skip the per-call method-path lookup. */
    ctx->lookup_method = grpc_channel_register_call(channel, "/relaylab.Baseline/Lookup", NULL, NULL);
    ctx->work_method = grpc_channel_register_call(channel, "/relaylab.Baseline/Work", NULL, NULL);
}

void relay_process_start(rl_loop *loop, grpc_call *call, const rl_call_info *info, void *user)
{
    /* The downstream call may end after the server call was released (a
     * cancelled Process answers at once): the drain waits for both. */
    rl_server_hold();
    process_call *p = rl_xcalloc(1, sizeof *p);
    p->ctx = user;
    p->loop = loop;
    p->deadline = info->deadline;
    p->arrival_ns = info->arrival_ns;
    rl_life_init(&p->life, release);
    p->parent = call;
    grpc_call_ref(call);
    rl_unary_start(&p->u, loop, call, &relaylab__process_request__descriptor, RELAY_MAX_REQUEST, &process_ops);
}
