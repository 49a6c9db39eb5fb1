/* rl_svg: a tiny SVG writer for figures a browser shows without any
 * plotting package: line plots (axes with round tick values and labels, one
 * polyline per series told apart by colour, dashes and markers, reference
 * lines such as a budget, events such as a signal, a legend and a caption),
 * as `lab compare-memory --svg` draws, and timelines (one row per hop, bars
 * for what happened when, events across all rows), as the grader's --html
 * page draws. Every text is escaped on output: labels may carry a
 * submission's words. A figure is a standalone document, or a fragment
 * (no XML declaration) to inline into an HTML page. */
#ifndef RL_SVG_H
#define RL_SVG_H

#include <stddef.h>
#include <stdio.h>

/* How a series' line is drawn, so two that coincide stay apart. */
typedef enum rl_svg_dash {
    RL_SVG_SOLID = 0,
    RL_SVG_DASHED,
    RL_SVG_DOTTED,
} rl_svg_dash;

typedef struct rl_svg_series {
    const char *label;   /* legend text (escaped on output) */
    const double *x, *y; /* |n| points, x increasing */
    size_t n;
    rl_svg_dash dash;
    int markers; /* nonzero: a marker at each point (a shape per
                  * series: circle, square, triangle, ...) */
    int right;   /* nonzero: read on the right-hand y axis (the plot's
                  * y2label), for a series orders of magnitude apart from
                  * the others, which one axis would flatten */
} rl_svg_series;

/* A labelled line across the plot: a reference value on the y axis (a
 * budget, a fair share, a capacity: drawn dashed, grey) or an event on
 * the x axis (a backend joins, SIGTERM, the cancel: drawn dotted, dark). */
typedef struct rl_svg_ref {
    const char *label; /* escaped on output */
    double value;
    int right; /* a reference read on the right-hand y axis, as a series'
                * .right (ignored for events) */
} rl_svg_ref;

typedef struct rl_svg_plot {
    const char *title;   /* may be NULL */
    const char *xlabel;  /* with units, e.g. "time since the call started (s)" */
    const char *ylabel;  /* e.g. "RSS of the process group (MiB)" */
    const char *y2label; /* the right-hand y axis' label, drawn when a
                          * series is .right; may be NULL */
    const rl_svg_series *series;
    size_t nseries;
    int width, height;      /* pixels; 0 gives 800 x 500 */
    const rl_svg_ref *refs; /* horizontal reference lines (y values) */
    size_t nrefs;
    const rl_svg_ref *events; /* vertical event lines (x values) */
    size_t nevents;
    const char *caption; /* one line under the figure: what a viewer
                          * should conclude; may be NULL */
    int fragment;        /* nonzero: no XML declaration (for HTML) */
    double xmax;         /* > 0: the x axis ends here; 0: at the
                          * largest x of the data and events */
} rl_svg_plot;

/* Writes |p| as an SVG document to |f|. The y axis starts at 0 and ends at
 * a round value above the largest point and reference; the x axis starts
 * at 0 and ends at the last data (never a tick's worth past it). When a
 * series is .right, its series and references (.right) have a y axis of
 * their own on the right, with its own round ticks, and every legend entry
 * and reference label says which axis it is read on. Labels go where no
 * other label is and, where the plot leaves room, no curve passes. Returns
 * 0, or RL_EINVAL when there is no point at all or a value is not
 * finite. */
int rl_svg_write(FILE *f, const rl_svg_plot *p);

/* Writes |p| to the file |path|. Returns 0, RL_EINVAL (see rl_svg_write),
 * or RL_ESYS with the reason in |err|. */
int rl_svg_save(const char *path, const rl_svg_plot *p, char *err, size_t errlen);

/* What a timeline bar means, by colour: a call that ran (grey), what
 * truly held (green), what was wrong (red), what was given (blue). A bar
 * with x0 == x1 is drawn as a point marker. */
typedef enum rl_svg_span_kind {
    RL_SVG_SPAN_PLAIN = 0,
    RL_SVG_SPAN_GOOD,
    RL_SVG_SPAN_BAD,
    RL_SVG_SPAN_INFO,
} rl_svg_span_kind;

typedef struct rl_svg_span {
    size_t row;
    double x0, x1;     /* x0 <= x1 */
    const char *label; /* drawn in or beside the bar; may be NULL */
    rl_svg_span_kind kind;
} rl_svg_span;

typedef struct rl_svg_timeline {
    const char *title;       /* may be NULL */
    const char *xlabel;      /* with units */
    const char *const *rows; /* row names, top to bottom */
    size_t nrows;
    const rl_svg_span *spans;
    size_t nspans;
    const rl_svg_ref *events; /* vertical lines across every row */
    size_t nevents;
    const char *caption; /* may be NULL */
    int width;           /* pixels; 0 gives 800 (the height follows the rows) */
    int fragment;        /* as rl_svg_plot's */
} rl_svg_timeline;

/* Writes |t| as an SVG document to |f|: one row per name, its bars, the
 * events, an x axis from 0 to the last bar or event. Returns 0, or
 * RL_EINVAL when there is no row, a bar names a row that does not exist,
 * or a value is not finite. */
int rl_svg_timeline_write(FILE *f, const rl_svg_timeline *t);

/* The tick step for an axis from 0 to |max|: 1, 2 or 5 times a power of 10,
 * giving 4 to 10 ticks. |max| <= 0 gives 1. Exposed for unit tests. */
double rl_svg_tick_step(double max);

/* Copies |s| into |out| with &, <, >, " and ' escaped for XML (and for
 * HTML text and attributes), control bytes and bytes outside ASCII
 * replaced by '?', truncating
 * at a character boundary; returns |out|. Exposed for unit tests. */
char *rl_svg_escape(const char *s, char *out, size_t len);

/* Writes all of |s| (NULL: nothing) to |f|, escaped as rl_svg_escape does,
 * in pieces so that no length cuts it: for HTML pages' text. */
void rl_svg_write_escaped(FILE *f, const char *s);

#endif
