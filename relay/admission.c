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
    bool draining; /* inside drain(): no recursion */
};

/* Each loop runs on its own thread, so the loop's gate state is the
 * thread's own. */
static __thread relay_loop_gate tl;

int64_t relay_gate_margin_ms(int64_t service_ms)
{
    return service_ms + service_ms / 2 + RELAY_SERVICE_SLACK_MS;
}

void relay_gate_init(relay_gate *g, unsigned max_inflight, unsigned max_queue, bool unbounded)
{
    pthread_mutex_init(&g->mu, NULL);
    g->max_inflight = max_inflight ? max_inflight : 1;
    g->max_queue = max_queue;
    g->unbounded = unbounded;
    g->closed = false;
    g->inflight = g->queued = 0;
    g->head = g->tail = NULL;
    g->run_head = g->run_tail = NULL;
    g->service_ms = 0;
}

void relay_gate_fini(relay_gate *g)
{
    pthread_mutex_destroy(&g->mu);
}

/* Takes |w| out of the queue. Called with the lock. */
static void unlink_locked(relay_gate *g, relay_waiter *w)
{
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

/* Moves |w| (out of the queue) to its loop's inbox. Called with the lock. */
static void to_inbox_locked(relay_waiter *w)
{
    w->next = NULL;
    w->prev = w->home->inbox_tail;
    if (w->home->inbox_tail)
        w->home->inbox_tail->next = w;
    else
        w->home->inbox_head = w;
    w->home->inbox_tail = w;
}

/* |w| takes a slot now: it joins the in-flight list. Called with the lock. */
static void run_locked(relay_gate *g, relay_waiter *w, int64_t now_ns)
{
    g->inflight++;
    w->slot_ns = now_ns;
    w->run_next = NULL;
    w->run_prev = g->run_tail;
    if (g->run_tail)
        g->run_tail->run_next = w;
    else
        g->run_head = w;
    g->run_tail = w;
}

/* |w| gives its slot back. Called with the lock. */
static void unrun_locked(relay_gate *g, relay_waiter *w)
{
    if (w->run_prev)
        w->run_prev->run_next = w->run_next;
    else
        g->run_head = w->run_next;
    if (w->run_next)
        w->run_next->run_prev = w->run_prev;
    else
        g->run_tail = w->run_prev;
    w->run_next = w->run_prev = NULL;
    if (g->inflight)
        g->inflight--;
}

/* The service time to plan with: the average, or the age of the oldest
 * call in flight when that is longer. Called with the lock. */
static int64_t service_locked(const relay_gate *g, int64_t now_ns)
{
    int64_t avg = (int64_t)(g->service_ms + 0.5);
    int64_t age = g->run_head ? (now_ns - g->run_head->slot_ns) / RL_NS_PER_MS : 0;
    return age > avg ? age : avg;
}

/* The wait of the call |ahead| places from the head of the queue, FIFO:
 * it takes the slot of the (ahead mod max_inflight)-th oldest call in
 * flight, which ends |service| after it began, plus one service time for
 * every full round of max_inflight calls ahead of it. Walks at most
 * max_inflight entries. Called with the lock. */
static int64_t expected_wait_ms(const relay_gate *g, unsigned ahead, int64_t service, int64_t now_ns)
{
    const relay_waiter *run = g->run_head;
    for (unsigned j = ahead % g->max_inflight; run && j; j--)
        run = run->run_next;
    int64_t first = 0;
    if (run) {
        int64_t age = (now_ns - run->slot_ns) / RL_NS_PER_MS;
        first = service > age ? service - age : 0;
    }
    return first + (int64_t)(ahead / g->max_inflight) * service;
}

/* Hands free slots to the head of the queue, then (bounded gates) evicts
 * the queued calls whose remaining time no longer covers their expected
 * wait and service. Called with the lock. */
static void grant_locked(relay_gate *g, int64_t now_ns)
{
    while (g->inflight < g->max_inflight && g->head) {
        relay_waiter *w = g->head;
        unlink_locked(g, w);
        run_locked(g, w, now_ns);
        to_inbox_locked(w);
    }
    if (g->unbounded)
        return;
    int64_t service = service_locked(g, now_ns);
    unsigned ahead = 0;
    for (relay_waiter *w = g->head, *next; w; w = next) {
        next = w->next;
        int64_t wait = expected_wait_ms(g, ahead, service, now_ns);
        if (w->deadline_ns != INT64_MAX &&
            (w->deadline_ns - now_ns) / RL_NS_PER_MS < wait + relay_gate_margin_ms(service)) {
            unlink_locked(g, w);
            w->evicted = true;
            to_inbox_locked(w);
        } else {
            ahead++;
        }
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
                             int64_t deadline_ns, char *why, size_t whylen)
{
    int64_t now = rl_now_ns();
    int64_t remaining_ms = deadline_ns == INT64_MAX ? -1 : (deadline_ns > now ? (deadline_ns - now) / RL_NS_PER_MS : 0);
    if (!tl.loop)
        tl.loop = loop;
    poll_gate = g;
    pthread_mutex_lock(&g->mu);
    if (g->inflight < g->max_inflight && !g->head) {
        w->home = &tl;
        run_locked(g, w, now);
        pthread_mutex_unlock(&g->mu);
        return RELAY_ADMIT_RUN;
    }
    if (g->closed && !g->unbounded) {
        pthread_mutex_unlock(&g->mu);
        snprintf(why, whylen, "the relay is shutting down");
        return RELAY_ADMIT_CLOSED;
    }
    if (!g->unbounded) {
        grant_locked(g, now); /* the estimate may have grown since: evict first */
        unsigned ahead = g->queued;
        int64_t service = service_locked(g, now);
        int64_t wait = expected_wait_ms(g, ahead, service, now);
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
    w->deadline_ns = deadline_ns;
    w->evicted = false;
    w->closing = false;
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

void relay_gate_close(relay_gate *g)
{
    pthread_mutex_lock(&g->mu);
    g->closed = true;
    if (!g->unbounded) {
        while (g->head) {
            relay_waiter *w = g->head;
            unlink_locked(g, w);
            w->evicted = w->closing = true;
            to_inbox_locked(w);
        }
    }
    pthread_mutex_unlock(&g->mu);
}

bool relay_gate_leave(relay_gate *g, relay_waiter *w)
{
    pthread_mutex_lock(&g->mu);
    bool was = w->queued;
    if (was)
        unlink_locked(g, w);
    pthread_mutex_unlock(&g->mu);
    if (was) {
        w->home->waiting--;
        arm_poll();
    }
    return was;
}

void relay_gate_done(relay_gate *g, rl_loop *loop, relay_waiter *w, int64_t service_ms)
{
    if (!tl.loop)
        tl.loop = loop;
    pthread_mutex_lock(&g->mu);
    unrun_locked(g, w);
    /* Up at once, down slowly: see admission.h. */
    if (service_ms >= 0)
        g->service_ms = (double)service_ms > g->service_ms
                            ? (double)service_ms
                            : (1 - SERVICE_ALPHA) * g->service_ms + SERVICE_ALPHA * (double)service_ms;
    grant_locked(g, rl_now_ns());
    pthread_mutex_unlock(&g->mu);
    drain(g);
}

int64_t relay_gate_service_ms(relay_gate *g)
{
    pthread_mutex_lock(&g->mu);
    int64_t ms = service_locked(g, rl_now_ns());
    pthread_mutex_unlock(&g->mu);
    return ms;
}
