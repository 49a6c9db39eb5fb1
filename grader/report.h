/* report: points from the rubric file, and what the grader shows: the table
 * on stdout, progress on stderr, and Gradescope's results.json. */
#ifndef GR_REPORT_H
#define GR_REPORT_H

#include "exercise.h"
#include "run.h"

#include <stddef.h>
#include <stdio.h>

typedef struct gr_rubric gr_rubric;

/* Reads |path|: {"EXERCISE": {"SCENARIO": ENTRY, ...}, ...}; keys starting
 * with '_' are comments. An ENTRY is a number of points >= 0, or an object
 * {"points": N, "visibility": V} where V is one of Gradescope's test
 * visibilities (visible, hidden, after_due_date, after_published; absent:
 * Gradescope's default), "needs" is a scenario id or an array of them (a
 * regression guard's points count only once the lesson's scenarios it
 * names passed: gr_report_points) and "_"-keys are comments. Returns 0 and sets *out
 * (free with gr_rubric_free), RL_ENOTFOUND when the file cannot be read, or
 * RL_EPARSE when it is not such JSON; |err| then says what and where. */
int gr_rubric_load(const char *path, gr_rubric **out, char *err, size_t errlen);

/* Checks that every scenario of |ex| has points, nothing else is listed
 * for it, and every "needs" names another scenario of |ex| that needs none
 * itself (one level: no chain or circle). Returns 0 or RL_EPARSE with |err|
 * naming the key. */
int gr_rubric_check(const gr_rubric *r, const gr_exercise *ex, char *err, size_t errlen);

/* The points of |exercise|/|scenario|; 0 if absent (check first). */
double gr_rubric_points(const gr_rubric *r, const char *exercise, const char *scenario);

/* The visibility of |exercise|/|scenario| ("visible", "hidden",
 * "after_due_date" or "after_published"), or NULL when the rubric gives
 * none (a plain number). Borrowed from |r|. */
const char *gr_rubric_visibility(const gr_rubric *r, const char *exercise, const char *scenario);

void gr_rubric_free(gr_rubric *r);

typedef struct gr_report {
    const gr_exercise *ex;
    const char *submission;
    const gr_outcome *outcomes; /* borrowed */
    size_t noutcomes;
    const gr_rubric *rubric; /* NULL: no points known (rubric error) */
    int runs;
    double seconds;       /* wall time of the whole grading */
    const char *error;    /* a grader error to report, or NULL */
    const char *note;     /* how it was graded, when the reader must
                           * know (no sandbox), or NULL */
    bool gradescope_html; /* results.json's output as HTML with
                           * the pictures (html.h), output_format
                           * "html"; else plain text */
} gr_report;

/* What one outcome scores. A scenario scores its rubric points when every
 * run passed and, where the rubric says it "needs" others, when each of
 * them was run in the same report and passed every run too: a regression
 * guard that a starter passes as handed out (it refuses calls because it
 * does nothing) scores only with the lesson it guards. */
typedef struct gr_points {
    double earned, max;
    char held_for[128]; /* the needed scenarios that did not pass ("a and
                         * b"), when they held back points its runs earned;
                         * "" otherwise */
} gr_points;

void gr_report_points(const gr_report *r, const gr_outcome *o, gr_points *out);

/* Room for gr_report_points_note's text. */
#define GR_POINTS_NOTE_MAX 320

/* Into |buf|: why |o|'s points were held back ("its 2 points count once
 * in-flight passes: ..."), or "" when they were not. Returns |buf|. */
const char *gr_report_points_note(const gr_report *r, const gr_outcome *o, char *buf, size_t len);

/* Sum of points earned and available over the report's outcomes. */
void gr_report_score(const gr_report *r, double *score, double *max_score);

/* The results table, with a total line. */
void gr_report_table(FILE *f, const gr_report *r);

/* Writes Gradescope's results.json schema to |path| (atomically, through a
 * temporary file): score, max_score, execution_time, output, tests[] with
 * name, score, max_score, status ("passed"/"failed"), output, the
 * rubric's visibility when it gives one, and extra_data (exercise,
 * scenario, verdict, runs, passed, seconds: what was measured, for tools
 * such as bin/grade-class). Returns 0, or RL_ESYS with |err| filled. */
int gr_report_json(const char *path, const gr_report *r, char *err, size_t errlen);

/* Writes a results.json for a run that graded nothing (|message| says
 * why): score 0, max_score 0, no tests, and an output that says so, so Gradescope shows
 * the reason instead of "autograder failed". |setup| adds that the
 * autograder's setup (usage, rubric), not the submission, is at fault. Same
 * atomic write and return codes. */
int gr_report_json_error(const char *path, const char *message, bool setup, char *err, size_t errlen);

/* Checks that |path| can be written the way gr_report_json writes it (a
 * temporary file next to it, then a rename), leaving nothing behind.
 * Returns 0, or RL_ESYS with |err| saying why. */
int gr_report_json_writable(const char *path, char *err, size_t errlen);

#endif
