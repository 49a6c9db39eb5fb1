/* report: points from the rubric file, and what the grader shows: the table
 * on stdout, progress on stderr, and Gradescope's results.json. */
#ifndef RL_GRADER_REPORT_H
#define RL_GRADER_REPORT_H

#include "exercise.h"
#include "run.h"

#include <stddef.h>
#include <stdio.h>

typedef struct rl_rubric rl_rubric;

/* Reads |path|: {"EXERCISE": {"SCENARIO": points, ...}, ...}; keys starting
 * with '_' are comments. Returns 0 and sets *out (free with
 * rl_rubric_free), RL_ENOTFOUND when the file cannot be read, or RL_EPARSE
 * when it is not such JSON; |err| then says what and where. */
int rl_rubric_load(const char *path, rl_rubric **out, char *err, size_t errlen);

/* Checks that every scenario of |ex| has points, and nothing else is
 * listed for it. Returns 0 or RL_EPARSE with |err| naming the key. */
int rl_rubric_check(const rl_rubric *r, const rl_exercise *ex, char *err, size_t errlen);

/* The points of |exercise|/|scenario|; 0 if absent (check first). */
double rl_rubric_points(const rl_rubric *r, const char *exercise, const char *scenario);

void rl_rubric_free(rl_rubric *r);

typedef struct rl_report {
    const rl_exercise *ex;
    const char *submission;
    const rl_grade_outcome *outcomes; /* borrowed */
    size_t noutcomes;
    const rl_rubric *rubric;          /* NULL: no points known (rubric error) */
    int runs;
    double seconds;                   /* wall time of the whole grading */
    const char *error;                /* a grader error to report, or NULL */
    const char *note;                 /* how it was graded, when the reader must
                                       * know (no sandbox), or NULL */
} rl_report;

/* Sum of points earned and available over the report's outcomes. */
void rl_report_score(const rl_report *r, double *score, double *max_score);

/* The results table, with a total line. */
void rl_report_table(FILE *f, const rl_report *r);

/* Writes Gradescope's results.json schema to |path| (atomically, through a
 * temporary file): score, max_score, execution_time, output, tests[] with
 * name, score, max_score, status ("passed"/"failed") and output. Returns 0,
 * or RL_ESYS with |err| filled. */
int rl_report_json(const char *path, const rl_report *r, char *err, size_t errlen);

/* Writes a results.json for a run that graded nothing (|message| says
 * why): score 0, max_score 0, no tests, and an output that says so, so Gradescope shows
 * the reason instead of "autograder failed". |setup| adds that the
 * autograder's setup (usage, rubric), not the submission, is at fault. Same
 * atomic write and return codes. */
int rl_report_json_error(const char *path, const char *message, bool setup, char *err, size_t errlen);

/* Checks that |path| can be written the way rl_report_json writes it (a
 * temporary file next to it, then a rename), leaving nothing behind.
 * Returns 0, or RL_ESYS with |err| saying why. */
int rl_report_json_writable(const char *path, char *err, size_t errlen);

#endif
