/* run: the planned gradings started on the pool (pool.h), --jobs at once,
 * with a progress line on stderr as each ends. A grading that ended with
 * verdicts records its command beside its results at once, so a batch
 * stopped in any way keeps it on resume (plan.h). */
#ifndef GC_RUN_H
#define GC_RUN_H

#include "batch.h"
#include "plan.h"

/* Runs the PENDING jobs of |p|. |*wall_s| gets the seconds it took.
 * Returns gc_pool_run's code: 0, or RL_ESYS when a grader could not be
 * started. */
int gc_run_gradings(gc_batch *b, gc_plan *p, double *wall_s);

/* The progress line on stderr of |job|, just ended (counted in b->done),
 * or with |job| NULL the ticking line on a terminal. --slurm prints the
 * same lines as the tasks' gradings end (slurm.h). */
void gc_run_progress(gc_batch *b, const gc_job *job);

/* |s| seconds as m:ss into |buf|, rounded to the second. */
void gc_run_format_duration(double s, char *buf, size_t len);

#endif
