/* rl_load: open-loop Process calls on one completion queue; see rl_load.h. */
#include "rl_load.h"

#include "relaylab.pb-c.h"
#include "rl_alloc.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_pb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One call's gRPC state; |out| is its entry in the results. */
typedef struct slot {
    grpc_call *call;
    grpc_byte_buffer *send, *recv;
    grpc_metadata_array initial_md, trailing_md;
    grpc_slice details;
    grpc_status_code status;
    bool pending;
    bool cut; /* cancelled by the grader after the grace */
} slot;

static void finish_slot(slot *s)
{
    if (s->call)
        grpc_call_unref(s->call);
    if (s->send)
        grpc_byte_buffer_destroy(s->send);
    if (s->recv)
        grpc_byte_buffer_destroy(s->recv);
    grpc_metadata_array_destroy(&s->initial_md);
    grpc_metadata_array_destroy(&s->trailing_md);
    grpc_slice_unref(s->details);
}

static int start_call(grpc_channel *ch, grpc_completion_queue *cq, const rl_load_options *opt, size_t i, slot *s,
                      rl_load_call *out)
{
    memset(s, 0, sizeof *s);
    grpc_metadata_array_init(&s->initial_md);
    grpc_metadata_array_init(&s->trailing_md);
    s->details = grpc_empty_slice();
    char tag[256];
    snprintf(tag, sizeof tag, "%s.%zu", opt->prefix, i);
    Relaylab__ProcessRequest req = RELAYLAB__PROCESS_REQUEST__INIT;
    req.tag = tag;
    req.steps = opt->steps;
    req.step_ms = opt->step_ms;
    out->start_ns = rl_now_ns();
    out->deadline_ns = out->start_ns + opt->deadline_ms * RL_NS_PER_MS;
    out->status = GRPC_STATUS_UNKNOWN;
    s->call = grpc_channel_create_call(ch, NULL, GRPC_PROPAGATE_DEFAULTS, cq,
                                       grpc_slice_from_static_string("/relaylab.Relay/Process"), NULL,
                                       rl_ns_to_deadline(out->deadline_ns), NULL);
    if (!s->call)
        return RL_EGRPC;
    s->send = rl_pb_pack(&req.base);
    grpc_op ops[6];
    memset(ops, 0, sizeof ops);
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[1].op = GRPC_OP_SEND_MESSAGE;
    ops[1].data.send_message.send_message = s->send;
    ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[3].data.recv_initial_metadata.recv_initial_metadata = &s->initial_md;
    ops[4].op = GRPC_OP_RECV_MESSAGE;
    ops[4].data.recv_message.recv_message = &s->recv;
    ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    ops[5].data.recv_status_on_client.trailing_metadata = &s->trailing_md;
    ops[5].data.recv_status_on_client.status = &s->status;
    ops[5].data.recv_status_on_client.status_details = &s->details;
    if (grpc_call_start_batch(s->call, ops, 6, (void *)(uintptr_t)(i + 1), NULL) != GRPC_CALL_OK)
        return RL_EGRPC;
    s->pending = true;
    return RL_OK;
}

/* Takes one event due before |until_ns|; false when none came. */
static bool take_event(grpc_completion_queue *cq, int64_t until_ns, slot *slots, rl_load_call *calls, size_t *pending)
{
    grpc_event ev = grpc_completion_queue_next(cq, rl_ns_to_deadline(until_ns), NULL);
    if (ev.type != GRPC_OP_COMPLETE)
        return false;
    size_t i = (size_t)(uintptr_t)ev.tag - 1;
    calls[i].end_ns = slots[i].cut ? 0 : rl_now_ns(); /* a cut call had no status of its own */
    calls[i].status = ev.success ? slots[i].status : GRPC_STATUS_UNKNOWN;
    size_t len = ev.success ? GRPC_SLICE_LENGTH(slots[i].details) : 0;
    if (len >= sizeof calls[i].details)
        len = sizeof calls[i].details - 1;
    memcpy(calls[i].details, GRPC_SLICE_START_PTR(slots[i].details), len);
    calls[i].details[len] = '\0';
    slots[i].pending = false;
    (*pending)--;
    return true;
}

int rl_load_run(grpc_channel *ch, const rl_load_options *opt, int64_t grace_ms, rl_load_call **calls_out,
                size_t *ncalls)
{
    size_t max = (size_t)(opt->rate * (double)opt->duration_ms / 1000.0) + 1;
    rl_load_call *calls = rl_xcalloc(max, sizeof *calls);
    slot *slots = rl_xcalloc(max, sizeof *slots);
    grpc_completion_queue *cq = grpc_completion_queue_create_for_next(NULL);
    int rc = RL_OK;
    size_t n = 0, pending = 0;
    int64_t t0 = rl_now_ns(), end = t0 + opt->duration_ms * RL_NS_PER_MS;
    int64_t next_tick = opt->tick ? t0 : INT64_MAX;
    double gap_ns = 1e9 / opt->rate;
    while (n < max && !(opt->stop && *opt->stop)) {
        int64_t due = t0 + (int64_t)((double)n * gap_ns);
        if (due >= end)
            break;
        int64_t now = rl_now_ns();
        if (now >= next_tick) {
            opt->tick(opt->user);
            next_tick = now + opt->tick_ms * RL_NS_PER_MS;
        }
        if (now < due) {
            take_event(cq, due < next_tick ? due : next_tick, slots, calls, &pending);
            continue;
        }
        if (start_call(ch, cq, opt, n, &slots[n], &calls[n]) != RL_OK) {
            finish_slot(&slots[n]);
            rc = RL_EGRPC;
            break;
        }
        n++;
        pending++;
    }
    /* Every call ends by its deadline on the client's own timer; the grace
     * only covers a loaded machine. Past it, cancel what is left. */
    int64_t last = n ? calls[n - 1].deadline_ns + grace_ms * RL_NS_PER_MS : rl_now_ns();
    while (pending && rl_now_ns() < last && !(opt->stop && *opt->stop)) {
        int64_t now = rl_now_ns();
        if (opt->tick && now >= next_tick) {
            opt->tick(opt->user);
            next_tick = now + opt->tick_ms * RL_NS_PER_MS;
        }
        take_event(cq, last < next_tick ? last : next_tick, slots, calls, &pending);
    }
    for (size_t i = 0; i < n; i++) {
        if (slots[i].pending) {
            slots[i].cut = true;
            grpc_call_cancel(slots[i].call, NULL);
        }
    }
    int64_t drain_until = rl_now_ns() + 5 * RL_NS_PER_SEC;
    while (pending && rl_now_ns() < drain_until)
        take_event(cq, drain_until, slots, calls, &pending);
    for (size_t i = 0; i < n; i++)
        finish_slot(&slots[i]);
    grpc_completion_queue_shutdown(cq);
    for (;;) {
        grpc_event ev = grpc_completion_queue_next(cq, rl_ns_to_deadline(rl_now_ns() + RL_NS_PER_SEC), NULL);
        if (ev.type == GRPC_QUEUE_SHUTDOWN || ev.type == GRPC_QUEUE_TIMEOUT)
            break;
    }
    grpc_completion_queue_destroy(cq);
    free(slots);
    *calls_out = calls;
    *ncalls = n;
    return rc;
}

long rl_load_index(const char *prefix, const char *tag)
{
    size_t len = strlen(prefix);
    if (strncmp(tag, prefix, len) != 0 || tag[len] != '.' || !tag[len + 1])
        return -1;
    char *end;
    long i = strtol(tag + len + 1, &end, 10);
    return *end || i < 0 ? -1 : i;
}
