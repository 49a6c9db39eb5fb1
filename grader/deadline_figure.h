/* deadline_figure: the deadline exercise's pictures (figure.h), drawn
 * from what ex_deadline.c measured: the chain's deadlines on one time
 * axis, a call without one, time running out during Lookup, and every
 * downstream call of one Process. Nothing here judges (the colours follow
 * the judged checks); nothing is owned. */
#ifndef GR_DEADLINE_FIGURE_H
#define GR_DEADLINE_FIGURE_H

#include "deadline_judge.h"
#include "exercise.h"
#include "relaylab.pb-c.h"
#include "rl_probe.h"

#include <stddef.h>
#include <stdint.h>

/* The picture of a chain's deadlines on one time axis (ms since the client
 * started Process): the client's deadline D as a line, when each of Lookup
 * and Work ran at the baseline, and for each the deadline it received
 * (blue when right, red when wrong) against the time that truly remained
 * until D (green). A forwarded timeout shows as a red bar running past D. */
void gr_dl_deadline_figure(gr_scenario_result *out, const rl_probe_call *c, int64_t d, int64_t budget,
                           const Relaylab__CallRecord *hop[2], const gr_dl_check *chk[2]);

/* none's picture (ms since the client started Process): the client's
 * call, set with no deadline, and for each hop when it ran at the
 * baseline and what deadline it received: none (a blue mark) is right; a
 * deadline is a red bar of its length (cut at |cut| ms, and said so). */
void gr_dl_none_figure(gr_scenario_result *out, const rl_probe_call *c, const Relaylab__CallRecord *hop[2],
                       const gr_dl_check *chk[2]);

/* expires-in-lookup's picture (ms since the client started Process): the
 * client's deadline, the client's call until its status, Lookup at the
 * baseline, the window watched for a late Work after Lookup ended, and the
 * Work (red) if one came. */
void gr_dl_expiry_figure(gr_scenario_result *out, const rl_probe_call *c, int64_t d, int64_t budget,
                         const Relaylab__CallRecord *lk, int64_t lookup_end, const Relaylab__CallRecord *wk);

/* once's picture (ms since the client started Process): the client's
 * call, and every Lookup and Work the baseline saw for it, each call on a
 * row of its own (as many as the figure holds): the first of each method
 * is right (blue), any more red. */
void gr_dl_once_figure(gr_scenario_result *out, const rl_probe_call *c, const Relaylab__ObserveReply *obs, size_t nl,
                       size_t nw);

#endif
