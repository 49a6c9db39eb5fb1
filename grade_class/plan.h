/* plan: the class folder walked into gradings. Each student folder is
 * checked (a name the results can use, nothing leading outside it), its
 * starter folders found by their .relaylab (or their files), and every
 * exercise wanted becomes a job for the pool (pool.h): the grader's
 * command line, its log, its time limit, or instead the row it gets
 * without a grading (MISSING, ERROR: refused). A grading whose results
 * are complete from the same command is kept (resume). */
#ifndef GC_PLAN_H
#define GC_PLAN_H

#include "batch.h"
#include "options.h"
#include "pool.h"

/* The gradings of a class: job s * nex + e is student s on exercise e. */
typedef struct gc_plan {
    char **students; /* owned (gc_roster_free_names): folder names as they are */
    size_t nstudents;
    gc_job *jobs;      /* owned; njobs */
    gc_job_info *info; /* owned; njobs, jobs[i].user is &info[i] when planned */
    size_t njobs;
    bool *has_out; /* owned; nstudents: STUDENT/ of --out made (results.json goes there) */
} gc_plan;

/* Lists the students into |p| (zeroed first): every folder of the class,
 * the one of --student, or an array task's one (--slurm-task, slurm.h). Returns 0, or RL_EINVAL after a message, with
 * |*code| the exit status. */
int gc_plan_students(const gc_batch *b, const gc_options *o, gc_plan *p, int *code);

/* Plans every student of |p| on every exercise of |b| (b->total counts
 * the gradings to run). Returns 0; or RL_EINVAL with |*code| the exit
 * status: after a message (a folder of --out not made, a roster not
 * read), or once an upload with nothing gradable was reported
 * (report.h's gc_report_upload; its status). */
int gc_plan_walk(gc_batch *b, const gc_options *o, gc_plan *p, int *code);

/* Frees what |p| owns; accepts a zeroed plan. */
void gc_plan_fini(gc_plan *p);

#endif
