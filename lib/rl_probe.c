/* rl_probe: step-driven client unary calls and Observer queries; see rl_probe.h. */
#include "rl_probe.h"

#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_pb.h"

#include <grpc/support/alloc.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static void no_op_done(rl_tag *tag, bool ok)
{
    (void)tag;
    (void)ok;
}

int rl_probe_call_start(rl_probe_call *c, grpc_channel *ch, const char *method, const ProtobufCMessage *req,
                        int64_t deadline_ns)
{
    memset(c, 0, sizeof *c);
    c->tag.done = no_op_done;
    rl_client_batch_init(&c->batch);
    c->deadline_ns = deadline_ns;
    c->cq = grpc_completion_queue_create_for_next(NULL);
    gpr_timespec d =
        deadline_ns == RL_NO_DEADLINE ? gpr_inf_future(GPR_CLOCK_MONOTONIC) : rl_ns_to_deadline(deadline_ns);
    grpc_call *call = grpc_channel_create_call(ch, NULL, GRPC_PROPAGATE_DEFAULTS, c->cq,
                                               grpc_slice_from_static_string(method), NULL, d, NULL);
    c->start_ns = rl_now_ns();
    if (rl_client_batch_start(&c->batch, call, req, 0, &c->tag) != RL_OK)
        return RL_EGRPC;
    c->started = true;
    return RL_OK;
}

int rl_probe_call_wait(rl_probe_call *c, int64_t until_ns)
{
    if (c->done)
        return RL_OK;
    if (!c->started)
        return RL_EINVAL;
    for (;;) {
        grpc_event ev = grpc_completion_queue_next(c->cq, rl_ns_to_deadline(until_ns), NULL);
        if (ev.type == GRPC_OP_COMPLETE) {
            c->done = true;
            c->end_ns = rl_now_ns();
            rl_client_batch_done(&c->batch, ev.success);
            return RL_OK;
        }
        if (ev.type == GRPC_QUEUE_TIMEOUT && rl_now_ns() >= until_ns)
            return RL_ETIMEOUT;
        if (ev.type == GRPC_QUEUE_SHUTDOWN)
            return RL_EINVAL;
    }
}

int64_t rl_probe_call_cancel(rl_probe_call *c)
{
    if (!c->started || c->done)
        return 0;
    c->cancel_ns = rl_now_ns();
    grpc_call_cancel(c->batch.call, NULL);
    return c->cancel_ns;
}

int rl_probe_call_reply(const rl_probe_call *c, const ProtobufCMessageDescriptor *desc, ProtobufCMessage **out)
{
    if (!c->done || !c->batch.reply_buf)
        return RL_EINVAL;
    return rl_pb_unpack(desc, c->batch.reply_buf, 0, out);
}

void rl_probe_call_details(const rl_probe_call *c, char *buf, size_t len)
{
    if (!len)
        return;
    size_t n = c->done ? GRPC_SLICE_LENGTH(c->batch.details) : 0;
    if (n > len - 1)
        n = len - 1;
    if (n)
        memcpy(buf, GRPC_SLICE_START_PTR(c->batch.details), n);
    buf[n] = '\0';
}

void rl_probe_call_release(rl_probe_call *c)
{
    if (c->done && c->batch.call) {
        grpc_call_unref(c->batch.call);
        c->batch.call = NULL;
    }
}

bool rl_probe_channel_read(grpc_channel *ch, int64_t until_ns)
{
    grpc_completion_queue *cq = grpc_completion_queue_create_for_next(NULL);
    grpc_connectivity_state st = grpc_channel_check_connectivity_state(ch, 0);
    while (st == GRPC_CHANNEL_READY && rl_now_ns() < until_ns) {
        grpc_channel_watch_connectivity_state(ch, st, rl_ns_to_deadline(until_ns), cq, NULL);
        grpc_event ev = grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
        st = grpc_channel_check_connectivity_state(ch, 0);
        if (!ev.success)
            break; /* |until_ns| passed */
    }
    grpc_completion_queue_shutdown(cq);
    while (grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL).type != GRPC_QUEUE_SHUTDOWN)
        ;
    grpc_completion_queue_destroy(cq);
    return st != GRPC_CHANNEL_READY;
}

void rl_probe_call_fini(rl_probe_call *c)
{
    if (!c->cq && !c->batch.call)
        return;
    if (c->started && !c->done) {
        grpc_call_cancel(c->batch.call, NULL);
        rl_probe_call_wait(c, rl_now_ns() + 5 * RL_NS_PER_SEC);
    }
    rl_client_batch_fini(&c->batch);
    if (c->cq) {
        grpc_completion_queue_shutdown(c->cq);
        /* Bounded drain: after the batch completed nothing else is queued. */
        int64_t until = rl_now_ns() + 5 * RL_NS_PER_SEC;
        for (;;) {
            grpc_event ev = grpc_completion_queue_next(c->cq, rl_ns_to_deadline(until), NULL);
            if (ev.type == GRPC_QUEUE_SHUTDOWN || rl_now_ns() >= until)
                break;
        }
        grpc_completion_queue_destroy(c->cq);
        c->cq = NULL;
    }
}

const char *rl_status_name(int code)
{
    static const char *const names[] = {
        "OK",        "CANCELLED",       "UNKNOWN",           "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",
        "NOT_FOUND", "ALREADY_EXISTS",  "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
        "ABORTED",   "OUT_OF_RANGE",    "UNIMPLEMENTED",     "INTERNAL",           "UNAVAILABLE",
        "DATA_LOSS", "UNAUTHENTICATED",
    };
    if (code >= 0 && code < (int)(sizeof names / sizeof names[0]))
        return names[code];
    static __thread char other[24];
    snprintf(other, sizeof other, "STATUS_%d", code);
    return other;
}

/* ---- Observer ---- */

/* One unary call to the observer, waited for in full. */
static int observer_call(grpc_channel *ch, const char *method, const ProtobufCMessage *req,
                         const ProtobufCMessageDescriptor *reply_desc, int64_t timeout_ms, ProtobufCMessage **out)
{
    rl_probe_call c;
    int64_t deadline = rl_now_ns() + timeout_ms * RL_NS_PER_MS;
    int rc = rl_probe_call_start(&c, ch, method, req, deadline);
    if (rc == RL_OK)
        rc = rl_probe_call_wait(&c, deadline + 100 * RL_NS_PER_MS);
    if (rc == RL_OK) {
        if (c.batch.status == GRPC_STATUS_DEADLINE_EXCEEDED)
            rc = RL_ETIMEOUT;
        else if (c.batch.status != GRPC_STATUS_OK)
            rc = RL_EGRPC;
        else if (reply_desc)
            rc = rl_probe_call_reply(&c, reply_desc, out);
    }
    rl_probe_call_fini(&c);
    return rc;
}

int rl_observe(grpc_channel *baseline, const char *tag, int64_t timeout_ms, Relaylab__ObserveReply **out)
{
    Relaylab__ObserveRequest req = RELAYLAB__OBSERVE_REQUEST__INIT;
    req.tag = (char *)tag;
    return observer_call(baseline, "/relaylab.Observer/Observe", &req.base, &relaylab__observe_reply__descriptor,
                         timeout_ms, (ProtobufCMessage **)out);
}

int rl_observe_until(grpc_channel *baseline, const char *tag, rl_observe_pred pred, void *user, int64_t until_ns,
                     int64_t poll_ms, Relaylab__ObserveReply **out)
{
    *out = NULL;
    int failures = 0;
    for (;;) {
        Relaylab__ObserveReply *r = NULL;
        int rc = rl_observe(baseline, tag, 2000, &r);
        if (rc == RL_OK) {
            failures = 0;
            if (*out)
                relaylab__observe_reply__free_unpacked(*out, NULL);
            *out = r;
            if (pred(r, user))
                return RL_OK;
        } else if (++failures >= 3) {
            return RL_EGRPC;
        }
        int64_t now = rl_now_ns();
        if (now >= until_ns)
            return RL_ETIMEOUT;
        int64_t nap = poll_ms * RL_NS_PER_MS;
        if (now + nap > until_ns)
            nap = until_ns - now;
        struct timespec ts = {.tv_sec = nap / RL_NS_PER_SEC, .tv_nsec = (long)(nap % RL_NS_PER_SEC)};
        nanosleep(&ts, NULL);
    }
}

bool rl_observe_all_ended(const Relaylab__ObserveReply *r, void *min_calls)
{
    if (min_calls && r->n_calls < *(const size_t *)min_calls)
        return false;
    for (size_t i = 0; i < r->n_calls; i++)
        if (!r->calls[i]->ended)
            return false;
    return true;
}

const Relaylab__CallRecord *rl_observe_find(const Relaylab__ObserveReply *r, const char *method, size_t nth)
{
    if (!r)
        return NULL;
    for (size_t i = 0; i < r->n_calls; i++)
        if (strcmp(r->calls[i]->method, method) == 0 && nth-- == 0)
            return r->calls[i];
    return NULL;
}

size_t rl_observe_count(const Relaylab__ObserveReply *r, const char *method)
{
    size_t n = 0;
    if (!r)
        return 0;
    for (size_t i = 0; i < r->n_calls; i++)
        if (!method || strcmp(r->calls[i]->method, method) == 0)
            n++;
    return n;
}

int rl_observer_set_fault(grpc_channel *baseline, const char *method, uint32_t fail_first, int32_t status,
                          bool after_first_message, int64_t timeout_ms)
{
    Relaylab__FaultRequest req = RELAYLAB__FAULT_REQUEST__INIT;
    req.method = (char *)method;
    req.fail_first = fail_first;
    req.status = status;
    req.after_first_message = after_first_message;
    return observer_call(baseline, "/relaylab.Observer/SetFault", &req.base, NULL, timeout_ms, NULL);
}
