/* shutdown_figure: the pictures of the shutdown exercise's scenarios
 * (figure.h), drawn from what ex_shutdown.c measured: SIGTERM, the grace,
 * the calls in flight and refused, the downstream Work, the exit, and a
 * rolling restart's instances and failed calls, all on one time axis.
 * Kept apart from the scenarios, which only measure and judge; nothing
 * here judges (the captions follow the verdicts already in |out|, or the
 * same tolerances passed in). Nothing is owned: every pointer is read
 * during the call only. */
#ifndef GR_SHUTDOWN_FIGURE_H
#define GR_SHUTDOWN_FIGURE_H

#include "exercise.h"
#include "relaylab.pb-c.h"
#include "rl_probe.h"
#include "run.h"

#include <stdbool.h>
#include <stdint.h>

/* The failed calls of a rolling restart a picture shows at most. */
#define GR_SHUTDOWN_KEPT 64

/* The grace and grace-ends' tolerances (ms), as ex_shutdown.c judges. */
typedef struct gr_shutdown_times {
    int grace_ms, early_ms, late_ms;
} gr_shutdown_times;

/* A rolling restart's load: calls that succeeded and failed, and when
 * each of the first |nkept| failed ones started and how long it took. */
typedef struct gr_shutdown_rolling {
    int ok, failed, nkept;
    int64_t fail_start_ns[GR_SHUTDOWN_KEPT], fail_took_ms[GR_SHUTDOWN_KEPT];
} gr_shutdown_rolling;

/* SIGTERM at |sig|, the grace after it, the call in flight |c|, a new call
 * |n| (NULL: none) and its refusal, the listener's close at |closed| (0:
 * not seen) and the exit |ex| (NULL: not waited for); ms since |c|
 * started. */
void gr_shutdown_figure(gr_scenario_result *out, const rl_probe_call *c, int64_t sig, const rl_probe_call *n,
                        int64_t closed, const gr_exit *ex, bool call_ok, int grace_ms);

/* refuses-new's FAIL when the listener never closed: gr_shutdown_figure's
 * picture with no new call, and, unless the server exited (|ex|), the
 * listener still accepting |admission_ms| after SIGTERM, in red. */
void gr_shutdown_open_figure(gr_scenario_result *out, const rl_probe_call *c, int64_t sig, const gr_exit *ex,
                             bool call_ok, int grace_ms, int admission_ms);

/* grace-ends: SIGTERM at |sig|, the grace and its end, the client's call
 * |c| until its status, its Work |w| at the baseline (NULL: not seen; it
 * ended |end_ms| after SIGTERM, -1: not ended), blue when cancelled at the
 * grace, red when cut before it or left running past it, and the server
 * until its exit |ex|. */
void gr_shutdown_grace_figure(gr_scenario_result *out, const rl_probe_call *c, int64_t sig,
                              const Relaylab__CallRecord *w, int64_t end_ms, const gr_exit *ex,
                              const gr_shutdown_times *t);

/* rolling: ms since the load started at |t0|: instance 1 serving until
 * SIGTERM |sig|, its drain until its exit |ex|, its replacement from
 * |listening|, the call |held| on instance 1 across SIGTERM (|held_ok|:
 * it succeeded), each kept failed call of |l| in red (refused at once or
 * failed: the judge tells them apart, the feedback says which), the grace. */
void gr_shutdown_rolling_figure(gr_scenario_result *out, const gr_shutdown_rolling *l, int64_t t0, int64_t sig,
                                const gr_exit *ex, int64_t listening, const rl_probe_call *held, bool held_ok,
                                int grace_ms);

#endif
