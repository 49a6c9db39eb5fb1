/* observer: relaylab.Observer, the grader's window into the baseline:
 * Observe (records by tag), Reset (forget records and faults), SetFault (arm a
 * failure for the retry lab), SetCapacity and SetOutage (the overload lab's
 * world: a Work capacity with a queue, a blackhole), and HideRunning (the
 * grader's own tests: a grader that missed calls while they ran). Each
 * answers at once from the store. */
#include "baseline.h"
#include "rl_alloc.h"
#include "rl_deadline.h"
#include "rl_unary.h"

#include "relaylab.pb-c.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct observer_call {
    rl_unary u;
    bl_store *store;
} observer_call;

static void on_free(rl_unary *u)
{
    free(RL_CONTAINER_OF(u, observer_call, u));
}

/* HideRunning's state: the first |calls| records of |method| whose seq is
 * above |after_seq| are not reported while they run. Observer calls come
 * on any loop thread, hence the lock; a baseline has one store, hence one
 * state for the process. */
static struct {
    pthread_mutex_t mu;
    char method[8]; /* "Lookup", "Work", "Fetch"; "" when disarmed */
    uint64_t after_seq;
    uint32_t calls;
} hidden = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* The seq of the last record HideRunning hides (of those arrived so far:
 * UINT64_MAX while fewer than |calls| have), from |all|, every record in
 * arrival order. Called with hidden.mu held. */
static uint64_t last_hidden_seq(const Relaylab__ObserveReply *all)
{
    uint32_t n = 0;
    for (size_t i = 0; i < all->n_calls; i++) {
        const Relaylab__CallRecord *r = all->calls[i];
        if (r->seq > hidden.after_seq && strcmp(r->method, hidden.method) == 0 && ++n == hidden.calls)
            return r->seq;
    }
    return UINT64_MAX;
}

/* Drops from |rep| the running records HideRunning hides. */
static void hide_running(bl_store *store, Relaylab__ObserveReply *rep)
{
    pthread_mutex_lock(&hidden.mu);
    if (hidden.calls) {
        Relaylab__ObserveReply all = RELAYLAB__OBSERVE_REPLY__INIT;
        bl_store_snapshot(store, "", &all);
        uint64_t last = last_hidden_seq(&all);
        bl_store_snapshot_free(&all);
        size_t n = 0;
        for (size_t i = 0; i < rep->n_calls; i++) {
            Relaylab__CallRecord *r = rep->calls[i];
            if (!r->ended && r->seq > hidden.after_seq && r->seq <= last && strcmp(r->method, hidden.method) == 0) {
                free(r->tag);
                free(r->peer);
                free(r);
            } else {
                rep->calls[n++] = r;
            }
        }
        rep->n_calls = n;
    }
    pthread_mutex_unlock(&hidden.mu);
}

static void observe(rl_unary *u, ProtobufCMessage *msg)
{
    observer_call *c = RL_CONTAINER_OF(u, observer_call, u);
    const Relaylab__ObserveRequest *req = (const Relaylab__ObserveRequest *)msg;
    Relaylab__ObserveReply rep = RELAYLAB__OBSERVE_REPLY__INIT;
    bl_store_snapshot(c->store, req->tag, &rep);
    hide_running(c->store, &rep);
    rep.now_ns = rl_now_ns();
    rl_unary_reply(u, &rep.base);
    bl_store_snapshot_free(&rep);
    protobuf_c_message_free_unpacked(msg, NULL);
}

static void reset(rl_unary *u, ProtobufCMessage *msg)
{
    observer_call *c = RL_CONTAINER_OF(u, observer_call, u);
    Relaylab__ResetReply rep = RELAYLAB__RESET_REPLY__INIT;
    rep.cleared = bl_store_reset(c->store);
    pthread_mutex_lock(&hidden.mu);
    hidden.calls = 0;
    pthread_mutex_unlock(&hidden.mu);
    rl_unary_reply(u, &rep.base);
    protobuf_c_message_free_unpacked(msg, NULL);
}

static void set_fault(rl_unary *u, ProtobufCMessage *msg)
{
    observer_call *c = RL_CONTAINER_OF(u, observer_call, u);
    const Relaylab__FaultRequest *req = (const Relaylab__FaultRequest *)msg;
    if (strcmp(req->method, "Lookup") != 0 && strcmp(req->method, "Work") != 0 && strcmp(req->method, "Fetch") != 0) {
        rl_unary_fail(u, GRPC_STATUS_INVALID_ARGUMENT, "SetFault: method must be Lookup, Work or Fetch");
    } else if (req->status <= 0 || req->status > GRPC_STATUS_UNAUTHENTICATED) {
        rl_unary_fail(u, GRPC_STATUS_INVALID_ARGUMENT, "SetFault: status must be a non-OK gRPC status code (1-16)");
    } else {
        bl_store_set_fault(c->store, req->method, req->fail_first, (grpc_status_code)req->status,
                           req->after_first_message);
        Relaylab__FaultReply rep = RELAYLAB__FAULT_REPLY__INIT;
        rl_unary_reply(u, &rep.base);
    }
    protobuf_c_message_free_unpacked(msg, NULL);
}

static void set_capacity(rl_unary *u, ProtobufCMessage *msg)
{
    observer_call *c = RL_CONTAINER_OF(u, observer_call, u);
    bl_store_set_capacity(c->store, ((const Relaylab__CapacityRequest *)msg)->max_work);
    Relaylab__CapacityReply rep = RELAYLAB__CAPACITY_REPLY__INIT;
    rl_unary_reply(u, &rep.base);
    protobuf_c_message_free_unpacked(msg, NULL);
}

static void set_outage(rl_unary *u, ProtobufCMessage *msg)
{
    observer_call *c = RL_CONTAINER_OF(u, observer_call, u);
    const char *mode = ((const Relaylab__OutageRequest *)msg)->mode;
    if (strcmp(mode, "normal") == 0 || strcmp(mode, "blackhole") == 0) {
        bl_store_set_outage(c->store, mode[0] == 'b' ? BL_OUTAGE_BLACKHOLE : BL_OUTAGE_NONE);
        Relaylab__OutageReply rep = RELAYLAB__OUTAGE_REPLY__INIT;
        rl_unary_reply(u, &rep.base);
    } else {
        rl_unary_fail(u, GRPC_STATUS_INVALID_ARGUMENT,
                      "SetOutage: mode must be normal or blackhole (a closed port is made by stopping the baseline)");
    }
    protobuf_c_message_free_unpacked(msg, NULL);
}

static void hide_running_set(rl_unary *u, ProtobufCMessage *msg)
{
    observer_call *c = RL_CONTAINER_OF(u, observer_call, u);
    const Relaylab__HideRunningRequest *req = (const Relaylab__HideRunningRequest *)msg;
    if (strcmp(req->method, "Lookup") != 0 && strcmp(req->method, "Work") != 0 && strcmp(req->method, "Fetch") != 0) {
        rl_unary_fail(u, GRPC_STATUS_INVALID_ARGUMENT, "HideRunning: method must be Lookup, Work or Fetch");
    } else {
        /* Calls after this one: every record there is now is at or below
         * the newest seq. */
        Relaylab__ObserveReply all = RELAYLAB__OBSERVE_REPLY__INIT;
        bl_store_snapshot(c->store, "", &all);
        uint64_t newest = all.n_calls ? all.calls[all.n_calls - 1]->seq : 0;
        bl_store_snapshot_free(&all);
        pthread_mutex_lock(&hidden.mu);
        snprintf(hidden.method, sizeof hidden.method, "%s", req->method);
        hidden.after_seq = newest;
        hidden.calls = req->calls;
        pthread_mutex_unlock(&hidden.mu);
        Relaylab__HideRunningReply rep = RELAYLAB__HIDE_RUNNING_REPLY__INIT;
        rl_unary_reply(u, &rep.base);
    }
    protobuf_c_message_free_unpacked(msg, NULL);
}

static const rl_unary_ops hide_running_ops = {hide_running_set, NULL, on_free, NULL};
static const rl_unary_ops set_capacity_ops = {set_capacity, NULL, on_free, NULL};
static const rl_unary_ops set_outage_ops = {set_outage, NULL, on_free, NULL};
static const rl_unary_ops observe_ops = {observe, NULL, on_free, NULL};
static const rl_unary_ops reset_ops = {reset, NULL, on_free, NULL};
static const rl_unary_ops set_fault_ops = {set_fault, NULL, on_free, NULL};

static void start(rl_loop *loop, grpc_call *call, void *user, const ProtobufCMessageDescriptor *desc,
                  const rl_unary_ops *ops)
{
    observer_call *c = rl_xcalloc(1, sizeof *c);
    c->store = ((const bl_method *)user)->store;
    rl_unary_start(&c->u, loop, call, desc, BL_MAX_REQUEST, ops);
}

void bl_observe_start(rl_loop *loop, grpc_call *call, const rl_call_info *info, void *user)
{
    (void)info;
    start(loop, call, user, &relaylab__observe_request__descriptor, &observe_ops);
}

void bl_reset_start(rl_loop *loop, grpc_call *call, const rl_call_info *info, void *user)
{
    (void)info;
    start(loop, call, user, &relaylab__reset_request__descriptor, &reset_ops);
}

void bl_set_fault_start(rl_loop *loop, grpc_call *call, const rl_call_info *info, void *user)
{
    (void)info;
    start(loop, call, user, &relaylab__fault_request__descriptor, &set_fault_ops);
}

void bl_set_capacity_start(rl_loop *loop, grpc_call *call, const rl_call_info *info, void *user)
{
    (void)info;
    start(loop, call, user, &relaylab__capacity_request__descriptor, &set_capacity_ops);
}

void bl_set_outage_start(rl_loop *loop, grpc_call *call, const rl_call_info *info, void *user)
{
    (void)info;
    start(loop, call, user, &relaylab__outage_request__descriptor, &set_outage_ops);
}

void bl_hide_running_start(rl_loop *loop, grpc_call *call, const rl_call_info *info, void *user)
{
    (void)info;
    start(loop, call, user, &relaylab__hide_running_request__descriptor, &hide_running_ops);
}
