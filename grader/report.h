/* report: what the grader shows: the table on stdout, progress on stderr,
 * and Gradescope's results.json, with the points the rubric gives
 * (rubric.h). */
#ifndef GR_REPORT_H
#define GR_REPORT_H

#include "grading.h"

#include <stddef.h>
#include <stdio.h>

/* Sum of points earned and available over the report's outcomes
 * (gr_rubric_total). */
void gr_report_score(const gr_report *r, double *score, double *max_score);

/* The results table, with a total line. */
void gr_report_table(FILE *f, const gr_report *r);

/* Writes Gradescope's results.json schema to |path| (atomically, through a
 * temporary file): score, max_score, execution_time, output, tests[] with
 * name, score, max_score, status ("passed"/"failed"), output, the
 * rubric's visibility when it gives one, and extra_data (exercise,
 * scenario, verdict, runs, passed, seconds, the CPU of the grader and of
 * what it ran: what was measured, for tools
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
