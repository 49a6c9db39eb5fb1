/* html: the grader's report as one self-contained HTML page (--html FILE):
 * for every scenario its verdict, points, feedback, the submission's last
 * output when it crashed, and the picture of what was measured (figure.h)
 * as inline SVG. Inline CSS, no script, nothing fetched: the page opens
 * from a file, offline. Every string that reaches it may come from a
 * submission and is escaped (rl_svg_escape). */
#ifndef GR_HTML_H
#define GR_HTML_H

#include "grading.h"

#include <stdio.h>

/* Writes the whole page for |r| to |f|. Returns 0, or RL_ESYS on a write
 * error. */
int gr_html_write(FILE *f, const gr_report *r);

/* Writes the page to |path| atomically (a temporary file next to it, then
 * a rename). Returns 0, or RL_ESYS with |err| filled. */
int gr_html_save(const char *path, const gr_report *r, char *err, size_t errlen);

/* The HTML fragment for Gradescope's results.json top-level output
 * (output_format "html"): |summary|, escaped. The pictures go with their
 * tests (gr_html_test_output). Returns a string the caller frees, never
 * NULL. */
char *gr_html_gradescope(const gr_report *r, const char *summary);

/* The HTML fragment for one test's output in results.json (its
 * output_format "html"): |verdict| and the feedback, the picture of what
 * was measured as an <img> of an SVG data URI (a sanitizer that drops
 * inline <svg> keeps images), and the submission's last output in a <pre>;
 * every string escaped. Returns a string the caller frees, never NULL. */
char *gr_html_test_output(const gr_outcome *o, const char *verdict);

/* Writes |s| to |f| escaped for HTML text and attributes (rl_svg_escape's
 * rules). Exposed for unit tests. */
void gr_html_text(FILE *f, const char *s);

#endif
