/* Unit tests for the baselines' verdicts, on real short-lived processes in
 * a baseline's slot: a baseline that crashed is the grader's ERROR; one
 * killed by a signal the submission could have sent, unsandboxed, is the
 * submission's FAIL; a running one changes nothing; no flood is judged
 * when no baseline runs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "baselines.h"
#include "rl_err.h"

#include <stdio.h>
#include <string.h>

static gr_ctx ctx;
static gr_options opt;

/* Runs |script| in baseline slot 0 (of |n|) and waits for it to end,
 * unless |wait| is false. */
static void baseline_runs(const char *script, int n, bool wait)
{
    memset(&ctx, 0, sizeof ctx);
    memset(&opt, 0, sizeof opt);
    ctx.opt = &opt;
    ctx.nbaselines = n;
    const char *argv[] = {"/bin/sh", "-c", script, NULL};
    rl_proc_options po = {.argv = argv, .kill_with_parent = true};
    assert_int_equal(rl_proc_spawn(&ctx.baselines[0].proc, &po), RL_OK);
    ctx.baselines[0].running = true;
    if (wait)
        assert_true(rl_proc_wait_exit(&ctx.baselines[0].proc, 10000));
}

static void finish(void)
{
    rl_proc_stop(&ctx.baselines[0].proc, 0);
    rl_proc_fini(&ctx.baselines[0].proc);
}

static void crashed_baseline_is_the_graders_error(void **state)
{
    (void)state;
    baseline_runs("kill -SEGV $$", 1, true);
    gr_scenario_result res = {.verdict = GR_PASS};
    gr_baselines_judge_dead(&ctx, &res);
    assert_int_equal(res.verdict, GR_ERROR);
    assert_string_equal(res.feedback,
                        "the grader's baseline was killed by SIGSEGV during the scenario (not the submission's fault)");
    finish();
}

static void killed_baseline_unsandboxed_fails_the_submission(void **state)
{
    (void)state;
    baseline_runs("kill -TERM $$", 2, true);
    gr_scenario_result res = {.verdict = GR_PASS};
    gr_baselines_judge_dead(&ctx, &res);
    assert_int_equal(res.verdict, GR_FAIL);
    assert_non_null(strstr(res.feedback, "the baseline (1 of 2) was killed by SIGTERM during the scenario; graded "
                                         "without the sandbox"));
    finish();
}

static void killed_baseline_in_the_sandbox_is_the_graders_error(void **state)
{
    (void)state;
    baseline_runs("kill -TERM $$", 1, true);
    opt.sandbox = (const struct gr_sandbox_view *)&opt; /* only its being set matters here */
    gr_scenario_result res = {.verdict = GR_PASS};
    gr_baselines_judge_dead(&ctx, &res);
    assert_int_equal(res.verdict, GR_ERROR);
    finish();
}

static void running_baseline_changes_nothing(void **state)
{
    (void)state;
    baseline_runs("sleep 30", 1, false);
    gr_scenario_result res = {.verdict = GR_TIMEOUT};
    snprintf(res.feedback, sizeof res.feedback, "as the scenario said");
    gr_baselines_judge_dead(&ctx, &res);
    gr_baselines_judge_flood(&ctx, &res); /* no instances, no port: nothing to count */
    assert_int_equal(res.verdict, GR_TIMEOUT);
    assert_string_equal(res.feedback, "as the scenario said");
    finish();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(crashed_baseline_is_the_graders_error),
        cmocka_unit_test(killed_baseline_unsandboxed_fails_the_submission),
        cmocka_unit_test(killed_baseline_in_the_sandbox_is_the_graders_error),
        cmocka_unit_test(running_baseline_changes_nothing),
    };
    return cmocka_run_group_tests_name("baselines", tests, NULL, NULL);
}
