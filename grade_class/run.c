/* run: the pool started on the plan, and its progress lines (run.h). */
#include "run.h"

#include "slurm.h"

#include "rl_deadline.h"
#include "rl_file.h"
#include "rl_text.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Graders at once a core without a verdict changing: a grading mostly
 * waits (idle gaps, deadlines, a submission's start), so the known class
 * of 40 students, every exercise, ran right at --jobs 8 and 10 on 2 cores
 * (bench/results/class.md). Beyond that is not measured. */
#define GC_JOBS_PER_CORE 5

void gc_run_format_duration(double s, char *buf, size_t len)
{
    int t = (int)(s + 0.5);
    snprintf(buf, len, "%d:%02d", t / 60, t % 60);
}

/* Recorded as soon as it ends, so that a batch stopped in any way (even
 * SIGKILL) keeps it on resume; only verdicts are kept (status 0 or 1): a
 * grader error (2) is tried again. */
static void record_done(const gc_job *job, const gc_job_info *ji)
{
    if (job->interrupted || job->timed_out || (job->status != 0 && job->status != 1))
        return;
    /* A fresh file renamed over it: never through a link planted there. */
    char tmp[sizeof ji->args_file + 32];
    FILE *f = rl_file_tmp_open(ji->args_file, 0644, tmp, sizeof tmp);
    if (f) {
        fputs(ji->args_text, f);
        rl_file_tmp_commit(f, tmp, ji->args_file);
    }
}

void gc_run_progress(gc_batch *b, const gc_job *job)
{
    if (b->quiet && !job)
        return;
    double el = (double)(rl_now_ns() - b->t0) / 1e9;
    char e[16], left[16] = "?";
    gc_run_format_duration(el, e, sizeof e);
    if (b->done)
        gc_run_format_duration(el / (double)b->done * (double)(b->total - b->done), left, sizeof left);
    if (!job) {
        if (b->tty)
            fprintf(stderr, "\rgrade-class: %zu/%zu graded, %s elapsed, ~%s left ", b->done, b->total, e, left);
        return;
    }
    const gc_job_info *ji = job->user;
    b->done++;
    if (b->done)
        gc_run_format_duration(el / (double)b->done * (double)(b->total - b->done), left, sizeof left);
    if (b->quiet)
        return;
    /* A folder's name is its student's choice: printable before a terminal
     * sees it (rl_text.h). */
    char student[sizeof ji->student * 4];
    rl_text_printable(student, sizeof student, ji->student, strlen(ji->student), 0);
    fprintf(stderr, "%sgrade-class: %zu/%zu graded, %s elapsed, ~%s left: %s/%s %s (%.0f s)\n", b->tty ? "\r" : "",
            b->done, b->total, e, left, student, b->ex[ji->ex].name,
            job->interrupted   ? "interrupted"
            : job->timed_out   ? "stopped at the time limit"
            : job->status == 0 ? "all passed"
            : job->status == 1 ? "some failed"
                               : "grader error (see its .log)",
            (double)(job->ended_ns - job->started_ns) / 1e9);
}

static void on_event(gc_job *job, void *arg)
{
    gc_batch *b = arg;
    if (job) {
        record_done(job, job->user);
        /* An array task of --slurm tells its submitter (slurm.h). */
        if (b->task_log)
            gc_slurm_task_record(b, job);
    }
    gc_run_progress(b, job);
}

int gc_run_gradings(gc_batch *b, gc_plan *p, double *wall_s)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores > 0 && b->jobs > GC_JOBS_PER_CORE * cores)
        fprintf(stderr,
                "grade-class: warning: --jobs %d on %ld cores: the verdicts were measured to hold up to %d graders "
                "a core (bench/results/class.md), not beyond; use --jobs %ld or fewer for grades\n",
                b->jobs, cores, GC_JOBS_PER_CORE, GC_JOBS_PER_CORE * cores);
    b->tty = isatty(STDERR_FILENO);
    b->t0 = rl_now_ns();
    size_t kept = 0;
    for (size_t i = 0; i < p->njobs; i++)
        kept += p->jobs[i].state == GC_JOB_SKIPPED && p->jobs[i].user && !p->info[i].error[0];
    if (!b->quiet)
        fprintf(stderr, "grade-class: %zu students, %zu gradings to run (%zu kept from an earlier run), --jobs %d\n",
                p->nstudents, b->total, kept, b->jobs);
    int prc = gc_pool_run(p->jobs, p->njobs, b->jobs, 15000, on_event, b);
    *wall_s = (double)(rl_now_ns() - b->t0) / 1e9;
    return prc;
}
