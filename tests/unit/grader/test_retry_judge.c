/* Unit tests for the retry exercise's rules (grader/retry_judge): why a
 * code would not be retried, in the order gRPC applies the config, a lame
 * channel, and each scenario's verdict chain, branch by branch, with its
 * exact feedback. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <grpc/status.h>

#include <stdio.h>
#include <string.h>

#include "retry_judge.h"

static char fb[GR_FEEDBACK_MAX];

#define BIT(c) (1u << (c))

/* The handout's policy: 4 attempts, UNAVAILABLE retryable. */
static gr_retry_facts facts(int fail_first, int code)
{
    gr_retry_facts f = {.policy = {.has_method = true,
                                   .has_retry = true,
                                   .max_attempts = 4,
                                   .retryable_codes = BIT(GRPC_STATUS_UNAVAILABLE)},
                        .budget_ms = 2000,
                        .fail_first = fail_first,
                        .code = code,
                        .numbered = true};
    return f;
}

static void why_not_retried_in_order(void **state)
{
    (void)state;
    char buf[160];
    gr_retry_policy p = {
        .has_method = true, .has_retry = true, .max_attempts = 4, .retryable_codes = BIT(GRPC_STATUS_UNAVAILABLE)};
    gr_retry_why_not_retried(&p, "Lookup", GRPC_STATUS_UNAVAILABLE, buf, sizeof buf);
    assert_string_equal(buf, "maxAttempts is 4");
    gr_retry_why_not_retried(&p, "Lookup", GRPC_STATUS_NOT_FOUND, buf, sizeof buf);
    assert_string_equal(buf, "NOT_FOUND is not in retryableStatusCodes");
    p.has_retry = false;
    gr_retry_why_not_retried(&p, "Work", GRPC_STATUS_UNAVAILABLE, buf, sizeof buf);
    assert_string_equal(buf, "no retryPolicy applies to relaylab.Baseline/Work (methodConfig name must match it)");
    p.has_retry = true;
    p.has_method = false;
    gr_retry_why_not_retried(&p, "Lookup", GRPC_STATUS_UNAVAILABLE, buf, sizeof buf);
    assert_true(strncmp(buf, "no retryPolicy applies to relaylab.Baseline/Lookup", 50) == 0);
    p.retries_off = true;
    gr_retry_why_not_retried(&p, "Lookup", GRPC_STATUS_UNAVAILABLE, buf, sizeof buf);
    assert_string_equal(buf, "grpc.enable_retries is 0, which switches every retryPolicy off");
}

static void lame_only_when_nothing_was_sent(void **state)
{
    (void)state;
    assert_false(gr_retry_lame(1, GRPC_STATUS_INVALID_ARGUMENT, "x", fb, sizeof fb));
    assert_false(gr_retry_lame(0, GRPC_STATUS_UNAVAILABLE, "x", fb, sizeof fb));
    assert_true(gr_retry_lame(0, GRPC_STATUS_INVALID_ARGUMENT, "bad service config", fb, sizeof fb));
    assert_string_equal(fb, "gRPC refused the service config: every call fails INVALID_ARGUMENT (\"bad service "
                            "config\") before it is sent; run bin/channel-config check for the reason");
}

static void retried_to_ok_each_branch(void **state)
{
    (void)state;
    gr_retry_facts f = facts(2, GRPC_STATUS_UNAVAILABLE);
    f.n = 3;
    f.status = GRPC_STATUS_OK;
    f.ms = 312;
    assert_int_equal(gr_retry_judge_retried_to_ok(&f, fb, sizeof fb), GR_PASS);
    assert_string_equal(fb, "UNAVAILABLE 2 times in a row, then OK: 3 attempts, the client got OK in 312 ms");
    f.numbered = false; /* attempts the client made itself, not gRPC's retries */
    assert_int_equal(gr_retry_judge_retried_to_ok(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "UNAVAILABLE 2 times in a row (the world's restarting backend), then OK: the baseline "
                            "saw 3 attempts and the client got OK; expected 3 attempts and OK: maxAttempts is 4");
    f.numbered = true;
    f.n = 4;
    assert_int_equal(gr_retry_judge_retried_to_ok(&f, fb, sizeof fb), GR_FAIL);
    f = facts(1, GRPC_STATUS_UNAVAILABLE);
    f.n = 1;
    f.status = GRPC_STATUS_UNAVAILABLE;
    f.policy.retryable_codes = 0;
    assert_int_equal(gr_retry_judge_retried_to_ok(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "UNAVAILABLE 1 time in a row (the world's restarting backend), then OK: the baseline saw "
                            "1 attempt and the client got UNAVAILABLE; expected 2 attempts and OK: UNAVAILABLE is not "
                            "in retryableStatusCodes");
    f.status = GRPC_STATUS_DEADLINE_EXCEEDED;
    f.n = 2;
    assert_int_equal(gr_retry_judge_retried_to_ok(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "the retries did not finish within the caller's 2000 ms deadline (2 attempts seen): the "
                            "backoff is too long for it");
}

static void answer_not_retried_each_branch(void **state)
{
    (void)state;
    gr_retry_facts f = facts(1, GRPC_STATUS_NOT_FOUND);
    f.n = 1;
    f.status = GRPC_STATUS_NOT_FOUND;
    assert_int_equal(gr_retry_judge_answer_not_retried(&f, fb, sizeof fb), GR_PASS);
    assert_string_equal(fb, "NOT_FOUND: 1 attempt, not retried");
    f.status = GRPC_STATUS_UNAVAILABLE;
    assert_int_equal(gr_retry_judge_answer_not_retried(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "NOT_FOUND: 1 attempt, but the client got UNAVAILABLE");
    f.n = 2;
    f.status = GRPC_STATUS_NOT_FOUND;
    assert_int_equal(gr_retry_judge_answer_not_retried(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "NOT_FOUND was tried 2 times: a request the server rejects fails the same way every time; "
                            "keep such codes out of retryableStatusCodes");
}

/* maxAttempts when UNAVAILABLE is retried, else 1. */
static void gives_up_after_max_attempts(void **state)
{
    (void)state;
    gr_retry_facts f = facts(100, GRPC_STATUS_UNAVAILABLE);
    f.n = 4;
    f.status = GRPC_STATUS_UNAVAILABLE;
    assert_int_equal(gr_retry_judge_gives_up(&f, fb, sizeof fb), GR_PASS);
    assert_string_equal(fb, "a persistent UNAVAILABLE: 4 attempts (maxAttempts 4, at most 5), then UNAVAILABLE");
    f.n = 3;
    assert_int_equal(gr_retry_judge_gives_up(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "a persistent UNAVAILABLE: the baseline saw 3 attempts, expected 4; the client got "
                            "UNAVAILABLE: maxAttempts is 4");
    f.n = 5;
    assert_int_equal(gr_retry_judge_gives_up(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "a persistent UNAVAILABLE: the baseline saw 5 attempts, expected 4; the client got "
                            "UNAVAILABLE");
    f.policy.retryable_codes = BIT(GRPC_STATUS_NOT_FOUND);
    f.n = 1;
    assert_int_equal(gr_retry_judge_gives_up(&f, fb, sizeof fb), GR_PASS);
    assert_string_equal(fb, "a persistent UNAVAILABLE: 1 attempts (maxAttempts 1), then UNAVAILABLE");
    f.status = GRPC_STATUS_DEADLINE_EXCEEDED;
    assert_int_equal(gr_retry_judge_gives_up(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "a persistent UNAVAILABLE: 1 attempts did not finish within the caller's 2000 ms "
                            "deadline: the backoff is too long for it");
}

static void work_once_and_committed_stream(void **state)
{
    (void)state;
    gr_retry_facts f = facts(1, GRPC_STATUS_UNAVAILABLE);
    f.n = 1;
    f.status = GRPC_STATUS_UNAVAILABLE;
    assert_int_equal(gr_retry_judge_work_once(&f, fb, sizeof fb), GR_PASS);
    assert_string_equal(fb, "Work failed UNAVAILABLE once: 1 attempt, the failure reached the caller");
    f.n = 2;
    f.status = GRPC_STATUS_OK;
    assert_int_equal(gr_retry_judge_work_once(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "Work was tried 2 times (client got OK): Work has effects and must run at most once; give "
                            "the retryPolicy to Lookup only");
    assert_int_equal(gr_retry_judge_committed_stream(1, 1, 0, GRPC_STATUS_UNAVAILABLE, fb, sizeof fb), GR_PASS);
    assert_string_equal(fb, "a stream that failed after its first message: 1 attempt, 1 message, UNAVAILABLE reached "
                            "the caller (the call had committed)");
    assert_int_equal(gr_retry_judge_committed_stream(2, 4, 1, GRPC_STATUS_OK, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "a stream that failed after its first message: 2 attempts, 4 messages (1 repeated), "
                            "status OK; a committed call must not be retried");
    assert_int_equal(gr_retry_judge_committed_stream(1, 1, 1, GRPC_STATUS_UNAVAILABLE, fb, sizeof fb), GR_FAIL);
    assert_int_equal(gr_retry_judge_committed_stream(0, 0, 0, GRPC_STATUS_INVALID_ARGUMENT, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "gRPC refused the service config: the Fetch call failed INVALID_ARGUMENT before it was "
                            "sent; run bin/channel-config check for the reason");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(why_not_retried_in_order),    cmocka_unit_test(lame_only_when_nothing_was_sent),
        cmocka_unit_test(retried_to_ok_each_branch),   cmocka_unit_test(answer_not_retried_each_branch),
        cmocka_unit_test(gives_up_after_max_attempts), cmocka_unit_test(work_once_and_committed_stream),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
