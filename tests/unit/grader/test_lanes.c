/* Unit tests for grader/lanes.c: which scenarios make a lane, and a run of
 * lanes in real forked workers on a config-kind exercise with no baselines
 * (so a scenario run is its run function alone): the outcomes come back in
 * table order whatever finished first, each lane in its own process and a
 * lane's scenarios in one, and a worker that exits before its result is the
 * grader's ERROR naming how it ended, without costing the other lanes; a
 * worker that exits badly after all its results (a sanitizer's report at
 * exit) is the grader's error too, never hidden. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "driver.h"
#include "lanes.h"
#include "rl_deadline.h"
#include "rl_err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Says which process ran it; the slow one finishes after the others. */
static int says_pid(gr_ctx *ctx, gr_scenario_result *out)
{
    (void)ctx;
    return gr_result(out, GR_PASS, "pid %ld", (long)getpid());
}

static int slow_says_pid(gr_ctx *ctx, gr_scenario_result *out)
{
    rl_sleep_ms(200, NULL);
    return says_pid(ctx, out);
}

/* A grader bug that ends the worker before its result is written. */
static int exits(gr_ctx *ctx, gr_scenario_result *out)
{
    (void)ctx;
    (void)out;
    _exit(3);
}

static const gr_scenario scenarios[] = {
    {"slow", "lane 0, first", slow_says_pid, 0, 0},
    {"quick", "lane 1", says_pid, 0, 1},
    {"dies", "lane 2", exits, 0, 2},
    {"second", "lane 0, after slow", says_pid, 0, 0},
};

static const gr_exercise ex = {
    .name = "lanes-test",
    .kind = GR_SUBMISSION_CONFIG,
    .scenarios = scenarios,
    .nscenarios = sizeof scenarios / sizeof scenarios[0],
};

/* At the worker's exit, after every result was written: what LeakSanitizer
 * does when it finds a leak. */
static void exit_23(void)
{
    _exit(23);
}

static int passes_then_exits_23(gr_ctx *ctx, gr_scenario_result *out)
{
    atexit(exit_23);
    return says_pid(ctx, out);
}

static const gr_scenario late_scenarios[] = {
    {"fine", "lane 0", says_pid, 0, 0},
    {"exits-late", "lane 1", passes_then_exits_23, 0, 1},
};

static const gr_exercise late_ex = {
    .name = "lanes-late-test",
    .kind = GR_SUBMISSION_CONFIG,
    .scenarios = late_scenarios,
    .nscenarios = sizeof late_scenarios / sizeof late_scenarios[0],
};

static void test_count(void **state)
{
    (void)state;
    assert_int_equal(gr_lanes_count(&ex, NULL), 3);
    assert_int_equal(gr_lanes_count(&ex, "slow,second"), 1);
    assert_int_equal(gr_lanes_count(&ex, "second,quick"), 2);
    assert_int_equal(gr_lanes_count(&ex, "nothing"), 0);
}

static long pid_of(const gr_outcome *o)
{
    long pid = 0;
    assert_int_equal(sscanf(o->feedback, "pid %ld", &pid), 1);
    return pid;
}

static void run_lanes(int parallel)
{
    gr_options opt = {.runs = 1, .ready_timeout_ms = 1000};
    gr_outcome *out = calloc(ex.nscenarios, sizeof *out);
    assert_non_null(out);
    size_t n = 0;
    char err[256] = "";
    assert_int_equal(gr_lanes_run(&ex, &opt, parallel, out, &n, err, sizeof err), RL_ECHILD);
    assert_non_null(strstr(err, "the grader's worker for lane 2 exited with status 3"));
    assert_int_equal(n, 4);
    for (size_t i = 0; i < n; i++)
        assert_ptr_equal(out[i].scenario, &scenarios[i]); /* table order */
    assert_int_equal(out[0].verdict, GR_PASS);
    assert_int_equal(out[1].verdict, GR_PASS);
    assert_int_equal(out[3].verdict, GR_PASS);
    assert_int_equal(out[0].runs, 1);
    assert_true(out[0].seconds >= 0.2);
    /* Each lane in a process of its own, never the grader's. */
    assert_int_equal(pid_of(&out[0]), pid_of(&out[3]));
    assert_int_not_equal(pid_of(&out[0]), pid_of(&out[1]));
    assert_int_not_equal(pid_of(&out[0]), (long)getpid());
    assert_int_equal(out[2].verdict, GR_ERROR);
    assert_non_null(strstr(out[2].feedback, "the grader's worker for this scenario exited with status 3"));
    free(out);
}

static void test_lanes_at_once(void **state)
{
    (void)state;
    run_lanes(3);
}

/* One lane at a time gives the same outcomes. */
static void test_one_lane_at_a_time(void **state)
{
    (void)state;
    run_lanes(1);
}

/* Both results stand, and the bad exit is still the grader's error. */
static void test_bad_exit_after_the_results(void **state)
{
    (void)state;
    gr_options opt = {.runs = 1, .ready_timeout_ms = 1000};
    gr_outcome out[2];
    size_t n = 0;
    char err[256] = "";
    assert_int_equal(gr_lanes_run(&late_ex, &opt, 2, out, &n, err, sizeof err), RL_ECHILD);
    assert_int_equal(n, 2);
    assert_int_equal(out[0].verdict, GR_PASS);
    assert_int_equal(out[1].verdict, GR_PASS);
    assert_non_null(strstr(err, "the grader's worker for lane 1 exited with status 23"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_count),
        cmocka_unit_test(test_lanes_at_once),
        cmocka_unit_test(test_one_lane_at_a_time),
        cmocka_unit_test(test_bad_exit_after_the_results),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
