/* Unit tests for the rubric loader and results.json: the integer form every
 * rubric used stays valid, the object form adds a Gradescope visibility,
 * a bad entry is refused with its path named, and results.json carries the
 * visibility and the measured extra_data. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "exercise.h"
#include "report.h"
#include "rl_err.h"
#include "run.h"
#include "rl_test_dir.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

RL_TEST_DIR("report")

/* Writes |text| to DIR/|name| and returns the path (static buffer). */
static const char *write_text(const char *name, const char *text)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static int load(const char *text, gr_rubric **r, char *err, size_t errlen)
{
    return gr_rubric_load(write_text("rubric.json", text), r, err, errlen);
}

static void integer_points_still_load(void **state)
{
    (void)state;
    gr_rubric *r = NULL;
    char err[512] = "";
    assert_int_equal(load("{\"_c\": \"x\", \"ex\": {\"a\": 4, \"b\": 0, \"_note\": \"y\"}}", &r, err, sizeof err),
                     RL_OK);
    assert_true(gr_rubric_points(r, "ex", "a") == 4.0);
    assert_true(gr_rubric_points(r, "ex", "b") == 0.0);
    assert_null(gr_rubric_visibility(r, "ex", "a"));
    gr_rubric_free(r);
}

static void object_entry_gives_points_and_visibility(void **state)
{
    (void)state;
    gr_rubric *r = NULL;
    char err[512] = "";
    assert_int_equal(load("{\"ex\": {\"a\": {\"points\": 2, \"visibility\": \"after_due_date\", \"_why\": \"z\"},"
                          " \"b\": {\"points\": 3}, \"c\": 1}}",
                          &r, err, sizeof err),
                     RL_OK);
    assert_true(gr_rubric_points(r, "ex", "a") == 2.0);
    assert_string_equal(gr_rubric_visibility(r, "ex", "a"), "after_due_date");
    assert_true(gr_rubric_points(r, "ex", "b") == 3.0);
    assert_null(gr_rubric_visibility(r, "ex", "b"));
    assert_true(gr_rubric_points(r, "ex", "c") == 1.0);
    gr_rubric_free(r);
}

static void every_gradescope_visibility_loads(void **state)
{
    (void)state;
    const char *words[] = {"visible", "hidden", "after_due_date", "after_published"};
    for (size_t i = 0; i < 4; i++) {
        char text[256], err[512] = "";
        snprintf(text, sizeof text, "{\"ex\": {\"a\": {\"points\": 1, \"visibility\": \"%s\"}}}", words[i]);
        gr_rubric *r = NULL;
        assert_int_equal(load(text, &r, err, sizeof err), RL_OK);
        assert_string_equal(gr_rubric_visibility(r, "ex", "a"), words[i]);
        gr_rubric_free(r);
    }
}

static void bad_entries_are_refused_by_path(void **state)
{
    (void)state;
    static const struct {
        const char *text, *says;
    } cases[] = {
        {"{\"ex\": {\"a\": {\"points\": 1, \"visibility\": \"secret\"}}}", "ex/a visibility must be"},
        {"{\"ex\": {\"a\": {\"points\": 1, \"visiblity\": \"hidden\"}}}", "unknown key \"visiblity\""},
        {"{\"ex\": {\"a\": {\"visibility\": \"hidden\"}}}", "ex/a must be a number of points"},
        {"{\"ex\": {\"a\": {\"points\": -1}}}", "ex/a must be a number of points"},
        {"{\"ex\": {\"a\": {\"points\": 1, \"visibility\": 3}}}", "ex/a visibility must be"},
        {"{\"ex\": {\"a\": \"2\"}}", "ex/a must be a number of points"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        gr_rubric *r = NULL;
        char err[512] = "";
        assert_int_equal(load(cases[i].text, &r, err, sizeof err), RL_EPARSE);
        assert_null(r);
        if (!strstr(err, cases[i].says))
            fail_msg("case %zu: '%s' does not say '%s'", i, err, cases[i].says);
    }
}

static int noop(gr_ctx *ctx, gr_scenario_result *out)
{
    (void)ctx;
    (void)out;
    return 0;
}

static const gr_scenario scenarios[] = {{"a", "first", noop, 0}, {"b", "second", noop, 0}};
static const gr_exercise ex = {"ex", "a test exercise", GR_SUBMISSION_COMMAND, 1, 1, NULL, scenarios, 2, NULL};

static void the_shipped_rubric_checks_against_every_exercise(void **state)
{
    (void)state;
    gr_rubric *r = NULL;
    char err[512] = "";
    assert_int_equal(gr_rubric_load("grader/rubric.json", &r, err, sizeof err), RL_OK);
    for (size_t i = 0; gr_exercises[i]; i++)
        if (gr_rubric_check(r, gr_exercises[i], err, sizeof err) != RL_OK)
            fail_msg("%s", err);
    gr_rubric_free(r);
}

static void results_json_carries_visibility_and_extra_data(void **state)
{
    (void)state;
    gr_rubric *r = NULL;
    char err[512] = "";
    assert_int_equal(
        load("{\"ex\": {\"a\": {\"points\": 2, \"visibility\": \"hidden\"}, \"b\": 3}}", &r, err, sizeof err), RL_OK);
    assert_int_equal(gr_rubric_check(r, &ex, err, sizeof err), RL_OK);
    gr_outcome o[2];
    memset(o, 0, sizeof o);
    o[0] = (gr_outcome){.scenario = &scenarios[0], .runs = 3, .passed = 3, .verdict = GR_PASS, .seconds = 1.5};
    snprintf(o[0].feedback, sizeof o[0].feedback, "fine");
    o[1] = (gr_outcome){.scenario = &scenarios[1], .runs = 3, .passed = 2, .verdict = GR_TIMEOUT, .seconds = 9};
    snprintf(o[1].feedback, sizeof o[1].feedback, "took 5000 ms");
    gr_report rep = {
        .ex = &ex, .submission = "x", .outcomes = o, .noutcomes = 2, .rubric = r, .runs = 3, .seconds = 10.5};
    char path[256];
    snprintf(path, sizeof path, "%s/results.json", dir);
    assert_int_equal(gr_report_json(path, &rep, err, sizeof err), RL_OK);
    gr_rubric_free(r);

    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    assert_non_null(root);
    assert_true(json_number_value(json_object_get(root, "score")) == 2.0);
    assert_true(json_number_value(json_object_get(root, "max_score")) == 5.0);
    assert_string_equal(json_string_value(json_object_get(json_object_get(root, "extra_data"), "exercise")), "ex");
    json_t *tests = json_object_get(root, "tests");
    assert_int_equal(json_array_size(tests), 2);
    json_t *t0 = json_array_get(tests, 0), *t1 = json_array_get(tests, 1);
    assert_string_equal(json_string_value(json_object_get(t0, "visibility")), "hidden");
    assert_null(json_object_get(t1, "visibility")); /* Gradescope's default applies */
    json_t *x1 = json_object_get(t1, "extra_data");
    assert_string_equal(json_string_value(json_object_get(x1, "scenario")), "b");
    assert_string_equal(json_string_value(json_object_get(x1, "verdict")), "TIMEOUT");
    assert_int_equal(json_integer_value(json_object_get(x1, "runs")), 3);
    assert_int_equal(json_integer_value(json_object_get(x1, "passed")), 2);
    assert_true(json_number_value(json_object_get(x1, "seconds")) == 9.0);
    assert_string_equal(json_string_value(json_object_get(x1, "feedback")), "took 5000 ms");
    json_decref(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(integer_points_still_load, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(object_entry_gives_points_and_visibility, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(every_gradescope_visibility_loads, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(bad_entries_are_refused_by_path, make_dir, remove_dir),
        cmocka_unit_test(the_shipped_rubric_checks_against_every_exercise),
        cmocka_unit_test_setup_teardown(results_json_carries_visibility_and_extra_data, make_dir, remove_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
