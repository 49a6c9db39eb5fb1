/* coverage_figure: the parts of the coverage exercise's --html pictures
 * (figure.h) that every scenario draws alike, beside the arithmetic of
 * coverage_judge.h: how densely a span is sampled, the streams each tunnel
 * server held over it, and the longest queue wait at an instant. The
 * scenarios' own pictures (their titles, bounds and captions) stay in
 * ex_coverage.c. Instants are CLOCK_MONOTONIC ns. */
#ifndef GR_COVERAGE_FIGURE_H
#define GR_COVERAGE_FIGURE_H

#include "coverage_judge.h"
#include "exercise.h"
#include "figure.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Samples for a picture from |t0| to |t1|: their count (at least 1, at
 * most GR_FIG_MAX_POINTS), and in |*step| the ns between them, no closer
 * than 25 ms (the records are exact; the picture needs no more). */
size_t gr_cov_fig_samples(int64_t t0, int64_t t1, int64_t *step);

/* Calls dispatched to |s| in [t0, t] still queued at |t| (not handed). */
int gr_cov_queued_at(const gr_cov_server *s, int64_t t0, int64_t t);

/* Adds to |f| the streams each of the |n| servers (named |names|) held
 * over [t0, t1] (x in seconds from |t0|), the busy server |b| first and
 * named so (-1: none). */
void gr_cov_fig_streams(gr_figure *f, gr_cov_server *const *servers, const char *const *names, int n, int b, int64_t t0,
                        int64_t t1);

/* The instants of the evacuation scenario: server |c| short and idle from
 * |c_since|, overdue at |overdue|, to be evacuated by |evac_by|, emptied
 * at |emptied| (0: not); the calls on the busy server |b| from |t0|; the
 * last look at |now|. */
typedef struct gr_cov_evac_times {
    int64_t c_since, overdue, evac_by, emptied, t0, now;
    bool early; /* emptied, but before it was overdue (as judged) */
} gr_cov_evac_times;

/* The evacuation's picture into |out|: the streams on the busy server |b|
 * and the idle one |c| (of the |n|) from |t->c_since| to |t->now| with
 * those instants; the caption
 * follows the verdict already in |out| (|closed_b|: streams closed on the
 * busy server). */
void gr_cov_evacuation_figure(gr_scenario_result *out, gr_cov_server *const *servers, const char *const *names, int n,
                              int b, int c, const gr_cov_evac_times *t, int closed_b);

/* The scenarios' pictures into |out|, over the |n| servers |servers|
 * named |names|, the busy one |b|, from |t0|; each caption follows the
 * figures judged. The burst's: streams per server to |now| against the
 * demand (|calls| calls over |burst_ms|, |demand| in flight), the longest
 * wait |w| against |bound_ns| in the caption. */
void gr_cov_burst_figure(gr_scenario_result *out, gr_cov_server *const *servers, const char *const *names, int n, int b,
                         int64_t t0, int64_t now, int64_t bound_ns, const gr_cov_waits *w, int calls, int demand,
                         int burst_ms, bool skewed);

/* The rest scenario's: to the |check| instant, the burst's last answer at
 * |t_end|; |below| the server pruned below the reserve (to |below_n|) and
 * |worst| the one left fullest (|worst_n|), -1 when none. */
void gr_cov_rest_figure(gr_scenario_result *out, gr_cov_server *const *servers, const char *const *names, int n, int b,
                        int64_t t0, int64_t t_end, int64_t check, int below, int below_n, int worst, int worst_n);

/* The rest scenario's when it FAILs before the rest is judged (the
 * burst itself broke a rule): the streams per server from |t0| to |now|
 * against the reserve, captioned so; no check is marked. Replaced by
 * gr_cov_rest_figure when the rest is judged. */
void gr_cov_rest_early_figure(gr_scenario_result *out, gr_cov_server *const *servers, const char *const *names, int n,
                              int b, int64_t t0, int64_t now);

/* The unfillable scenario's: streams per server and in all to |now|
 * against the judged |bound| on the total (|peak| reached; |kept|: the
 * busy server kept its streams). */
void gr_cov_unfillable_figure(gr_scenario_result *out, gr_cov_server *const *servers, const char *const *names, int n,
                              int b, int64_t t0, int64_t now, int bound, int peak, bool kept);

#endif
