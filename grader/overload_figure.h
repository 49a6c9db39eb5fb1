/* overload_figure: the pictures of the overload exercise's scenarios
 * (figure.h), drawn from what ex_overload.c measured: each call's time to
 * its status while the backend's port was closed, the blackholed calls'
 * statuses and arrivals against their deadline, the outage and the first
 * success after it against the reconnect bound, and the overload's calls
 * per window against the capacity.
 * Nothing here judges: the captions follow the verdict already in |out|
 * and the bounds passed in. Nothing is owned: every pointer is read during
 * the call only. */
#ifndef GR_OVERLOAD_FIGURE_H
#define GR_OVERLOAD_FIGURE_H

#include "exercise.h"
#include "relaylab.pb-c.h"
#include "rl_load.h"

#include <stddef.h>
#include <stdint.h>

/* refused: the |n| calls' times from start to status (ms, in order),
 * against |fast_ms| (the bound) and each call's |deadline_ms|. */
void gr_overload_refused_figure(gr_scenario_result *out, const int64_t *ms, int n, int fast_ms, int deadline_ms);

/* blackhole: for each of the |n| |calls| (tags "PREFIX.I"), when its
 * status came, when it reached the baseline and when the downstream call
 * ended there (records in |obs|), in ms after its start, against its
 * |deadline_ms|. */
void gr_overload_blackhole_figure(gr_scenario_result *out, const char *prefix, const rl_load_call *calls, size_t n,
                                  const Relaylab__ObserveReply *obs, int deadline_ms);

/* recovers, in ms since the backend went down: its return |up_ms|, the
 * |bound_ms| after it, the |ndown| calls made meanwhile (from |down0_ms|
 * to |down1_ms|), the |nfailed| calls that failed after the return (the
 * last ending at |last_ms|), and the first that succeeded (|ok0_ms| to
 * |ok1_ms|; |ok0_ms| -1: none did). */
typedef struct gr_overload_recovery {
    int64_t up_ms, bound_ms;
    int ndown;
    int64_t down0_ms, down1_ms;
    int nfailed;
    int64_t last_ms;
    int64_t ok0_ms, ok1_ms;
    int64_t ok_after_ms; /* the first OK's status after the return, as judged */
} gr_overload_recovery;
void gr_overload_recovers_figure(gr_scenario_result *out, const gr_overload_recovery *r);

/* overload: per 250 ms window of the load's |duration_ms| (by each call's
 * start), the |n| |calls| offered, answered OK (goodput), refused fast,
 * and left to wait their deadline, in calls/s against the backend's
 * |capacity_per_s|. */
void gr_overload_load_figure(gr_scenario_result *out, const rl_load_call *calls, size_t n, int duration_ms,
                             double capacity_per_s);

#endif
