/* rl_svg: line plots as SVG; see rl_svg.h. Plain printf of elements: the
 * format is text, and a viewer needs nothing but the file. */
#include "rl_svg.h"

#include "rl_err.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
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
        /* Control bytes and bytes outside ASCII (perhaps not UTF-8 at
         * all) would make the document ill-formed: a submission's words
         * must not break the picture. */
        if (!rep && ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f))
            rep = "?";
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

void rl_svg_write_escaped(FILE *f, const char *s)
{
    /* In pieces: rl_svg_escape cuts at its buffer, and an entity is at most
     * 6 bytes, so 128 input bytes always fit in 1024. */
    char piece[129], esc[1024];
    for (size_t n = s ? strlen(s) : 0; n > 0;) {
        size_t k = n < 128 ? n : 128;
        memcpy(piece, s, k);
        piece[k] = '\0';
        fputs(rl_svg_escape(piece, esc, sizeof esc), f);
        s += k;
        n -= k;
    }
}

/* "12", "0.5", "2.5": a tick value without trailing zeros. */
static void fmt_tick(double v, double step, char *buf, size_t len)
{
    int decimals = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
    snprintf(buf, len, "%.*f", decimals, v);
}

static const char *colour(size_t i)
{
    return colours[i % (sizeof colours / sizeof *colours)];
}

static const char *dash_attr(rl_svg_dash d)
{
    switch (d) {
    case RL_SVG_DASHED: return " stroke-dasharray=\"9 5\"";
    case RL_SVG_DOTTED: return " stroke-dasharray=\"2 4\"";
    default: return "";
    }
}

/* A marker of series |s|'s shape centred on (x, y). */
static void marker(FILE *f, size_t s, double x, double y, const char *c)
{
    switch (s % 4) {
    case 0:
        fprintf(f,
                "<circle class=\"marker\" cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"white\" stroke=\"%s\" "
                "stroke-width=\"2\"/>\n",
                x, y, c);
        break;
    case 1:
        fprintf(f, "<rect class=\"marker\" x=\"%.1f\" y=\"%.1f\" width=\"8\" height=\"8\" fill=\"%s\"/>\n", x - 4,
                y - 4, c);
        break;
    case 2: fprintf(f, "<path class=\"marker\" d=\"M%.1f %.1fl5 9h-10z\" fill=\"%s\"/>\n", x, y - 5, c); break;
    default:
        fprintf(f,
                "<path class=\"marker\" d=\"M%.1f %.1fl5 5l-5 5l-5 -5z\" fill=\"none\" stroke=\"%s\" "
                "stroke-width=\"2\"/>\n",
                x, y - 5, c);
        break;
    }
}

static void header(FILE *f, int fragment, int w, int h)
{
    if (!fragment)
        fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
            "font-family=\"sans-serif\" font-size=\"13\">\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            w, h, w, h);
}

static void title_caption(FILE *f, const char *title, const char *caption, double w, double caption_y)
{
    char esc[1024];
    if (title)
        fprintf(f,
                "<text class=\"title\" x=\"%.1f\" y=\"28\" text-anchor=\"middle\" font-size=\"16\" "
                "font-weight=\"bold\">%s</text>\n",
                w / 2.0, rl_svg_escape(title, esc, sizeof esc));
    if (caption)
        fprintf(
            f, "<text class=\"caption\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-style=\"italic\">%s</text>\n",
            w / 2.0, caption_y, rl_svg_escape(caption, esc, sizeof esc));
}

/* Where labels went, so the next one goes where none is: a label's box is
 * estimated from its length (13 px sans-serif: at most about 7.2 px a
 * character, measured in chromium for the labels the grader draws) and its
 * baseline (11 px above, 4 below). */
#define CHAR_W     7.2
#define PLACED_MAX 96
typedef struct box {
    double x0, y0, x1, y1;
} box;
typedef struct placed {
    box b[PLACED_MAX];
    size_t n;
} placed;

/* The box of |label| drawn at (x, y) with |anchor| ('s'tart, 'e'nd, 'm'iddle). */
static box text_box(const char *label, double x, double y, char anchor)
{
    double w = CHAR_W * (double)strlen(label ? label : "");
    double x0 = anchor == 'e' ? x - w : anchor == 'm' ? x - w / 2 : x;
    return (box){x0, y - 11, x0 + w, y + 4};
}

static bool overlaps(const box *a, const box *b)
{
    return a->x0 < b->x1 && b->x0 < a->x1 && a->y0 < b->y1 && b->y0 < a->y1;
}

static bool free_at(const placed *pl, const box *b)
{
    for (size_t i = 0; i < pl->n; i++)
        if (overlaps(&pl->b[i], b))
            return false;
    return true;
}

/* The first x from |x| rightwards at which |label| (anchored at its start,
 * baseline |y|) meets no placed label, or -1 when it would end past
 * |limit|. */
static double slide_right(const placed *pl, const char *label, double x, double y, double limit)
{
    for (size_t tries = 0; tries <= pl->n; tries++) {
        box b = text_box(label, x, y, 's');
        if (b.x1 > limit)
            return -1;
        size_t i = 0;
        while (i < pl->n && !overlaps(&pl->b[i], &b))
            i++;
        if (i == pl->n)
            return x;
        x = pl->b[i].x1 + 6;
    }
    return -1;
}

static void place(placed *pl, box b)
{
    if (pl->n < PLACED_MAX)
        pl->b[pl->n++] = b;
}

/* A plot's frame: its area in pixels and the scales of its axes, so that
 * the lines, the labels and the curve checks map values alike. |two|: a
 * right-hand y axis (index 1 of |ymax|) for the series marked .right. */
typedef struct frame {
    const rl_svg_plot *p;
    double xmax, ymax[2], ystep[2];
    double left, right, top, bottom, pw, ph;
    bool two;
} frame;

static double fx(const frame *fr, double x)
{
    return fr->left + x / fr->xmax * fr->pw;
}

/* 8 px between y = 0 and the frame, so a series at 0 is not hidden in
 * the frame's line. */
static double fy(const frame *fr, double y, int right)
{
    return fr->bottom - 8 - y / fr->ymax[fr->two && right] * (fr->ph - 8);
}

/* Whether a curve passes through |b| or within 3 px of it (a marker's
 * half-width, and the margin a reader needs): each segment walked in
 * steps of at most 3 px. */
static bool crosses(const frame *fr, const box *b)
{
    const double m = 3;
    for (size_t s = 0; s < fr->p->nseries; s++) {
        const rl_svg_series *se = &fr->p->series[s];
        for (size_t i = 0; i < se->n; i++) {
            double x1 = fx(fr, se->x[i]), y1 = fy(fr, se->y[i], se->right);
            double x0 = i ? fx(fr, se->x[i - 1]) : x1, y0 = i ? fy(fr, se->y[i - 1], se->right) : y1;
            double len = fabs(x1 - x0) + fabs(y1 - y0);
            int steps = (int)(len / 3) + 1;
            for (int k = 0; k <= steps && steps < 100000; k++) {
                double x = x0 + (x1 - x0) * k / steps, y = y0 + (y1 - y0) * k / steps;
                if (x >= b->x0 - m && x <= b->x1 + m && y >= b->y0 - m && y <= b->y1 + m)
                    return true;
            }
        }
    }
    return false;
}

/* Whether |b| is free of the labels of |pl| with 6 px to spare on either
 * side: CHAR_W is a label's width on average, and a short one rich in wide
 * letters runs past it ('C emptied', 9 characters, drew 68 px against 65
 * estimated, into the label it was placed beside). */
static bool clear_of(const placed *pl, const box *b)
{
    box wide = {b->x0 - 6, b->y0, b->x1 + 6, b->y1};
    return free_at(pl, &wide);
}

/* Whether |b| lies inside the plot area, clear of its frame. */
static bool inside(const frame *fr, const box *b)
{
    return b->x0 >= fr->left + 2 && b->x1 <= fr->right - 2 && b->y0 >= fr->top + 1 && b->y1 <= fr->bottom - 1;
}

/* Whether a reference line of the plot runs through |b|: an event's label
 * across one reads as that line's. */
static bool on_ref_line(const frame *fr, const box *b)
{
    for (size_t j = 0; j < fr->p->nrefs; j++) {
        double y = fy(fr, fr->p->refs[j].value, fr->p->refs[j].right);
        if (y >= b->y0 - 1 && y <= b->y1 + 1)
            return true;
    }
    return false;
}

/* Vertical event lines across the plot, each label at the top beside its
 * line (right of it, or left near the right edge), staggered so two events
 * close together stay readable; where that spot meets a label or a curve,
 * the label slides down its line, either side, to the first spot that is
 * free of both and of the reference lines; where curves fill every row beside the line, it goes just
 * above the frame (no curve is drawn there), either side, if no label is
 * there; else where it always went. */
static void events(FILE *f, const frame *fr, placed *pl)
{
    char esc[512];
    const rl_svg_ref *ev = fr->p->events;
    for (size_t i = 0; i < fr->p->nevents; i++) {
        const char *label = ev[i].label ? ev[i].label : "";
        double x = fx(fr, ev[i].value);
        /* A label near the right edge goes to the left of its line. */
        int flip = x > fr->left + fr->pw * 0.7;
        double lx = flip ? x - 4 : x + 4, ly = fr->top + 14 + 15.0 * (double)i;
        char anchor = flip ? 'e' : 's';
        bool found = false;
        for (double y = ly; !found && y + 4 <= fr->bottom - 1; y += 15)
            for (int side = 0; side < 2 && !found; side++) {
                int fl = side ? !flip : flip;
                box b = text_box(label, fl ? x - 4 : x + 4, y, fl ? 'e' : 's');
                if (inside(fr, &b) && clear_of(pl, &b) && !on_ref_line(fr, &b) && !crosses(fr, &b)) {
                    found = true;
                    lx = fl ? x - 4 : x + 4;
                    ly = y;
                    anchor = fl ? 'e' : 's';
                }
            }
        for (int side = 0; side < 2 && !found; side++) {
            int fl = side ? !flip : flip;
            box b = text_box(label, fl ? x - 4 : x + 4, fr->top - 5, fl ? 'e' : 's');
            if (b.x0 >= 2 && b.x1 <= fr->right && clear_of(pl, &b)) {
                found = true;
                lx = fl ? x - 4 : x + 4;
                ly = fr->top - 5;
                anchor = fl ? 'e' : 's';
            }
        }
        place(pl, text_box(label, lx, ly, anchor));
        fprintf(f,
                "<line class=\"event\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#222\" "
                "stroke-width=\"1.5\" stroke-dasharray=\"2 3\"/>\n"
                "<text class=\"event-label\" paint-order=\"stroke\" stroke=\"white\" stroke-width=\"4\" x=\"%.1f\" "
                "y=\"%.1f\" text-anchor=\"%s\" fill=\"#222\">%s</text>\n",
                x, ly < fr->top ? ly - 11 : fr->top, x, fr->bottom, lx, ly, anchor == 'e' ? "end" : "start",
                rl_svg_escape(label, esc, sizeof esc));
    }
}

/* Where a reference's label may go, in order: above its line at the right,
 * below it, at the left, in the middle, a line higher (two references
 * close together); then along the line from right to left, above and
 * below, then further off it. Fills |x|, |y|, |anchor| with the |k|-th
 * (a label |w| px wide) and returns false past the last. */
static bool ref_spot(const frame *fr, double y, double w, size_t k, double *x, double *ly, char *anchor)
{
    double mid = (fr->left + fr->right) / 2, r = fr->right - 6, l = fr->left + 6;
    const struct {
        double x, dy;
        char anchor;
    } fixed[] = {{r, -5, 'e'},   {r, 15, 'e'},  {l, -5, 's'},  {l, 15, 's'},   {mid, -5, 'm'},
                 {mid, 15, 'm'}, {r, -20, 'e'}, {l, -20, 's'}, {mid, -20, 'm'}};
    const size_t nfixed = sizeof fixed / sizeof *fixed;
    if (k < nfixed) {
        *x = fixed[k].x;
        *ly = y + fixed[k].dy;
        *anchor = fixed[k].anchor;
        return true;
    }
    /* The sweep: 12 px steps of the label's end, at each offset in turn. */
    static const double dys[] = {-5, 15, -20, 30, -35, 45};
    size_t per = (size_t)((r - l - w) / 12) + 1;
    if (r - l < w)
        return false;
    k -= nfixed;
    if (k >= per * (sizeof dys / sizeof *dys))
        return false;
    *x = r - 12.0 * (double)(k % per);
    *ly = y + dys[k / per];
    *anchor = 'e';
    return true;
}

/* A reference line across the plot at |ref|'s value, its label at the
 * first spot of ref_spot that is inside the plot, free of the labels of
 * |pl| and of the curves; else at the first free of labels; else where it
 * always went (above, right). */
static void ref_line(FILE *f, const frame *fr, const rl_svg_ref *ref, placed *pl)
{
    char text[400], esc[512];
    double y = fy(fr, ref->value, ref->right);
    snprintf(text, sizeof text, "%s%s", ref->label ? ref->label : "",
             !fr->two     ? ""
             : ref->right ? " (right axis)"
                          : " (left axis)");
    double w = CHAR_W * (double)strlen(text), x = 0, ly = 0, fx0 = -1, fy0 = 0;
    char anchor = 'e', fa = 'e';
    bool found = false;
    for (size_t k = 0; !found && ref_spot(fr, y, w, k, &x, &ly, &anchor); k++) {
        box b = text_box(text, x, ly, anchor);
        if (b.y0 < fr->top - 2 || b.y1 > fr->bottom + 2 || !clear_of(pl, &b))
            continue;
        if (fx0 < 0) {
            fx0 = x;
            fy0 = ly;
            fa = anchor;
        }
        found = !crosses(fr, &b);
    }
    if (!found) {
        if (fx0 < 0)
            ref_spot(fr, y, w, 0, &fx0, &fy0, &fa);
        x = fx0;
        ly = fy0;
        anchor = fa;
    }
    place(pl, text_box(text, x, ly, anchor));
    fprintf(f,
            "<line class=\"ref\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#777\" "
            "stroke-width=\"2\" stroke-dasharray=\"10 4 2 4\"/>\n"
            "<text class=\"ref-label\" paint-order=\"stroke\" stroke=\"white\" stroke-width=\"4\" x=\"%.1f\" "
            "y=\"%.1f\" text-anchor=\"%s\" fill=\"#555\">%s</text>\n",
            fr->left, y, fr->right, y, x, ly,
            anchor == 'e'   ? "end"
            : anchor == 'm' ? "middle"
                            : "start",
            rl_svg_escape(text, esc, sizeof esc));
}

static void x_ticks(FILE *f, double xmax, double xstep, double left, double pw, double top, double bottom)
{
    char tick[32];
    /* Counted, not summed: the n-th tick is at exactly n steps. */
    for (int i = 0; i * xstep <= xmax * (1 + 1e-9); i++) {
        double v = i * xstep;
        double x = left + v / xmax * pw;
        fmt_tick(v, xstep, tick, sizeof tick);
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                x, top, x, bottom, x, bottom + 18, tick);
    }
}

/* The y axes: the left one's ticks with grid lines across the plot and its
 * label; the right one's (|fr->two|) with short ticks on the frame alone,
 * so one grid is read, and its label turned the other way. */
static void y_axes(FILE *f, const frame *fr, int w)
{
    char esc[512], tick[32];
    for (int a = 0; a < 1 + fr->two; a++) {
        double step = fr->ystep[a];
        for (int i = 0; i * step <= fr->ymax[a] + step / 2; i++) {
            double v = i * step, y = fy(fr, v, a);
            fmt_tick(v, step, tick, sizeof tick);
            if (!a)
                fprintf(f,
                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n"
                        "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                        fr->left, y, fr->right, y, fr->left - 8, y + 4, tick);
            else
                fprintf(f,
                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n"
                        "<text class=\"y2-tick\" x=\"%.1f\" y=\"%.1f\">%s</text>\n",
                        fr->right, y, fr->right + 5, y, fr->right + 8, y + 4, tick);
        }
    }
    fprintf(f, "<text transform=\"translate(22 %.1f) rotate(-90)\" text-anchor=\"middle\">%s</text>\n",
            fr->top + fr->ph / 2, rl_svg_escape(fr->p->ylabel ? fr->p->ylabel : "", esc, sizeof esc));
    if (fr->two)
        fprintf(
            f, "<text class=\"y2label\" transform=\"translate(%d %.1f) rotate(90)\" text-anchor=\"middle\">%s</text>\n",
            w - 18, fr->top + fr->ph / 2, rl_svg_escape(fr->p->y2label ? fr->p->y2label : "", esc, sizeof esc));
}

/* The legend under the plot, one row per series; with two axes each entry
 * says which one it is read on. */
static void legend(FILE *f, const frame *fr)
{
    char text[400], esc[512];
    for (size_t s = 0; s < fr->p->nseries; s++) {
        const rl_svg_series *se = &fr->p->series[s];
        const char *c = colour(s);
        double y = fr->bottom + 62 + 20.0 * (double)s;
        fprintf(f,
                "<line class=\"legend\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                "stroke-width=\"3\"%s/>\n",
                fr->left, y, fr->left + 34, y, c, dash_attr(se->dash));
        if (se->markers)
            marker(f, s, fr->left + 17, y, c);
        snprintf(text, sizeof text, "%s%s", se->label ? se->label : "",
                 !fr->two    ? ""
                 : se->right ? " (right axis)"
                             : " (left axis)");
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", fr->left + 42, y + 4,
                rl_svg_escape(text, esc, sizeof esc));
    }
}

/* The scales of |p| into |fr|: x from 0 to the last data or event (or
 * p->xmax), each y axis from 0 to a round value above its largest point or
 * reference, with room for a reference's label above its line. Returns
 * RL_EINVAL when there is no point or a value is not finite. */
static int scales(const rl_svg_plot *p, frame *fr)
{
    double xmax = 0, ymax[2] = {0, 0};
    size_t points = 0;
    fr->two = false;
    for (size_t s = 0; s < p->nseries; s++)
        fr->two |= p->series[s].right && p->series[s].n;
    for (size_t s = 0; s < p->nseries; s++) {
        int a = fr->two && p->series[s].right;
        for (size_t i = 0; i < p->series[s].n; i++) {
            double x = p->series[s].x[i], y = p->series[s].y[i];
            if (!isfinite(x) || !isfinite(y))
                return RL_EINVAL;
            xmax = x > xmax ? x : xmax;
            ymax[a] = y > ymax[a] ? y : ymax[a];
            points++;
        }
    }
    if (!points)
        return RL_EINVAL;
    for (size_t i = 0; i < p->nrefs; i++) {
        int a = fr->two && p->refs[i].right;
        if (!isfinite(p->refs[i].value))
            return RL_EINVAL;
        ymax[a] = p->refs[i].value > ymax[a] ? p->refs[i].value : ymax[a];
    }
    for (size_t i = 0; i < p->nevents; i++) {
        if (!isfinite(p->events[i].value))
            return RL_EINVAL;
        xmax = p->events[i].value > xmax ? p->events[i].value : xmax;
    }
    fr->xmax = p->xmax > 0 ? p->xmax : xmax > 0 ? xmax : 1;
    for (int a = 0; a < 2; a++) {
        fr->ystep[a] = rl_svg_tick_step(ymax[a] * 1.05);
        fr->ymax[a] = ymax[a] > 0 ? fr->ystep[a] * ceil(ymax[a] * 1.05 / fr->ystep[a] - 1e-9) : fr->ystep[a];
    }
    return RL_OK;
}

int rl_svg_write(FILE *f, const rl_svg_plot *p)
{
    frame fr = {.p = p};
    if (scales(p, &fr) != RL_OK)
        return RL_EINVAL;
    double xstep = rl_svg_tick_step(fr.xmax);
    int w = p->width > 0 ? p->width : 800, h = p->height > 0 ? p->height : 500;
    /* Plot area: room on the left for tick values and the y label (and on
     * the right for the second axis'), above for the title, below for the x
     * label, the legend (one row per series, outside the plot so it never
     * hides a curve) and the caption. */
    fr.left = 80;
    fr.right = w - (fr.two ? 80.0 : 30.0);
    fr.top = p->title ? 50 : 20;
    double legend_h = 20.0 * (double)p->nseries, caption_h = p->caption ? 24 : 0;
    fr.bottom = h - 60.0 - legend_h - caption_h;
    fr.pw = fr.right - fr.left;
    fr.ph = fr.bottom - fr.top;
    char esc[512];
    header(f, p->fragment, w, h);
    title_caption(f, p->title, p->caption, w, h - 10.0);
    x_ticks(f, fr.xmax, xstep, fr.left, fr.pw, fr.top, fr.bottom);
    y_axes(f, &fr, w);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", fr.left + fr.pw / 2, fr.bottom + 40,
            rl_svg_escape(p->xlabel ? p->xlabel : "", esc, sizeof esc));
    /* Events first (their labels stack at the top), then each reference's
     * label where no label is (ref_line). */
    placed pl = {.n = 0};
    events(f, &fr, &pl);
    for (size_t i = 0; i < p->nrefs; i++)
        ref_line(f, &fr, &p->refs[i], &pl);
    /* An id unique in a page that inlines several figures. */
    static unsigned clip_seq;
    unsigned clip = ++clip_seq;
    fprintf(f, "<clipPath id=\"rl-clip-%u\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/></clipPath>\n",
            clip, fr.left - 6, fr.top - 6, fr.pw + 12, fr.ph + 12);
    for (size_t s = 0; s < p->nseries; s++) {
        const rl_svg_series *se = &p->series[s];
        const char *c = colour(s);
        fprintf(f,
                "<polyline class=\"series\" clip-path=\"url(#rl-clip-%u)\" fill=\"none\" stroke=\"%s\" "
                "stroke-width=\"2\"%s points=\"",
                clip, c, dash_attr(se->dash));
        for (size_t i = 0; i < se->n; i++)
            fprintf(f, "%s%.1f,%.1f", i ? " " : "", fx(&fr, se->x[i]), fy(&fr, se->y[i], se->right));
        fprintf(f, "\"/>\n");
        if (se->markers) {
            /* At most about 30 markers a series: more hide the line. */
            size_t every = se->n > 30 ? (se->n + 29) / 30 : 1;
            for (size_t i = 0; i < se->n; i += every)
                marker(f, s, fx(&fr, se->x[i]), fy(&fr, se->y[i], se->right), c);
        }
    }
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#333\"/>\n", fr.left,
            fr.top, fr.pw, fr.ph);
    legend(f, &fr);
    fprintf(f, "</svg>\n");
    return ferror(f) ? RL_ESYS : RL_OK;
}

static const char *span_fill(rl_svg_span_kind k)
{
    switch (k) {
    case RL_SVG_SPAN_GOOD: return "#009E73";
    case RL_SVG_SPAN_BAD: return "#D55E00";
    case RL_SVG_SPAN_INFO: return "#0072B2";
    default: return "#999999";
    }
}

/* The label of a timeline bar from |x0| to |x1| (a marker when thinner
 * than 4 px) at |y|: inside the bar when it fits there beside any label
 * already in it (|pl|: the labels placed); else right of it, past any
 * label there but within 60 px of the bar, while it stays in the picture
 * (|w| wide); else left of it when no label or bar is there (|solid|:
 * labels and bars); else right of it past the labels there, however far;
 * else right of it all the same. */
/* A dark label's white halo: an event line drawn across it stops at its
 * letters. A label inside its bar has none: white on the bar reads over a
 * line, and its bar may lie under another (a halo of its colour would
 * outline it there). */
#define HALO " paint-order=\"stroke\" stroke=\"white\" stroke-width=\"3\""
static void span_label(FILE *f, const rl_svg_span *s, double y, double x0, double x1, int w, placed *pl, placed *solid)
{
    char esc[512];
    const char *label = s->label ? s->label : "";
    if (!*label)
        return;
    rl_svg_escape(label, esc, sizeof esc);
    if (x1 - x0 < 4)
        x1 = x0 + 8; /* past the marker */
    double ty = y + 13.5;
    bool point = x1 - x0 < 9; /* a marker's half-width past x0 */
    double xin = slide_right(pl, label, x0 + 4, ty, x1 - 4);
    /* Beside it: over another bar if need be (dark on any bar reads), but
     * never past another label, nor far from its own bar. */
    double far = xin < 0 ? slide_right(pl, label, x1 + 4, ty, w - 4.0) : -1;
    double xr = far > x1 + 60 ? -1 : far;
    double lx = point ? x0 - 10 : x0 - 4;
    box l = text_box(label, lx, ty, 'e');
    box b;
    if (xin >= 0) {
        b = text_box(label, xin, ty, 's');
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"white\">%s</text>\n", xin, ty, esc);
    } else if (xr >= 0) {
        b = text_box(label, xr, ty, 's');
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#222\"" HALO ">%s</text>\n", xr, ty, esc);
    } else if (l.x0 > 4 && free_at(solid, &l)) {
        b = l;
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" fill=\"#222\"" HALO ">%s</text>\n", lx, ty, esc);
    } else {
        /* Far from its bar rather than over another label. */
        double x = far >= 0 ? far : x1 + 4;
        b = text_box(label, x, ty, 's');
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#222\"" HALO ">%s</text>\n", x, ty, esc);
    }
    place(pl, b);
    place(solid, b);
}

int rl_svg_timeline_write(FILE *f, const rl_svg_timeline *t)
{
    if (!t->nrows)
        return RL_EINVAL;
    double xmax = 0;
    for (size_t i = 0; i < t->nspans; i++) {
        const rl_svg_span *s = &t->spans[i];
        if (s->row >= t->nrows || !isfinite(s->x0) || !isfinite(s->x1))
            return RL_EINVAL;
        xmax = s->x1 > xmax ? s->x1 : xmax;
        xmax = s->x0 > xmax ? s->x0 : xmax;
    }
    for (size_t i = 0; i < t->nevents; i++) {
        if (!isfinite(t->events[i].value))
            return RL_EINVAL;
        xmax = t->events[i].value > xmax ? t->events[i].value : xmax;
    }
    if (xmax <= 0)
        xmax = 1;
    /* Room past the last thing drawn: what happened at the end (a late
     * call, an instant) stays inside the axis, not on its frame. */
    xmax *= 1.05;
    double xstep = rl_svg_tick_step(xmax);
    const double row_h = 30, bar_h = 18;
    int w = t->width > 0 ? t->width : 800;
    /* Row names on the left, 12 px clear of the frame (a point marker at 0
     * reaches 7 px out of it), the plot moved right for a long one; room
     * above the rows for the events' labels. */
    double names = 0;
    for (size_t r = 0; r < t->nrows; r++)
        names = fmax(names, text_box(t->rows[r], 0, 0, 's').x1);
    double left = fmax(190, names + 20), right = w - 30.0;
    double top = (t->title ? 44 : 14) + 15.0 * (double)t->nevents + 6;
    double bottom = top + row_h * (double)t->nrows;
    double h = bottom + 50 + (t->caption ? 24 : 0);
    double pw = right - left;
    char esc[512];
    placed pl = {.n = 0};
    header(f, t->fragment, w, (int)h);
    title_caption(f, t->title, t->caption, w, h - 10);
    x_ticks(f, xmax, xstep, left, pw, top, bottom);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", left + pw / 2, bottom + 40,
            rl_svg_escape(t->xlabel ? t->xlabel : "", esc, sizeof esc));
    for (size_t r = 0; r < t->nrows; r++) {
        double y = top + row_h * (double)r;
        if (r % 2)
            fprintf(
                f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#000\" fill-opacity=\"0.04\"/>\n",
                left, y, pw, row_h);
        fprintf(f, "<text class=\"row\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", left - 12,
                y + row_h / 2 + 4, rl_svg_escape(t->rows[r] ? t->rows[r] : "", esc, sizeof esc));
        place(&pl, text_box(t->rows[r], left - 12, y + row_h / 2 + 4, 'e'));
    }
    /* The bars first, then their labels over them: a label beside its
     * bar is never hidden under the next bar, nor drawn across one when
     * there is room elsewhere (|solid|: the labels and the bars). */
    placed solid = pl;
    for (size_t i = 0; i < t->nspans; i++) {
        const rl_svg_span *s = &t->spans[i];
        double y = top + row_h * (double)s->row + (row_h - bar_h) / 2;
        double x0 = left + s->x0 / xmax * pw, x1 = left + s->x1 / xmax * pw;
        const char *c = span_fill(s->kind);
        /* Too thin to see as a bar: a marker, so the evidence shows. */
        if (x1 - x0 < 4) {
            fprintf(f, "<path class=\"span-point\" d=\"M%.1f %.1fl7 9l-7 9l-7 -9z\" fill=\"%s\"/>\n", x0, y, c);
            place(&solid, (box){x0 - 7, y, x0 + 7, y + bar_h});
        } else {
            fprintf(
                f, "<rect class=\"span\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" rx=\"2\"/>\n",
                x0, y, x1 - x0, bar_h, c);
            place(&solid, (box){x0, y, x1, y + bar_h});
        }
    }
    /* Events over the bars, with their labels above the rows, and under
     * the bars' labels, whose halos keep the line off their letters. */
    for (size_t i = 0; i < t->nevents; i++) {
        double x = left + t->events[i].value / xmax * pw;
        int flip = x > left + pw * 0.6;
        double ly = top - 6 - 15.0 * (double)(t->nevents - 1 - i);
        fprintf(f,
                "<line class=\"event\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#222\" "
                "stroke-width=\"2\" stroke-dasharray=\"5 3\"/>\n"
                "<text class=\"event-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-weight=\"bold\">%s</text>\n",
                x, ly + 4, x, bottom, flip ? x + 3 : x - 3, ly, flip ? "end" : "start",
                rl_svg_escape(t->events[i].label ? t->events[i].label : "", esc, sizeof esc));
    }
    for (size_t i = 0; i < t->nspans; i++)
        span_label(f, &t->spans[i], top + row_h * (double)t->spans[i].row + (row_h - bar_h) / 2,
                   left + t->spans[i].x0 / xmax * pw, left + t->spans[i].x1 / xmax * pw, w, &pl, &solid);
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#333\"/>\n", left,
            top, pw, bottom - top);
    fprintf(f, "</svg>\n");
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
