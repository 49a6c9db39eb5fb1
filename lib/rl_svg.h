/* rl_svg: a tiny SVG line-plot writer (axes with round tick values and
 * labels, one polyline per series, a legend) for figures a browser shows
 * without any plotting package, such as `lab compare-memory --svg`. */
#ifndef RL_SVG_H
#define RL_SVG_H

#include <stddef.h>
#include <stdio.h>

typedef struct rl_svg_series {
    const char *label;  /* legend text (escaped on output) */
    const double *x, *y; /* |n| points, x increasing */
    size_t n;
} rl_svg_series;

typedef struct rl_svg_plot {
    const char *title;   /* may be NULL */
    const char *xlabel;  /* with units, e.g. "time since the call started (s)" */
    const char *ylabel;  /* e.g. "RSS of the process group (MiB)" */
    const rl_svg_series *series;
    size_t nseries;
    int width, height;   /* pixels; 0 gives 800 x 500 */
} rl_svg_plot;

/* Writes |p| as a standalone SVG document to |f|. The axes start at 0 and
 * end at a round value above the largest point. Returns 0, or RL_EINVAL
 * when there is no point at all or a value is not finite. */
int rl_svg_write(FILE *f, const rl_svg_plot *p);

/* Writes |p| to the file |path|. Returns 0, RL_EINVAL (see rl_svg_write),
 * or RL_ESYS with the reason in |err|. */
int rl_svg_save(const char *path, const rl_svg_plot *p, char *err, size_t errlen);

/* The tick step for an axis from 0 to |max|: 1, 2 or 5 times a power of 10,
 * giving 4 to 10 ticks. |max| <= 0 gives 1. Exposed for unit tests. */
double rl_svg_tick_step(double max);

/* Copies |s| into |out| with &, <, >, " and ' escaped for XML, truncating
 * at a character boundary; returns |out|. Exposed for unit tests. */
char *rl_svg_escape(const char *s, char *out, size_t len);

#endif
