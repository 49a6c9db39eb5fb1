/* html: class.html; see html.h. */
#include "html.h"

#include "rl_alloc.h"
#include "rl_file.h"
#include "rl_err.h"
#include "rl_svg.h"

#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BINS 10

static void text(FILE *f, const char *s)
{
    rl_svg_write_escaped(f, s);
}

char *gc_html_escape_dup(const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return rl_xstrdup("");
    text(f, s);
    fclose(f);
    return buf ? buf : rl_xstrdup("");
}

void gc_html_url(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (isalnum(c) || c == '-' || c == '.' || c == '_')
            fputc(c, f);
        else
            fprintf(f, "%%%02X", c);
    }
}

static const char css[] = "body{font-family:sans-serif;margin:2em auto;max-width:960px;color:#222;background:#fafafa}"
                          "table{border-collapse:collapse;margin:.5em 0 1.5em;background:white}"
                          "td,th{border:1px solid #ddd;padding:.25em .6em;text-align:left;vertical-align:top}"
                          ".bar{display:inline-block;height:.8em;background:#009E73;vertical-align:middle}"
                          ".bad{color:#D55E00}.caption{font-style:italic;color:#444}";

/* The score histogram as an inline SVG bar chart: BINS bins of 10 % of the
 * total, a bar's height the number of students in it. */
static void histogram(FILE *f, const int *bins, int most)
{
    const double w = 720, h = 260, left = 60, bottom = 210, top = 20, bw = (w - left - 20) / BINS;
    /* Whole students: a step of at least 1, the axis to a multiple of it. */
    double step = rl_svg_tick_step(most);
    step = step < 1 ? 1 : step;
    double ymax = step * ceil((double)most / step);
    if (ymax <= 0)
        ymax = step;
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" font-family=\"sans-serif\" "
            "font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            w, h);
    for (int i = 0; i * step <= ymax + step / 2; i++) {
        double v = i * step;
        double y = bottom - v / ymax * (bottom - top);
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
                left, y, w - 20, y, left - 6, y + 4, v);
    }
    for (int b = 0; b < BINS; b++) {
        double x = left + bw * b, bh = bins[b] / ymax * (bottom - top);
        fprintf(f, "<rect class=\"bin\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#0072B2\"/>\n",
                x + 3, bottom - bh, bw - 6, bh);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%d-%d%%</text>\n", x + bw / 2, bottom + 16,
                b * 10, b == BINS - 1 ? 100 : b * 10 + 9);
    }
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#333\"/>\n", left,
            top, w - 20 - left, bottom - top);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">score, share of the total points</text>\n",
            left + (w - 20 - left) / 2, bottom + 38);
    fprintf(f, "<text transform=\"translate(18 %.1f) rotate(-90)\" text-anchor=\"middle\">students</text>\n",
            (top + bottom) / 2);
    fprintf(f, "</svg>\n");
}

/* The commonest feedback among the failing rows of exercise |ex|,
 * scenario |sc| (borrowed from |t|), and how many rows said it. */
static const char *commonest(const gc_tally *t, size_t ex, size_t sc, int *count)
{
    const char *best = NULL;
    *count = 0;
    for (size_t i = 0; i < t->n; i++) {
        const gc_row *r = &t->rows[i];
        if (r->ex != ex || r->sc != sc || strcmp(r->verdict, "PASS") == 0 || !r->feedback)
            continue;
        int c = 0;
        for (size_t j = 0; j < t->n; j++) {
            const gc_row *q = &t->rows[j];
            c += q->ex == ex && q->sc == sc && strcmp(q->verdict, "PASS") != 0 && q->feedback &&
                 strcmp(q->feedback, r->feedback) == 0;
        }
        if (c > *count) {
            *count = c;
            best = r->feedback;
        }
    }
    return best;
}

/* True when the batch graded exercise |ex| (it has rows): the page shows
 * the exercises asked for (--exercises), not every one the grader has. */
static bool graded(const gc_tally *t, size_t ex)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->rows[i].ex == ex)
            return true;
    return false;
}

/* |dir|: the page's folder, where each student's pages are looked for: a
 * link only to a page that exists (an exercise the student has no folder
 * for, or one the grader could not run, has none). */
static int write_page(FILE *f, const gc_tally *t, char *const *students, size_t nstudents, const char *dir)
{
    double total = 0;
    for (size_t e = 0; e < t->nexercises; e++)
        for (size_t s = 0; s < t->exercises[e].nscenarios && graded(t, e); s++)
            total += t->exercises[e].points[s];
    int bins[BINS] = {0}, most = 0;
    double *score = rl_xcalloc(nstudents ? nstudents : 1, sizeof *score);
    for (size_t i = 0; i < t->n; i++)
        for (size_t s = 0; s < nstudents; s++)
            if (strcmp(t->rows[i].student, students[s]) == 0)
                score[s] += t->rows[i].points;
    for (size_t s = 0; s < nstudents; s++) {
        int b = total > 0 ? (int)(score[s] / total * BINS) : 0;
        b = b < 0 ? 0 : b >= BINS ? BINS - 1 : b;
        bins[b]++;
        most = bins[b] > most ? bins[b] : most;
    }
    fprintf(f,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>The class's grades"
            "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>The class's grades</h1>\n",
            css);
    fprintf(f, "<p>%zu students, %g points in all.</p>\n<h2>Scores</h2>\n<figure>\n", nstudents, total);
    histogram(f, bins, most);
    fprintf(f, "<figcaption class=\"caption\">How many students scored in each tenth of the total</figcaption>\n"
               "</figure>\n");
    fprintf(f, "<h2>Scenarios</h2>\n<table>\n<tr><th>exercise/scenario</th><th>passed</th>"
               "<th>commonest feedback when it failed</th></tr>\n");
    for (size_t e = 0; e < t->nexercises; e++) {
        const gc_exercise *ex = &t->exercises[e];
        for (size_t sc = 0; sc < ex->nscenarios && graded(t, e); sc++) {
            int rows = 0, passed = 0;
            for (size_t i = 0; i < t->n; i++)
                if (t->rows[i].ex == e && t->rows[i].sc == sc) {
                    rows++;
                    passed += strcmp(t->rows[i].verdict, "PASS") == 0;
                }
            double rate = rows ? 100.0 * passed / rows : 0;
            fprintf(f, "<tr class=\"scenario\"><td>");
            text(f, ex->name);
            fprintf(f, "/");
            text(f, ex->scenarios[sc]);
            fprintf(f, "</td><td><span class=\"bar\" style=\"width:%.0fpx\"></span> %d/%d (%.0f %%)</td><td>", rate,
                    passed, rows, rate);
            int count;
            const char *fb = commonest(t, e, sc, &count);
            if (fb) {
                fprintf(f, "<span class=\"bad\">%d&#215;</span> ", count);
                text(f, fb);
            }
            fprintf(f, "</td></tr>\n");
        }
    }
    fprintf(f, "</table>\n<h2>Students</h2>\n<table>\n<tr><th>student</th><th>score</th><th>report pages</th></tr>\n");
    for (size_t s = 0; s < nstudents; s++) {
        fprintf(f, "<tr class=\"student\"><td>");
        text(f, students[s]);
        fprintf(f, "</td><td>%g/%g</td><td>", score[s], total);
        for (size_t e = 0; e < t->nexercises; e++) {
            if (!graded(t, e))
                continue;
            char path[GC_NAME_MAX * 2 + 16], full[PATH_MAX + 3 * GC_NAME_MAX];
            snprintf(path, sizeof path, "%s.html", t->exercises[e].name);
            snprintf(full, sizeof full, "%s/%s/%s", dir, students[s], path);
            if (access(full, R_OK) != 0) {
                fprintf(f, "<span class=\"bad\">");
                text(f, t->exercises[e].name);
                fprintf(f, " (no page)</span> ");
                continue;
            }
            fprintf(f, "<a href=\"");
            gc_html_url(f, students[s]);
            fprintf(f, "/");
            gc_html_url(f, path);
            fprintf(f, "\">");
            text(f, t->exercises[e].name);
            fprintf(f, "</a> ");
        }
        fprintf(f, "</td></tr>\n");
    }
    fprintf(f, "</table>\n</body>\n</html>\n");
    free(score);
    return ferror(f) ? RL_ESYS : RL_OK;
}

int gc_html_write_class(const gc_tally *t, char *const *students, size_t nstudents, const char *path)
{
    /* Through a fresh file renamed over |path| (rl_file_tmp_open): a link
     * planted beside it is never written through. */
    size_t n = strlen(path) + 32;
    char *tmp = rl_xmalloc(n);
    FILE *f = rl_file_tmp_open(path, 0644, tmp, n);
    int rc = RL_ESYS;
    if (f) {
        char *dir = rl_xstrdup(path);
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = '\0';
        rc = write_page(f, t, students, nstudents, slash ? dir : ".");
        free(dir);
        if (rc != RL_OK) {
            int e = errno;
            fclose(f);
            unlink(tmp);
            errno = e;
        } else if (rl_file_tmp_commit(f, tmp, path) != 0) {
            rc = RL_ESYS;
        }
    }
    free(tmp);
    return rc;
}
