/* limit: the relay's adaptive concurrency limit; see limit.h. */
#include "limit.h"

static double clamp(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

void relay_limit_init(relay_limit *l, unsigned initial, int64_t now_ns)
{
    l->limit = clamp(initial, RELAY_LIMIT_MIN, RELAY_LIMIT_MAX);
    l->min_rtt_ns = 0;
    l->window_ns = now_ns;
    l->sum_ns = 0;
    l->samples = 0;
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

double relay_limit_next(double limit, int64_t min_rtt_ns, int64_t mean_ns)
{
    if (min_rtt_ns <= 0 || mean_ns <= 0)
        return clamp(limit, RELAY_LIMIT_MIN, RELAY_LIMIT_MAX);
    double gradient = clamp(((double)min_rtt_ns + (double)RELAY_LIMIT_TARGET_NS) / (double)mean_ns, RELAY_LIMIT_GRADIENT_MIN,
                            RELAY_LIMIT_GRADIENT_MAX);
    /* The headroom only while nothing queues: added to a shrinking limit
     * it would keep a standing queue of its size in the backend. */
    double next = limit * gradient + (gradient >= 1.0 ? RELAY_LIMIT_HEADROOM : 0.0);
    return clamp(next, RELAY_LIMIT_MIN, RELAY_LIMIT_MAX);
}

/* Ends the window at |now_ns|: moves the limit, or ends or starts a probe. */
static void close_window(relay_limit *l, int64_t now_ns)
{
    l->last_ns = l->sum_ns / (int64_t)l->samples;
    if (l->probing) {
        l->min_rtt_ns = l->probe_min_ns;
        l->limit = l->resume;
        l->probing = false;
        l->next_probe_ns = now_ns + RELAY_LIMIT_PROBE_NS;
    } else {
        double next = relay_limit_next(l->limit, l->min_rtt_ns, l->sum_ns / (int64_t)l->samples);
        if (next < l->limit) {
            l->calm = 0;
        } else if (2.0 * l->busiest < l->limit) {
            next = l->limit; /* fewer than half in use: the latency says nothing about more */
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
    l->sum_ns = 0;
    l->samples = 0;
    l->busiest = 0;
    l->steps++;
}

bool relay_limit_sample(relay_limit *l, int64_t start_ns, int64_t now_ns)
{
    int64_t rtt = now_ns - start_ns;
    if (rtt <= 0)
        rtt = 1;
    if (!l->min_rtt_ns || rtt < l->min_rtt_ns)
        l->min_rtt_ns = rtt;
    /* A call started before the window saw an older limit. */
    if (start_ns < l->window_ns)
        return false;
    if (l->probing && (!l->probe_min_ns || rtt < l->probe_min_ns))
        l->probe_min_ns = rtt;
    l->sum_ns += rtt;
    l->samples++;
    if (l->samples < RELAY_LIMIT_SAMPLES || now_ns - l->window_ns < RELAY_LIMIT_WINDOW_NS)
        return false;
    close_window(l, now_ns);
    return true;
}
