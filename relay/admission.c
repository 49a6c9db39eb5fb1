/* admission: the relay's in-flight bound and queue; see admission.h. */
#include "admission.h"

#include "rl_deadline.h"

#include <stdio.h>

/* How often a loop with waiters looks into its inbox for a slot another
 * loop freed: a millisecond is nothing next to a downstream call, and the
 * loop that frees a slot starts its own waiters at once. */
#define GATE_POLL_MS 1
/* Weight of a new sample in the moving average of the service time: about
 * the last ten calls count, so the estimate follows a backend that slows
 * down within a second at the lab's rates. */
#define SERVICE_ALPHA 0.2

struct relay_loop_gate {
    rl_loop *loop;
    relay_waiter *inbox_head, *inbox_tail; /* granted, not yet started (gate lock) */
    size_t waiting;                        /* queued or granted, not started (loop thread) */
    rl_timer poll;
    bool draining;                         /* inside drain(): no recursion */
};

/* Each loop runs on its own thread, so the loop's gate state is the
 * thread's own. */
static __thread relay_loop_gate tl;

int64_t relay_gate_margin_ms(int64_t service_ms)
{
    return service_ms + service_ms / 4 + RELAY_SERVICE_SLACK_MS;
}

void relay_gate_init(relay_gate *g, unsigned max_inflight, unsigned max_queue, bool unbounded)
{
    pthread_mutex_init(&g->mu, NULL);
    g->max_inflight = max_inflight ? max_inflight : 1;
    g->max_queue = max_queue;
    g->unbounded = unbounded;
    g->inflight = g->queued = 0;
    g->head = g->tail = NULL;
    g->service_ms = 0;
}

void relay_gate_fini(relay_gate *g)
{
    pthread_mutex_destroy(&g->mu);
}

/* Hands free slots to the head of the queue, moving each waiter to its
 * loop's inbox. Called with the lock. */
static void grant_locked(relay_gate *g)
{
    while (g->inflight < g->max_inflight && g->head) {
        relay_waiter *w = g->head;
        g->head = w->next;
        if (g->head)
            g->head->prev = NULL;
        else
            g->tail = NULL;
        g->queued--;
        g->inflight++;
        w->queued = false;
        w->next = NULL;
        w->prev = w->home->inbox_tail;
        if (w->home->inbox_tail)
            w->home->inbox_tail->next = w;
        else
            w->home->inbox_head = w;
        w->home->inbox_tail = w;
    }
}

static void poll_fired(rl_timer *t);

static void arm_poll(void)
{
    if (tl.waiting && !rl_timer_armed(&tl.poll))
        rl_timer_start(tl.loop, &tl.poll, rl_now_ns() + GATE_POLL_MS * RL_NS_PER_MS, poll_fired);
    else if (!tl.waiting && rl_timer_armed(&tl.poll))
        rl_timer_stop(tl.loop, &tl.poll);
}

/* Starts this loop's granted waiters. A waiter's on_grant may give its slot
 * back at once (its client left) and so grant another of ours: the loop
 * below picks that up instead of recursing, however long the queue. */
static void drain(relay_gate *g)
{
    if (tl.draining)
        return;
    tl.draining = true;
    for (;;) {
        pthread_mutex_lock(&g->mu);
        relay_waiter *w = tl.inbox_head;
        if (w) {
            tl.inbox_head = w->next;
            if (!tl.inbox_head)
                tl.inbox_tail = NULL;
        }
        pthread_mutex_unlock(&g->mu);
        if (!w)
            break;
        w->next = w->prev = NULL;
        tl.waiting--;
        w->on_grant(w);
    }
    tl.draining = false;
    arm_poll();
}

static relay_gate *poll_gate; /* the one gate of the process, for the timer */

static void poll_fired(rl_timer *t)
{
    (void)t;
    drain(poll_gate);
}

relay_admit relay_gate_admit(relay_gate *g, rl_loop *loop, relay_waiter *w, relay_grant_fn on_grant,
                             int64_t remaining_ms, char *why, size_t whylen)
{
    if (!tl.loop)
        tl.loop = loop;
    poll_gate = g;
    pthread_mutex_lock(&g->mu);
    if (g->inflight < g->max_inflight && !g->head) {
        g->inflight++;
        pthread_mutex_unlock(&g->mu);
        return RELAY_ADMIT_RUN;
    }
    if (!g->unbounded) {
        unsigned ahead = g->queued;
        int64_t service = (int64_t)(g->service_ms + 0.5);
        /* Calls leave in waves of max_inflight, each about one service time. */
        int64_t wait = (int64_t)((ahead + g->max_inflight) / g->max_inflight) * service;
        const char *full = NULL;
        if (ahead >= g->max_queue) {
            snprintf(why, whylen, "the relay is overloaded: its queue is full (%u calls waiting for %u in flight)",
                     ahead, g->max_inflight);
            full = why;
        } else if (remaining_ms >= 0 && remaining_ms < wait + relay_gate_margin_ms(service)) {
            snprintf(why, whylen,
                     "the relay is overloaded: %lld ms left cannot cover the expected wait (%lld ms behind %u "
                     "calls) and service (%lld ms)",
                     (long long)remaining_ms, (long long)wait, ahead, (long long)service);
            full = why;
        }
        if (full) {
            pthread_mutex_unlock(&g->mu);
            return RELAY_ADMIT_REFUSED;
        }
    }
    w->home = &tl;
    w->on_grant = on_grant;
    w->queued = true;
    w->next = NULL;
    w->prev = g->tail;
    if (g->tail)
        g->tail->next = w;
    else
        g->head = w;
    g->tail = w;
    g->queued++;
    pthread_mutex_unlock(&g->mu);
    tl.waiting++;
    arm_poll();
    return RELAY_ADMIT_QUEUED;
}

bool relay_gate_leave(relay_gate *g, relay_waiter *w)
{
    pthread_mutex_lock(&g->mu);
    bool was = w->queued;
    if (was) {
        if (w->prev)
            w->prev->next = w->next;
        else
            g->head = w->next;
        if (w->next)
            w->next->prev = w->prev;
        else
            g->tail = w->prev;
        g->queued--;
        w->queued = false;
        w->next = w->prev = NULL;
    }
    pthread_mutex_unlock(&g->mu);
    if (was) {
        w->home->waiting--;
        arm_poll();
    }
    return was;
}

void relay_gate_done(relay_gate *g, rl_loop *loop, int64_t service_ms)
{
    if (!tl.loop)
        tl.loop = loop;
    pthread_mutex_lock(&g->mu);
    if (g->inflight)
        g->inflight--;
    if (service_ms >= 0)
        g->service_ms = g->service_ms > 0 ? (1 - SERVICE_ALPHA) * g->service_ms + SERVICE_ALPHA * (double)service_ms
                                          : (double)service_ms;
    grant_locked(g);
    pthread_mutex_unlock(&g->mu);
    drain(g);
}

int64_t relay_gate_service_ms(relay_gate *g)
{
    pthread_mutex_lock(&g->mu);
    int64_t ms = (int64_t)(g->service_ms + 0.5);
    pthread_mutex_unlock(&g->mu);
    return ms;
}
