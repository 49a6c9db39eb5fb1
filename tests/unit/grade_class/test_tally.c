/* Unit tests for the tally: verdicts come from the grader's extra_data, a
 * scenario the file does not grade is an ERROR row, rows sort the same
 * whatever order the graders finished in, the CSV quotes what needs it, a
 * student's results.json adds up, and the summary names the most common
 * failing scenario with its most common feedback; an interrupted batch's
 * summary says it is partial and counts only what was graded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "rl_err.h"
#include "tally.h"
#include "rl_test_dir.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

RL_TEST_DIR("tally")

static gc_exercise ex[1];

static void setup_exercise(void)
{
    memset(ex, 0, sizeof ex);
    strcpy(ex[0].name, "deadline");
    ex[0].nscenarios = 2;
    strcpy(ex[0].scenarios[0], "shrinks");
    strcpy(ex[0].scenarios[1], "none");
    ex[0].points[0] = 4;
    ex[0].points[1] = 2;
}

/* A grader results.json: shrinks with |v0| and the given feedback, none
 * PASS unless |only_one|. */
static const char *results(const char *name, const char *v0, const char *fb, bool only_one)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char text[2048];
    snprintf(text, sizeof text,
             "{\"score\": 0, \"tests\": ["
             "{\"name\": \"deadline/shrinks: x\", \"score\": %d, \"max_score\": 4, \"status\": \"x\","
             " \"extra_data\": {\"scenario\": \"shrinks\", \"verdict\": \"%s\", \"runs\": 1, \"passed\": %d,"
             " \"seconds\": 1.5, \"feedback\": \"%s\"}}%s]}",
             strcmp(v0, "PASS") ? 0 : 4, v0, strcmp(v0, "PASS") == 0, fb,
             only_one ? ""
                      : ",{\"name\": \"deadline/none: y\", \"score\": 2, \"max_score\": 2, \"status\": \"passed\","
                        " \"extra_data\": {\"scenario\": \"none\", \"verdict\": \"PASS\", \"runs\": 1, \"passed\": 1,"
                        " \"seconds\": 0.5, \"feedback\": \"ok\"}}");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void verdicts_come_from_extra_data(void **state)
{
    (void)state;
    setup_exercise();
    gc_tally t;
    gc_tally_init(&t, ex, 1);
    assert_int_equal(gc_tally_add_results(&t, "amy", 0, results("a.json", "TIMEOUT", "no answer", false)), RL_OK);
    assert_int_equal(t.n, 2);
    assert_string_equal(t.rows[0].verdict, "TIMEOUT");
    assert_true(t.rows[0].points == 0 && t.rows[0].max_points == 4);
    assert_string_equal(t.rows[1].verdict, "PASS");
    assert_true(t.rows[1].points == 2);
    gc_tally_fini(&t);
}

static void an_ungraded_scenario_is_an_error_row(void **state)
{
    (void)state;
    setup_exercise();
    gc_tally t;
    gc_tally_init(&t, ex, 1);
    gc_tally_add_results(&t, "amy", 0, results("a.json", "PASS", "ok", true));
    char missing[256];
    snprintf(missing, sizeof missing, "%s/none.json", dir);
    assert_int_equal(gc_tally_add_results(&t, "bob", 0, missing), RL_EPARSE);
    assert_int_equal(t.n, 4);
    assert_string_equal(t.rows[1].verdict, "ERROR"); /* amy's none: not in the file */
    assert_string_equal(t.rows[2].verdict, "ERROR");
    assert_non_null(strstr(t.rows[2].feedback, "no readable results"));
    gc_tally_fini(&t);
}

static void rows_sort_whatever_the_finishing_order(void **state)
{
    (void)state;
    setup_exercise();
    gc_tally a, b;
    gc_tally_init(&a, ex, 1);
    gc_tally_init(&b, ex, 1);
    gc_tally_add_all(&a, "zed", 0, "MISSING", "m");
    gc_tally_add_results(&a, "amy", 0, results("a.json", "FAIL", "f", false));
    gc_tally_add_results(&b, "amy", 0, results("a.json", "FAIL", "f", false));
    gc_tally_add_all(&b, "zed", 0, "MISSING", "m");
    gc_tally_sort(&a);
    gc_tally_sort(&b);
    char pa[256], pb[256];
    snprintf(pa, sizeof pa, "%s/a.csv", dir);
    snprintf(pb, sizeof pb, "%s/b.csv", dir);
    assert_int_equal(gc_tally_write_csv(&a, pa), RL_OK);
    assert_int_equal(gc_tally_write_csv(&b, pb), RL_OK);
    char first[8192];
    snprintf(first, sizeof first, "%s", slurp(pa));
    assert_string_equal(first, slurp(pb));
    assert_true(strncmp(first + strlen("student,exercise,scenario,verdict,points,max_points,runs,passed,feedback\r\n"),
                        "amy,deadline,shrinks,FAIL,0,4,1,0,f\r\n", 34) == 0);
    gc_tally_fini(&a);
    gc_tally_fini(&b);
}

static void csv_quotes_commas_quotes_and_lines(void **state)
{
    (void)state;
    setup_exercise();
    gc_tally t;
    gc_tally_init(&t, ex, 1);
    gc_tally_add_all(&t, "amy", 0, "ERROR", "a, \"b\"\nc");
    /* A student's folder name and feedback with escape sequences and line
     * breaks: one printable row each (rl_text.h), never a fake row or a
     * terminal command for whoever prints the file. */
    gc_tally_add_all(&t, "bob\x1b[2J\r", 0, "FAIL", "x\x1b[1A\ry");
    char p[256];
    snprintf(p, sizeof p, "%s/t.csv", dir);
    assert_int_equal(gc_tally_write_csv(&t, p), RL_OK);
    const char *csv = slurp(p);
    assert_non_null(strstr(csv, "amy,deadline,shrinks,ERROR,0,4,0,0,\"a, \"\"b\"\"\\nc\"\r\n"));
    assert_non_null(strstr(csv, "bob\\x1b[2J\\r,deadline,shrinks,FAIL,0,4,0,0,x\\x1b[1A\\ry\r\n"));
    assert_null(strchr(csv, '\x1b'));
    gc_tally_fini(&t);
}

/* OWASP's CSV injection rule: a text cell that begins with = + - @, tab
 * or carriage return is shown as text (a leading '), never evaluated. */
static void csv_neutralises_formulas(void **state)
{
    (void)state;
    setup_exercise();
    gc_tally t;
    gc_tally_init(&t, ex, 1);
    gc_tally_add_all(&t, "+1+1", 0, "ERROR", "=HYPERLINK(\"http://x\",\"y\")");
    gc_tally_add_all(&t, "-2+3", 0, "FAIL", "@SUM(A1)");
    gc_tally_add_all(&t, "@A1", 0, "FAIL", "\t-1");
    gc_tally_add_all(&t, "zoe", 0, "FAIL", "\r+1");
    gc_tally_add_all(&t, "amy", 0, "FAIL", "a=1, fine");
    char p[256];
    snprintf(p, sizeof p, "%s/f.csv", dir);
    assert_int_equal(gc_tally_write_csv(&t, p), RL_OK);
    const char *csv = slurp(p);
    assert_non_null(
        strstr(csv, "'+1+1,deadline,shrinks,ERROR,0,4,0,0,\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"\r\n"));
    assert_non_null(strstr(csv, "'-2+3,deadline,shrinks,FAIL,0,4,0,0,'@SUM(A1)\r\n"));
    /* A tab or CR was made printable first (\t, \r by name): a backslash
     * begins the cell, which no spreadsheet evaluates. */
    assert_non_null(strstr(csv, "'@A1,deadline,shrinks,FAIL,0,4,0,0,\\t-1\r\n"));
    assert_non_null(strstr(csv, "zoe,deadline,shrinks,FAIL,0,4,0,0,\\r+1\r\n"));
    assert_non_null(strstr(csv, "amy,deadline,shrinks,FAIL,0,4,0,0,\"a=1, fine\"\r\n"));
    /* No line's first cell, and no cell after a comma, starts a formula. */
    for (const char *l = csv; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l))
        assert_null(strchr("=+-@", *l) && *l ? l : NULL);
    gc_tally_fini(&t);
}

static void student_results_add_up(void **state)
{
    (void)state;
    setup_exercise();
    ex[0].visibility[0][0] = '\0';
    strcpy(ex[0].visibility[1], "after_due_date");
    gc_tally t;
    gc_tally_init(&t, ex, 1);
    gc_tally_add_all(&t, "amy", 0, "MISSING", "no folder");
    char p[256];
    snprintf(p, sizeof p, "%s/r.json", dir);
    char *paths[1] = {NULL};
    assert_int_equal(gc_tally_write_student(&t, "amy", NULL, paths, p), RL_OK);
    json_t *root = json_load_file(p, 0, NULL);
    assert_non_null(root);
    assert_true(json_number_value(json_object_get(root, "max_score")) == 6);
    assert_true(json_number_value(json_object_get(root, "score")) == 0);
    json_t *tests = json_object_get(root, "tests");
    assert_int_equal(json_array_size(tests), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(tests, 1), "visibility")), "after_due_date");
    assert_string_equal(json_string_value(json_object_get(json_array_get(tests, 0), "status")), "failed");
    json_decref(root);
    gc_tally_fini(&t);
}

/* |t| sorted and summarised (a 12 s batch at --jobs 2), as the file's text. */
static const char *summary_of(gc_tally *t)
{
    gc_tally_sort(t);
    char p[256];
    snprintf(p, sizeof p, "%s/s.txt", dir);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    gc_tally_summary(t, f, 12, 2);
    fclose(f);
    return slurp(p);
}

static void summary_names_the_most_common_failure(void **state)
{
    (void)state;
    setup_exercise();
    gc_tally t;
    gc_tally_init(&t, ex, 1);
    gc_tally_add_results(&t, "amy", 0, results("a.json", "FAIL", "dropped", false));
    gc_tally_add_results(&t, "bob", 0, results("b.json", "FAIL", "got 2019 ms, 1457.5 ms left: forwarded", false));
    gc_tally_add_results(&t, "cat", 0, results("c.json", "FAIL", "got 2003 ms, 1480 ms left: forwarded", false));
    gc_tally_add_results(&t, "dan", 0, results("d.json", "PASS", "ok", false));
    const char *s = summary_of(&t);
    assert_non_null(strstr(s, "4 students"));
    assert_non_null(
        strstr(s, "most common failing scenario: deadline/shrinks, failed by 3 of the 4 students graded on it"));
    assert_non_null(strstr(s, "its most common feedback (2 of them, numbers aside), e.g.: got 2019 ms, 1457.5 ms left: "
                              "forwarded"));
    assert_non_null(strstr(s, "   30- 39 %    3 ###\n")); /* 2 of 6 points each */
    assert_non_null(strstr(s, "    100 %    1 #"));
    gc_tally_fini(&t);
}

static void a_partial_summary_says_so_and_counts_only_the_graded(void **state)
{
    (void)state;
    setup_exercise();
    gc_tally t;
    gc_tally_init(&t, ex, 1);
    gc_tally_add_results(&t, "amy", 0, results("a.json", "FAIL", "dropped", false));
    gc_tally_add_results(&t, "bob", 0, results("b.json", "FAIL", "dropped", false));
    gc_tally_add_all(&t, "cat", 0, GC_NOT_GRADED, "not graded: interrupted");
    gc_tally_add_all(&t, "dan", 0, GC_NOT_GRADED, "not graded: interrupted");
    const char *s = summary_of(&t);
    assert_non_null(strstr(s, "partial: 2 of 4 gradings"));
    assert_non_null(strstr(s, "2 students with something graded, 4 verdicts"));
    assert_non_null(strstr(s, "failed by 2 of the 2 students graded on it"));
    assert_non_null(strstr(s, "mean 33 %"));
    assert_non_null(strstr(s, "    0-  9 %    0 \n")); /* the ungraded are not zeros */
    assert_non_null(strstr(s, "  deadline/shrinks                  0       2        0"));
    gc_tally_fini(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(verdicts_come_from_extra_data, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(an_ungraded_scenario_is_an_error_row, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(rows_sort_whatever_the_finishing_order, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(csv_quotes_commas_quotes_and_lines, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(csv_neutralises_formulas, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(student_results_add_up, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(summary_names_the_most_common_failure, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(a_partial_summary_says_so_and_counts_only_the_graded, make_dir, remove_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
