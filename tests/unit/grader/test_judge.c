/* Unit tests for the grader's shared judge (the feedback for an expiry of a
 * call that had no deadline) and for rubric points; the exercises' own
 * judges have their test_NAME_judge.c. */
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

static const gr_scenario fake_scenarios[] = {{"a", "A", NULL, 0, 0}, {"b", "B", NULL, 0, 0}};
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
        cmocka_unit_test(rubric_scores_each_scenario),
        cmocka_unit_test(no_deadline_expiry_names_the_mistake),
        cmocka_unit_test(rubric_errors_are_clear),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
