/* figure: what a scenario measured, as a picture for the --html report.
 *
 * A scenario fills the gr_figure in its result (exercise.h) with what it
 * measured: a timeline (one row per hop, bars for when a call ran and for
 * the deadline it received against the time that truly remained, events
 * such as the client's deadline) or a plot (series over time against
 * reference lines such as a memory budget, events such as the reader's
 * stall). The report (html.c) draws it with rl_svg. The figure is plain
 * data of fixed size inside the result, so it is copied with it and needs
 * no freeing; a scenario that fills none leaves kind GR_FIG_NONE (the
 * page then shows the feedback alone). Labels are copied and cut at
 * GR_FIG_LABEL; they may carry a submission's words and are escaped when
 * drawn. Adding past a limit is ignored: a picture with less, never a
 * failed scenario. */
#ifndef GR_FIGURE_H
#define GR_FIGURE_H

#include <stddef.h>
#include <stdio.h>

#define GR_FIG_LABEL      120
#define GR_FIG_MAX_ROWS   8
#define GR_FIG_MAX_SPANS  16
#define GR_FIG_MAX_LINES  4 /* events, and reference lines, each */
#define GR_FIG_MAX_SERIES 4
#define GR_FIG_MAX_POINTS 240 /* a series' samples; more are thinned */
/* Series whose largest values differ more than this many times are read on
 * two y axes (gr_fig_own_scale): on one, the smaller is a flat line at 0. */
#define GR_FIG_SCALE_RATIO 10.0

typedef enum gr_fig_kind {
    GR_FIG_NONE = 0,
    GR_FIG_TIMELINE,
    GR_FIG_PLOT,
} gr_fig_kind;

/* As rl_svg_span_kind: what a bar's colour says. */
typedef enum gr_fig_bar {
    GR_FIG_RAN = 0, /* a call ran (grey) */
    GR_FIG_TRUTH,   /* what truly held, e.g. the time that remained (green) */
    GR_FIG_WRONG,   /* what the submission got wrong (red) */
    GR_FIG_GIVEN,   /* what the submission gave, and was right (blue) */
} gr_fig_bar;

typedef struct gr_fig_line {
    char label[GR_FIG_LABEL];
    double value;
    int right; /* a reference read on the right-hand axis */
} gr_fig_line;

typedef struct gr_fig_span {
    int row;
    double x0, x1;
    gr_fig_bar bar;
    char label[GR_FIG_LABEL];
} gr_fig_span;

typedef struct gr_fig_series {
    char label[GR_FIG_LABEL];
    size_t n;
    double x[GR_FIG_MAX_POINTS], y[GR_FIG_MAX_POINTS];
    int right; /* read on the right-hand axis (the figure's y2label) */
} gr_fig_series;

typedef struct gr_figure {
    gr_fig_kind kind;
    char title[GR_FIG_LABEL];
    char xlabel[GR_FIG_LABEL], ylabel[GR_FIG_LABEL];
    char y2label[GR_FIG_LABEL];     /* the right-hand axis', when a series is on it */
    char caption[2 * GR_FIG_LABEL]; /* what a viewer should see in it */
    char rows[GR_FIG_MAX_ROWS][GR_FIG_LABEL];
    int nrows;
    gr_fig_span spans[GR_FIG_MAX_SPANS];
    int nspans;
    gr_fig_line events[GR_FIG_MAX_LINES]; /* vertical: x values */
    int nevents;
    gr_fig_line refs[GR_FIG_MAX_LINES]; /* horizontal: y values (plots) */
    int nrefs;
    gr_fig_series series[GR_FIG_MAX_SERIES];
    int nseries;
} gr_figure;

/* Starts |f| afresh as a timeline or a plot with these texts (|ylabel|
 * NULL for a timeline). */
void gr_fig_timeline(gr_figure *f, const char *title, const char *xlabel);
void gr_fig_plot(gr_figure *f, const char *title, const char *xlabel, const char *ylabel);

/* Sets the one-line caption (printf-style). */
void gr_fig_caption(gr_figure *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Adds a row (timeline) and returns its index, or -1 when full. */
int gr_fig_row(gr_figure *f, const char *name);

/* Adds a bar on |row| from |x0| to |x1| (swapped when reversed) with a
 * printf-style label (may be NULL). Ignored when |row| is -1 or full. */
void gr_fig_span_add(gr_figure *f, int row, double x0, double x1, gr_fig_bar bar, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* Adds a vertical event line at |x| / a horizontal reference line at |y|. */
void gr_fig_event(gr_figure *f, double x, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void gr_fig_ref(gr_figure *f, double y, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Adds a series of |n| points (|x| increasing); more than
 * GR_FIG_MAX_POINTS are thinned evenly, keeping the first, the last and
 * the largest y. Returns the series index, or -1 when full. */
int gr_fig_series_add(gr_figure *f, const char *label, const double *x, const double *y, size_t n);

/* Gives series |s|, and reference |ref| (-1: none) with it, a y axis of
 * their own on the right labelled |y2label|, and the left axis the label
 * |ylabel|, when the largest y of that group and the largest y of the
 * other series and references differ more than GR_FIG_SCALE_RATIO times;
 * otherwise changes nothing, so values of one order share one axis.
 * Returns 1 when it gave them their own axis, 0 when not (or |s| or |ref|
 * does not exist). */
int gr_fig_own_scale(gr_figure *f, int s, int ref, const char *ylabel, const char *y2label);

/* Writes |f| as an inline SVG fragment to |out| (nothing for
 * GR_FIG_NONE). Returns 0, or RL_EINVAL when it has nothing to draw. */
int gr_fig_svg(FILE *out, const gr_figure *f);

#endif
