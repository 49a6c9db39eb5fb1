/* fetch: Baseline.Fetch streams |count| FetchReply messages, the next only
 * when the previous one was accepted by flow control. The retry lab's fault
 * "after_first_message" fails the stream after one message: by then the call
 * has committed (headers went out), so a correct client never retries it. */
#include "baseline.h"
#include "rl_alloc.h"
#include "rl_deadline.h"
#include "rl_unary.h"

#include "relaylab.pb-c.h"

#include <stdlib.h>

#define FETCH_MAX_COUNT 100000u

typedef struct fetch_call {
    rl_unary u;
    bl_store *store;
    Relaylab__FetchRequest *req;
    uint64_t rec;
    int64_t arrival_ns;
    bool has_deadline;
    int64_t deadline_ms;
    uint32_t attempt;
    uint32_t sent;
    bool fail_after_first;
    grpc_status_code fault_status;
} fetch_call;

static void send_next(fetch_call *c)
{
    if (c->sent == c->req->count || (c->fail_after_first && c->sent == 1)) {
        grpc_status_code st = c->sent == c->req->count && !c->fail_after_first ? GRPC_STATUS_OK : c->fault_status;
        bl_store_close(c->store, c->rec, rl_now_ns(), st, false, st != GRPC_STATUS_OK);
        rl_unary_finish(&c->u, st, st == GRPC_STATUS_OK ? NULL : "injected fault after the first message");
        return;
    }
    Relaylab__FetchReply rep = RELAYLAB__FETCH_REPLY__INIT;
    rep.tag = c->req->tag;
    rep.seq = c->sent;
    rl_unary_send(&c->u, &rep.base);
}

static void on_sent(rl_unary *u, bool ok)
{
    fetch_call *c = RL_CONTAINER_OF(u, fetch_call, u);
    if (!ok || u->cancelled)
        return; /* on_cancel records the end */
    bl_store_progress(c->store, c->rec, ++c->sent);
    send_next(c);
}

static void on_request(rl_unary *u, ProtobufCMessage *msg)
{
    fetch_call *c = RL_CONTAINER_OF(u, fetch_call, u);
    c->req = (Relaylab__FetchRequest *)msg;
    if (c->req->count > FETCH_MAX_COUNT) {
        rl_unary_fail(u, GRPC_STATUS_INVALID_ARGUMENT, "Fetch count is above the limit of 100000");
        return;
    }
    c->rec = bl_store_open(c->store, c->req->tag, "Fetch", c->has_deadline, c->deadline_ms, c->arrival_ns, c->attempt);
    bl_record_peer(c->store, c->rec, u->call);
    bool after_first = false;
    if (bl_store_take_fault(c->store, "Fetch", &c->fault_status, &after_first)) {
        if (!after_first || c->req->count == 0) {
            bl_store_close(c->store, c->rec, rl_now_ns(), c->fault_status, false, true);
            rl_unary_fail(u, c->fault_status, "injected fault");
            return;
        }
        c->fail_after_first = true;
    }
    send_next(c);
}

static void on_cancel(rl_unary *u)
{
    fetch_call *c = RL_CONTAINER_OF(u, fetch_call, u);
    if (c->rec)
        bl_store_close(c->store, c->rec, rl_now_ns(), GRPC_STATUS_CANCELLED, true, false);
}

static void on_free(rl_unary *u)
{
    fetch_call *c = RL_CONTAINER_OF(u, fetch_call, u);
    if (c->req)
        protobuf_c_message_free_unpacked(&c->req->base, NULL);
    free(c);
}

static const rl_unary_ops fetch_ops = {on_request, on_cancel, on_free, on_sent};

void bl_fetch_start(rl_loop *loop, grpc_call *call, const rl_call_info *info, void *user)
{
    const bl_method *m = user;
    fetch_call *c = rl_xcalloc(1, sizeof *c);
    c->store = m->store;
    c->arrival_ns = info->arrival_ns;
    c->has_deadline = rl_deadline_remaining_ms(info->deadline, info->arrival_ns, &c->deadline_ms) == 0;
    c->attempt = bl_attempt(info->metadata);
    rl_unary_start(&c->u, loop, call, &relaylab__fetch_request__descriptor, BL_MAX_REQUEST, &fetch_ops);
}
