/* grading: one grading as the grader's writers read it, the table and
 * results.json (report.h) and the page (html.h). A header alone, beneath
 * both: report.c hands the page's fragments to results.json, so the page
 * must not include the report to know what it draws. */
#ifndef GR_GRADING_H
#define GR_GRADING_H

#include "exercise.h"
#include "rubric.h"
#include "run.h"

#include <stdbool.h>
#include <stddef.h>

/* What a grading found, for the writers: every scenario's outcome, the
 * rubric that scores them, and how the grading went. */
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

#endif
