/* Unit tests for the rubric (grader/rubric.c) and results.json (report.c):
 * the integer form every rubric used stays valid, the object form adds a
 * Gradescope visibility, a bad entry is refused with its path named, a
 * regression guard's points ("needs") count only with the lesson it guards,
 * and results.json carries the visibility, the measured extra_data and why
 * points were held. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "exercise.h"
#include "report.h"
#include "rubric.h"
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

static const gr_scenario scenarios[] = {{"a", "first", noop, 0, 0}, {"b", "second", noop, 0, 0}};
static const gr_exercise ex = {.name = "ex",
                               .summary = "a test exercise",
                               .kind = GR_SUBMISSION_COMMAND,
                               .baselines = 1,
                               .instances = 1,
                               .scenarios = scenarios,
                               .nscenarios = 2};

static const gr_scenario three[] = {
    {"lesson", "the lesson", noop, 0, 0}, {"guard", "a guard", noop, 0, 0}, {"other", "another", noop, 0, 0}};
static const gr_exercise ex3 = {.name = "ex",
                                .summary = "three scenarios",
                                .kind = GR_SUBMISSION_COMMAND,
                                .baselines = 1,
                                .instances = 1,
                                .scenarios = three,
                                .nscenarios = 3};

static void needs_must_name_another_scenario_that_needs_none(void **state)
{
    (void)state;
    static const struct {
        const char *text, *says;
    } cases[] = {
        {"{\"ex\": {\"lesson\": 1, \"guard\": {\"points\": 1, \"needs\": \"nosuch\"}, \"other\": 1}}",
         "ex/guard needs \"nosuch\""},
        {"{\"ex\": {\"lesson\": 1, \"guard\": {\"points\": 1, \"needs\": \"guard\"}, \"other\": 1}}",
         "ex/guard needs \"guard\""},
        /* a chain: other needs guard, which needs lesson */
        {"{\"ex\": {\"lesson\": 1, \"guard\": {\"points\": 1, \"needs\": \"lesson\"},"
         " \"other\": {\"points\": 1, \"needs\": [\"guard\"]}}}",
         "ex/other needs \"guard\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        gr_rubric *r = NULL;
        char err[512] = "";
        assert_int_equal(load(cases[i].text, &r, err, sizeof err), RL_OK);
        assert_int_equal(gr_rubric_check(r, &ex3, err, sizeof err), RL_EPARSE);
        if (!strstr(err, cases[i].says))
            fail_msg("case %zu: '%s' does not say '%s'", i, err, cases[i].says);
        gr_rubric_free(r);
    }
    const char *bad[] = {"{\"ex\": {\"guard\": {\"points\": 1, \"needs\": 3}}}",
                         "{\"ex\": {\"guard\": {\"points\": 1, \"needs\": []}}}",
                         "{\"ex\": {\"guard\": {\"points\": 1, \"needs\": [\"lesson\", 2]}}}"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        gr_rubric *r = NULL;
        char err[512] = "";
        assert_int_equal(load(bad[i], &r, err, sizeof err), RL_EPARSE);
        assert_non_null(strstr(err, "needs must be a scenario id or an array of them"));
    }
}

/* Outcomes of ex3: the lesson passed or not (|lesson_runs| 0: not run). */
static size_t outcomes3(gr_outcome o[3], int lesson_runs, int lesson_passed)
{
    memset(o, 0, 3 * sizeof *o);
    size_t n = 0;
    if (lesson_runs)
        o[n++] = (gr_outcome){.scenario = &three[0], .runs = lesson_runs, .passed = lesson_passed};
    o[n++] = (gr_outcome){.scenario = &three[1], .runs = 1, .passed = 1, .verdict = GR_PASS};
    o[n++] = (gr_outcome){.scenario = &three[2], .runs = 1, .passed = 1, .verdict = GR_PASS};
    return n;
}

static void a_guard_scores_only_with_the_lesson_it_needs(void **state)
{
    (void)state;
    gr_rubric *r = NULL;
    char err[512] = "", note[GR_POINTS_NOTE_MAX];
    assert_int_equal(load("{\"ex\": {\"lesson\": 4, \"guard\": {\"points\": 2, \"needs\": \"lesson\"},"
                          " \"other\": 1}}",
                          &r, err, sizeof err),
                     RL_OK);
    assert_int_equal(gr_rubric_check(r, &ex3, err, sizeof err), RL_OK);
    gr_outcome o[3];
    gr_points p;
    double score, max;
    /* the lesson passed: the guard scores */
    gr_report rep = {.ex = &ex3, .outcomes = o, .noutcomes = outcomes3(o, 1, 1), .rubric = r, .runs = 1};
    gr_rubric_earned(rep.rubric, rep.ex, rep.outcomes, rep.noutcomes, &o[1], &p);
    assert_true(p.earned == 2.0 && p.max == 2.0);
    assert_string_equal(gr_rubric_held_note(rep.rubric, rep.ex, rep.outcomes, rep.noutcomes, &o[1], note, sizeof note),
                        "");
    gr_report_score(&rep, &score, &max);
    assert_true(score == 7.0 && max == 7.0);
    /* the lesson failed (one run of two): the guard's points are held, and
     * the note says why; a scenario that needs nothing still scores */
    rep.noutcomes = outcomes3(o, 2, 1);
    gr_rubric_earned(rep.rubric, rep.ex, rep.outcomes, rep.noutcomes, &o[1], &p);
    assert_true(p.earned == 0.0 && p.max == 2.0);
    assert_string_equal(p.held_for, "lesson");
    assert_non_null(
        strstr(gr_rubric_held_note(rep.rubric, rep.ex, rep.outcomes, rep.noutcomes, &o[1], note, sizeof note),
               "count once lesson passes"));
    gr_report_score(&rep, &score, &max);
    assert_true(score == 1.0 && max == 7.0);
    /* the lesson not run (--only guard): held too */
    rep.noutcomes = outcomes3(o, 0, 0);
    gr_rubric_earned(rep.rubric, rep.ex, rep.outcomes, rep.noutcomes, &o[0], &p);
    assert_true(p.earned == 0.0 && p.max == 2.0);
    /* a guard that failed itself is not "held": it earned nothing */
    rep.noutcomes = outcomes3(o, 1, 0);
    o[1].passed = 0;
    gr_rubric_earned(rep.rubric, rep.ex, rep.outcomes, rep.noutcomes, &o[1], &p);
    assert_true(p.earned == 0.0 && p.held_for[0] == '\0');
    gr_rubric_free(r);
}

#define LONG_ID(c)                                                                                                     \
    c "-lesson-with-a-name-long-enough-that-two-of-them-do-not-fit-in-the-note-of-held-points-at-all-xxxxxxx"
static const gr_scenario longs[] = {
    {LONG_ID("a"), "a", noop, 0, 0}, {LONG_ID("b"), "b", noop, 0, 0}, {"guard", "g", noop, 0, 0}};
static const gr_exercise exl = {.name = "ex",
                                .summary = "long ids",
                                .kind = GR_SUBMISSION_COMMAND,
                                .baselines = 1,
                                .instances = 1,
                                .scenarios = longs,
                                .nscenarios = 3};

static void held_names_that_do_not_fit_are_cut(void **state)
{
    (void)state;
    gr_rubric *r = NULL;
    char err[512] = "";
    assert_int_equal(load("{\"ex\": {\"" LONG_ID("a") "\": 1, \"" LONG_ID("b") "\": 1, \"guard\": {\"points\": 2, "
                                                                               "\"needs\": [\"" LONG_ID(
                                                                                   "a") "\", \"" LONG_ID("b") "\"]}}}",
                          &r, err, sizeof err),
                     RL_OK);
    assert_int_equal(gr_rubric_check(r, &exl, err, sizeof err), RL_OK);
    gr_outcome o[3];
    memset(o, 0, sizeof o);
    for (size_t i = 0; i < 3; i++)
        o[i] = (gr_outcome){.scenario = &longs[i], .runs = 1, .passed = i == 2};
    gr_points p;
    gr_rubric_earned(r, &exl, o, 3, &o[2], &p);
    assert_true(p.earned == 0.0 && p.max == 2.0);
    assert_int_equal(strlen(p.held_for), sizeof p.held_for - 1);
    assert_int_equal(strncmp(p.held_for, LONG_ID("a"), strlen(LONG_ID("a"))), 0);
    gr_rubric_free(r);
}

static void results_json_says_why_points_were_held(void **state)
{
    (void)state;
    gr_rubric *r = NULL;
    char err[512] = "";
    assert_int_equal(load("{\"ex\": {\"lesson\": 4, \"guard\": {\"points\": 2, \"needs\": [\"lesson\"]},"
                          " \"other\": 1}}",
                          &r, err, sizeof err),
                     RL_OK);
    gr_outcome o[3];
    gr_report rep = {
        .ex = &ex3, .submission = "x", .outcomes = o, .noutcomes = outcomes3(o, 1, 0), .rubric = r, .runs = 1};
    snprintf(o[1].feedback, sizeof o[1].feedback, "refused at once");
    char path[256];
    snprintf(path, sizeof path, "%s/results.json", dir);
    assert_int_equal(gr_report_json(path, &rep, err, sizeof err), RL_OK);
    gr_rubric_free(r);
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    assert_non_null(root);
    assert_true(json_number_value(json_object_get(root, "score")) == 1.0);
    json_t *t = json_array_get(json_object_get(root, "tests"), 1);
    assert_true(json_number_value(json_object_get(t, "score")) == 0.0);
    assert_string_equal(json_string_value(json_object_get(t, "status")), "passed");
    const char *output = json_string_value(json_object_get(t, "output"));
    assert_non_null(strstr(output, "PASS (its 2 points count once lesson passes"));
    assert_non_null(strstr(output, "refused at once"));
    assert_non_null(json_object_get(json_object_get(t, "extra_data"), "points_held"));
    json_decref(root);
}

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

/* An exercise that leaves its baselines to its scenarios must be a config
 * one: a command submission is given the baselines' addresses at its
 * start, before any scenario could start them (exercise.h). */
static void only_config_exercises_start_baselines_in_their_scenarios(void **state)
{
    (void)state;
    int by_scenario = 0;
    for (size_t i = 0; gr_exercises[i]; i++) {
        if (!gr_exercises[i]->baselines_by_scenario)
            continue;
        by_scenario++;
        if (gr_exercises[i]->kind != GR_SUBMISSION_CONFIG)
            fail_msg("%s starts its baselines in its scenarios but grades a command", gr_exercises[i]->name);
    }
    assert_int_equal(by_scenario, 2); /* balance and keepalive */
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
    o[1] = (gr_outcome){.scenario = &scenarios[1],
                        .runs = 3,
                        .passed = 2,
                        .verdict = GR_TIMEOUT,
                        .seconds = 9,
                        .cpu_grader_s = 0.5,
                        .cpu_others_s = 1.25};
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
    assert_true(json_number_value(json_object_get(x1, "cpu_grader_seconds")) == 0.5);
    assert_true(json_number_value(json_object_get(x1, "cpu_others_seconds")) == 1.25);
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
        cmocka_unit_test_setup_teardown(needs_must_name_another_scenario_that_needs_none, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(a_guard_scores_only_with_the_lesson_it_needs, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(held_names_that_do_not_fit_are_cut, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(results_json_says_why_points_were_held, make_dir, remove_dir),
        cmocka_unit_test(the_shipped_rubric_checks_against_every_exercise),
        cmocka_unit_test(only_config_exercises_start_baselines_in_their_scenarios),
        cmocka_unit_test_setup_teardown(results_json_carries_visibility_and_extra_data, make_dir, remove_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
