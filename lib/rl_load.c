/* rl_load: open-loop Process calls on one completion queue; see rl_load.h. */
#include "rl_load.h"

#include "relaylab.pb-c.h"
#include "rl_alloc.h"
#include "rl_client.h"
#include "rl_deadline.h"
#include "rl_err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One call's gRPC state; |out| is its entry in the results. */
typedef struct slot {
    rl_client_batch batch;
    bool pending;
    bool cut; /* cancelled by the grader after the grace */
} slot;

static int start_call(grpc_channel *ch, grpc_completion_queue *cq, const rl_load_options *opt, size_t i, slot *s,
                      rl_load_call *out)
{
    memset(s, 0, sizeof *s);
    rl_client_batch_init(&s->batch);
    char tag[256];
    snprintf(tag, sizeof tag, "%s.%zu", opt->prefix, i);
    Relaylab__ProcessRequest req = RELAYLAB__PROCESS_REQUEST__INIT;
    req.tag = tag;
    req.steps = opt->steps;
    req.step_ms = opt->step_ms;
    out->start_ns = rl_now_ns();
    out->deadline_ns = out->start_ns + opt->deadline_ms * RL_NS_PER_MS;
    out->status = GRPC_STATUS_UNKNOWN;
    grpc_call *call = grpc_channel_create_call(ch, NULL, GRPC_PROPAGATE_DEFAULTS, cq,
                                               grpc_slice_from_static_string("/relaylab.Relay/Process"), NULL,
                                               rl_ns_to_deadline(out->deadline_ns), NULL);
    if (rl_client_batch_start(&s->batch, call, &req.base, 0, (void *)(uintptr_t)(i + 1)) != RL_OK)
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
    rl_client_batch_done(&slots[i].batch, ev.success);
    calls[i].status = slots[i].batch.status;
    size_t len = GRPC_SLICE_LENGTH(slots[i].batch.details);
    if (len >= sizeof calls[i].details)
        len = sizeof calls[i].details - 1;
    memcpy(calls[i].details, GRPC_SLICE_START_PTR(slots[i].batch.details), len);
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
        if (opt->tick && now >= next_tick) {
            opt->tick(opt->user);
            next_tick = now + opt->tick_ms * RL_NS_PER_MS;
        }
        if (now < due) {
            take_event(cq, due < next_tick ? due : next_tick, slots, calls, &pending);
            continue;
        }
        if (start_call(ch, cq, opt, n, &slots[n], &calls[n]) != RL_OK) {
            rl_client_batch_fini(&slots[n].batch);
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
            grpc_call_cancel(slots[i].batch.call, NULL);
        }
    }
    int64_t drain_until = rl_now_ns() + 5 * RL_NS_PER_SEC;
    while (pending && rl_now_ns() < drain_until)
        take_event(cq, drain_until, slots, calls, &pending);
    for (size_t i = 0; i < n; i++)
        rl_client_batch_fini(&slots[i].batch);
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
