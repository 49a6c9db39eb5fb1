/* Unit tests for gRPC's own verdict on a channel config: a real gRPC 1.51
 * channel to a loopback port nobody listens on. Each probe takes a few ms
 * (a refused connection), at most the 1 s deadline given. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "chancfg/rl_chancfg.h"

#define RETRY(fields)                                                                                                  \
    "{\"client\": {\"service_config\": {\"methodConfig\": [{\"name\": [{\"service\": "                                 \
    "\"relaylab.Baseline\"}], \"retryPolicy\": {" fields "}}]}}}"

static rl_chancfg_verdict verdict(const char *text)
{
    rl_chancfg *cfg;
    assert_int_equal(rl_chancfg_parse(text, strlen(text), &cfg, NULL), 0);
    rl_chancfg_verdict v;
    assert_int_equal(rl_chancfg_grpc_verdict(cfg, 1000, &v), 0);
    rl_chancfg_free(cfg);
    return v;
}

static void test_grpc_accepts_a_good_retry_policy(void **state)
{
    (void)state;
    rl_chancfg_verdict v = verdict(RETRY("\"maxAttempts\": 3, \"initialBackoff\": \"0.1s\", "
                                         "\"maxBackoff\": \"1s\", \"backoffMultiplier\": 2, "
                                         "\"retryableStatusCodes\": [\"UNAVAILABLE\"]"));
    assert_true(v.accepted);
    /* Refused connection, maybe after retries, or out of time. */
    assert_true(v.status == GRPC_STATUS_UNAVAILABLE || v.status == GRPC_STATUS_DEADLINE_EXCEEDED);
    assert_string_equal(v.reason, "");
}

static void test_grpc_rejects_max_attempts_1_and_says_why(void **state)
{
    (void)state;
    rl_chancfg_verdict v = verdict(RETRY("\"maxAttempts\": 1, \"initialBackoff\": \"0.1s\", "
                                         "\"maxBackoff\": \"1s\", \"backoffMultiplier\": 2, "
                                         "\"retryableStatusCodes\": [\"UNAVAILABLE\"]"));
    assert_false(v.accepted);
    assert_int_equal(v.status, GRPC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(v.reason, "maxAttempts"));
    assert_non_null(strstr(v.reason, "at least 2"));
    assert_null(strstr(v.reason, "channel stack builder failed")); /* prefix cut */
}

static void test_grpc_rejects_numeric_status_codes(void **state)
{
    (void)state;
    rl_chancfg_verdict v = verdict(RETRY("\"maxAttempts\": 3, \"initialBackoff\": \"0.1s\", "
                                         "\"maxBackoff\": \"1s\", \"backoffMultiplier\": 2, "
                                         "\"retryableStatusCodes\": [14]"));
    assert_false(v.accepted);
    assert_non_null(strstr(v.reason, "retryableStatusCodes"));
}

static void test_grpc_clamp_is_reported_with_acceptance(void **state)
{
    (void)state;
    rl_chancfg_verdict v = verdict(RETRY("\"maxAttempts\": 9, \"initialBackoff\": \"0.1s\", "
                                         "\"maxBackoff\": \"1s\", \"backoffMultiplier\": 2, "
                                         "\"retryableStatusCodes\": [\"UNAVAILABLE\"]"));
    assert_true(v.accepted);
    assert_non_null(strstr(v.reason, "clamped"));
}

static void test_grpc_judges_a_service_config_the_checker_refuses(void **state)
{
    (void)state;
    /* A string where an object belongs: the checker says sc.type, and the
     * probe still passes it on so gRPC can give its own verdict. */
    rl_chancfg_verdict v = verdict("{\"client\": {\"service_config\": \"{\\\"methodConfig\\\": 5}\"}}");
    assert_false(v.accepted);
    assert_non_null(strstr(v.reason, "methodConfig"));
}

static void test_grpc_accepts_no_service_config(void **state)
{
    (void)state;
    rl_chancfg_verdict v = verdict("{\"client\": {\"grpc.keepalive_time_ms\": 60000}}");
    assert_true(v.accepted);
    assert_int_equal(v.status, GRPC_STATUS_UNAVAILABLE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grpc_accepts_a_good_retry_policy),
        cmocka_unit_test(test_grpc_rejects_max_attempts_1_and_says_why),
        cmocka_unit_test(test_grpc_rejects_numeric_status_codes),
        cmocka_unit_test(test_grpc_clamp_is_reported_with_acceptance),
        cmocka_unit_test(test_grpc_judges_a_service_config_the_checker_refuses),
        cmocka_unit_test(test_grpc_accepts_no_service_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
