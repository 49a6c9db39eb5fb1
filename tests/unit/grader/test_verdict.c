/* Unit tests for the verdict: gr_result fills the verdict and a printable
 * one-line feedback, marks text cut at GR_FEEDBACK_MAX, gr_feedback_append
 * separates and marks the same way, gr_last_lines puts the end of an
 * output on one line, and the crash wording names the thread limit only
 * when the output says a thread could not start. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "verdict.h"

#include <stdio.h>
#include <string.h>

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && strcmp(s + n - m, tail) == 0;
}

static void result_fills_verdict_and_feedback(void **state)
{
    (void)state;
    gr_scenario_result out;
    memset(&out, 0, sizeof out);
    assert_int_equal(gr_result(&out, GR_TIMEOUT, "no answer within %d ms", 5000), GR_DECIDED);
    assert_int_equal(out.verdict, GR_TIMEOUT);
    assert_string_equal(out.feedback, "no answer within 5000 ms");
}

static void result_makes_quoted_text_printable(void **state)
{
    (void)state;
    gr_scenario_result out;
    memset(&out, 0, sizeof out);
    gr_result(&out, GR_FAIL, "said %s", "a\033[31mred\r\nline");
    assert_null(strchr(out.feedback, '\033'));
    assert_null(strchr(out.feedback, '\r'));
    assert_null(strchr(out.feedback, '\n'));
    assert_non_null(strstr(out.feedback, "red"));
}

static void result_marks_cut_feedback(void **state)
{
    (void)state;
    static char big[GR_FEEDBACK_MAX * 2];
    memset(big, 'x', sizeof big - 1);
    gr_scenario_result out;
    memset(&out, 0, sizeof out);
    gr_result(&out, GR_FAIL, "%s", big);
    assert_int_equal(strlen(out.feedback), GR_FEEDBACK_MAX - 1);
    assert_true(ends_with(out.feedback, GR_FEEDBACK_CUT));
    /* Exactly full is not cut. */
    big[GR_FEEDBACK_MAX - 1] = '\0';
    gr_result(&out, GR_FAIL, "%s", big);
    assert_int_equal(strlen(out.feedback), GR_FEEDBACK_MAX - 1);
    assert_false(ends_with(out.feedback, GR_FEEDBACK_CUT));
}

static void append_separates_with_a_semicolon(void **state)
{
    (void)state;
    gr_scenario_result out;
    memset(&out, 0, sizeof out);
    gr_feedback_append(&out, "first");
    assert_string_equal(out.feedback, "first");
    gr_feedback_append(&out, "second\nline");
    assert_string_equal(out.feedback, "first; second\\nline");
}

static void append_marks_what_does_not_fit(void **state)
{
    (void)state;
    static char big[GR_FEEDBACK_MAX];
    memset(big, 'y', sizeof big - 1);
    gr_scenario_result out;
    memset(&out, 0, sizeof out);
    gr_result(&out, GR_PASS, "start");
    gr_feedback_append(&out, big);
    assert_int_equal(strlen(out.feedback), GR_FEEDBACK_MAX - 1);
    assert_true(ends_with(out.feedback, GR_FEEDBACK_CUT));
    assert_int_equal(strncmp(out.feedback, "start; y", 8), 0);
    /* Full: a further append changes nothing. */
    char before[GR_FEEDBACK_MAX];
    memcpy(before, out.feedback, sizeof before);
    gr_feedback_append(&out, "more");
    assert_string_equal(out.feedback, before);
}

static void last_lines_joins_and_drops_the_start(void **state)
{
    (void)state;
    char buf[64];
    gr_last_lines("one\ntwo\n\n", buf, sizeof buf, 100);
    assert_string_equal(buf, "one | two");
    gr_last_lines("0123456789abcdef\n", buf, sizeof buf, 6);
    assert_string_equal(buf, "...abcdef");
    gr_last_lines("", buf, sizeof buf, 10);
    assert_string_equal(buf, "");
    /* A stack's tail keeps the line that says why (a Node module missing). */
    char wide[200];
    gr_last_lines("node:internal/modules/cjs/loader:1080\n  throw err;\n\nError: Cannot find module '@grpc/grpc-js'\n"
                  "Require stack:\n- /s/relay.js\n    at Module._resolveFilename (node:internal:1077:15)\n"
                  "    at Module._load (node:internal:922:27)\n    at Object.<anonymous> (/s/relay.js:3:14)\n"
                  "Node.js v18.19.0\n",
                  wide, sizeof wide, 120);
    assert_non_null(strstr(wide, "Error: Cannot find module '@grpc/grpc-js' | ..."));
    assert_non_null(strstr(wide, "Node.js v18.19.0"));
    assert_true(strlen(wide) <= 130);
    char small[8];
    gr_last_lines("a long line of output", small, sizeof small, 100);
    assert_true(strlen(small) < sizeof small);
}

static void crash_wording_quotes_the_output(void **state)
{
    (void)state;
    gr_scenario_result out;
    memset(&out, 0, sizeof out);
    gr_crash_result(&out, "the submission", "was killed by SIGSEGV", "during Process", "listening\nboom\n", 64);
    assert_int_equal(out.verdict, GR_CRASH);
    assert_string_equal(out.feedback,
                        "the submission was killed by SIGSEGV during Process; last output: listening | boom");
    gr_crash_result(&out, "instance 2 of the submission", "exited with status 3", "during the scenario", "", 64);
    assert_string_equal(out.feedback, "instance 2 of the submission exited with status 3 during the scenario");
}

static void crash_wording_names_the_thread_limit(void **state)
{
    (void)state;
    const char *tails[] = {"RuntimeError: can't start new thread\n", "pthread_create failed: EAGAIN\n",
                           "uv_thread_create: resource busy\n", "Thread creation failed\n"};
    for (size_t i = 0; i < sizeof tails / sizeof *tails; i++) {
        gr_scenario_result out;
        memset(&out, 0, sizeof out);
        gr_crash_result(&out, "the submission", "exited with status 1", "during Process", tails[i], 64);
        assert_int_equal(out.verdict, GR_CRASH);
        assert_non_null(strstr(out.feedback, "past the sandbox's limit of 64 tasks"));
        assert_non_null(strstr(out.feedback, "a thread per call or stream?"));
    }
}

static void worst_run_wins(void **state)
{
    (void)state;
    assert_int_equal(gr_verdict_worse(GR_PASS, GR_FAIL), GR_FAIL);
    assert_int_equal(gr_verdict_worse(GR_CRASH, GR_FAIL), GR_CRASH);
    assert_int_equal(gr_verdict_worse(GR_TIMEOUT, GR_PASS), GR_TIMEOUT);
    assert_string_equal(gr_verdict_name(GR_NOT_READY), "NOT-READY");
}

static void points_only_when_every_run_passed(void **state)
{
    (void)state;
    assert_true(gr_verdict_points(20, 20, 4.0) == 4.0);
    assert_true(gr_verdict_points(20, 19, 4.0) == 0.0);
    assert_true(gr_verdict_points(0, 0, 4.0) == 0.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(result_fills_verdict_and_feedback),
        cmocka_unit_test(result_makes_quoted_text_printable),
        cmocka_unit_test(result_marks_cut_feedback),
        cmocka_unit_test(append_separates_with_a_semicolon),
        cmocka_unit_test(append_marks_what_does_not_fit),
        cmocka_unit_test(last_lines_joins_and_drops_the_start),
        cmocka_unit_test(crash_wording_quotes_the_output),
        cmocka_unit_test(crash_wording_names_the_thread_limit),
        cmocka_unit_test(worst_run_wins),
        cmocka_unit_test(points_only_when_every_run_passed),
    };
    return cmocka_run_group_tests_name("verdict", tests, NULL, NULL);
}
