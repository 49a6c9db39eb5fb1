/* Unit tests for the cancellation exercise's rules (grader/cancel_judge):
 * the bound on a downstream call's end after the cancel (both sides) and
 * the steps that fit, the starved cancel, and each scenario's verdict with
 * its exact feedback. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "cancel_judge.h"

static void cancel_within_bound_passes(void **state)
{
    (void)state;
    gr_cancel_check c;
    gr_cancel_judge_stop("Work", true, true, GR_CANCEL_MS, 120, 12, 200, 0, &c);
    assert_true(c.pass);
    gr_cancel_judge_stop("Work", true, true, GR_CANCEL_MS + 1, 120, 12, 200, 0, &c);
    assert_false(c.pass);
    /* In time, but more steps than fit: the step bound catches it. */
    uint32_t max = gr_cancel_max_steps(30, 10, 200);
    assert_int_equal(max, (30 + GR_CANCEL_MS + 9) / 10 + 1);
    gr_cancel_judge_stop("Work", true, true, 5, 120, max, 200, max, &c);
    assert_true(c.pass);
    gr_cancel_judge_stop("Work", true, true, 5, 120, max + 1, 200, max, &c);
    assert_false(c.pass);
}

static void ignored_cancel_is_named(void **state)
{
    (void)state;
    gr_cancel_check c;
    char buf[256];
    gr_cancel_judge_stop("Work", true, false, 1890, 1900, 200, 200, 0, &c);
    assert_false(c.pass);
    gr_cancel_feedback(&c, buf, sizeof buf);
    assert_string_equal(buf, "Work kept running 1890 ms after the cancel (200/200 steps): cancellation is not "
                             "propagated");
    gr_cancel_judge_stop("Lookup", false, false, 0, 3000, 0, 0, 0, &c);
    assert_false(c.pass);
    gr_cancel_feedback(&c, buf, sizeof buf);
    assert_string_equal(buf, "Lookup was still running 3000 ms after the cancel: cancellation is not propagated");
}

/* Late only by the time the chain waited for a CPU: not judged (the
 * soak's wrong FAIL, 271 ms on a loaded machine); late beyond it, or never
 * passed on, stays a FAIL. */
static void a_cancel_late_while_starved_is_not_judged(void **state)
{
    (void)state;
    gr_cancel_check c;
    char buf[320];
    gr_cancel_judge_stop("Lookup", true, true, 271, 280, 0, 0, 0, &c);
    gr_cancel_starved(&c, 121);
    assert_false(c.pass);
    assert_true(c.starved);
    gr_cancel_feedback(&c, buf, sizeof buf);
    assert_non_null(strstr(buf, "waited 121 ms for a CPU"));
    assert_non_null(strstr(buf, "grade again"));
    gr_cancel_judge_stop("Lookup", true, true, 271, 280, 0, 0, 0, &c);
    gr_cancel_starved(&c, 120);
    assert_false(c.starved);
    gr_cancel_feedback(&c, buf, sizeof buf);
    assert_non_null(strstr(buf, "stopped only 271 ms after the cancel"));
    /* Unknown wait: judged as before. */
    gr_cancel_judge_stop("Lookup", true, true, 271, 280, 0, 0, 0, &c);
    gr_cancel_starved(&c, -1);
    assert_false(c.starved);
    /* Never passed on: FAIL however long the wait. */
    gr_cancel_judge_stop("Lookup", false, false, 0, 3000, 0, 0, 0, &c);
    gr_cancel_starved(&c, 5000);
    assert_false(c.starved);
    gr_cancel_judge_stop("Work", true, false, 1890, 1900, 200, 200, 0, &c);
    gr_cancel_starved(&c, 5000);
    assert_false(c.starved);
    /* In time but too many steps: not the machine's. */
    uint32_t max = gr_cancel_max_steps(30, 10, 200);
    gr_cancel_judge_stop("Work", true, true, 5, 120, max + 1, 200, max, &c);
    gr_cancel_starved(&c, 5000);
    assert_false(c.starved);
    /* A pass stays a pass. */
    gr_cancel_judge_stop("Lookup", true, true, 20, 30, 0, 0, 0, &c);
    gr_cancel_starved(&c, 5000);
    assert_true(c.pass);
    assert_false(c.starved);
}

/* PASS, the starved ERROR (run again), FAIL; |more| after a PASS only. */
static void verdict_passes_errs_when_starved_and_fails(void **state)
{
    (void)state;
    gr_cancel_check c;
    char buf[512];
    bool starved = true;
    gr_cancel_judge_stop("Work", true, true, 5, 20, 3, 200, 30, &c);
    gr_cancel_starved(&c, 0);
    assert_int_equal(gr_cancel_verdict(&c, "; more", &starved, buf, sizeof buf), GR_PASS);
    assert_false(starved);
    assert_string_equal(buf, "Work stopped 5 ms after the cancel (3/200 steps) (bound 150 ms); more");
    gr_cancel_judge_stop("Lookup", true, true, 271, 280, 0, 0, 0, &c);
    gr_cancel_starved(&c, 121);
    assert_int_equal(gr_cancel_verdict(&c, "; more", &starved, buf, sizeof buf), GR_ERROR);
    assert_true(starved);
    assert_null(strstr(buf, "; more"));
    gr_cancel_starved(&c, 120);
    assert_int_equal(gr_cancel_verdict(&c, "; more", &starved, buf, sizeof buf), GR_FAIL);
    assert_false(starved);
    assert_string_equal(buf, "Lookup stopped only 271 ms after the cancel (bound 150 ms): cancellation reaches it too "
                             "late");
}

static void lookup_work_after_the_cancel_fails(void **state)
{
    (void)state;
    gr_cancel_check c;
    char buf[512];
    bool starved = false;
    gr_cancel_judge_stop("Lookup", true, true, 2, 10, 0, 0, 0, &c);
    gr_cancel_starved(&c, 0);
    assert_int_equal(gr_cancel_judge_lookup(&c, false, 0, &starved, buf, sizeof buf), GR_PASS);
    assert_string_equal(buf, "Lookup stopped 2 ms after the cancel (bound 150 ms); no Work after it");
    assert_int_equal(gr_cancel_judge_lookup(&c, true, 7, &starved, buf, sizeof buf), GR_FAIL);
    assert_false(starved);
    assert_string_equal(buf, "Work was still called 7 ms after the cancel: a cancelled Process must start no further "
                             "call; Lookup stopped 2 ms after the cancel (bound 150 ms)");
    /* A starved Lookup that was followed by Work: the Work decides. */
    gr_cancel_judge_stop("Lookup", true, true, 271, 280, 0, 0, 0, &c);
    gr_cancel_starved(&c, 200);
    assert_int_equal(gr_cancel_judge_lookup(&c, true, 300, &starved, buf, sizeof buf), GR_FAIL);
    assert_false(starved);
    assert_int_equal(gr_cancel_judge_lookup(&c, false, 0, &starved, buf, sizeof buf), GR_ERROR);
    assert_true(starved);
}

static void keeps_serving_both_branches(void **state)
{
    (void)state;
    char buf[512];
    assert_int_equal(gr_cancel_judge_keeps_serving(true, "", 14, buf, sizeof buf), GR_PASS);
    assert_string_equal(buf, "after a cancelled Process, the next one succeeded in 14 ms");
    assert_int_equal(gr_cancel_judge_keeps_serving(false, "UNAVAILABLE (Socket closed)", 3, buf, sizeof buf), GR_FAIL);
    assert_string_equal(buf, "after a cancelled Process, the next one (5000 ms deadline) failed: UNAVAILABLE (Socket "
                             "closed)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cancel_within_bound_passes),
        cmocka_unit_test(ignored_cancel_is_named),
        cmocka_unit_test(a_cancel_late_while_starved_is_not_judged),
        cmocka_unit_test(verdict_passes_errs_when_starved_and_fails),
        cmocka_unit_test(lookup_work_after_the_cancel_fails),
        cmocka_unit_test(keeps_serving_both_branches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
