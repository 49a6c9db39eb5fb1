/* Unit tests for the grader's judge: the deadline tolerance boundaries (just
 * inside and just outside), the mistake classes and their wording, the
 * cancellation bound, verdict aggregation over runs, and rubric points. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <grpc/status.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "judge.h"
#include "report.h"
#include "rl_deadline.h"
#include "rl_err.h"

/* shrinks: 2000 ms budget, 1480 ms truly left at Work's arrival. Both hops
 * round in 10 ms steps (1-10 s), plus the scheduling allowance. */
static void upper_bound_adds_both_roundings_and_allowance(void **state)
{
    (void)state;
    assert_int_equal(gr_judge_deadline_upper(2000, 1480, 0), 1480 + 10 + 10 + GR_JUDGE_SCHED_MS);
    /* Below one second the wire is exact on the second hop. */
    assert_int_equal(gr_judge_deadline_upper(2000, 500, 0), 500 + 10 + 0 + GR_JUDGE_SCHED_MS);
    assert_int_equal(gr_judge_deadline_upper(300, 290, 0), 290 + 0 + 0 + GR_JUDGE_SCHED_MS);
    /* The relay's own time is what a late re-anchoring can add. */
    assert_int_equal(gr_judge_deadline_upper(2000, 1160, 340), 1160 + 10 + 10 + 340 + GR_JUDGE_SCHED_MS);
}

static void lower_bound_allows_a_margin(void **state)
{
    (void)state;
    assert_int_equal(gr_judge_deadline_lower(1480), 1480 - 148);
    assert_int_equal(gr_judge_deadline_lower(500), 500 - GR_JUDGE_MARGIN_MIN_MS);
    assert_int_equal(gr_judge_deadline_lower(50), 0);
}

static void deadline_just_inside_passes(void **state)
{
    (void)state;
    gr_dl_check c;
    int64_t up = gr_judge_deadline_upper(2000, 1480, 0), lo = gr_judge_deadline_lower(1480);
    gr_judge_deadline("Work", 2000, 1480, 0, true, up, &c);
    assert_int_equal(c.cls, GR_DL_OK);
    gr_judge_deadline("Work", 2000, 1480, 0, true, lo, &c);
    assert_int_equal(c.cls, GR_DL_OK);
    gr_judge_deadline("Work", 2000, 1480, 0, true, 1479, &c); /* floor to ms */
    assert_int_equal(c.cls, GR_DL_OK);
}

static void deadline_just_outside_fails(void **state)
{
    (void)state;
    gr_dl_check c;
    int64_t up = gr_judge_deadline_upper(2000, 1480, 0), lo = gr_judge_deadline_lower(1480);
    gr_judge_deadline("Work", 2000, 1480, 0, true, up + 1, &c);
    assert_int_equal(c.cls, GR_DL_GREW);
    gr_judge_deadline("Work", 2000, 1480, 0, true, lo - 1, &c);
    assert_int_equal(c.cls, GR_DL_TOO_SHORT);
}

static void forwarded_timeout_is_named(void **state)
{
    (void)state;
    gr_dl_check c;
    char buf[256];
    gr_judge_deadline("Work", 1000, 702, 0, true, 1000, &c);
    assert_int_equal(c.cls, GR_DL_UNCHANGED);
    gr_judge_deadline_feedback(&c, buf, sizeof buf);
    assert_string_equal(buf, "Work received 1000 ms but only 702 ms remained: the original timeout was forwarded "
                             "unchanged");
    /* Rounded up on the wire, it is still the original timeout. */
    gr_judge_deadline("Work", 2000, 1480, 0, true, 2009, &c);
    assert_int_equal(c.cls, GR_DL_UNCHANGED);
    /* A slow relay gets its own time back, but Lookup's 500 ms are not its. */
    gr_judge_deadline("Work", 2000, 1160, 340, true, 2000, &c);
    assert_int_equal(c.cls, GR_DL_UNCHANGED);
    gr_judge_deadline("Work", 2000, 1160, 340, true, 1243, &c);
    assert_int_equal(c.cls, GR_DL_OK);
}

static void dropped_deadline_is_named(void **state)
{
    (void)state;
    gr_dl_check c;
    char buf[256];
    gr_judge_deadline("Work", 2000, 1480, 0, false, 0, &c);
    assert_int_equal(c.cls, GR_DL_MISSING);
    gr_judge_deadline_feedback(&c, buf, sizeof buf);
    assert_non_null(strstr(buf, "Work received no deadline"));
    assert_non_null(strstr(buf, "the deadline was dropped"));
}

static void huge_timeout_is_named(void **state)
{
    (void)state;
    gr_dl_check c;
    char buf[256];
    gr_judge_deadline("Work", -1, 0, 0, true, 2147483647, &c);
    assert_int_equal(c.cls, GR_DL_HUGE);
    gr_judge_deadline_feedback(&c, buf, sizeof buf);
    assert_string_equal(buf, "Work received 2147483647 ms although the client set no deadline: a huge finite "
                             "timeout was sent instead of none");
    gr_judge_deadline("Work", 2000, 1480, 0, true, 2147483647, &c);
    assert_int_equal(c.cls, GR_DL_HUGE);
}

static void no_deadline_in_none_out(void **state)
{
    (void)state;
    gr_dl_check c;
    char buf[256];
    gr_judge_deadline("Lookup", -1, 0, 0, false, 0, &c);
    assert_int_equal(c.cls, GR_DL_OK);
    gr_judge_deadline("Lookup", -1, 0, 0, true, 30000, &c);
    assert_int_equal(c.cls, GR_DL_INVENTED);
    gr_judge_deadline_feedback(&c, buf, sizeof buf);
    assert_non_null(strstr(buf, "invented a deadline"));
}

static void grown_deadline_between_truth_and_budget(void **state)
{
    (void)state;
    gr_dl_check c;
    char buf[256];
    /* Closer to what remained than to the budget: grew, not forwarded. */
    gr_judge_deadline("Work", 2000, 1480, 0, true, 1650, &c);
    assert_int_equal(c.cls, GR_DL_GREW);
    gr_judge_deadline_feedback(&c, buf, sizeof buf);
    assert_non_null(strstr(buf, "the deadline grew along the chain"));
}

static const gr_scenario fake_scenarios[] = {{"a", "A", NULL, 0}, {"b", "B", NULL, 0}};
static const gr_exercise fake = {.name = "fake", .summary = "s", .scenarios = fake_scenarios, .nscenarios = 2};

static char *write_temp(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/test_judge_rubric_%d.json", (int)getpid());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static void rubric_scores_each_scenario(void **state)
{
    (void)state;
    char err[256];
    gr_rubric *r = NULL;
    char *path = write_temp("{\"_c\": \"x\", \"fake\": {\"a\": 3, \"b\": 1.5}}");
    assert_int_equal(gr_rubric_load(path, &r, err, sizeof err), RL_OK);
    assert_int_equal(gr_rubric_check(r, &fake, err, sizeof err), RL_OK);
    assert_true(gr_rubric_points(r, "fake", "b") == 1.5);
    gr_outcome o[2];
    memset(o, 0, sizeof o);
    o[0].scenario = &fake_scenarios[0];
    o[0].runs = o[0].passed = 3;
    o[1].scenario = &fake_scenarios[1];
    o[1].runs = 3;
    o[1].passed = 2;
    gr_report rep = {.ex = &fake, .outcomes = o, .noutcomes = 2, .rubric = r, .runs = 3};
    double score, max;
    gr_report_score(&rep, &score, &max);
    assert_true(score == 3.0);
    assert_true(max == 4.5);
    gr_rubric_free(r);
    unlink(path);
}

/* No client deadline, DEADLINE_EXCEEDED anyway: the feedback names the
 * hop that never arrived and the no-deadline mistake. */
static void no_deadline_expiry_names_the_mistake(void **state)
{
    (void)state;
    char buf[1024];
    gr_judge_no_deadline_expired_feedback(2, 0, 0, buf, sizeof buf);
    assert_non_null(strstr(buf, "with no deadline from the client"));
    assert_non_null(strstr(buf, "never reached Lookup"));
    assert_non_null(strstr(buf, "time_remaining()"));
    assert_non_null(strstr(buf, "no deadline either"));
    gr_judge_no_deadline_expired_feedback(60, 1, 0, buf, sizeof buf);
    assert_non_null(strstr(buf, "never reached Work"));
    assert_non_null(strstr(buf, "1 Lookup and 0 Work"));
}

static void rubric_errors_are_clear(void **state)
{
    (void)state;
    char err[256];
    gr_rubric *r = NULL;
    assert_int_equal(gr_rubric_load("/nonexistent/rubric.json", &r, err, sizeof err), RL_ENOTFOUND);
    assert_non_null(strstr(err, "cannot read the rubric"));
    char *path = write_temp("{\"fake\": {\"a\": \"three\"}}");
    assert_int_equal(gr_rubric_load(path, &r, err, sizeof err), RL_EPARSE);
    assert_non_null(strstr(err, "fake/a"));
    path = write_temp("{\"fake\": {\"a\": 1}");
    assert_int_equal(gr_rubric_load(path, &r, err, sizeof err), RL_EPARSE);
    assert_non_null(strstr(err, "not valid JSON"));
    path = write_temp("{\"fake\": {\"a\": 1}}");
    assert_int_equal(gr_rubric_load(path, &r, err, sizeof err), RL_OK);
    assert_int_equal(gr_rubric_check(r, &fake, err, sizeof err), RL_EPARSE);
    assert_string_equal(err, "the rubric has no points for fake/b");
    gr_rubric_free(r);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(upper_bound_adds_both_roundings_and_allowance),
        cmocka_unit_test(lower_bound_allows_a_margin),
        cmocka_unit_test(deadline_just_inside_passes),
        cmocka_unit_test(deadline_just_outside_fails),
        cmocka_unit_test(forwarded_timeout_is_named),
        cmocka_unit_test(dropped_deadline_is_named),
        cmocka_unit_test(huge_timeout_is_named),
        cmocka_unit_test(no_deadline_in_none_out),
        cmocka_unit_test(grown_deadline_between_truth_and_budget),
        cmocka_unit_test(rubric_scores_each_scenario),
        cmocka_unit_test(no_deadline_expiry_names_the_mistake),
        cmocka_unit_test(rubric_errors_are_clear),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
