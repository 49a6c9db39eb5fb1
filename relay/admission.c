/* admission: the relay's in-flight bound and queue; see admission.h. */
#include "admission.h"

#include "rl_deadline.h"
#include "rl_log.h"

#include <stdio.h>
#include <stdlib.h>

/* Weight of a new sample in the moving average of the service time: about
 * the last ten calls count, so the estimate follows a backend that slows
 * down within a second at the lab's rates. */
#define SERVICE_ALPHA 0.2

struct relay_loop_gate {
    rl_loop *loop;                         /* set up for wake-ups (rl_loop_wake_init) */
    relay_waiter *inbox_head, *inbox_tail; /* granted, not yet started (gate lock) */
    bool draining;                         /* inside drain(): no recursion */
};

/* Each loop runs on its own thread, so the loop's gate state is the
 * thread's own. */
static __thread relay_loop_gate tl;

/* The loops to wake once the lock is released: a wake-up may take a
 * syscall (gRPC kicks the loop's poller), which need not hold the lock. */
#define WAKE_MAX 8
typedef struct wakeset {
    rl_loop *loops[WAKE_MAX];
    size_t n;
} wakeset;

/* |home| has a waiter in its inbox now. Called with the lock. */
static void note_wake(wakeset *ws, const relay_loop_gate *home)
{
    if (home == &tl)
        return; /* this thread drains its own inbox before it returns */
    for (size_t i = 0; i < ws->n; i++)
        if (ws->loops[i] == home->loop)
            return;
    if (ws->n < WAKE_MAX)
        ws->loops[ws->n++] = home->loop;
    else
        rl_loop_wake(home->loop); /* more loops than the set holds: now, under the lock */
}

static void wake_all(const wakeset *ws)
{
    for (size_t i = 0; i < ws->n; i++)
        rl_loop_wake(ws->loops[i]);
}

static void drain(relay_gate *g);

static void woken(rl_loop *loop, void *gate)
{
    (void)loop;
    drain(gate);
}

/* Makes |loop| this thread's loop, one other threads can wake, the first
 * time the thread uses the gate. */
static void bind_loop(relay_gate *g, rl_loop *loop)
{
    if (tl.loop)
        return;
    if (rl_loop_wake_init(loop, woken, g) != 0) {
        /* Only out of memory gets here: without wake-ups a call queued on
         * this loop could wait forever. */
        RL_ERROR("gRPC would not create the call that wakes a loop: stopping");
        abort();
    }
    tl.loop = loop;
}

int64_t relay_gate_margin_ms(int64_t service_ms)
{
    return service_ms + service_ms / 2 + RELAY_SERVICE_SLACK_MS;
}

void relay_gate_init(relay_gate *g, unsigned max_inflight, unsigned max_queue, bool unbounded, bool adaptive)
{
    pthread_mutex_init(&g->mu, NULL);
    g->max_inflight = max_inflight ? max_inflight : 1;
    g->max_queue = max_queue;
    g->unbounded = unbounded;
    g->adaptive = adaptive;
    relay_limit_init(&g->lim, g->max_inflight, rl_now_ns());
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

/* The limit on calls in flight. Called with the lock. */
static unsigned limit_locked(const relay_gate *g)
{
    return g->adaptive ? relay_limit_get(&g->lim) : g->max_inflight;
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

/* Moves |w| (out of the queue) to its loop's inbox; its loop goes into
 * |ws| to be woken. Called with the lock. */
static void to_inbox_locked(relay_waiter *w, wakeset *ws)
{
    w->next = NULL;
    w->prev = w->home->inbox_tail;
    if (w->home->inbox_tail)
        w->home->inbox_tail->next = w;
    else
        w->home->inbox_head = w;
    w->home->inbox_tail = w;
    note_wake(ws, w->home);
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
    if (g->adaptive) {
        relay_limit_started(&g->lim, now_ns);
        relay_limit_busy(&g->lim, g->inflight);
    }
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

/* What is left of |service| for the call in flight |run| (NULL: none). */
static int64_t left_of(const relay_waiter *run, int64_t service, int64_t now_ns)
{
    if (!run)
        return 0;
    int64_t age = (now_ns - run->slot_ns) / RL_NS_PER_MS;
    return service > age ? service - age : 0;
}

/* The wait of the call |ahead| places from the head of the queue, FIFO:
 * it takes the slot of the (ahead mod limit)-th oldest call in flight,
 * which ends |service| after it began, plus one service time for every
 * full round of |limit| calls ahead of it. Walks at most |limit| entries.
 * Called with the lock. */
static int64_t expected_wait_ms(const relay_gate *g, unsigned limit, unsigned ahead, int64_t service, int64_t now_ns)
{
    const relay_waiter *run = g->run_head;
    for (unsigned j = ahead % limit; run && j; j--)
        run = run->run_next;
    return left_of(run, service, now_ns) + (int64_t)(ahead / limit) * service;
}

/* Hands free slots to the head of the queue, then (bounded gates) evicts
 * the queued calls whose remaining time no longer covers their expected
 * wait and service. The loops of the waiters it moved go into |ws|. One
 * pass over the queue: the call in flight whose slot the next waiter
 * takes advances with it (expected_wait_ms, step by step). Called with the
 * lock. */
static void grant_locked(relay_gate *g, int64_t now_ns, wakeset *ws)
{
    unsigned limit = limit_locked(g);
    while (g->inflight < limit && g->head) {
        relay_waiter *w = g->head;
        unlink_locked(g, w);
        run_locked(g, w, now_ns);
        to_inbox_locked(w, ws);
    }
    if (g->unbounded || !g->head)
        return;
    int64_t service = service_locked(g, now_ns);
    int64_t margin = relay_gate_margin_ms(service);
    unsigned ahead = 0, j = 0;             /* j = ahead mod limit */
    const relay_waiter *run = g->run_head; /* the j-th oldest in flight, or NULL */
    for (relay_waiter *w = g->head, *next; w; w = next) {
        next = w->next;
        /* NOLINTNEXTLINE(clang-analyzer-core.DivideZero): a gate's limit is at least 1 (relay_gate_init) */
        int64_t wait = left_of(run, service, now_ns) + (int64_t)(ahead / limit) * service;
        if (w->deadline_ns != INT64_MAX && (w->deadline_ns - now_ns) / RL_NS_PER_MS < wait + margin) {
            unlink_locked(g, w);
            w->evicted = true;
            to_inbox_locked(w, ws);
        } else {
            ahead++;
            if (++j == limit) {
                j = 0;
                run = g->run_head;
            } else if (run) {
                run = run->run_next;
            }
        }
    }
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
        w->on_grant(w);
    }
    tl.draining = false;
}

relay_admit relay_gate_admit(relay_gate *g, rl_loop *loop, relay_waiter *w, relay_grant_fn on_grant,
                             int64_t deadline_ns, char *why, size_t whylen)
{
    int64_t now = rl_now_ns();
    int64_t remaining_ms = deadline_ns == INT64_MAX ? -1 : (deadline_ns > now ? (deadline_ns - now) / RL_NS_PER_MS : 0);
    bind_loop(g, loop);
    pthread_mutex_lock(&g->mu);
    unsigned limit = limit_locked(g);
    if (g->inflight < limit && !g->head) {
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
    wakeset ws = {.n = 0};
    relay_admit verdict = RELAY_ADMIT_QUEUED;
    if (!g->unbounded) {
        grant_locked(g, now, &ws); /* the estimate may have grown since: evict first */
        unsigned ahead = g->queued;
        int64_t service = service_locked(g, now);
        int64_t wait = expected_wait_ms(g, limit, ahead, service, now);
        if (ahead >= g->max_queue) {
            snprintf(why, whylen, "the relay is overloaded: its queue is full (%u calls waiting for %u in flight)",
                     ahead, limit);
            verdict = RELAY_ADMIT_REFUSED;
        } else if (remaining_ms >= 0 && remaining_ms < wait + relay_gate_margin_ms(service)) {
            snprintf(why, whylen,
                     "the relay is overloaded: %lld ms left cannot cover the expected wait (%lld ms behind %u "
                     "calls) and service (%lld ms)",
                     (long long)remaining_ms, (long long)wait, ahead, (long long)service);
            verdict = RELAY_ADMIT_REFUSED;
        }
    }
    if (verdict == RELAY_ADMIT_QUEUED) {
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
    }
    pthread_mutex_unlock(&g->mu);
    wake_all(&ws);
    drain(g); /* the evictions of this loop */
    return verdict;
}

void relay_gate_close(relay_gate *g)
{
    wakeset ws = {.n = 0};
    pthread_mutex_lock(&g->mu);
    g->closed = true;
    if (!g->unbounded) {
        while (g->head) {
            relay_waiter *w = g->head;
            unlink_locked(g, w);
            w->evicted = w->closing = true;
            to_inbox_locked(w, &ws);
        }
    }
    pthread_mutex_unlock(&g->mu);
    wake_all(&ws);
}

bool relay_gate_leave(relay_gate *g, relay_waiter *w)
{
    pthread_mutex_lock(&g->mu);
    bool was = w->queued;
    if (was)
        unlink_locked(g, w);
    pthread_mutex_unlock(&g->mu);
    return was;
}

void relay_gate_done(relay_gate *g, rl_loop *loop, relay_waiter *w, int64_t service_ms, relay_rtt rtt)
{
    bind_loop(g, loop);
    int64_t now = rl_now_ns();
    wakeset ws = {.n = 0};
    pthread_mutex_lock(&g->mu);
    unrun_locked(g, w);
    /* Up at once, down slowly: see admission.h. */
    if (service_ms >= 0)
        g->service_ms = (double)service_ms > g->service_ms
                            ? (double)service_ms
                            : (1 - SERVICE_ALPHA) * g->service_ms + SERVICE_ALPHA * (double)service_ms;
    if (g->adaptive && relay_limit_ended(&g->lim, w->slot_ns, now, rtt))
        RL_DEBUG("admission: limit %u (round trip %.3f ms, shortest %.3f ms)", relay_limit_get(&g->lim),
                 (double)g->lim.last_ns / RL_NS_PER_MS, (double)g->lim.min_rtt_ns / RL_NS_PER_MS);
    grant_locked(g, now, &ws);
    pthread_mutex_unlock(&g->mu);
    wake_all(&ws);
    drain(g);
}

unsigned relay_gate_limit(relay_gate *g)
{
    pthread_mutex_lock(&g->mu);
    unsigned limit = limit_locked(g);
    pthread_mutex_unlock(&g->mu);
    return limit;
}

int64_t relay_gate_service_ms(relay_gate *g)
{
    pthread_mutex_lock(&g->mu);
    int64_t ms = service_locked(g, rl_now_ns());
    pthread_mutex_unlock(&g->mu);
    return ms;
}
