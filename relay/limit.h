/* limit: the relay's adaptive concurrency limit, a gradient controller
 * after Envoy's adaptive concurrency filter and Netflix's concurrency-limits
 * (Gradient2), written from their documented behaviour.
 *
 * The limit on calls in flight follows the backend's latency. The shortest
 * round trip seen (|min_rtt_ns|) is what a call costs when nothing queues;
 * every window the median round trip of the calls started in it is
 * compared with it, and
 *
 *     gradient = (min_rtt + tolerance) / median    clamped to [0.5, 2]
 *     limit    = limit * gradient + RELAY_LIMIT_HEADROOM   (gradient >= 1)
 *     limit    = limit * gradient                          (gradient < 1)
 *
 * so a backend whose latency rises (its queue grows) gets fewer calls, and
 * one that answers as fast as ever gets more. The headroom is the probe for
 * more slots than the limit uses; it is left out while the limit falls
 * (it would keep a standing queue of its size in the backend) and for
 * RELAY_LIMIT_HOLD windows after the limit fell. The tolerance is
 * RELAY_LIMIT_TARGET_NS (after CoDel's target delay): a queue that adds
 * less than that costs nobody anything, and it is the scheduling noise of
 * a loaded machine, which the relay's planning allows for already
 * (RELAY_SERVICE_SLACK_MS). With CoDel's 5 ms, a sub-millisecond baseline
 * on 2 busy cores (load average 16) measured 3-10 ms round trips at any
 * limit, read them as a queue, and held the limit near its floor: half the
 * calls/s of the unlimited relay. (Envoy's buffer, a fraction of the
 * minimum, was tried too: 10 % of 800 ms kept 1.8 calls queued in the overload
 * lab's backend, and its calls' deadlines paid for it.) Against a backend
 * of K slots that queues the rest, the limit stays within a few calls of K
 * (the overload lab: 8 to 11 measured, back to 8 whenever a probe queued
 * calls there; bench/results/relay.md).
 *
 * A window's sample is the cohort of calls that started in its first
 * RELAY_LIMIT_WINDOW_NS, and it closes once every one of them ended: each
 * step sees the effect of the previous one, and the calls a backend
 * queued count with the others (a window that closed on its first few
 * answers saw only the calls that found a free slot, and never a queue).
 * With 800 ms calls a window lasts about a round trip; with a fast backend,
 * about RELAY_LIMIT_WINDOW_NS; never more than RELAY_LIMIT_WINDOW_MAX_NS. The limit grows
 * only in a window where all of it was in use: a backend that keeps up with
 * what it is offered says nothing about more, and a limit grown while load
 * sat at the backend's capacity would meet the next burst untested (Netflix
 * grows while half is in use; in the overload lab's demo at exactly its
 * capacity that crept the limit from 8 to 15 in 4 s, and the next, doubled
 * load then queued 7 calls in the backend before a window could see it). The minimum is
 * re-measured every RELAY_LIMIT_PROBE_NS: for one window the limit drops to
 * its floor, and the round trips seen then replace the old minimum (a
 * backend that became slower for good must not look queued forever).
 *
 * The median, as Envoy takes by default, not the mean: on a loaded machine
 * a few calls of a window wait 50-100 ms for a core, and their mean read
 * as a queue (round trips of 3-10 ms around a 0.3 ms minimum, and windows
 * whose mean was 98 ms).
 *
 * The floor is RELAY_LIMIT_MIN, the fixed gate of the overload lab, so the
 * controller only ever lets through more than that gate would: a mix of
 * cheap and expensive calls (the minimum is the cheap ones', the median the
 * expensive ones') keeps the fixed gate's behaviour instead of collapsing.
 *
 * Pure arithmetic over the instants it is given; no lock (the gate's
 * lock guards it). */
#ifndef RELAY_LIMIT_H
#define RELAY_LIMIT_H

#include <stdbool.h>
#include <stdint.h>

#define RELAY_LIMIT_MIN           8
#define RELAY_LIMIT_MAX           1000
#define RELAY_LIMIT_TARGET_NS     (INT64_C(20) * 1000 * 1000) /* = RELAY_SERVICE_SLACK_MS */
#define RELAY_LIMIT_HEADROOM      1.0
#define RELAY_LIMIT_WINDOW_NS     (INT64_C(100) * 1000 * 1000)
#define RELAY_LIMIT_WINDOW_MAX_NS (INT64_C(10) * 1000 * 1000 * 1000)
#define RELAY_LIMIT_KEEP          64 /* round trips kept per window for its median */
#define RELAY_LIMIT_PROBE_NS      (INT64_C(60) * 1000 * 1000 * 1000)
#define RELAY_LIMIT_HOLD          5 /* windows without a probe after the limit fell */
#define RELAY_LIMIT_GRADIENT_MIN  0.5
#define RELAY_LIMIT_GRADIENT_MAX  2.0

typedef struct relay_limit {
    double limit;                   /* in [RELAY_LIMIT_MIN, RELAY_LIMIT_MAX] */
    int64_t min_rtt_ns;             /* shortest round trip since the last probe; 0: none yet */
    int64_t window_ns;              /* when the current window began */
    int64_t kept[RELAY_LIMIT_KEEP]; /* round trips of the calls started in it: all
                                     * of them, or a uniform sample of RELAY_LIMIT_KEEP */
    unsigned started;               /* calls in its cohort (started in its first WINDOW_NS) */
    unsigned ended;                 /* of them, ended */
    unsigned samples;               /* of them, with a round trip (kept or not) */
    uint32_t rand;                  /* xorshift state for the sample */
    unsigned busiest;               /* most calls in flight seen in it */
    bool probing;                   /* this window re-measures the minimum */
    int64_t probe_min_ns;           /* the probe's shortest round trip; 0: none yet */
    double resume;                  /* the limit to go back to after the probe */
    int64_t next_probe_ns;
    unsigned steps;  /* windows closed, for tests and logs */
    int64_t last_ns; /* the last window's round trip, for logs */
    unsigned calm;   /* windows since the limit last fell, up to RELAY_LIMIT_HOLD */
} relay_limit;

/* Starts at |initial| (clamped to the floor and ceiling) at |now_ns|. */
void relay_limit_init(relay_limit *l, unsigned initial, int64_t now_ns);

/* The limit in calls in flight. */
unsigned relay_limit_get(const relay_limit *l);

/* |inflight| calls hold a slot now (after one more started). */
void relay_limit_busy(relay_limit *l, unsigned inflight);

/* What a call's end says about the backend's latency. */
typedef enum relay_rtt {
    RELAY_RTT_NONE,   /* nothing: refused at once, cancelled, never started */
    RELAY_RTT_SERVED, /* served: its round trip */
    RELAY_RTT_BOUND,  /* its deadline ended it downstream: a lower bound,
                       * in the window's median but never the shortest */
} relay_rtt;

/* A call got a slot at |start_ns|. */
void relay_limit_started(relay_limit *l, int64_t start_ns);

/* The call that got its slot at |start_ns| ended at |now_ns|, and |rtt|
 * says what that tells. May close the window and move the limit; returns
 * true when it did. */
bool relay_limit_ended(relay_limit *l, int64_t start_ns, int64_t now_ns, relay_rtt rtt);

/* The step of the controller: the limit after a window whose median round
 * trip was |rtt_ns| against |min_rtt_ns|. Exposed for the tests. */
double relay_limit_next(double limit, int64_t min_rtt_ns, int64_t rtt_ns);

#endif
