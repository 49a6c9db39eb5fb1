/* grade-class: grades a class folder (one subfolder a student) on one or
 * all exercises with bin/grader, N graders at once, and writes one
 * results.json a student, a CSV and a summary. Every grading is a grader
 * process of its own, exactly as one by one, so --jobs changes no verdict;
 * a grading that gave verdicts, with the same options, is not run again
 * (resume). The steps are modules: options (the command line), plan (the
 * class folder walked into gradings), run (the pool), report (the files);
 * with --slurm, slurm runs the gradings as a Slurm job array instead.
 *
 * Exit status (batch.h's gc_exit): 0 every grading finished (whatever its
 * verdicts), 2 usage error, or a grading that could not finish
 * (interrupted: run the same command again to resume). */
#include "batch.h"
#include "options.h"
#include "plan.h"
#include "pool.h"
#include "report.h"
#include "run.h"
#include "slurm.h"

#include "rl_err.h"

#include <stdio.h>

/* The command line read and what it names made ready. Returns 0 to go
 * on, else RL_EINVAL with |*code| the exit status. */
static int parse(int argc, char **argv, gc_batch *b, gc_options *o, int *code)
{
    if (gc_options_read(argc, argv, b, o, code) != RL_OK)
        return RL_EINVAL;
    return gc_options_prepare(b, o, code);
}

/* The class walked into gradings and the gradings run. |*prc| gets the
 * pool's code, |*wall_s| its seconds. Returns 0 to report, else RL_EINVAL
 * with |*code| the exit status. */
static int run(gc_batch *b, const gc_options *o, gc_plan *p, int *prc, double *wall_s, int *code)
{
    if (gc_plan_students(b, o, p, code) != RL_OK)
        return RL_EINVAL;
    /* Before the walk: an interrupt from here on leaves its gradings
     * PENDING ("not graded"), and a resume takes them up. */
    if (gc_pool_install_guards() != RL_OK) {
        fprintf(stderr, "grade-class: cannot install signal handlers or become a subreaper\n");
        *code = GC_EXIT_SETUP;
        return RL_EINVAL;
    }
    /* --slurm: no array of an earlier run grades into --out any more. */
    if (b->slurm && gc_slurm_check_earlier(b) != RL_OK) {
        *code = GC_EXIT_SETUP;
        return RL_EINVAL;
    }
    if (gc_plan_walk(b, o, p, code) != RL_OK)
        return RL_EINVAL;
    /* --slurm: the same gradings as one Slurm job array of a task a
     * student, each task this program again on its one student (slurm.h). */
    *prc = o->slurm_task ? gc_slurm_task_run(b, p, wall_s)
           : b->slurm    ? gc_slurm_run(b, o, p, wall_s)
                         : gc_run_gradings(b, p, wall_s);
    return RL_OK;
}

int main(int argc, char **argv)
{
    static gc_batch b;
    gc_options o;
    gc_plan p = {0};
    int code = GC_EXIT_OK, prc = RL_OK;
    double wall_s = 0;
    if (parse(argc, argv, &b, &o, &code) != RL_OK)
        return code;
    /* A run that stops early (a refused roster, an earlier array still
     * grading) frees what it planned as one that reports. */
    if (run(&b, &o, &p, &prc, &wall_s, &code) == RL_OK)
        /* An array task's gradings are reported by its submitter. */
        code = o.slurm_task ? gc_slurm_task_status(&p, prc) : gc_report_write(&b, &o, &p, prc, wall_s);
    gc_plan_fini(&p);
    return code;
}
