/* observer: relaylab.Observer, the grader's window into the baseline:
 * Observe (records by tag), Reset (forget records and faults), SetFault (arm a
 * failure for the retry lab), SetCapacity and SetOutage (the overload lab's
 * world: a Work capacity with a queue, a blackhole). Each answers at once
 * from the store. */
#include "baseline.h"
#include "rl_alloc.h"
#include "rl_deadline.h"
#include "rl_unary.h"

#include "relaylab.pb-c.h"

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

static void observe(rl_unary *u, ProtobufCMessage *msg)
{
    observer_call *c = RL_CONTAINER_OF(u, observer_call, u);
    const Relaylab__ObserveRequest *req = (const Relaylab__ObserveRequest *)msg;
    Relaylab__ObserveReply rep = RELAYLAB__OBSERVE_REPLY__INIT;
    bl_store_snapshot(c->store, req->tag, &rep);
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
    rl_unary_reply(u, &rep.base);
    protobuf_c_message_free_unpacked(msg, NULL);
}

static void set_fault(rl_unary *u, ProtobufCMessage *msg)
{
    observer_call *c = RL_CONTAINER_OF(u, observer_call, u);
    const Relaylab__FaultRequest *req = (const Relaylab__FaultRequest *)msg;
    if (strcmp(req->method, "Lookup") && strcmp(req->method, "Work") && strcmp(req->method, "Fetch")) {
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
