/* rl_loop: completion-queue loop with a timer heap; see rl_loop.h. */
#include "rl_loop.h"

#include "rl_alloc.h"
#include "rl_deadline.h"
#include "rl_err.h"

#include <stdlib.h>

int rl_loop_init(rl_loop *loop)
{
    loop->cq = grpc_completion_queue_create_for_next(NULL);
    loop->heap = NULL;
    loop->nheap = loop->capheap = 0;
    loop->events = 0;
    loop->wake_tag.done = NULL;
    loop->wake_channel = NULL;
    loop->wake_call = NULL;
    pthread_mutex_init(&loop->wake_mu, NULL);
    atomic_init(&loop->wake_pending, false);
    loop->woken = NULL;
    loop->woken_user = NULL;
    loop->wakes = 0;
    return 0;
}

void rl_loop_fini(rl_loop *loop)
{
    for (size_t i = 0; i < loop->nheap; i++)
        loop->heap[i]->slot = 0;
    free(loop->heap);
    loop->heap = NULL;
    loop->nheap = loop->capheap = 0;
    /* The call holds a ref on the queue: release it first. */
    if (loop->wake_call)
        grpc_call_unref(loop->wake_call);
    if (loop->wake_channel)
        grpc_channel_destroy(loop->wake_channel);
    loop->wake_call = NULL;
    loop->wake_channel = NULL;
    pthread_mutex_destroy(&loop->wake_mu);
    if (loop->cq)
        grpc_completion_queue_destroy(loop->cq);
    loop->cq = NULL;
}

static void woken(rl_tag *tag, bool ok)
{
    (void)ok; /* an empty batch always succeeds */
    rl_loop *loop = RL_CONTAINER_OF(tag, rl_loop, wake_tag);
    /* Cleared before the callback, so a wake-up posted while it runs is
     * not lost: it posts again and the callback runs again. */
    atomic_store(&loop->wake_pending, false);
    loop->wakes++;
    loop->woken(loop, loop->woken_user);
}

int rl_loop_wake_init(rl_loop *loop, rl_loop_woken fire, void *user)
{
    /* A lame channel never connects: a call on it costs no I/O, and it
     * only ever sees empty batches. */
    loop->wake_channel = grpc_lame_client_channel_create(NULL, GRPC_STATUS_UNAVAILABLE, "rl_loop wake-ups only");
    if (!loop->wake_channel)
        return RL_EGRPC;
    loop->wake_call = grpc_channel_create_call(loop->wake_channel, NULL, GRPC_PROPAGATE_DEFAULTS, loop->cq,
                                               grpc_slice_from_static_string("/rl_loop/wake"), NULL,
                                               gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
    if (!loop->wake_call) {
        grpc_channel_destroy(loop->wake_channel);
        loop->wake_channel = NULL;
        return RL_EGRPC;
    }
    loop->wake_tag.done = woken;
    loop->woken = fire;
    loop->woken_user = user;
    return RL_OK;
}

void rl_loop_wake(rl_loop *loop)
{
    if (atomic_exchange(&loop->wake_pending, true))
        return; /* one is on its way and has not run yet */
    pthread_mutex_lock(&loop->wake_mu);
    grpc_call_error e = grpc_call_start_batch(loop->wake_call, NULL, 0, &loop->wake_tag, NULL);
    pthread_mutex_unlock(&loop->wake_mu);
    if (e != GRPC_CALL_OK)
        abort(); /* only a misuse gets here (no rl_loop_wake_init) */
}

static void heap_set(rl_loop *loop, size_t i, rl_timer *t)
{
    loop->heap[i] = t;
    t->slot = i + 1;
}

static void sift_up(rl_loop *loop, size_t i)
{
    rl_timer *t = loop->heap[i];
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (loop->heap[parent]->due_ns <= t->due_ns)
            break;
        heap_set(loop, i, loop->heap[parent]);
        i = parent;
    }
    heap_set(loop, i, t);
}

static void sift_down(rl_loop *loop, size_t i)
{
    rl_timer *t = loop->heap[i];
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= loop->nheap)
            break;
        if (child + 1 < loop->nheap && loop->heap[child + 1]->due_ns < loop->heap[child]->due_ns)
            child++;
        if (loop->heap[child]->due_ns >= t->due_ns)
            break;
        heap_set(loop, i, loop->heap[child]);
        i = child;
    }
    heap_set(loop, i, t);
}

void rl_timer_stop(rl_loop *loop, rl_timer *timer)
{
    if (!timer->slot)
        return;
    size_t i = timer->slot - 1;
    timer->slot = 0;
    rl_timer *last = loop->heap[--loop->nheap];
    if (i == loop->nheap)
        return;
    heap_set(loop, i, last);
    sift_down(loop, i);
    sift_up(loop, last->slot - 1);
}

void rl_timer_start(rl_loop *loop, rl_timer *timer, int64_t due_ns, rl_timer_cb fire)
{
    rl_timer_stop(loop, timer);
    timer->due_ns = due_ns;
    timer->fire = fire;
    /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers, sized by one pointer */
    RL_GROW(loop->heap, loop->nheap, loop->capheap, 16);
    heap_set(loop, loop->nheap++, timer);
    sift_up(loop, loop->nheap - 1);
}

static void fire_due(rl_loop *loop)
{
    int64_t now = rl_now_ns();
    while (loop->nheap && loop->heap[0]->due_ns <= now) {
        rl_timer *t = loop->heap[0];
        rl_timer_stop(loop, t);
        t->fire(t); /* may re-arm t or free its owner */
    }
}

/* One wait on the queue, bounded by |until_ns| and the earliest timer. */
static bool step(rl_loop *loop, int64_t until_ns)
{
    int64_t wake = until_ns;
    if (loop->nheap && loop->heap[0]->due_ns < wake)
        wake = loop->heap[0]->due_ns;
    gpr_timespec deadline = wake == INT64_MAX ? gpr_inf_future(GPR_CLOCK_MONOTONIC) : rl_ns_to_deadline(wake);
    grpc_event ev = grpc_completion_queue_next(loop->cq, deadline, NULL);
    switch (ev.type) {
    case GRPC_QUEUE_SHUTDOWN: return false;
    case GRPC_OP_COMPLETE: {
        rl_tag *tag = ev.tag;
        loop->events++;
        tag->done(tag, ev.success != 0);
        break;
    }
    case GRPC_QUEUE_TIMEOUT: break;
    }
    fire_due(loop);
    return true;
}

void rl_loop_run(rl_loop *loop)
{
    while (step(loop, INT64_MAX))
        ;
}

bool rl_loop_run_until(rl_loop *loop, int64_t until_ns)
{
    while (rl_now_ns() < until_ns)
        if (!step(loop, until_ns))
            return false;
    return true;
}
