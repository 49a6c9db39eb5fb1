/* admission: the relay's admission control (the overload lab). At most
 * |max_inflight| Process calls have a downstream call in flight at once,
 * across every loop; the rest wait in one FIFO queue of at most |max_queue|
 * calls. A call is refused at once (the caller turns that into
 * RESOURCE_EXHAUSTED) when the queue is full, or when its remaining deadline
 * cannot cover the expected wait plus the expected service time: a call
 * that would time out in the queue is better refused now, while its client
 * still has time to go elsewhere. The expected service time is a moving
 * average of the downstream time of the calls that succeeded, which jumps
 * up at once when a call took longer (a backend slowing down must not
 * fill the queue while the average catches up) and comes down slowly;
 * when it grows, queued calls that can no longer be served in time are
 * evicted at once (on_grant with |evicted|), not left to time out. The
 * oldest call in flight bounds it from below: a backend that has held a
 * call for 600 ms takes at least that long, whatever the average says
 * (the average knows nothing until a call ends).
 *
 * The limit is fixed (--max-inflight, the lab's demos and the mistakes)
 * or adaptive (the default: limit.h), following the backend's latency from
 * RELAY_MAX_INFLIGHT up.
 *
 * Threads: the gate is shared by every loop and guarded by a mutex. A
 * waiter belongs to the loop it was queued on, and is started there: when a
 * slot frees on one loop, the gate hands it to the queue's head and puts
 * the waiter in its own loop's inbox; the loop that freed the slot starts
 * its own waiters at once and wakes the waiters' loops (rl_loop_wake), so
 * a queued call costs no polling and waits for nothing but its slot.
 * Per-loop state is the loop thread's own (thread-local), so a loop
 * touches only its own inbox outside the lock.
 *
 * "unbounded" gates reproduce the classic mistake: no queue bound, no
 * check of the deadline at admission, and nothing leaves the queue before
 * its turn, not even a call whose client has gone. */
#ifndef RELAY_ADMISSION_H
#define RELAY_ADMISSION_H

#include "limit.h"
#include "rl_loop.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Defaults of --max-inflight and --max-queue. Eight calls in flight keep
 * a backend's queue short (the adaptive limit starts there and never goes
 * below); the queue is long enough that only the deadline
 * check refuses under normal bursts (500 calls at once in
 * tests/integration/test_relay_memory.py). */
#define RELAY_MAX_INFLIGHT 8
#define RELAY_MAX_QUEUE    1000

typedef struct relay_loop_gate relay_loop_gate;

typedef struct relay_waiter relay_waiter;
/* A slot was handed to |w|; runs on |w|'s loop, which then owns the slot
 * (give it back with relay_gate_done). */
typedef void (*relay_grant_fn)(relay_waiter *w);

struct relay_waiter {
    relay_waiter *next, *prev; /* the gate's queue, then the loop's inbox (lock) */
    relay_loop_gate *home;     /* the loop it waits on (set by relay_gate_admit) */
    relay_grant_fn on_grant;
    int64_t deadline_ns;               /* its caller's deadline; INT64_MAX: none */
    int64_t slot_ns;                   /* when it got its slot */
    relay_waiter *run_next, *run_prev; /* the in-flight list, while it holds a slot (lock) */
    bool queued;                       /* in the gate's queue (lock) */
    bool evicted;                      /* on_grant without a slot: it can no longer be
                                        * served in time (the estimate grew), or the
                                        * gate closed (|closing|) */
    bool closing;                      /* evicted because the gate closed */
};

typedef struct relay_gate {
    pthread_mutex_t mu;
    unsigned max_inflight, max_queue; /* max_inflight: the fixed limit, or the start */
    bool unbounded;
    bool adaptive; /* the limit is |lim|'s, not max_inflight */
    relay_limit lim;
    bool closed; /* relay_gate_close ran */
    unsigned inflight, queued;
    relay_waiter *head, *tail;         /* the queue, oldest first */
    relay_waiter *run_head, *run_tail; /* the calls holding slots, oldest first */
    double service_ms;                 /* moving average; 0 until a sample */
} relay_gate;

typedef enum relay_admit {
    RELAY_ADMIT_RUN,     /* a slot is the caller's: start now */
    RELAY_ADMIT_QUEUED,  /* |w| waits; on_grant runs on this loop later */
    RELAY_ADMIT_REFUSED, /* |why| says why */
    RELAY_ADMIT_CLOSED,  /* the gate closed (shutting down): |why| says so */
} relay_admit;

/* A fixed limit of |max_inflight| or, when |adaptive|, a limit that starts
 * there and follows the backend's latency (limit.h). */
void relay_gate_init(relay_gate *g, unsigned max_inflight, unsigned max_queue, bool unbounded, bool adaptive);
void relay_gate_fini(relay_gate *g);

/* Admits a call arriving on |loop| whose caller's deadline is
 * |deadline_ns| (INT64_MAX: none). On QUEUED, |w| must stay valid until
 * on_grant ran or relay_gate_leave returned true. */
relay_admit relay_gate_admit(relay_gate *g, rl_loop *loop, relay_waiter *w, relay_grant_fn on_grant,
                             int64_t deadline_ns, char *why, size_t whylen);

/* Closes the gate (SIGTERM's admission close): every queued call is
 * evicted with |closing| set, on its own loop at once, and a
 * call admitted later is refused. A queued call has not started anything
 * downstream, so failing it lets its client retry on another replica at
 * once instead of holding it through the drain. An unbounded gate (the
 * mistake) keeps its queue. Any thread. */
void relay_gate_close(relay_gate *g);

/* Takes queued |w| out of the queue (its client left). Returns true when
 * it was still waiting; false when a slot was already handed to it (its
 * on_grant will run). Never call it for an unbounded gate's waiters: they
 * wait for their turn whatever happens (the mistake). */
bool relay_gate_leave(relay_gate *g, relay_waiter *w);

/* Gives back |w|'s slot on |loop| (the loop that held it). |service_ms|
 * >= 0 is a successful call's downstream time, for the average; -1: none.
 * |rtt| says what the call's time since its slot tells the adaptive limit
 * (limit.h): a served call's round trip, a lower bound when its deadline
 * ended it downstream, or nothing (a backend that refused at once says
 * nothing about its latency).
 * Hands freed slots to the queue, starts this loop's granted waiters and
 * wakes the loops of the others. */
void relay_gate_done(relay_gate *g, rl_loop *loop, relay_waiter *w, int64_t service_ms, relay_rtt rtt);

/* The limit on calls in flight now. */
unsigned relay_gate_limit(relay_gate *g);

/* The time a call must have left to be worth forwarding: the expected
 * service time plus half of it (the service varies: a call queued behind
 * the estimate would miss its deadline by the difference, and the backend
 * would have worked for nobody) plus RELAY_SERVICE_SLACK_MS (a loaded
 * machine's scheduling delays). */
#define RELAY_SERVICE_SLACK_MS 20
int64_t relay_gate_margin_ms(int64_t service_ms);

/* The service time to plan with: the moving average of the downstream
 * time (0 before any sample), or the age of the oldest call in flight when
 * that is longer. */
int64_t relay_gate_service_ms(relay_gate *g);

#endif
