/* Unit tests for slurm: squeue's lines give each array task its state (a
 * task no longer listed is gone, a range line leaves tasks as they were),
 * the states a task ends in are final, a task's .done lines end its
 * gradings as the pool would (a line still being written, an unknown
 * exercise and a grading not pending are skipped), what a task records is
 * what its submitter reads, and a task finds its student by its index. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "slurm.h"

#include "rl_err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char state[4][GC_SLURM_STATE], reason[4][GC_SLURM_REASON];

static size_t parse(const char *lines, size_t ntasks, size_t *ended)
{
    memset(state, 0, sizeof state);
    memset(reason, 0, sizeof reason);
    char text[512];
    snprintf(text, sizeof text, "%s", lines);
    return gc_slurm_parse_queue(text, ntasks, state, reason, ended);
}

static void queue_lines_give_each_task_its_state(void **st)
{
    (void)st;
    size_t ended = 9;
    assert_int_equal(parse("0|COMPLETED|None\n1|RUNNING|None\n2|PENDING|Resources\n", 3, &ended), 3);
    assert_int_equal(ended, 1);
    assert_string_equal(state[1], "RUNNING");
    assert_string_equal(state[2], "PENDING");
    assert_string_equal(reason[2], "Resources");
}

static void a_task_no_longer_listed_is_gone(void **st)
{
    (void)st;
    size_t ended = 0;
    /* A task cancelled before it started leaves no record. */
    assert_int_equal(parse("0|COMPLETED|None\n1|FAILED|NonZeroExitCode\n", 3, &ended), 2);
    assert_string_equal(state[2], GC_SLURM_GONE);
    assert_int_equal(ended, 3);
}

static void a_range_line_leaves_its_tasks_waiting(void **st)
{
    (void)st;
    size_t ended = 9;
    assert_int_equal(parse("0|RUNNING|None\n1-2|PENDING|Resources\n", 3, &ended), 1);
    assert_string_equal(state[1], "");
    assert_int_equal(ended, 0);
}

static void no_line_is_no_task(void **st)
{
    (void)st;
    size_t ended = 9;
    assert_int_equal(parse("", 2, &ended), 0);
    assert_int_equal(ended, 0);
    assert_string_equal(state[0], "");
}

static void ending_states_are_final(void **st)
{
    (void)st;
    assert_true(gc_slurm_state_final("COMPLETED"));
    assert_true(gc_slurm_state_final("TIMEOUT"));
    assert_true(gc_slurm_state_final(GC_SLURM_GONE));
    assert_false(gc_slurm_state_final("COMPLETING"));
    assert_false(gc_slurm_state_final("RUNNING"));
    assert_false(gc_slurm_state_final(""));
}

static gc_batch b;
static gc_job jobs[4];
static gc_job_info info[4];
static char *names[2];

/* Two students on deadline and retry, every grading PENDING. */
static gc_plan two_students(void)
{
    memset(&b, 0, sizeof b);
    memset(jobs, 0, sizeof jobs);
    memset(info, 0, sizeof info);
    b.quiet = true;
    b.nex = 2;
    snprintf(b.ex[0].name, sizeof b.ex[0].name, "deadline");
    snprintf(b.ex[1].name, sizeof b.ex[1].name, "retry");
    for (size_t i = 0; i < 4; i++) {
        jobs[i].state = GC_JOB_PENDING;
        jobs[i].user = &info[i];
        info[i].ex = i % 2;
    }
    gc_plan p = {.students = names, .nstudents = 2, .jobs = jobs, .info = info, .njobs = 4};
    return p;
}

static size_t apply(gc_plan *p, size_t s, const char *text)
{
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    assert_non_null(f);
    size_t n = gc_slurm_apply_done(&b, p, s, f);
    fclose(f);
    return n;
}

static void done_lines_end_gradings_as_the_pool_would(void **st)
{
    (void)st;
    gc_plan p = two_students();
    assert_int_equal(apply(&p, 1, "deadline\t1\t-\t6.500\nretry\t0\tti\t2.000\n"), 2);
    assert_int_equal(jobs[2].state, GC_JOB_DONE);
    assert_int_equal(jobs[2].status, 1);
    assert_false(jobs[2].timed_out || jobs[2].interrupted);
    assert_int_equal(jobs[2].ended_ns - jobs[2].started_ns, 6500000000);
    assert_true(jobs[3].timed_out && jobs[3].interrupted);
    /* The other student's gradings are not touched. */
    assert_int_equal(jobs[0].state, GC_JOB_PENDING);
    assert_int_equal(jobs[1].state, GC_JOB_PENDING);
}

static void partial_unknown_and_repeated_lines_are_skipped(void **st)
{
    (void)st;
    gc_plan p = two_students();
    info[1].error[0] = 'x'; /* retry of student 0 has a row of its own (refused) */
    assert_int_equal(
        apply(&p, 0, "bogus\t0\t-\t1.0\nretry\t0\t-\t1.0\ndeadline\t0\t-\t1.0\ndeadline\t1\t-\t2.0\nretry"), 1);
    assert_int_equal(jobs[0].state, GC_JOB_DONE);
    assert_int_equal(jobs[0].status, 0); /* the first line of it wins: the grading ended once */
    assert_int_equal(jobs[1].state, GC_JOB_PENDING);
    /* A line without its newline is read once it is whole. */
    assert_int_equal(apply(&p, 1, "deadline\t0\t-\t1.0"), 0);
    assert_int_equal(apply(&p, 1, "deadline\t0\t-\t1.0\n"), 1);
}

static void what_a_task_records_its_submitter_reads(void **st)
{
    (void)st;
    gc_plan p = two_students();
    char *text = NULL;
    size_t len = 0;
    b.task_log = open_memstream(&text, &len);
    assert_non_null(b.task_log);
    gc_job ended = {.state = GC_JOB_DONE,
                    .status = 1,
                    .timed_out = true,
                    .user = &info[1],
                    .started_ns = 1000000000,
                    .ended_ns = 3500000000};
    gc_slurm_task_record(&b, &ended);
    fclose(b.task_log);
    b.task_log = NULL;
    assert_string_equal(text, "retry\t1\tt\t2.500\n");
    assert_int_equal(apply(&p, 0, text), 1);
    assert_int_equal(jobs[1].status, 1);
    assert_true(jobs[1].timed_out);
    assert_false(jobs[1].interrupted);
    free(text);
}

static void a_task_finds_its_student_by_its_index(void **st)
{
    (void)st;
    char name[GC_NAME_MAX], err[256];
    unsetenv("SLURM_ARRAY_TASK_ID");
    assert_int_equal(gc_slurm_task_student("ann,bob", name, sizeof name, err, sizeof err), RL_EINVAL);
    assert_non_null(strstr(err, "SLURM_ARRAY_TASK_ID"));
    setenv("SLURM_ARRAY_TASK_ID", "1", 1);
    assert_int_equal(gc_slurm_task_student("ann,bob,cy", name, sizeof name, err, sizeof err), RL_OK);
    assert_string_equal(name, "bob");
    setenv("SLURM_ARRAY_TASK_ID", "3", 1);
    assert_int_equal(gc_slurm_task_student("ann,bob,cy", name, sizeof name, err, sizeof err), RL_EINVAL);
    setenv("SLURM_ARRAY_TASK_ID", "1", 1);
    assert_int_equal(gc_slurm_task_student("ann,b b", name, sizeof name, err, sizeof err), RL_EINVAL);
    setenv("SLURM_ARRAY_TASK_ID", "1x", 1);
    assert_int_equal(gc_slurm_task_student("ann,bob", name, sizeof name, err, sizeof err), RL_EINVAL);
    unsetenv("SLURM_ARRAY_TASK_ID");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(queue_lines_give_each_task_its_state),
        cmocka_unit_test(a_task_no_longer_listed_is_gone),
        cmocka_unit_test(a_range_line_leaves_its_tasks_waiting),
        cmocka_unit_test(no_line_is_no_task),
        cmocka_unit_test(ending_states_are_final),
        cmocka_unit_test(done_lines_end_gradings_as_the_pool_would),
        cmocka_unit_test(partial_unknown_and_repeated_lines_are_skipped),
        cmocka_unit_test(what_a_task_records_its_submitter_reads),
        cmocka_unit_test(a_task_finds_its_student_by_its_index),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
