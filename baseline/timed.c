/* timed: the Lookup/Work state machine; see timed.h.
 *
 * A call is a chain of step timers on its loop. Each step is due at an
 * absolute instant (start + k * step_ms) so steps do not drift, and no timer
 * is ever armed past the deadline: the call ends DEADLINE_EXCEEDED exactly
 * when its time runs out, whatever gRPC's own deadline timer does. A cancel
 * (RECV_CLOSE_ON_SERVER with cancelled=1) stops the timer at once. */
#include "timed.h"

#include "baseline.h"
#include "rl_alloc.h"
#include "rl_deadline.h"
#include "rl_log.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct timed_call {
    rl_unary u;
    rl_timer timer;
    const timed_kind *kind;
    bl_store *store;
    ProtobufCMessage *req; /* owned; |tag| points into it */
    const char *tag;
    uint64_t rec; /* store record, 0 until the request arrived */
    int64_t arrival_ns;
    int64_t deadline_ns; /* INT64_MAX without a deadline */
    bool has_deadline;
    int64_t deadline_ms; /* remaining at arrival */
    uint32_t attempt;
    int64_t start_ns;
    uint32_t steps, step_ms, done;
    bool queued;   /* waiting for a Work slot (the overload lab) */
    bool has_slot; /* holds a Work slot until it ends */
} timed_call;

/* How often a Work call waiting for a slot looks again: slots free on
 * other loops' threads, and a 1 ms poll costs nothing next to a step. */
#define SLOT_POLL_MS 1

static void finish(timed_call *c, grpc_status_code status, bool cancelled)
{
    rl_timer_stop(c->u.loop, &c->timer);
    if (c->queued)
        bl_store_slot_leave(c->store, c->rec);
    if (c->has_slot)
        bl_store_slot_release(c->store);
    c->queued = c->has_slot = false;
    bl_store_close(c->store, c->rec, rl_now_ns(), status, cancelled, false);
    if (status == GRPC_STATUS_OK) {
        c->kind->reply(&c->u, c->tag, c->done);
    } else {
        char msg[128];
        snprintf(msg, sizeof msg, "%s %s after %u of %u steps", c->kind->method,
                 status == GRPC_STATUS_DEADLINE_EXCEEDED ? "ran out of time" : "was cancelled", c->done, c->steps);
        rl_unary_fail(&c->u, status, msg);
    }
}

static void step_fired(rl_timer *t);

static void arm_next(timed_call *c)
{
    int64_t due = c->start_ns + (int64_t)(c->done + 1) * c->step_ms * RL_NS_PER_MS;
    rl_timer_start(c->u.loop, &c->timer, due < c->deadline_ns ? due : c->deadline_ns, step_fired);
}

static void step_fired(rl_timer *t)
{
    timed_call *c = RL_CONTAINER_OF(t, timed_call, timer);
    if (rl_now_ns() >= c->deadline_ns) {
        finish(c, GRPC_STATUS_DEADLINE_EXCEEDED, false);
        return;
    }
    bl_store_progress(c->store, c->rec, ++c->done);
    if (c->done == c->steps)
        finish(c, GRPC_STATUS_OK, false);
    else
        arm_next(c);
}

/* Runs the plan from now: the call holds its slot (if any). */
static void begin(timed_call *c)
{
    c->start_ns = rl_now_ns();
    bl_store_started(c->store, c->rec, c->start_ns);
    if (c->steps == 0 && c->start_ns < c->deadline_ns)
        finish(c, GRPC_STATUS_OK, false);
    else
        arm_next(c);
}

/* A blackholed call, or one whose time ran out in the queue: it ends at its
 * deadline having done nothing. */
static void expire_fired(rl_timer *t)
{
    finish(RL_CONTAINER_OF(t, timed_call, timer), GRPC_STATUS_DEADLINE_EXCEEDED, false);
}

static void slot_poll(rl_timer *t)
{
    timed_call *c = RL_CONTAINER_OF(t, timed_call, timer);
    int64_t now = rl_now_ns();
    if (now >= c->deadline_ns) {
        finish(c, GRPC_STATUS_DEADLINE_EXCEEDED, false);
    } else if (bl_store_slot_take(c->store, c->rec)) {
        c->queued = false;
        c->has_slot = true;
        begin(c);
    } else {
        int64_t due = now + SLOT_POLL_MS * RL_NS_PER_MS;
        rl_timer_start(c->u.loop, &c->timer, due < c->deadline_ns ? due : c->deadline_ns, slot_poll);
    }
}

static void on_request(rl_unary *u, ProtobufCMessage *req)
{
    timed_call *c = RL_CONTAINER_OF(u, timed_call, u);
    c->req = req;
    c->kind->plan(req, &c->tag, &c->steps, &c->step_ms);
    if (c->steps > BL_MAX_STEPS || c->step_ms > BL_MAX_STEP_MS || (uint64_t)c->steps * c->step_ms > BL_MAX_TOTAL_MS) {
        char msg[160];
        snprintf(msg, sizeof msg, "%s plan of %u x %u ms is above the limits (%u steps, %u ms a step, %u ms in all)",
                 c->kind->method, c->steps, c->step_ms, BL_MAX_STEPS, BL_MAX_STEP_MS, BL_MAX_TOTAL_MS);
        rl_unary_fail(u, GRPC_STATUS_INVALID_ARGUMENT, msg);
        return;
    }
    c->rec =
        bl_store_open(c->store, c->tag, c->kind->method, c->has_deadline, c->deadline_ms, c->arrival_ns, c->attempt);
    bl_record_peer(c->store, c->rec, u->call);
    grpc_status_code fault_status;
    bool after_first;
    if (bl_store_take_fault(c->store, c->kind->method, &fault_status, &after_first)) {
        /* Trailers-Only, so that a client retry policy can retry it. */
        bl_store_close(c->store, c->rec, rl_now_ns(), fault_status, false, true);
        rl_unary_fail(u, fault_status, "injected fault");
        return;
    }
    if (bl_store_outage(c->store) == BL_OUTAGE_BLACKHOLE) {
        /* Accepted, recorded, never answered: only the deadline (or a
         * cancel) ends it. Without a deadline it waits for the cancel. */
        bl_store_blackholed(c->store, c->rec);
        if (c->deadline_ns != INT64_MAX)
            rl_timer_start(u->loop, &c->timer, c->deadline_ns, expire_fired);
        return;
    }
    if (c->kind == &bl_work_kind) {
        if (!bl_store_slot_admit(c->store, c->rec)) {
            c->queued = true;
            slot_poll(&c->timer);
            return;
        }
        c->has_slot = true;
    }
    begin(c);
}

static void on_cancel(rl_unary *u)
{
    timed_call *c = RL_CONTAINER_OF(u, timed_call, u);
    if (!c->rec || u->answered)
        return;
    /* gRPC cancels a server call when its deadline passes, so a cancel at
     * or after the deadline is the deadline, not the client giving up. So is
     * one just before it: the client's own timer fires at the client's
     * deadline, which reaches us later by the transit and earlier by the
     * wire's rounding of grpc-timeout, so its cancel can land a moment
     * before ours (seen: 0.1 ms before, under load). EXPIRY_SLACK_MS covers
     * that moment; a client that gives up earlier is still a cancel. */
    enum { EXPIRY_SLACK_MS = 5 };
    int64_t slack_ms =
        EXPIRY_SLACK_MS +
        rl_wire_rounding_ms((c->deadline_ns - (c->start_ns ? c->start_ns : c->arrival_ns)) / RL_NS_PER_MS);
    bool expired = rl_now_ns() >= c->deadline_ns - slack_ms * RL_NS_PER_MS;
    finish(c, expired ? GRPC_STATUS_DEADLINE_EXCEEDED : GRPC_STATUS_CANCELLED, true);
}

static void on_free(rl_unary *u)
{
    timed_call *c = RL_CONTAINER_OF(u, timed_call, u);
    rl_timer_stop(u->loop, &c->timer);
    if (c->queued)
        bl_store_slot_leave(c->store, c->rec);
    if (c->has_slot)
        bl_store_slot_release(c->store);
    if (c->req)
        protobuf_c_message_free_unpacked(c->req, NULL);
    free(c);
}

static const rl_unary_ops timed_ops = {on_request, on_cancel, on_free, NULL};

void bl_timed_start(rl_loop *loop, grpc_call *call, const rl_call_info *info, void *user)
{
    const bl_method *m = user;
    timed_call *c = rl_xcalloc(1, sizeof *c);
    c->kind = m->kind;
    c->store = m->store;
    c->arrival_ns = info->arrival_ns;
    c->has_deadline = rl_deadline_remaining_ms(info->deadline, info->arrival_ns, &c->deadline_ms) == 0;
    if (!c->has_deadline || rl_deadline_to_ns(info->deadline, &c->deadline_ns) != 0)
        c->deadline_ns = INT64_MAX;
    c->attempt = bl_attempt(info->metadata);
    rl_unary_start(&c->u, loop, call, c->kind->request, BL_MAX_REQUEST, &timed_ops);
}
