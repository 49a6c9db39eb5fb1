/* html: the class's page, class.html: the score histogram, each
 * scenario's pass rate, the commonest feedback of each failing scenario,
 * and a link to each student's report pages (STUDENT/EXERCISE.html, the
 * grader's --html). Self-contained: inline SVG and CSS, nothing fetched.
 * Student names are folder names, hostile like anything a student hands
 * in: escaped as text, percent-encoded in links. */
#ifndef GC_HTML_H
#define GC_HTML_H

#include "tally.h"

#include <stddef.h>

/* Writes class.html at |path| (atomically) from |t| (sorted) for the
 * |nstudents| |students|; links are relative to the page's folder, and
 * only to pages that exist there (STUDENT/EXERCISE.html).
 * Returns 0 or RL_ESYS (errno set). */
int gc_html_write_class(const gc_tally *t, char *const *students, size_t nstudents, const char *path);

/* Writes |s| to |f| percent-encoded for a relative link (every byte but
 * letters, digits, '-', '.', '_'). Exposed for unit tests. */
void gc_html_url(FILE *f, const char *s);

/* |s| escaped for HTML text (rl_svg_escape's rules), in a new string the
 * caller frees. */
char *gc_html_escape_dup(const char *s);

#endif
