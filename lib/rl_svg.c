/* rl_svg: line plots as SVG; see rl_svg.h. Plain printf of elements: the
 * format is text, and a viewer needs nothing but the file. */
#include "rl_svg.h"

#include "rl_err.h"

#include <errno.h>
#include <math.h>
#include <string.h>

/* Distinct on white and for the common colour-vision deficiencies
 * (Okabe-Ito). */
static const char *const colours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"};

double rl_svg_tick_step(double max)
{
    if (!(max > 0))
        return 1;
    double raw = max / 5;
    double p = pow(10, floor(log10(raw)));
    double m = raw / p;
    double step = m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10;
    return step * p;
}

char *rl_svg_escape(const char *s, char *out, size_t len)
{
    size_t o = 0;
    for (; s && *s; s++) {
        const char *rep = NULL;
        switch (*s) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&quot;"; break;
        case '\'': rep = "&#39;"; break;
        }
        size_t n = rep ? strlen(rep) : 1;
        if (o + n + 1 > len)
            break;
        if (rep)
            memcpy(out + o, rep, n);
        else
            out[o] = *s;
        o += n;
    }
    if (len)
        out[o] = '\0';
    return out;
}

/* "12", "0.5", "2.5": a tick value without trailing zeros. */
static void fmt_tick(double v, double step, char *buf, size_t len)
{
    int decimals = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
    snprintf(buf, len, "%.*f", decimals, v);
}

int rl_svg_write(FILE *f, const rl_svg_plot *p)
{
    double xmax = 0, ymax = 0;
    size_t points = 0;
    for (size_t s = 0; s < p->nseries; s++) {
        for (size_t i = 0; i < p->series[s].n; i++) {
            double x = p->series[s].x[i], y = p->series[s].y[i];
            if (!isfinite(x) || !isfinite(y))
                return RL_EINVAL;
            xmax = x > xmax ? x : xmax;
            ymax = y > ymax ? y : ymax;
            points++;
        }
    }
    if (!points)
        return RL_EINVAL;
    double xstep = rl_svg_tick_step(xmax), ystep = rl_svg_tick_step(ymax);
    xmax = xstep * ceil(xmax / xstep - 1e-9);
    ymax = ystep * ceil(ymax / ystep - 1e-9);
    if (xmax <= 0)
        xmax = xstep;
    if (ymax <= 0)
        ymax = ystep;

    int w = p->width > 0 ? p->width : 800, h = p->height > 0 ? p->height : 500;
    /* Plot area: room on the left for tick values and the y label, above for
     * the title, below for the x label and the legend (one row per series,
     * outside the plot so it never hides a curve). */
    double left = 80, right = w - 20.0, top = p->title ? 50 : 20;
    double bottom = h - 60.0 - 20.0 * (double)p->nseries;
    double pw = right - left, ph = bottom - top;
#define PX(x) (left + (x) / xmax * pw)
#define PY(y) (bottom - (y) / ymax * ph)
    char esc[512], tick[32];
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
            "font-family=\"sans-serif\" font-size=\"13\">\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            w, h, w, h);
    if (p->title)
        fprintf(f, "<text x=\"%.1f\" y=\"28\" text-anchor=\"middle\" font-size=\"16\" font-weight=\"bold\">%s</text>\n",
                w / 2.0, rl_svg_escape(p->title, esc, sizeof esc));
    /* Grid and ticks. */
    for (double v = 0; v <= xmax + xstep / 2; v += xstep) {
        fmt_tick(v, xstep, tick, sizeof tick);
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                PX(v), top, PX(v), bottom, PX(v), bottom + 18, tick);
    }
    for (double v = 0; v <= ymax + ystep / 2; v += ystep) {
        fmt_tick(v, ystep, tick, sizeof tick);
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                left, PY(v), right, PY(v), left - 8, PY(v) + 4, tick);
    }
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#333\"/>\n", left,
            top, pw, ph);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", left + pw / 2, bottom + 44,
            rl_svg_escape(p->xlabel ? p->xlabel : "", esc, sizeof esc));
    fprintf(f, "<text transform=\"translate(22 %.1f) rotate(-90)\" text-anchor=\"middle\">%s</text>\n", top + ph / 2,
            rl_svg_escape(p->ylabel ? p->ylabel : "", esc, sizeof esc));
    for (size_t s = 0; s < p->nseries; s++) {
        const rl_svg_series *se = &p->series[s];
        const char *c = colours[s % (sizeof colours / sizeof *colours)];
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", c);
        for (size_t i = 0; i < se->n; i++)
            fprintf(f, "%s%.1f,%.1f", i ? " " : "", PX(se->x[i]), PY(se->y[i]));
        fprintf(f, "\"/>\n");
    }
    for (size_t s = 0; s < p->nseries; s++) {
        const char *c = colours[s % (sizeof colours / sizeof *colours)];
        double y = bottom + 66 + 20.0 * (double)s;
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"3\"/>\n"
                "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
                left, y, left + 26, y, c, left + 34, y + 4,
                rl_svg_escape(p->series[s].label ? p->series[s].label : "", esc, sizeof esc));
    }
    fprintf(f, "</svg>\n");
#undef PX
#undef PY
    return ferror(f) ? RL_ESYS : RL_OK;
}

int rl_svg_save(const char *path, const rl_svg_plot *p, char *err, size_t errlen)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        return RL_ESYS;
    }
    int rc = rl_svg_write(f, p);
    if (fclose(f) != 0 && rc == RL_OK)
        rc = RL_ESYS;
    if (rc == RL_EINVAL)
        snprintf(err, errlen, "nothing to plot (no point, or a value that is not a number)");
    else if (rc != RL_OK)
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
    return rc;
}
