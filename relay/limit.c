/* limit: the relay's adaptive concurrency limit; see limit.h. */
#include "limit.h"

#include <stdlib.h>

static double clamp(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

void relay_limit_init(relay_limit *l, unsigned initial, int64_t now_ns)
{
    l->limit = clamp(initial, RELAY_LIMIT_MIN, RELAY_LIMIT_MAX);
    l->min_rtt_ns = 0;
    l->window_ns = now_ns;
    l->started = l->ended = l->samples = 0;
    l->rand = 2463534242u;
    l->busiest = 0;
    l->probing = false;
    l->probe_min_ns = 0;
    l->resume = l->limit;
    l->next_probe_ns = now_ns + RELAY_LIMIT_PROBE_NS;
    l->steps = 0;
    l->last_ns = 0;
    l->calm = RELAY_LIMIT_HOLD;
}

unsigned relay_limit_get(const relay_limit *l)
{
    return (unsigned)l->limit;
}

void relay_limit_busy(relay_limit *l, unsigned inflight)
{
    if (inflight > l->busiest)
        l->busiest = inflight;
}

double relay_limit_next(double limit, int64_t min_rtt_ns, int64_t rtt_ns)
{
    if (min_rtt_ns <= 0 || rtt_ns <= 0)
        return clamp(limit, RELAY_LIMIT_MIN, RELAY_LIMIT_MAX);
    double gradient = clamp(((double)min_rtt_ns + (double)RELAY_LIMIT_TARGET_NS) / (double)rtt_ns,
                            RELAY_LIMIT_GRADIENT_MIN, RELAY_LIMIT_GRADIENT_MAX);
    /* The headroom only while nothing queues: added to a shrinking limit
     * it would keep a standing queue of its size in the backend. */
    double next = limit * gradient + (gradient >= 1.0 ? RELAY_LIMIT_HEADROOM : 0.0);
    return clamp(next, RELAY_LIMIT_MIN, RELAY_LIMIT_MAX);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The median of the window's kept round trips (at least one). */
static int64_t median(relay_limit *l)
{
    size_t n = l->samples < RELAY_LIMIT_KEEP ? l->samples : RELAY_LIMIT_KEEP;
    qsort(l->kept, n, sizeof l->kept[0], cmp_i64);
    return l->kept[n / 2];
}

/* Ends the window at |now_ns|: moves the limit, or ends or starts a probe. */
static void close_window(relay_limit *l, int64_t now_ns)
{
    l->last_ns = median(l);
    if (l->probing) {
        if (l->probe_min_ns) /* else every call of the probe ran out: keep the old */
            l->min_rtt_ns = l->probe_min_ns;
        l->limit = l->resume;
        l->probing = false;
        l->next_probe_ns = now_ns + RELAY_LIMIT_PROBE_NS;
    } else {
        double next = relay_limit_next(l->limit, l->min_rtt_ns, l->last_ns);
        if (next < l->limit) {
            l->calm = 0;
        } else if ((double)l->busiest + 1.0 <= l->limit) {
            next = l->limit; /* never all in use: the latency says nothing about more */
        } else if (l->calm < RELAY_LIMIT_HOLD) {
            /* Soon after a queue showed: grow only as far as the latency
             * is below its target, without probing for more (a probe
             * above a saturated backend's slots queues a call there). */
            next -= RELAY_LIMIT_HEADROOM;
            if (next < l->limit)
                next = l->limit;
            l->calm++;
        }
        l->limit = next;
        if (now_ns >= l->next_probe_ns) {
            l->probing = true;
            l->probe_min_ns = 0;
            l->resume = l->limit;
            l->limit = RELAY_LIMIT_MIN;
        }
    }
    l->window_ns = now_ns;
    l->started = l->ended = l->samples = 0;
    l->busiest = 0;
    l->steps++;
}

/* Whether a call that started at |start_ns| is in the window's cohort. */
static bool in_cohort(const relay_limit *l, int64_t start_ns)
{
    return start_ns >= l->window_ns && start_ns - l->window_ns < RELAY_LIMIT_WINDOW_NS;
}

void relay_limit_started(relay_limit *l, int64_t start_ns)
{
    /* A window whose cohort ended with nothing to say (every call failed
     * at once, or none came): start afresh with this call. */
    if (start_ns - l->window_ns >= RELAY_LIMIT_WINDOW_NS && l->ended >= l->started && !l->samples) {
        l->window_ns = start_ns;
        l->started = l->ended = 0;
        l->busiest = 0;
    }
    if (in_cohort(l, start_ns))
        l->started++;
}

bool relay_limit_ended(relay_limit *l, int64_t start_ns, int64_t now_ns, relay_rtt kind)
{
    int64_t rtt = now_ns - start_ns;
    if (rtt <= 0)
        rtt = 1;
    /* A call its deadline cut short says nothing about the shortest. */
    if (kind == RELAY_RTT_SERVED && (!l->min_rtt_ns || rtt < l->min_rtt_ns))
        l->min_rtt_ns = rtt;
    if (!in_cohort(l, start_ns))
        return false; /* it saw another limit */
    l->ended++;
    if (kind != RELAY_RTT_NONE) {
        if (l->probing && kind == RELAY_RTT_SERVED && (!l->probe_min_ns || rtt < l->probe_min_ns))
            l->probe_min_ns = rtt;
        /* Reservoir sampling: every round trip of the cohort has the same
         * chance of being among the kept ones. */
        if (l->samples < RELAY_LIMIT_KEEP) {
            l->kept[l->samples] = rtt;
        } else {
            l->rand ^= l->rand << 13;
            l->rand ^= l->rand >> 17;
            l->rand ^= l->rand << 5;
            uint32_t j = l->rand % (l->samples + 1);
            if (j < RELAY_LIMIT_KEEP)
                l->kept[j] = rtt;
        }
        l->samples++;
    }
    int64_t age = now_ns - l->window_ns;
    bool all_ended = age >= RELAY_LIMIT_WINDOW_NS && l->ended >= l->started;
    if (!l->samples || (!all_ended && age < RELAY_LIMIT_WINDOW_MAX_NS))
        return false;
    close_window(l, now_ns);
    return true;
}
