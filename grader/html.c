/* html: the --html report page; see html.h. */
#include "html.h"

#include "rubric.h"
#include "rl_alloc.h"
#include "rl_file.h"
#include "rl_err.h"
#include "rl_svg.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void gr_html_text(FILE *f, const char *s)
{
    rl_svg_write_escaped(f, s);
}

static const char css[] =
    "body{font-family:sans-serif;margin:2em auto;max-width:920px;color:#222;background:#fafafa}"
    "h1{font-size:1.5em;margin-bottom:.2em}"
    ".summary{font-size:1.1em;margin:.3em 0 1.2em}"
    ".note{background:#fff6d5;border-left:4px solid #E69F00;padding:.4em .8em}"
    ".error{background:#fde4dc;border-left:4px solid #D55E00;padding:.4em .8em}"
    "section.scenario{background:white;border:1px solid #ddd;border-left:8px solid #999;border-radius:4px;"
    "margin:1.2em 0;padding:.6em 1em}"
    "section.PASS{border-left-color:#009E73}"
    "section.FAIL,section.CRASH,section.TIMEOUT,section.NOT-READY{border-left-color:#D55E00}"
    "section.ERROR{border-left-color:#E69F00}"
    "h2{font-size:1.15em;margin:.2em 0}"
    ".verdict{display:inline-block;font-weight:bold;color:white;background:#999;border-radius:3px;"
    "padding:.1em .5em;margin-right:.6em}"
    ".verdict.PASS{background:#009E73}.verdict.ERROR{background:#E69F00}"
    ".verdict.FAIL,.verdict.CRASH,.verdict.TIMEOUT,.verdict.NOT-READY{background:#D55E00}"
    ".points{color:#555}"
    ".feedback{margin:.5em 0}"
    "figure{margin:.6em 0;overflow-x:auto}"
    "pre{background:#f3f3f3;padding:.5em;white-space:pre-wrap;word-break:break-all}";

static void scenario(FILE *f, const gr_report *r, const gr_outcome *o)
{
    const char *v = gr_verdict_name(o->verdict);
    fprintf(f, "<section class=\"scenario %s\" id=\"scenario-", v);
    gr_html_text(f, o->scenario->id);
    fprintf(f, "\">\n<h2><span class=\"verdict %s\">%s", v, v);
    if (r->runs > 1 || o->runs != 1)
        fprintf(f, " %d/%d", o->passed, o->runs);
    fprintf(f, "</span>");
    gr_html_text(f, o->scenario->id);
    fprintf(f, ": ");
    gr_html_text(f, o->scenario->title);
    gr_points p;
    char held[GR_POINTS_NOTE_MAX];
    gr_rubric_earned(r->rubric, r->ex, r->outcomes, r->noutcomes, o, &p);
    fprintf(f, " <span class=\"points\">(%g/%g points)</span></h2>\n<p class=\"feedback\">", p.earned, p.max);
    if (gr_rubric_held_note(r->rubric, r->ex, r->outcomes, r->noutcomes, o, held, sizeof held)[0]) {
        fputc('(', f);
        gr_html_text(f, held);
        fputs(") ", f);
    }
    gr_html_text(f, o->feedback);
    fprintf(f, "</p>\n");
    if (o->figure.kind != GR_FIG_NONE) {
        fprintf(f, "<figure>\n");
        gr_fig_svg(f, &o->figure);
        fprintf(f, "</figure>\n");
    }
    if (o->output[0]) {
        fprintf(f, "<p>The submission's last output:</p>\n<pre>");
        gr_html_text(f, o->output);
        fprintf(f, "</pre>\n");
    }
    fprintf(f, "</section>\n");
}

int gr_html_write(FILE *f, const gr_report *r)
{
    double score, max;
    gr_rubric_total(r->rubric, r->ex, r->outcomes, r->noutcomes, &score, &max);
    fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
               "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
    gr_html_text(f, r->ex->name);
    fprintf(f, ": grading report</title>\n<style>%s</style>\n</head>\n<body>\n<h1>", css);
    gr_html_text(f, r->ex->name);
    fprintf(f, ": ");
    gr_html_text(f, r->ex->summary);
    fprintf(f, "</h1>\n<p class=\"summary\">Score <b>%g/%g</b>", score, max);
    int passed = 0;
    for (size_t i = 0; i < r->noutcomes; i++)
        passed += r->outcomes[i].runs > 0 && r->outcomes[i].passed == r->outcomes[i].runs;
    fprintf(f, "; %d of %zu scenarios passed%s (%.1f s).</p>\n", passed, r->noutcomes,
            r->runs > 1 ? " in every run" : "", r->seconds);
    if (r->note) {
        fprintf(f, "<p class=\"note\">Note: ");
        gr_html_text(f, r->note);
        fprintf(f, "</p>\n");
    }
    if (r->error) {
        fprintf(f, "<p class=\"error\">Grader error: ");
        gr_html_text(f, r->error);
        fprintf(f, "</p>\n");
    }
    for (size_t i = 0; i < r->noutcomes; i++)
        scenario(f, r, &r->outcomes[i]);
    fprintf(f, "</body>\n</html>\n");
    return ferror(f) ? RL_ESYS : RL_OK;
}

int gr_html_save(const char *path, const gr_report *r, char *err, size_t errlen)
{
    /* A fresh file beside |path| renamed over it: a link planted at
     * PATH.tmp, or at PATH, is never written through (rl_file.h). */
    size_t n = strlen(path) + 32;
    char *tmp = rl_xmalloc(n);
    FILE *f = rl_file_tmp_open(path, 0644, tmp, n);
    int rc = RL_ESYS;
    if (f) {
        rc = gr_html_write(f, r);
        if (rc != RL_OK) {
            int e = errno;
            fclose(f);
            unlink(tmp);
            errno = e;
        } else if (rl_file_tmp_commit(f, tmp, path) != 0) {
            rc = RL_ESYS;
        }
    }
    if (rc != RL_OK)
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
    free(tmp);
    return rc;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void base64(FILE *f, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
        fputc(b64[v >> 18 & 63], f);
        fputc(b64[v >> 12 & 63], f);
        fputc(i + 1 < n ? b64[v >> 6 & 63] : '=', f);
        fputc(i + 2 < n ? b64[v & 63] : '=', f);
    }
}

char *gr_html_gradescope(const gr_report *r, const char *summary)
{
    (void)r;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return rl_xstrdup("");
    fprintf(f, "<p>");
    gr_html_text(f, summary);
    fprintf(f, "</p>\n");
    fclose(f);
    return buf ? buf : rl_xstrdup("");
}

/* |fig| as an <img> of an SVG data URI, with its caption above it. */
static void picture_img(FILE *f, const gr_figure *fig)
{
    char *svg = NULL;
    size_t svglen = 0;
    FILE *s = open_memstream(&svg, &svglen);
    if (!s)
        return;
    int rc = gr_fig_svg(s, fig);
    fclose(s);
    if (rc == RL_OK && svg) {
        fprintf(f, "<p>");
        gr_html_text(f, fig->caption);
        fprintf(f, "</p>\n<img alt=\"");
        gr_html_text(f, fig->title);
        fprintf(f, "\" src=\"data:image/svg+xml;base64,");
        base64(f, (const unsigned char *)svg, svglen);
        fprintf(f, "\">\n");
    }
    free(svg);
}

char *gr_html_test_output(const gr_outcome *o, const char *verdict)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return rl_xstrdup("");
    fprintf(f, "<p><b>");
    gr_html_text(f, verdict);
    fprintf(f, "</b>: ");
    gr_html_text(f, o->feedback);
    fprintf(f, "</p>\n");
    if (o->figure.kind != GR_FIG_NONE)
        picture_img(f, &o->figure);
    if (o->output[0]) {
        fprintf(f, "<p>Submission output:</p>\n<pre>");
        gr_html_text(f, o->output);
        fprintf(f, "</pre>\n");
    }
    fclose(f);
    return buf ? buf : rl_xstrdup("");
}
