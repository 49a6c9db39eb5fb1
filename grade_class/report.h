/* report: what the gradings found, written out. The rows of every planned
 * grading are tallied (tally.h): its verdicts, or the row it got without
 * one (MISSING, ERROR, NOT-GRADED); then each student's results.json,
 * grades.csv, class.html (html.h) and summary.txt, each written whole or
 * not at all, and on request the tail of the gradings' logs. */
#ifndef GC_REPORT_H
#define GC_REPORT_H

#include "batch.h"
#include "options.h"
#include "plan.h"

#include <stddef.h>

/* Writes the results of |p| into b->out (and o->results); |prc| is what
 * gc_run_gradings (or gc_slurm_run) returned, |wall_s| its seconds. Returns the exit status:
 * GC_EXIT_OK when every grading finished and every file was written, else
 * GC_EXIT_INCOMPLETE (after a message that says to run again). */
int gc_report_write(const gc_batch *b, const gc_options *o, const gc_plan *p, int prc, double wall_s);

/* --student DIR with nothing gradable in it: one results.json entry that
 * says what was uploaded and what was expected (upload.h), worth every
 * wanted scenario's points, so the score reads 0 of the assignment;
 * written as b->out/STUDENT/results.json and to |results| (may be NULL).
 * Its extra_data states the identity: |id| ("" or NULL: none), where it
 * came from (|from|) and why a fallback was taken (|note|, may be "").
 * Returns GC_EXIT_OK, or GC_EXIT_INCOMPLETE when a file was not written. */
int gc_report_upload(const gc_batch *b, const char *sdir, const char *student, const char *results, const char *id,
                     const char *from, const char *note);

/* Where the last |nlines| lines of |text| (|len| bytes, lines ending in
 * '\n') start: an offset into |text|; 0 when it has no more lines. */
size_t gc_report_tail(const char *text, size_t len, long nlines);

#endif
