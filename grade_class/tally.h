/* tally: a class's verdicts, one row a student, exercise and scenario, read
 * from the results.json files the grader wrote (their extra_data, never
 * their prose), and what is made of them: one results.json a student
 * (Gradescope's schema, every exercise's tests), the CSV and the summary
 * (score histogram, pass counts, the most common failing scenario with its
 * most common feedback, grading time per exercise). */
#ifndef GC_TALLY_H
#define GC_TALLY_H

#include "roster.h"

#include <stdio.h>

/* The verdict of a row whose grading did not run or was stopped (the batch
 * was interrupted): not a failure, and left out of every count of the
 * summary but "partial: N of M gradings". */
#define GC_NOT_GRADED "NOT-GRADED"

typedef struct gc_row {
    char student[GC_NAME_MAX];
    size_t ex;        /* index into the exercises */
    size_t sc;        /* index into that exercise's scenarios */
    char verdict[16]; /* PASS, FAIL, TIMEOUT, CRASH, NOT-READY, ERROR,
                       * MISSING (no folder for the exercise), or
                       * NOT-GRADED (GC_NOT_GRADED) */
    int runs, passed;
    double points, max_points;
    double seconds; /* grading time of the scenario, all runs */
    char *feedback; /* owned */
} gc_row;

typedef struct gc_tally {
    const gc_exercise *exercises; /* borrowed */
    size_t nexercises;
    gc_row *rows;
    size_t n, cap;
} gc_tally;

void gc_tally_init(gc_tally *t, const gc_exercise *exercises, size_t nexercises);
void gc_tally_fini(gc_tally *t);

/* Adds the rows of |student|'s exercise |ex| from the grader's results.json
 * at |path|: one per scenario of the exercise; a scenario the file does not
 * grade (the grader failed: its error, or |path| unreadable) is an ERROR
 * row with no points. Returns 0, or RL_EPARSE when the file could not be
 * read (the ERROR rows are added all the same). */
int gc_tally_add_results(gc_tally *t, const char *student, size_t ex, const char *path);

/* Adds a row for every scenario of |ex| with verdict |verdict| ("MISSING",
 * "ERROR"), no points and |feedback|. */
void gc_tally_add_all(gc_tally *t, const char *student, size_t ex, const char *verdict, const char *feedback);

/* Sorts the rows by student, exercise and scenario, so the output does not
 * depend on the order the graders finished in. */
void gc_tally_sort(gc_tally *t);

/* Writes the CSV (RFC 4180 quoting): student, exercise, scenario, verdict,
 * points, max_points, runs, passed, feedback. Returns 0 or RL_ESYS. */
int gc_tally_write_csv(const gc_tally *t, const char *path);

/* Writes |student|'s results.json to |path| (atomically): every test of the
 * grader's per-exercise files |ex_paths| (NULL entries: exercises not
 * graded from a file), and for each exercise without a complete file the
 * tally's rows as tests; extra_data.student is |id|, the id it was graded
 * as (NULL: |student|). Returns 0 or RL_ESYS. */
int gc_tally_write_student(const gc_tally *t, const char *student, const char *id, char *const *ex_paths,
                           const char *path);

/* Writes the summary to |f|: students, score histogram (10 % bins of the
 * total), per-scenario pass counts, the most common failing scenario and
 * its most common feedback, and grading seconds per exercise. |wall_s| is
 * the batch's wall time and |jobs| its --jobs, said on the first line.
 * Only what was graded counts: when a grading (a student's exercise) has
 * NOT-GRADED rows, the summary opens with "partial: N of M gradings", and
 * the histogram, mean and counts are of the graded part alone, each
 * student's share of the points of what was graded. */
void gc_tally_summary(const gc_tally *t, FILE *f, double wall_s, int jobs);

#endif
