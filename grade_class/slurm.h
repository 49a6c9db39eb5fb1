/* slurm: grade-class --slurm, a class graded as one Slurm job array of one
 * task a student. The submitter plans the class as locally (plan.h),
 * writes an sbatch script that runs this same program again with the same
 * command line and --slurm-task, submits it, waits for it (bounded) and
 * merges what the tasks report into the plan, so report.h writes the same
 * files; the interrupt or the wait's end cancels the array (scancel). A
 * task plans its one student from that command line and runs its gradings
 * on the local pool (run.h): the grader's command is built in one place.
 *
 * Why a task a student, not a grading: a student's gradings share one
 * folder of --out and one plan; the array stays under Slurm's default
 * MaxArraySize (1001) for a class of up to 1001 students, where a task a
 * grading (9 exercises) would stop at 111; and a task's start (its
 * sbatch environment, the grader's sandbox probe) is paid once a student.
 *
 * Files, in --out/slurm/: grade-class.sbatch (the script as submitted),
 * job (the array's id while it may run), JOB_TASK.log (a task's output:
 * its progress lines and errors) and JOB_TASK.done (a line a grading as it
 * ends: "EXERCISE STATUS FLAGS SECONDS", tab-separated; FLAGS "-", or t
 * (stopped at the time limit) and i (interrupted)). */
#ifndef GC_SLURM_H
#define GC_SLURM_H

#include "batch.h"
#include "options.h"
#include "plan.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Submits the students of |p| with PENDING gradings as an array, waits
 * for it and fills the plan's jobs from the tasks' .done lines as the pool
 * would have (state, status, timed_out, interrupted); a grading no task
 * reported stays PENDING with info->unfinished saying why (the task's end,
 * the wait, the interrupt, sbatch's refusal). |*wall_s| gets the seconds.
 * Returns 0, or RL_ECHILD after a message naming the job when Slurm did not
 * grade everything (its gradings are then NOT-GRADED: run again). */
int gc_slurm_run(gc_batch *b, const gc_options *o, gc_plan *p, double *wall_s);

/* Before the class is planned for --slurm: whether the array an earlier
 * run on b->out submitted (OUT/slurm/job, with that folder in its comment)
 * still runs: a grade-class killed outright (SIGKILL) cannot cancel its
 * array, and two arrays must not grade into one folder. Returns 0 (none,
 * or it ended: the file is removed), or RL_EINVAL after a message naming
 * the job and how to cancel it. */
int gc_slurm_check_earlier(const gc_batch *b);

/* In an array task: the student of this task, from --slurm-task's
 * comma-separated |names| and $SLURM_ARRAY_TASK_ID, into |name|. Returns 0,
 * or RL_EINVAL with |err| (not in a task, no such index, a name the
 * results cannot use). */
int gc_slurm_task_student(const char *names, char *name, size_t len, char *err, size_t errlen);

/* In an array task: opens b->task_log (JOB_TASK.done, from
 * $SLURM_ARRAY_JOB_ID and $SLURM_ARRAY_TASK_ID), runs the gradings of |p|
 * (gc_run_gradings) and closes it. Returns gc_run_gradings' code, or
 * RL_ESYS (message on stderr) when the file cannot be made. */
int gc_slurm_task_run(gc_batch *b, gc_plan *p, double *wall_s);

/* In an array task, as grading |job| ends: its line into b->task_log,
 * flushed at once (a task killed later still reports it). */
void gc_slurm_task_record(gc_batch *b, const gc_job *job);

/* An array task's exit status: GC_EXIT_OK when every grading of |p| ended
 * uninterrupted and |prc| is 0, else GC_EXIT_INCOMPLETE. */
int gc_slurm_task_status(const gc_plan *p, int prc);

/* ---- the submitter's reading of Slurm and of the tasks (exposed for tests) ---- */

#define GC_SLURM_STATE  32
#define GC_SLURM_REASON 96
/* A task's state once squeue no longer lists it. */
#define GC_SLURM_GONE "GONE"

/* True for a state a task ends in (COMPLETED, FAILED, CANCELLED, TIMEOUT,
 * ..., and GC_SLURM_GONE). */
bool gc_slurm_state_final(const char *st);

/* squeue's lines "TASK|STATE|REASON" (--array --format=%K|%T|%r) in |text|
 * (cut up in place) into |state| and |reason| (|ntasks| each); a line of a
 * range of tasks not started ("2-5|PENDING|...") leaves them as they were.
 * When tasks were listed one a line, one that was not becomes GC_SLURM_GONE.
 * |*ended| gets the tasks in a final state. Returns the tasks listed. */
size_t gc_slurm_parse_queue(char *text, size_t ntasks, char (*state)[GC_SLURM_STATE], char (*reason)[GC_SLURM_REASON],
                            size_t *ended);

/* The .done lines on |f| of the task of student |s| (a student index of
 * |p|) into |p|: each reported grading still PENDING ends as the pool
 * would have ended it (state, status, timed_out, interrupted, its seconds
 * as ended_ns), with its progress line (run.h); a line without its newline
 * (still being written), of an unknown exercise or of a grading not
 * PENDING is skipped. Returns the gradings ended. */
size_t gc_slurm_apply_done(gc_batch *b, gc_plan *p, size_t s, FILE *f);

#endif
