/* coverage_figure: the parts of the coverage exercise's --html pictures
 * (figure.h) that every scenario draws alike, beside the arithmetic of
 * coverage_judge.h: how densely a span is sampled, the streams each tunnel
 * server held over it, and the longest queue wait at an instant. The
 * scenarios' own pictures (their titles, bounds and captions) stay in
 * ex_coverage.c. Instants are CLOCK_MONOTONIC ns. */
#ifndef GR_COVERAGE_FIGURE_H
#define GR_COVERAGE_FIGURE_H

#include "coverage_judge.h"
#include "figure.h"

#include <stddef.h>
#include <stdint.h>

/* Samples for a picture from |t0| to |t1|: their count (at least 1, at
 * most GR_FIG_MAX_POINTS), and in |*step| the ns between them, no closer
 * than 25 ms (the records are exact; the picture needs no more). */
size_t gr_cov_fig_samples(int64_t t0, int64_t t1, int64_t *step);

/* How long the longest-waiting call dispatched since |t0| had been queued
 * on |s| at |t| (0 when none was queued then), in ms. */
double gr_cov_oldest_wait_ms(const gr_cov_server *s, int64_t t0, int64_t t);

/* Adds to |f| the streams each of the |n| servers (named |names|) held
 * over [t0, t1] (x in seconds from |t0|), the busy server |b| first and
 * named so (-1: none). */
void gr_cov_fig_streams(gr_figure *f, gr_cov_server *const *servers, const char *const *names, int n, int b, int64_t t0,
                        int64_t t1);

#endif
