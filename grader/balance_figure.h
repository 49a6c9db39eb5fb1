/* balance_figure: the balance exercise's --html pictures (figure.h), drawn
 * from what a live run measured (gr_bal_live, balance_judge.h), and their
 * arithmetic over its connection log (rl_bw_result.open_ns: when the
 * balancer forwarded each connection, in order): the reconnect rate so far
 * at the end of each window, and how many reconnects came within a span of
 * each one. Nothing here judges: a caption follows the same facts the
 * verdict does. Instants are CLOCK_MONOTONIC ns; |scale| is world ms per
 * lab ms (the run's time is the world's, faster). Nothing is owned or
 * kept. */
#ifndef GR_BALANCE_FIGURE_H
#define GR_BALANCE_FIGURE_H

#include "balance_judge.h"
#include "exercise.h"

#include <stddef.h>
#include <stdint.h>

/* Reconnects (opens after the first |skip|, each client's first) per
 * client per world minute from |start_ns| to the end of each of |nwin|
 * windows of |window_ns|: x[w] the window's end in world seconds, y[w] the
 * rate so far. Returns |nwin| (0 when |nclients| or |window_ns| is not
 * positive). */
size_t gr_bal_rate_so_far(const int64_t *open_ns, size_t nopen, size_t skip, int64_t start_ns, int64_t window_ns,
                          size_t nwin, int nclients, double scale, double *x, double *y);

/* For each open after the first |skip|: x its instant in world seconds from
 * |start_ns|, y how many opens came within |span_ns| from it (itself
 * included), as rl_bw_bunches counts a bunch. Writes at most |max| points
 * and returns how many. */
size_t gr_bal_bunch_sizes(const int64_t *open_ns, size_t nopen, size_t skip, int64_t start_ns, int64_t span_ns,
                          double scale, double *x, double *y, size_t max);

/* fills: the joining backend's share of the calls over (world) time,
 * against the fair share and the judged minimum, with the instant it
 * joined and the bound for taking its share. */
void gr_bal_fills_figure(gr_scenario_result *out, const gr_bal_live *l);

/* no-failures, in world seconds from a GOAWAY: the long call the run kept
 * in flight against the grace the config gives it, red when long calls
 * were cut. */
void gr_bal_no_failures_figure(gr_scenario_result *out, const gr_bal_live *l);

/* churn: reconnects per client per world minute so far, at the end of
 * each window, against |limit|, the most allowed. */
void gr_bal_churn_figure(gr_scenario_result *out, const gr_bal_live *l, double limit);

/* no-storm: for each reconnect, how many came within the storm span of
 * it, against every client at once. */
void gr_bal_storm_figure(gr_scenario_result *out, const gr_bal_live *l);

#endif
