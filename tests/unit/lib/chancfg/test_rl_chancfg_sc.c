/* Unit tests for the checker's service config rules (rl_chancfg_sc: gRFC A6
 * and the retry policy of gRFC A6/A31) and the method lookup graders use:
 * every rule, once broken and once kept, as in test_rl_chancfg_rules.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "chancfg/rl_chancfg.h"
#include "chancfg_check.h"

/* ---- service config ---- */

#define MC "$.client.service_config.methodConfig[0]"
#define RP MC ".retryPolicy"

static void test_sc_must_be_object_not_string(void **state)
{
    (void)state;
    check("{'client': {'service_config': '{}'}}");
    expect("sc.type", E, "$.client.service_config", "not a string");
}

static void test_sc_method_config_must_be_array(void **state)
{
    (void)state;
    check("{'client': {'service_config': {'methodConfig': {'name': [{}]}}}}");
    expect("sc.type", E, "$.client.service_config.methodConfig", "array");
}

static void test_sc_wait_for_ready_is_boolean(void **state)
{
    (void)state;
    check("{'client': {'service_config': {'methodConfig': [{'name': [{}], 'waitForReady': 1}]}}}");
    expect("sc.type", E, MC ".waitForReady", NULL);
}

static void test_sc_unknown_field_suggests(void **state)
{
    (void)state;
    check("{'client': {'service_config': {'methodConfig': [{'name': [{}], 'retrypolicy': {}}]}}}");
    expect("sc.unknown-field", E, MC ".retrypolicy", "did you mean \"retryPolicy\"");
    check(RETRY(RP_OK ", 'maxAttempt': 3"));
    expect("sc.unknown-field", E, RP ".maxAttempt", "did you mean \"maxAttempts\"");
}

static void test_sc_name_missing(void **state)
{
    (void)state;
    check("{'client': {'service_config': {'methodConfig': [{'timeout': '1s'}]}}}");
    expect("sc.name-missing", E, MC ".name", NULL);
    check("{'client': {'service_config': {'methodConfig': [{'name': [{}], 'timeout': '1s'}]}}}");
    expect_clean();
}

static void test_sc_method_without_service(void **state)
{
    (void)state;
    check("{'client': {'service_config': {'methodConfig': [{'name': [{'method': 'Lookup'}]}]}}}");
    expect("sc.name-invalid", E, MC ".name[0]", NULL);
}

static void test_sc_duplicate_name(void **state)
{
    (void)state;
    check("{'client': {'service_config': {'methodConfig': [{'name': [{'service': "
          "'relaylab.Baseline'}]}, {'name': [{'service': 'relaylab.Baseline'}]}]}}}");
    expect("sc.duplicate-name", E, "$.client.service_config.methodConfig[1].name[0]", NULL);
    check("{'client': {'service_config': {'methodConfig': [{'name': [{}, {'service': ''}]}]}}}");
    expect("sc.duplicate-name", E, MC ".name[1]", "default");
}

static void test_sc_unknown_service_without_package(void **state)
{
    (void)state;
    check("{'client': {'service_config': {'methodConfig': [{'name': [{'service': 'Baseline'}]}]}}}");
    expect("sc.unknown-service", W, MC ".name[0]", "did you mean \"relaylab.Baseline\"");
}

static void test_sc_unknown_method(void **state)
{
    (void)state;
    check("{'client': {'service_config': {'methodConfig': [{'name': [{'service': "
          "'relaylab.Baseline', 'method': 'lookup'}]}]}}}");
    expect("sc.unknown-method", W, MC ".name[0]", "did you mean \"Lookup\"");
}

/* The checker's list of services comes from the generated descriptors; read
 * relaylab.proto itself here, so a service or method the list lacks (or a
 * build that generated no list) fails this test. */
static void test_sc_knows_every_method_of_the_proto(void **state)
{
    (void)state;
    char text[16384];
    read_repo_file("proto/relaylab.proto", text, sizeof(text));
    char config[8192] = "{'client': {'service_config': {'methodConfig': [{'name': [";
    char service[64] = "", word[64];
    size_t nnames = 0, nservices = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char *comment = strstr(line, "//");
        if (comment)
            *comment = '\0';
        /* "service X {" and "rpc Y(" may share a line ("service Relay { rpc Process(...) }"). */
        char *p = line;
        int used;
        while (sscanf(p, " %63[A-Za-z0-9_]%n", word, &used) == 1) {
            p += used;
            if (strcmp(word, "service") == 0 && sscanf(p, " %63[A-Za-z0-9_]%n", service, &used) == 1) {
                p += used;
                nservices++;
            } else if (strcmp(word, "rpc") == 0 && service[0] && sscanf(p, " %63[A-Za-z0-9_]%n", word, &used) == 1) {
                p += used;
                size_t len = strlen(config);
                snprintf(config + len, sizeof(config) - len, "%s{'service': 'relaylab.%s', 'method': '%s'}",
                         nnames++ ? ", " : "", service, word);
            }
            while (*p && !((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || *p == '_'))
                p++;
        }
    }
    assert_true(nservices >= 4); /* the proto's services today: the parse found them */
    assert_true(nnames >= 8);
    size_t len = strlen(config);
    snprintf(config + len, sizeof(config) - len, "]}]}}}");
    check(config);
    expect_none("sc.unknown-service");
    expect_none("sc.unknown-method");
    expect_clean();
}

static void test_sc_timeout_duration(void **state)
{
    (void)state;
    check("{'client': {'service_config': {'methodConfig': [{'name': [{}], 'timeout': '1'}]}}}");
    expect("sc.duration", E, MC ".timeout", "no \"s\" suffix");
    check("{'client': {'service_config': {'methodConfig': [{'name': [{}], 'timeout': '1.5s'}]}}}");
    expect_clean();
}

static void test_sc_quoted_number_warns(void **state)
{
    (void)state;
    check(RETRY("'maxAttempts': '3', 'initialBackoff': '0.1s', 'maxBackoff': '1s', "
                "'backoffMultiplier': 2, 'retryableStatusCodes': ['UNAVAILABLE']"));
    expect("sc.quoted-number", W, RP ".maxAttempts", NULL);
    expect_none("retry.max-attempts");
}

static void test_sc_hedging_ignored(void **state)
{
    (void)state;
    check("{'client': {'service_config': {'methodConfig': [{'name': [{}], 'hedgingPolicy': "
          "{'maxAttempts': 2}}]}}}");
    expect("sc.hedging-ignored", W, MC ".hedgingPolicy", NULL);
}

static void test_sc_unknown_lb_policy(void **state)
{
    (void)state;
    check("{'client': {'service_config': {'loadBalancingPolicy': 'round_robbin'}}}");
    expect("sc.lb-policy", E, "$.client.service_config.loadBalancingPolicy", "did you mean \"round_robin\"");
    check("{'client': {'service_config': {'loadBalancingPolicy': 'round_robin'}}}");
    expect_clean();
}

/* ---- retry policy (gRFC A6) ---- */

static void test_retry_good_policy_is_clean(void **state)
{
    (void)state;
    check(RETRY(RP_OK));
    expect_clean();
}

static void test_retry_disabled_by_enable_retries(void **state)
{
    (void)state;
    check("{'client': {'grpc.enable_retries': 0, 'service_config': {'methodConfig': [{'name': "
          "[{}], 'retryPolicy': {" RP_OK "}}]}}}");
    expect("retry.disabled", E, "$.client[\"grpc.enable_retries\"]", RP);
    check("{'client': {'grpc.enable_retries': 0}}");
    expect_clean();
}

static void test_retry_max_attempts_below_2(void **state)
{
    (void)state;
    check(RETRY("'maxAttempts': 1, 'initialBackoff': '0.1s', 'maxBackoff': '1s', "
                "'backoffMultiplier': 2, 'retryableStatusCodes': ['UNAVAILABLE']"));
    expect("retry.max-attempts", E, RP ".maxAttempts", "at least 2");
}

static void test_retry_max_attempts_not_integer(void **state)
{
    (void)state;
    check(RETRY("'maxAttempts': 2.5, 'initialBackoff': '0.1s', 'maxBackoff': '1s', "
                "'backoffMultiplier': 2, 'retryableStatusCodes': ['UNAVAILABLE']"));
    expect("retry.max-attempts", E, RP ".maxAttempts", "not an integer");
}

static void test_retry_max_attempts_missing(void **state)
{
    (void)state;
    check(RETRY("'initialBackoff': '0.1s', 'maxBackoff': '1s', 'backoffMultiplier': 2, "
                "'retryableStatusCodes': ['UNAVAILABLE']"));
    expect("retry.max-attempts", E, RP ".maxAttempts", "required");
}

static void test_retry_max_attempts_clamped(void **state)
{
    (void)state;
    check(RETRY("'maxAttempts': 6, 'initialBackoff': '0.1s', 'maxBackoff': '1s', "
                "'backoffMultiplier': 2, 'retryableStatusCodes': ['UNAVAILABLE']"));
    expect("retry.max-attempts-clamped", W, RP ".maxAttempts", "clamps it to 5");
    check(RETRY("'maxAttempts': 5, 'initialBackoff': '0.1s', 'maxBackoff': '1s', "
                "'backoffMultiplier': 2, 'retryableStatusCodes': ['UNAVAILABLE']"));
    expect_clean();
}

static void test_retry_initial_backoff_zero(void **state)
{
    (void)state;
    check(RETRY("'maxAttempts': 3, 'initialBackoff': '0s', 'maxBackoff': '1s', "
                "'backoffMultiplier': 2, 'retryableStatusCodes': ['UNAVAILABLE']"));
    expect("retry.initial-backoff", E, RP ".initialBackoff", "greater than 0");
}

static void test_retry_initial_backoff_below_1ms(void **state)
{
    (void)state;
    check(RETRY("'maxAttempts': 3, 'initialBackoff': '0.0005s', 'maxBackoff': '1s', "
                "'backoffMultiplier': 2, 'retryableStatusCodes': ['UNAVAILABLE']"));
    expect("retry.initial-backoff", E, RP ".initialBackoff", "below 1 ms");
    check(RETRY("'maxAttempts': 3, 'initialBackoff': '0.001s', 'maxBackoff': '1s', "
                "'backoffMultiplier': 2, 'retryableStatusCodes': ['UNAVAILABLE']"));
    expect_clean();
}

static void test_retry_initial_backoff_not_duration(void **state)
{
    (void)state;
    check(RETRY("'maxAttempts': 3, 'initialBackoff': 100, 'maxBackoff': '1s', "
                "'backoffMultiplier': 2, 'retryableStatusCodes': ['UNAVAILABLE']"));
    expect("retry.initial-backoff", E, RP ".initialBackoff", "duration string");
}

static void test_retry_max_backoff_in_ms_units(void **state)
{
    (void)state;
    check(RETRY("'maxAttempts': 3, 'initialBackoff': '0.1s', 'maxBackoff': '100ms', "
                "'backoffMultiplier': 2, 'retryableStatusCodes': ['UNAVAILABLE']"));
    expect("retry.max-backoff", E, RP ".maxBackoff", "0.1s");
}

static void test_retry_backoff_multiplier_zero(void **state)
{
    (void)state;
    check(RETRY("'maxAttempts': 3, 'initialBackoff': '0.1s', 'maxBackoff': '1s', "
                "'backoffMultiplier': 0, 'retryableStatusCodes': ['UNAVAILABLE']"));
    expect("retry.backoff-multiplier", E, RP ".backoffMultiplier", "greater than 0");
    check(RETRY("'maxAttempts': 3, 'initialBackoff': '0.1s', 'maxBackoff': '1s', "
                "'backoffMultiplier': 1e-50, 'retryableStatusCodes': ['UNAVAILABLE']"));
    expect("retry.backoff-multiplier", E, RP ".backoffMultiplier", "float");
}

static void test_retry_backoff_order(void **state)
{
    (void)state;
    check(RETRY("'maxAttempts': 3, 'initialBackoff': '2s', 'maxBackoff': '1s', "
                "'backoffMultiplier': 2, 'retryableStatusCodes': ['UNAVAILABLE']"));
    expect("retry.backoff-order", W, RP ".maxBackoff", NULL);
}

static void test_retry_status_codes_empty(void **state)
{
    (void)state;
    check(RETRY("'maxAttempts': 3, 'initialBackoff': '0.1s', 'maxBackoff': '1s', "
                "'backoffMultiplier': 2, 'retryableStatusCodes': []"));
    expect("retry.status-codes", E, RP ".retryableStatusCodes", "empty");
}

static void test_retry_status_codes_missing(void **state)
{
    (void)state;
    check(RETRY("'maxAttempts': 3, 'initialBackoff': '0.1s', 'maxBackoff': '1s', "
                "'backoffMultiplier': 2"));
    expect("retry.status-codes", E, RP ".retryableStatusCodes", "required");
}

static void test_retry_status_code_number_names_it(void **state)
{
    (void)state;
    check(RETRY("'maxAttempts': 3, 'initialBackoff': '0.1s', 'maxBackoff': '1s', "
                "'backoffMultiplier': 2, 'retryableStatusCodes': [14]"));
    expect("retry.status-codes", E, RP ".retryableStatusCodes[0]", "write \"UNAVAILABLE\"");
}

static void test_retry_status_code_lower_case_suggests(void **state)
{
    (void)state;
    check(RETRY("'maxAttempts': 3, 'initialBackoff': '0.1s', 'maxBackoff': '1s', "
                "'backoffMultiplier': 2, 'retryableStatusCodes': ['unavailable']"));
    expect("retry.status-codes", E, RP ".retryableStatusCodes[0]", "did you mean \"UNAVAILABLE\"");
}

static void test_retry_non_retryable_codes_refused(void **state)
{
    (void)state;
    static const char *const refused[] = {
        "OK",           "INVALID_ARGUMENT", "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "FAILED_PRECONDITION",
        "OUT_OF_RANGE", "UNIMPLEMENTED",    "DATA_LOSS", "UNAUTHENTICATED"};
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        char text[512];
        snprintf(text, sizeof(text),
                 RETRY("'maxAttempts': 3, 'initialBackoff': '0.1s', 'maxBackoff': '1s', "
                       "'backoffMultiplier': 2, 'retryableStatusCodes': ['%s']"),
                 refused[i]);
        check(text);
        expect("retry.non-retryable-code", E, RP ".retryableStatusCodes[0]", refused[i]);
    }
}

static void test_retry_risky_code_warns(void **state)
{
    (void)state;
    check(RETRY("'maxAttempts': 3, 'initialBackoff': '0.1s', 'maxBackoff': '1s', "
                "'backoffMultiplier': 2, 'retryableStatusCodes': ['UNAVAILABLE', 'DEADLINE_EXCEEDED']"));
    expect("retry.risky-code", W, RP ".retryableStatusCodes[1]", "deadline covers all attempts");
}

static void test_retry_resource_exhausted_needs_throttling(void **state)
{
    (void)state;
    check(RETRY("'maxAttempts': 3, 'initialBackoff': '0.1s', 'maxBackoff': '1s', "
                "'backoffMultiplier': 2, 'retryableStatusCodes': ['RESOURCE_EXHAUSTED']"));
    expect("retry.risky-code", W, RP ".retryableStatusCodes[0]", "retryThrottling");
    check("{'client': {'service_config': {'retryThrottling': {'maxTokens': 10, 'tokenRatio': 0.1}, "
          "'methodConfig': [{'name': [{}], 'retryPolicy': {'maxAttempts': 3, 'initialBackoff': "
          "'0.1s', 'maxBackoff': '1s', 'backoffMultiplier': 2, 'retryableStatusCodes': "
          "['RESOURCE_EXHAUSTED']}}]}}}");
    expect_clean();
}

static void test_retry_throttling_limits(void **state)
{
    (void)state;
    check("{'client': {'service_config': {'retryThrottling': {'maxTokens': 1001, 'tokenRatio': "
          "0.0001}}}}");
    expect("retry.throttling", E, "$.client.service_config.retryThrottling.maxTokens", "1..1000");
    expect("retry.throttling", E, "$.client.service_config.retryThrottling.tokenRatio", "3 decimals");
    check("{'client': {'service_config': {'retryThrottling': {'maxTokens': 1000, 'tokenRatio': "
          "0.001}}}}");
    expect_clean();
}

static void test_retry_per_attempt_timeout_needs_hedging_flag(void **state)
{
    (void)state;
    check(RETRY(RP_OK ", 'perAttemptRecvTimeout': '1s'"));
    expect("retry.per-attempt-ignored", W, RP ".perAttemptRecvTimeout", "enable_hedging");
    check("{'client': {'grpc.experimental.enable_hedging': 1, 'service_config': {'methodConfig': "
          "[{'name': [{}], 'retryPolicy': {'maxAttempts': 3, 'initialBackoff': '0.1s', "
          "'maxBackoff': '1s', 'backoffMultiplier': 2, 'perAttemptRecvTimeout': '1s'}}]}}}");
    expect_clean();
}

static void test_retry_huge_numbers_are_judged_not_cast(void **state)
{
    (void)state;
    /* 1e300 does not fit any integer type: casting it would be undefined. */
    check(RETRY("'maxAttempts': 1e300, 'initialBackoff': '0.1s', 'maxBackoff': '1s', "
                "'backoffMultiplier': 2, 'retryableStatusCodes': ['UNAVAILABLE']"));
    expect("retry.max-attempts-clamped", W, RP ".maxAttempts", NULL);
    check("{'client': {'service_config': {'retryThrottling': {'maxTokens': -1e300, 'tokenRatio': 1}}}}");
    expect("retry.throttling", E, "$.client.service_config.retryThrottling.maxTokens", NULL);
}

/* ---- the catalogue ---- */

static void test_method_config_lookup_order(void **state)
{
    (void)state;
    const char *text = "{\"client\": {\"service_config\": {\"methodConfig\": ["
                       "{\"name\": [{}], \"timeout\": \"5s\"},"
                       "{\"name\": [{\"service\": \"relaylab.Baseline\"}], \"timeout\": \"10s\", \"retryPolicy\": "
                       "{\"maxAttempts\": 9, \"initialBackoff\": \"0.1s\", \"maxBackoff\": \"1s\", "
                       "\"backoffMultiplier\": 2, \"retryableStatusCodes\": [\"UNAVAILABLE\"]}},"
                       "{\"name\": [{\"service\": \"relaylab.Baseline\", \"method\": \"Fetch\"}], \"timeout\": "
                       "\"20s\"}]}}}";
    rl_chancfg *cfg;
    assert_int_equal(rl_chancfg_parse(text, strlen(text), &cfg, NULL), 0);
    rl_chancfg_method m;
    assert_int_equal(rl_chancfg_method_config(cfg, "relaylab.Baseline", "Lookup", &m), 0);
    assert_int_equal(m.timeout_ms, 10000);
    assert_true(m.has_retry);
    assert_int_equal(m.max_attempts, 5);
    assert_int_equal(m.initial_backoff_ms, 100);
    assert_int_equal(m.retryable_codes, 1u << 14);
    assert_int_equal(rl_chancfg_method_config(cfg, "relaylab.Baseline", "Fetch", &m), 0);
    assert_int_equal(m.timeout_ms, 20000);
    assert_false(m.has_retry);
    assert_int_equal(rl_chancfg_method_config(cfg, "relaylab.Relay", "Process", &m), 0);
    assert_int_equal(m.timeout_ms, 5000);
    rl_chancfg_free(cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sc_must_be_object_not_string),
        cmocka_unit_test(test_sc_method_config_must_be_array),
        cmocka_unit_test(test_sc_wait_for_ready_is_boolean),
        cmocka_unit_test(test_sc_unknown_field_suggests),
        cmocka_unit_test(test_sc_name_missing),
        cmocka_unit_test(test_sc_method_without_service),
        cmocka_unit_test(test_sc_duplicate_name),
        cmocka_unit_test(test_sc_unknown_service_without_package),
        cmocka_unit_test(test_sc_unknown_method),
        cmocka_unit_test(test_sc_knows_every_method_of_the_proto),
        cmocka_unit_test(test_sc_timeout_duration),
        cmocka_unit_test(test_sc_quoted_number_warns),
        cmocka_unit_test(test_sc_hedging_ignored),
        cmocka_unit_test(test_sc_unknown_lb_policy),
        cmocka_unit_test(test_retry_good_policy_is_clean),
        cmocka_unit_test(test_retry_disabled_by_enable_retries),
        cmocka_unit_test(test_retry_max_attempts_below_2),
        cmocka_unit_test(test_retry_max_attempts_not_integer),
        cmocka_unit_test(test_retry_max_attempts_missing),
        cmocka_unit_test(test_retry_max_attempts_clamped),
        cmocka_unit_test(test_retry_initial_backoff_zero),
        cmocka_unit_test(test_retry_initial_backoff_below_1ms),
        cmocka_unit_test(test_retry_initial_backoff_not_duration),
        cmocka_unit_test(test_retry_max_backoff_in_ms_units),
        cmocka_unit_test(test_retry_backoff_multiplier_zero),
        cmocka_unit_test(test_retry_backoff_order),
        cmocka_unit_test(test_retry_status_codes_empty),
        cmocka_unit_test(test_retry_status_codes_missing),
        cmocka_unit_test(test_retry_status_code_number_names_it),
        cmocka_unit_test(test_retry_status_code_lower_case_suggests),
        cmocka_unit_test(test_retry_non_retryable_codes_refused),
        cmocka_unit_test(test_retry_risky_code_warns),
        cmocka_unit_test(test_retry_resource_exhausted_needs_throttling),
        cmocka_unit_test(test_retry_throttling_limits),
        cmocka_unit_test(test_retry_per_attempt_timeout_needs_hedging_flag),
        cmocka_unit_test(test_retry_huge_numbers_are_judged_not_cast),
        cmocka_unit_test(test_method_config_lookup_order),
    };
    return cmocka_run_group_tests(tests, NULL, teardown);
}
