/* batch: one run of grade-class, as the options set it up, and the
 * bookkeeping of each planned grading (a student on an exercise). The
 * other modules share these: options fills the batch, plan walks the class
 * into jobs, run starts them, report writes what they found. Also the
 * program's exit codes and the small pure helpers on the exercises chosen
 * (which exist, which scenarios --exercises EX/ID keeps, which --world). */
#ifndef GC_BATCH_H
#define GC_BATCH_H

#include "roster.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define GC_MAX_EXERCISES 32
#define GC_MAX_STARTERS  32
#define GC_MAX_WORLDS    16
#define GC_MAX_SBATCH    16

/* grade-class's exit status. The values are read elsewhere and stay as
 * they are: tests/integration/test_grade_class.py checks 0 and 2, and
 * scripts/gradescope/run_autograder reports the status when no results
 * came. Names tell why; several share the value 2. */
typedef enum gc_exit {
    GC_EXIT_OK = 0,         /* every grading finished, whatever its verdicts (or --help) */
    GC_EXIT_USAGE = 2,      /* the command line asks for something grade-class cannot do */
    GC_EXIT_SETUP = 2,      /* the class, the results folder or bin/grader is not usable */
    GC_EXIT_INCOMPLETE = 2, /* a grading did not finish, or a result was not written: run again */
} gc_exit;

typedef struct gc_batch {
    char grader[PATH_MAX];
    char out[PATH_MAX];
    char class_dir[PATH_MAX]; /* real path: messages name folders relative to it */
    gc_exercise ex[GC_MAX_EXERCISES];
    size_t nex;
    bool want[GC_MAX_EXERCISES];
    int jobs, runs;
    const char *ready_timeout, *memory_limit;           /* argv's, or NULL */
    char worlds[GC_MAX_WORLDS][PATH_MAX + GC_NAME_MAX]; /* "EXERCISE=/real/path" */
    size_t nworlds;
    const char *variant_from;          /* "folder", "marker" or "none" */
    char only[GC_MAX_EXERCISES][1024]; /* --exercises EX/ID: the grader's --only, or "" */
    bool fresh, quiet, tty, unsafe;
    long show_logs; /* --show-logs N: lines of the logs printed at the end; 0: none */
    /* --slurm (slurm.h): the class as a Slurm job array, one task a student */
    bool slurm;
    long slurm_wait_min;                    /* --slurm-wait; 0: from the tasks' limits */
    const char *sbatch_opts[GC_MAX_SBATCH]; /* --sbatch-option, argv's, in order */
    size_t nsbatch;
    FILE *task_log; /* --slurm-task: each ended grading's line for the submitter, or NULL */
    /* progress */
    size_t total, done;
    int64_t t0;
} gc_batch;

typedef struct gc_job_info {
    char student[GC_NAME_MAX];
    size_t ex;
    char json[PATH_MAX + 300];
    char html[PATH_MAX + 300]; /* the grader's --html page */
    char args_file[PATH_MAX + 300];
    char args_text[8192];
    char error[4096]; /* set instead of a job: cannot be graded (bad marker, refused folder) */
    bool missing;
    /* argv storage */
    char submission[PATH_MAX + 1100];
    char dir[PATH_MAX];
    char variant[GC_NAME_MAX]; /* the id graded (the grader's --student), or "" */
    char identity_from[24];    /* where that id came from: sid, email, --identity,
                                * roster, folder, marker or none */
    char identity_note[512];   /* why a fallback was taken, or "" */
    char runs[16];
    char inferred[512];    /* the folder had no .relaylab: how it was recognised */
    char unfinished[1024]; /* --slurm: why a grading left PENDING was not graded ("": interrupted) */
} gc_job_info;

/* The index of exercise |name| in |b|, or -1. */
int gc_batch_find_exercise(const gc_batch *b, const char *name);

/* The world file --world gave for exercise |ex|, or NULL. Borrowed from |b|. */
const char *gc_batch_world_for(const gc_batch *b, const char *ex);

/* Adds scenario |id| of exercise |ex| to its --only list. Returns 0, or
 * RL_EINVAL when the exercise has no such scenario or the list is full. */
int gc_batch_add_only(gc_batch *b, size_t ex, const char *id);

/* An exercise named with scenarios keeps only those (rows, points, the
 * grader's --only), in the grader's order. */
void gc_batch_trim_to_only(gc_batch *b);

/* Makes the folder |path| (0755) unless it exists. Returns 0 or RL_ESYS
 * (errno set). */
int gc_batch_make_dir(const char *path);

/* |path| as the rows show it: relative to the class folder when inside it.
 * Points into |path|. */
const char *gc_batch_shown_path(const gc_batch *b, const char *path);

#endif
