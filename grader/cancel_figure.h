/* cancel_figure: the cancellation exercise's pictures (figure.h), drawn
 * from what ex_cancel.c measured: when the cancel came and when the
 * downstream work stopped, a Work called after it, and the Process after a
 * cancelled one. Nothing here judges (the captions follow the judged
 * check); nothing is owned. */
#ifndef GR_CANCEL_FIGURE_H
#define GR_CANCEL_FIGURE_H

#include "cancel_judge.h"
#include "exercise.h"
#include "relaylab.pb-c.h"
#include "rl_probe.h"

#include <stdbool.h>
#include <stdint.h>

/* The picture of a cancel on one time axis (ms since the client started
 * Process): the client's call until its cancel, when |rec| (the downstream
 * call at the baseline) ran and when it ended, against the time a relay
 * has to pass the cancel on (GR_CANCEL_MS). */
void gr_cancel_figure(gr_scenario_result *out, const rl_probe_call *c, int64_t cn, const Relaylab__CallRecord *rec,
                      const gr_cancel_check *cc);

/* keeps-serving's picture (ms since the first Process started): the first
 * Process until the client cancels it, then the next Process and how it
 * ended (blue when it succeeded, red when not). */
void gr_cancel_keeps_serving_figure(gr_scenario_result *out, const rl_probe_call *c, int64_t cn,
                                    const rl_probe_call *c2, bool ok);

/* during-lookup's addition to gr_cancel_figure's timeline: the Work |wk|
 * the relay called after the cancel at |cn|, in red, and the caption
 * naming it. Nothing when there is no timeline. */
void gr_cancel_late_work_figure(gr_scenario_result *out, const rl_probe_call *c, int64_t cn,
                                const Relaylab__CallRecord *wk);

#endif
