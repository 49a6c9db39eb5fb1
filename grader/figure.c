/* figure: a scenario's picture as data, drawn with rl_svg; see figure.h. */
#include "figure.h"

#include "rl_err.h"
#include "rl_svg.h"

#include <stdarg.h>
#include <string.h>

static void copy(char *dst, size_t len, const char *src)
{
    snprintf(dst, len, "%s", src ? src : "");
}

static void start(gr_figure *f, gr_fig_kind kind, const char *title, const char *xlabel, const char *ylabel)
{
    memset(f, 0, sizeof *f);
    f->kind = kind;
    copy(f->title, sizeof f->title, title);
    copy(f->xlabel, sizeof f->xlabel, xlabel);
    copy(f->ylabel, sizeof f->ylabel, ylabel);
}

void gr_fig_timeline(gr_figure *f, const char *title, const char *xlabel)
{
    start(f, GR_FIG_TIMELINE, title, xlabel, NULL);
}

void gr_fig_plot(gr_figure *f, const char *title, const char *xlabel, const char *ylabel)
{
    start(f, GR_FIG_PLOT, title, xlabel, ylabel);
}

void gr_fig_caption(gr_figure *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->caption, sizeof f->caption, fmt, ap);
    va_end(ap);
}

int gr_fig_row(gr_figure *f, const char *name)
{
    if (f->nrows >= GR_FIG_MAX_ROWS)
        return -1;
    copy(f->rows[f->nrows], sizeof f->rows[0], name);
    return f->nrows++;
}

void gr_fig_span_add(gr_figure *f, int row, double x0, double x1, gr_fig_bar bar, const char *fmt, ...)
{
    if (row < 0 || row >= f->nrows || f->nspans >= GR_FIG_MAX_SPANS)
        return;
    gr_fig_span *s = &f->spans[f->nspans++];
    s->row = row;
    s->x0 = x0 < x1 ? x0 : x1;
    s->x1 = x0 < x1 ? x1 : x0;
    s->bar = bar;
    s->label[0] = '\0';
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(s->label, sizeof s->label, fmt, ap);
        va_end(ap);
    }
}

static void line_add(gr_fig_line *lines, int *n, double v, const char *fmt, va_list ap)
{
    if (*n >= GR_FIG_MAX_LINES)
        return;
    gr_fig_line *l = &lines[(*n)++];
    l->value = v;
    vsnprintf(l->label, sizeof l->label, fmt, ap);
}

void gr_fig_event(gr_figure *f, double x, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    line_add(f->events, &f->nevents, x, fmt, ap);
    va_end(ap);
}

void gr_fig_ref(gr_figure *f, double y, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    line_add(f->refs, &f->nrefs, y, fmt, ap);
    va_end(ap);
}

int gr_fig_series_add(gr_figure *f, const char *label, const double *x, const double *y, size_t n)
{
    if (f->nseries >= GR_FIG_MAX_SERIES)
        return -1;
    gr_fig_series *s = &f->series[f->nseries];
    copy(s->label, sizeof s->label, label);
    s->n = 0;
    if (n <= GR_FIG_MAX_POINTS) {
        memcpy(s->x, x, n * sizeof *x);
        memcpy(s->y, y, n * sizeof *y);
        s->n = n;
    } else {
        /* Evenly thinned; the peak kept, as a judged RSS peak must show. */
        size_t peak = 0;
        for (size_t i = 1; i < n; i++)
            peak = y[i] > y[peak] ? i : peak;
        size_t keep = GR_FIG_MAX_POINTS - 1;
        for (size_t k = 0; k < keep; k++) {
            size_t i = k * (n - 1) / (keep - 1);
            size_t prev = k ? (k - 1) * (n - 1) / (keep - 1) : 0;
            if (k && prev < peak && peak < i && s->n < GR_FIG_MAX_POINTS - 1) {
                s->x[s->n] = x[peak];
                s->y[s->n++] = y[peak];
            }
            if (s->n < GR_FIG_MAX_POINTS) {
                s->x[s->n] = x[i];
                s->y[s->n++] = y[i];
            }
        }
    }
    return f->nseries++;
}

static double largest(const double *v, size_t n, double m)
{
    for (size_t i = 0; i < n; i++)
        m = v[i] > m ? v[i] : m;
    return m;
}

int gr_fig_own_scale(gr_figure *f, int s, int ref, const char *ylabel, const char *y2label)
{
    if (s < 0 || s >= f->nseries || ref >= f->nrefs)
        return 0;
    /* The group's largest value and the others', each at least 0: the axes
     * start at 0. */
    double mine = largest(f->series[s].y, f->series[s].n, 0), rest = 0;
    if (ref >= 0)
        mine = f->refs[ref].value > mine ? f->refs[ref].value : mine;
    for (int i = 0; i < f->nseries; i++)
        if (i != s)
            rest = largest(f->series[i].y, f->series[i].n, rest);
    for (int i = 0; i < f->nrefs; i++)
        if (i != ref)
            rest = f->refs[i].value > rest ? f->refs[i].value : rest;
    if (!(mine > GR_FIG_SCALE_RATIO * rest || rest > GR_FIG_SCALE_RATIO * mine))
        return 0;
    f->series[s].right = 1;
    if (ref >= 0)
        f->refs[ref].right = 1;
    copy(f->ylabel, sizeof f->ylabel, ylabel);
    copy(f->y2label, sizeof f->y2label, y2label);
    return 1;
}

static rl_svg_span_kind span_kind(gr_fig_bar b)
{
    switch (b) {
    case GR_FIG_TRUTH: return RL_SVG_SPAN_GOOD;
    case GR_FIG_WRONG: return RL_SVG_SPAN_BAD;
    case GR_FIG_GIVEN: return RL_SVG_SPAN_INFO;
    default: return RL_SVG_SPAN_PLAIN;
    }
}

static void refs(const gr_fig_line *in, int n, rl_svg_ref *out)
{
    for (int i = 0; i < n; i++)
        out[i] = (rl_svg_ref){.label = in[i].label, .value = in[i].value, .right = in[i].right};
}

int gr_fig_svg(FILE *out, const gr_figure *f)
{
    rl_svg_ref ev[GR_FIG_MAX_LINES], rf[GR_FIG_MAX_LINES];
    refs(f->events, f->nevents, ev);
    refs(f->refs, f->nrefs, rf);
    const char *caption = f->caption[0] ? f->caption : NULL;
    if (f->kind == GR_FIG_TIMELINE) {
        const char *rows[GR_FIG_MAX_ROWS];
        rl_svg_span spans[GR_FIG_MAX_SPANS];
        for (int i = 0; i < f->nrows; i++)
            rows[i] = f->rows[i];
        for (int i = 0; i < f->nspans; i++)
            spans[i] = (rl_svg_span){.row = (size_t)f->spans[i].row,
                                     .x0 = f->spans[i].x0,
                                     .x1 = f->spans[i].x1,
                                     .label = f->spans[i].label,
                                     .kind = span_kind(f->spans[i].bar)};
        rl_svg_timeline t = {.title = f->title[0] ? f->title : NULL,
                             .xlabel = f->xlabel,
                             .rows = rows,
                             .nrows = (size_t)f->nrows,
                             .spans = spans,
                             .nspans = (size_t)f->nspans,
                             .events = ev,
                             .nevents = (size_t)f->nevents,
                             .caption = caption,
                             .width = 860,
                             .fragment = 1};
        return rl_svg_timeline_write(out, &t);
    }
    if (f->kind == GR_FIG_PLOT) {
        rl_svg_series se[GR_FIG_MAX_SERIES];
        for (int i = 0; i < f->nseries; i++)
            se[i] = (rl_svg_series){.label = f->series[i].label,
                                    .x = f->series[i].x,
                                    .y = f->series[i].y,
                                    .n = f->series[i].n,
                                    .dash = (rl_svg_dash)(i % 3),
                                    .markers = f->series[i].n <= 60,
                                    .right = f->series[i].right};
        rl_svg_plot p = {.title = f->title[0] ? f->title : NULL,
                         .xlabel = f->xlabel,
                         .ylabel = f->ylabel,
                         .y2label = f->y2label[0] ? f->y2label : NULL,
                         .series = se,
                         .nseries = (size_t)f->nseries,
                         .width = 860,
                         .height = 420,
                         .refs = rf,
                         .nrefs = (size_t)f->nrefs,
                         .events = ev,
                         .nevents = (size_t)f->nevents,
                         .caption = caption,
                         .fragment = 1};
        return rl_svg_write(out, &p);
    }
    return RL_EINVAL;
}
