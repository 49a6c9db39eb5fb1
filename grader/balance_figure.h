/* balance_figure: the arithmetic of the balance exercise's --html pictures
 * (figure.h) over a live run's connection log (rl_bw_result.open_ns: when
 * the balancer forwarded each connection, in order): the reconnect rate so
 * far at the end of each window, and how many reconnects came within a
 * span of each one. The pictures themselves (titles, bounds, captions)
 * stay in ex_balance.c. Instants are CLOCK_MONOTONIC ns; |scale| is world
 * ms per lab ms (the run's time is the world's, faster). Pure functions:
 * nothing is owned or kept. */
#ifndef GR_BALANCE_FIGURE_H
#define GR_BALANCE_FIGURE_H

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

#endif
