/* Unit tests for the channel-config checker: every rule, once broken and once
 * kept. Configs are written with single quotes for readability; cfg() turns
 * them into JSON. Every check also asserts the report's invariants: known
 * rule ids, one-line paths and reasons. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "chancfg/rl_chancfg.h"

static rl_chancfg_report g_rep;

static bool known_rule(const char *id)
{
    size_t n;
    const rl_chancfg_rule *r = rl_chancfg_rules(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(r[i].id, id) == 0)
            return true;
    return false;
}

/* Checks |text| (single quotes stand for double quotes) into g_rep. */
static void check(const char *text)
{
    char *json = strdup(text);
    assert_non_null(json);
    for (char *p = json; *p; p++)
        if (*p == '\'')
            *p = '"';
    rl_chancfg *cfg;
    rl_chancfg_diag diag;
    int rc = rl_chancfg_parse(json, strlen(json), &cfg, &diag);
    if (rc != 0)
        fail_msg("test config does not parse: %d:%d %s", diag.line, diag.column, diag.text);
    rl_chancfg_report_fini(&g_rep);
    assert_int_equal(rl_chancfg_check(cfg, &g_rep), 0);
    size_t errors = 0;
    for (size_t i = 0; i < g_rep.nfindings; i++) {
        const rl_chancfg_finding *f = &g_rep.findings[i];
        if (!known_rule(f->rule))
            fail_msg("rule id %s is not in the catalogue", f->rule);
        assert_true(strncmp(f->path, "$", 1) == 0);
        assert_null(strchr(f->path, '\n'));
        assert_null(strchr(f->why, '\n'));
        assert_true(strlen(f->why) > 10);
        errors += f->severity == RL_CHANCFG_ERROR;
    }
    assert_int_equal(errors, g_rep.nerrors);
    assert_int_equal(g_rep.nfindings - errors, g_rep.nwarnings);
    rl_chancfg_free(cfg);
    free(json);
}

static void dump(void)
{
    for (size_t i = 0; i < g_rep.nfindings; i++)
        print_message("  %s %s %s\n", g_rep.findings[i].rule, g_rep.findings[i].path, g_rep.findings[i].why);
}

/* Asserts a finding of |rule| at |path| with |severity|, whose why contains
 * |needle| (may be NULL). */
static void expect(const char *rule, rl_chancfg_severity severity, const char *path, const char *needle)
{
    for (size_t i = 0; i < g_rep.nfindings; i++) {
        const rl_chancfg_finding *f = &g_rep.findings[i];
        if (strcmp(f->rule, rule) == 0 && strcmp(f->path, path) == 0) {
            assert_int_equal(f->severity, severity);
            if (needle && !strstr(f->why, needle))
                fail_msg("%s: why \"%s\" lacks \"%s\"", rule, f->why, needle);
            return;
        }
    }
    dump();
    fail_msg("no %s at %s", rule, path);
}

static void expect_none(const char *rule)
{
    if (rl_chancfg_report_find(&g_rep, rule)) {
        dump();
        fail_msg("unexpected %s", rule);
    }
}

static void expect_clean(void)
{
    if (g_rep.nfindings) {
        dump();
        fail_msg("expected no findings, got %zu", g_rep.nfindings);
    }
}

#define E RL_CHANCFG_ERROR
#define W RL_CHANCFG_WARNING

/* A sound base to add one mistake to: keepalive that survives a 350 s NAT. */
#define GOOD_CLIENT_KA                                                                                                 \
    "'grpc.keepalive_time_ms': 60000, 'grpc.keepalive_permit_without_calls': 1, "                                      \
    "'grpc.http2.max_pings_without_data': 0"
#define GOOD_SERVER_KA                                                                                                 \
    "'grpc.http2.min_ping_interval_without_data_ms': 30000, "                                                          \
    "'grpc.keepalive_permit_without_calls': 1"
#define NAT "'intermediary': {'kind': 'nat', 'idle_timeout_ms': 350000}"
#define RETRY(fields)                                                                                                  \
    "{'client': {'service_config': {'methodConfig': [{'name': [{'service': 'relaylab.Baseline'}], 'retryPolicy': "     \
    "{" fields "}}]}}}"
#define RP_OK                                                                                                          \
    "'maxAttempts': 3, 'initialBackoff': '0.1s', 'maxBackoff': '1s', 'backoffMultiplier': 2, 'retryableStatusCodes': " \
    "['UNAVAILABLE']"

/* ---- the reference config ---- */

/* Reads the repo file |path| (tests run from the repo root) into |buf|. */
static void read_repo_file(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("run from the repo root: %s not found", path);
    size_t n = fread(buf, 1, len - 1, f);
    fclose(f);
    buf[n] = '\0';
}

static void test_lab_json_is_clean(void **state)
{
    (void)state;
    char buf[8192];
    read_repo_file("channel_config/lab.json", buf, sizeof(buf));
    check(buf);
    expect_clean();
}

static void test_empty_object_is_clean(void **state)
{
    (void)state;
    check("{}");
    expect_clean();
}

/* ---- schema ---- */

static void test_schema_root_must_be_object(void **state)
{
    (void)state;
    check("[1, 2]");
    expect("schema.type", E, "$", "not an array");
}

static void test_schema_section_must_be_object(void **state)
{
    (void)state;
    check("{'client': 5}");
    expect("schema.type", E, "$.client", "not an integer");
}

static void test_schema_unknown_section_suggests(void **state)
{
    (void)state;
    check("{'clients': {}}");
    expect("schema.unknown-key", E, "$.clients", "did you mean \"client\"");
    check("{'client': {}, 'description': 'x'}");
    expect_clean();
}

static void test_schema_idle_timeout_required(void **state)
{
    (void)state;
    check("{'intermediary': {'kind': 'nat'}}");
    expect("schema.required", E, "$.intermediary.idle_timeout_ms", NULL);
}

static void test_schema_idle_timeout_positive(void **state)
{
    (void)state;
    check("{'intermediary': {'idle_timeout_ms': 0}}");
    expect("schema.range", E, "$.intermediary.idle_timeout_ms", NULL);
    check("{'intermediary': {'idle_timeout_ms': '350s'}}");
    expect("schema.type", E, "$.intermediary.idle_timeout_ms", NULL);
}

static void test_schema_kind_enum(void **state)
{
    (void)state;
    check("{'intermediary': {'idle_timeout_ms': 350000, 'kind': 'NAT'}}");
    expect("schema.enum", E, "$.intermediary.kind", "did you mean \"nat\"");
    check("{'intermediary': {'idle_timeout_ms': 350000, 'kind': 'l4-lb'}, "
          "'client': {" GOOD_CLIENT_KA "}, 'server': {" GOOD_SERVER_KA "}}");
    expect_clean();
}

/* ---- args ---- */

static void test_arg_unknown_suggests_nearest(void **state)
{
    (void)state;
    check("{'client': {'grpc.keepalive_time': 60000}}");
    expect("arg.unknown", E, "$.client[\"grpc.keepalive_time\"]", "did you mean \"grpc.keepalive_time_ms\"");
}

static void test_arg_unknown_without_prefix_suggests(void **state)
{
    (void)state;
    check("{'client': {'keepalive_permit_without_calls': 1}}");
    expect("arg.unknown", E, "$.client.keepalive_permit_without_calls",
           "did you mean \"grpc.keepalive_permit_without_calls\"");
}

static void test_arg_unknown_far_name_has_no_suggestion(void **state)
{
    (void)state;
    check("{'client': {'frobnicate': 1}}");
    expect("arg.unknown", E, "$.client.frobnicate", "ignore it silently");
    assert_null(strstr(g_rep.findings[0].why, "did you mean"));
}

static void test_arg_macro_guess_min_recv_ping_interval(void **state)
{
    (void)state;
    check("{'server': {'grpc.http2.min_recv_ping_interval_without_data_ms': 30000}}");
    expect("arg.macro-name", E, "$.server[\"grpc.http2.min_recv_ping_interval_without_data_ms\"]",
           "\"grpc.http2.min_ping_interval_without_data_ms\"");
    expect("arg.macro-name", E, "$.server[\"grpc.http2.min_recv_ping_interval_without_data_ms\"]", "too_many_pings");
    check("{'server': {'grpc.http2.min_ping_interval_without_data_ms': 30000}}");
    expect_clean();
}

static void test_arg_macro_name_itself(void **state)
{
    (void)state;
    check("{'client': {'GRPC_ARG_KEEPALIVE_TIME_MS': 60000}}");
    expect("arg.macro-name", E, "$.client.GRPC_ARG_KEEPALIVE_TIME_MS", "\"grpc.keepalive_time_ms\"");
}

static void test_arg_macro_alias_max_message_length(void **state)
{
    (void)state;
    check("{'client': {'grpc.max_message_length': 1024}}");
    expect("arg.macro-name", E, "$.client[\"grpc.max_message_length\"]", "grpc.max_receive_message_length");
}

static void test_arg_server_only_on_client(void **state)
{
    (void)state;
    check("{'client': {'grpc.http2.min_ping_interval_without_data_ms': 30000}}");
    expect("arg.wrong-side", E, "$.client[\"grpc.http2.min_ping_interval_without_data_ms\"]", "move it to \"server\"");
}

static void test_arg_client_only_on_server(void **state)
{
    (void)state;
    check("{'server': {'grpc.enable_retries': 1, 'service_config': {}}}");
    expect("arg.wrong-side", E, "$.server[\"grpc.enable_retries\"]", "move it to \"client\"");
    expect("arg.wrong-side", E, "$.server.service_config", NULL);
}

static void test_arg_pointer_not_configurable(void **state)
{
    (void)state;
    check("{'client': {'grpc.resource_quota': 1, 'grpc.service_config': '{}'}}");
    expect("arg.not-configurable", E, "$.client[\"grpc.resource_quota\"]", "C object");
    expect("arg.not-configurable", E, "$.client[\"grpc.service_config\"]", "client.service_config");
}

static void test_arg_int_as_string_is_type_error(void **state)
{
    (void)state;
    check("{'client': {'grpc.keepalive_time_ms': '60s'}}");
    expect("arg.type", E, "$.client[\"grpc.keepalive_time_ms\"]", "not a string");
}

static void test_arg_int_as_fraction_is_type_error(void **state)
{
    (void)state;
    check("{'client': {'grpc.keepalive_timeout_ms': 1.5}}");
    expect("arg.type", E, "$.client[\"grpc.keepalive_timeout_ms\"]", "fractional");
}

static void test_arg_bool_takes_0_1_true_false(void **state)
{
    (void)state;
    check("{'client': {'grpc.keepalive_permit_without_calls': 2}}");
    expect("arg.type", E, "$.client[\"grpc.keepalive_permit_without_calls\"]", "0 or 1");
    check("{'client': {'grpc.enable_retries': true, 'grpc.http2.bdp_probe': 0}}");
    expect_clean();
}

static void test_arg_negative_refused(void **state)
{
    (void)state;
    check("{'client': {'grpc.keepalive_timeout_ms': -1}}");
    expect("arg.range", E, "$.client[\"grpc.keepalive_timeout_ms\"]", "negative");
}

static void test_arg_minus_one_where_it_means_unlimited(void **state)
{
    (void)state;
    check("{'client': {'grpc.max_receive_message_length': -1}}");
    expect_clean();
}

static void test_arg_beyond_c_int_refused(void **state)
{
    (void)state;
    check("{'server': {'grpc.max_connection_idle_ms': 3000000000}}");
    expect("arg.range", E, "$.server[\"grpc.max_connection_idle_ms\"]", "C int");
}

static void test_arg_frame_size_bounds(void **state)
{
    (void)state;
    check("{'client': {'grpc.http2.max_frame_size': 1000}}");
    expect("arg.range", E, "$.client[\"grpc.http2.max_frame_size\"]", "16384..16777215");
}

static void test_arg_string_choice_suggests(void **state)
{
    (void)state;
    check("{'client': {'grpc.lb_policy_name': 'round_robbin'}}");
    expect("arg.range", E, "$.client[\"grpc.lb_policy_name\"]", "did you mean \"round_robin\"");
}

static void test_arg_deprecated_min_time_between_pings(void **state)
{
    (void)state;
    check("{'client': {'grpc.http2.min_time_between_pings_ms': 10000}}");
    expect("arg.deprecated", W, "$.client[\"grpc.http2.min_time_between_pings_ms\"]", "no effect");
}

static void test_user_text_is_escaped_in_paths_and_reasons(void **state)
{
    (void)state;
    check("{'client': {'a\\nb\\u0001\\\"c': 1}}");
    expect("arg.unknown", E, "$.client[\"a\\x0ab\\x01\\\"c\"]", "\\x0a");
}

/* ---- keepalive ---- */

static void test_keepalive_idle_timeout_violated(void **state)
{
    (void)state;
    check("{" NAT ", 'client': {'grpc.keepalive_time_ms': 400000}}");
    expect("keepalive.idle-timeout", E, "$.client[\"grpc.keepalive_time_ms\"]", "350000");
}

static void test_keepalive_idle_timeout_with_keepalive_off(void **state)
{
    (void)state;
    check("{" NAT "}");
    expect("keepalive.idle-timeout", E, "$.client[\"grpc.keepalive_time_ms\"]", "off (gRPC's default)");
}

static void test_keepalive_idle_timeout_kept(void **state)
{
    (void)state;
    check("{" NAT ", 'client': {" GOOD_CLIENT_KA "}, 'server': {" GOOD_SERVER_KA "}}");
    expect_clean();
}

static void test_keepalive_idle_timeout_kept_by_server_pings(void **state)
{
    (void)state;
    check("{" NAT ", 'server': {'grpc.keepalive_time_ms': 120000, "
          "'grpc.keepalive_permit_without_calls': 1, 'grpc.http2.max_pings_without_data': 0}}");
    expect_clean();
}

static void test_keepalive_pings_without_data_limit(void **state)
{
    (void)state;
    check("{" NAT ", 'client': {'grpc.keepalive_time_ms': 60000, "
          "'grpc.keepalive_permit_without_calls': 1}, 'server': {" GOOD_SERVER_KA "}}");
    expect("keepalive.pings-without-data", E, "$.client[\"grpc.http2.max_pings_without_data\"]", "2 is gRPC's default");
    expect_none("keepalive.idle-timeout");
}

static void test_keepalive_idle_without_calls(void **state)
{
    (void)state;
    check("{" NAT ", 'client': {'grpc.keepalive_time_ms': 60000, "
          "'grpc.http2.max_pings_without_data': 0}, 'server': {" GOOD_SERVER_KA "}}");
    expect("keepalive.idle-without-calls", E, "$.client[\"grpc.keepalive_permit_without_calls\"]", "1800000");
}

static void test_keepalive_idle_without_calls_fixed_by_client_idle_timeout(void **state)
{
    (void)state;
    check("{" NAT ", 'client': {'grpc.keepalive_time_ms': 60000, 'grpc.client_idle_timeout_ms': "
          "300000, 'grpc.http2.max_pings_without_data': 0}, 'server': {" GOOD_SERVER_KA "}}");
    expect_clean();
}

static void test_keepalive_below_server_min_ping_interval(void **state)
{
    (void)state;
    check("{'client': {'grpc.keepalive_time_ms': 60000}}");
    expect("keepalive.min-ping-interval", E, "$.client[\"grpc.keepalive_time_ms\"]", "too_many_pings");
    expect("keepalive.min-ping-interval", E, "$.client[\"grpc.keepalive_time_ms\"]", "5 min");
}

static void test_keepalive_at_server_min_ping_interval(void **state)
{
    (void)state;
    check("{'client': {'grpc.keepalive_time_ms': 60000}, "
          "'server': {'grpc.http2.min_ping_interval_without_data_ms': 60000}}");
    expect_clean();
}

static void test_keepalive_min_ping_interval_warning_without_strikes(void **state)
{
    (void)state;
    check("{'client': {'grpc.keepalive_time_ms': 60000}, "
          "'server': {'grpc.http2.max_ping_strikes': 0}}");
    expect("keepalive.min-ping-interval", W, "$.client[\"grpc.keepalive_time_ms\"]", NULL);
}

static void test_keepalive_misnamed_server_arg_keeps_default(void **state)
{
    (void)state;
    /* The classic: the server's setting is silently ignored, so the default
     * 5 min applies and the client's pings are strikes. */
    check("{'client': {'grpc.keepalive_time_ms': 60000}, "
          "'server': {'grpc.http2.min_recv_ping_interval_without_data_ms': 30000}}");
    expect("arg.macro-name", E, "$.server[\"grpc.http2.min_recv_ping_interval_without_data_ms\"]", NULL);
    expect("keepalive.min-ping-interval", E, "$.client[\"grpc.keepalive_time_ms\"]", "300000");
}

static void test_keepalive_permit_mismatch(void **state)
{
    (void)state;
    check("{'client': {" GOOD_CLIENT_KA "}, "
          "'server': {'grpc.http2.min_ping_interval_without_data_ms': 30000}}");
    expect("keepalive.permit-mismatch", E, "$.server[\"grpc.keepalive_permit_without_calls\"]", "2 hours");
    check("{'client': {" GOOD_CLIENT_KA "}, 'server': {" GOOD_SERVER_KA "}}");
    expect_clean();
}

static void test_keepalive_timeout_above_time_client(void **state)
{
    (void)state;
    check("{'client': {'grpc.keepalive_time_ms': 10000}, "
          "'server': {'grpc.http2.min_ping_interval_without_data_ms': 10000}}");
    expect("keepalive.timeout-above-time", E, "$.client[\"grpc.keepalive_timeout_ms\"]", "gRPC's default");
    check("{'client': {'grpc.keepalive_time_ms': 10000, 'grpc.keepalive_timeout_ms': 5000}, "
          "'server': {'grpc.http2.min_ping_interval_without_data_ms': 10000}}");
    expect_clean();
}

static void test_keepalive_timeout_above_time_server(void **state)
{
    (void)state;
    check("{'server': {'grpc.keepalive_time_ms': 30000, 'grpc.keepalive_timeout_ms': 60000}}");
    expect("keepalive.timeout-above-time", E, "$.server[\"grpc.keepalive_timeout_ms\"]", NULL);
}

static void test_keepalive_too_frequent(void **state)
{
    (void)state;
    check("{'client': {'grpc.keepalive_time_ms': 5000, 'grpc.keepalive_timeout_ms': 1000}, "
          "'server': {'grpc.http2.min_ping_interval_without_data_ms': 5000}}");
    expect("keepalive.too-frequent", W, "$.client[\"grpc.keepalive_time_ms\"]", "10 s");
    check("{'client': {'grpc.keepalive_time_ms': 10000, 'grpc.keepalive_timeout_ms': 1000}, "
          "'server': {'grpc.http2.min_ping_interval_without_data_ms': 5000}}");
    expect_clean();
}

static void test_keepalive_invalid_value_does_not_cascade(void **state)
{
    (void)state;
    check("{" NAT ", 'client': {'grpc.keepalive_time_ms': '60s'}}");
    expect("arg.type", E, "$.client[\"grpc.keepalive_time_ms\"]", NULL);
    assert_int_equal(g_rep.nfindings, 1);
}

/* ---- connection age and reconnection ---- */

static void test_age_grace_below_declared_deadline(void **state)
{
    (void)state;
    check("{'calls': {'longest_deadline_ms': 30000}, 'server': {'grpc.max_connection_age_ms': "
          "600000, 'grpc.max_connection_age_grace_ms': 5000}}");
    expect("age.grace-below-deadline", E, "$.server[\"grpc.max_connection_age_grace_ms\"]", "30000");
    check("{'calls': {'longest_deadline_ms': 30000}, 'server': {'grpc.max_connection_age_ms': "
          "600000, 'grpc.max_connection_age_grace_ms': 30000}}");
    expect_clean();
}

static void test_age_grace_below_method_timeout(void **state)
{
    (void)state;
    check("{'client': {'service_config': {'methodConfig': [{'name': [{}], 'timeout': '60s'}]}}, "
          "'server': {'grpc.max_connection_age_ms': 600000, 'grpc.max_connection_age_grace_ms': "
          "30000}}");
    expect("age.grace-below-deadline", E, "$.server[\"grpc.max_connection_age_grace_ms\"]", "60000");
}

static void test_age_without_grace_warns(void **state)
{
    (void)state;
    check("{'server': {'grpc.max_connection_age_ms': 600000}}");
    expect("age.grace-unbounded", W, "$.server[\"grpc.max_connection_age_grace_ms\"]", "forever");
}

static void test_age_too_short(void **state)
{
    (void)state;
    check("{'server': {'grpc.max_connection_age_ms': 1000, 'grpc.max_connection_age_grace_ms': 30000}}");
    expect("age.too-short", E, "$.server[\"grpc.max_connection_age_ms\"]", "60 TCP and TLS handshakes");
    assert_int_equal(g_rep.nfindings, 1);
    check("{'server': {'grpc.max_connection_age_ms': 10000, 'grpc.max_connection_age_grace_ms': 30000}}");
    expect_clean();
}

static void test_reconnect_initial_above_max(void **state)
{
    (void)state;
    check("{'client': {'grpc.initial_reconnect_backoff_ms': 5000, "
          "'grpc.max_reconnect_backoff_ms': 1000}}");
    expect("reconnect.backoff-order", E, "$.client[\"grpc.initial_reconnect_backoff_ms\"]", NULL);
    check("{'client': {'grpc.initial_reconnect_backoff_ms': 1000, "
          "'grpc.max_reconnect_backoff_ms': 5000}}");
    expect_clean();
}

static void test_reconnect_initial_above_default_max(void **state)
{
    (void)state;
    check("{'client': {'grpc.initial_reconnect_backoff_ms': 200000}}");
    expect("reconnect.backoff-order", E, "$.client[\"grpc.initial_reconnect_backoff_ms\"]", "gRPC's default");
    /* The "min" backoff is the connect timeout: above max is legal. */
    check("{'client': {'grpc.min_reconnect_backoff_ms': 20000, 'grpc.max_reconnect_backoff_ms': 5000}}");
    expect_clean();
}

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

static void test_rule_ids_are_unique(void **state)
{
    (void)state;
    size_t n;
    const rl_chancfg_rule *r = rl_chancfg_rules(&n);
    assert_true(n >= 40);
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            assert_string_not_equal(r[i].id, r[j].id);
}

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

static int teardown(void **state)
{
    (void)state;
    rl_chancfg_report_fini(&g_rep);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lab_json_is_clean),
        cmocka_unit_test(test_empty_object_is_clean),
        cmocka_unit_test(test_schema_root_must_be_object),
        cmocka_unit_test(test_schema_section_must_be_object),
        cmocka_unit_test(test_schema_unknown_section_suggests),
        cmocka_unit_test(test_schema_idle_timeout_required),
        cmocka_unit_test(test_schema_idle_timeout_positive),
        cmocka_unit_test(test_schema_kind_enum),
        cmocka_unit_test(test_arg_unknown_suggests_nearest),
        cmocka_unit_test(test_arg_unknown_without_prefix_suggests),
        cmocka_unit_test(test_arg_unknown_far_name_has_no_suggestion),
        cmocka_unit_test(test_arg_macro_guess_min_recv_ping_interval),
        cmocka_unit_test(test_arg_macro_name_itself),
        cmocka_unit_test(test_arg_macro_alias_max_message_length),
        cmocka_unit_test(test_arg_server_only_on_client),
        cmocka_unit_test(test_arg_client_only_on_server),
        cmocka_unit_test(test_arg_pointer_not_configurable),
        cmocka_unit_test(test_arg_int_as_string_is_type_error),
        cmocka_unit_test(test_arg_int_as_fraction_is_type_error),
        cmocka_unit_test(test_arg_bool_takes_0_1_true_false),
        cmocka_unit_test(test_arg_negative_refused),
        cmocka_unit_test(test_arg_minus_one_where_it_means_unlimited),
        cmocka_unit_test(test_arg_beyond_c_int_refused),
        cmocka_unit_test(test_arg_frame_size_bounds),
        cmocka_unit_test(test_arg_string_choice_suggests),
        cmocka_unit_test(test_arg_deprecated_min_time_between_pings),
        cmocka_unit_test(test_user_text_is_escaped_in_paths_and_reasons),
        cmocka_unit_test(test_keepalive_idle_timeout_violated),
        cmocka_unit_test(test_keepalive_idle_timeout_with_keepalive_off),
        cmocka_unit_test(test_keepalive_idle_timeout_kept),
        cmocka_unit_test(test_keepalive_idle_timeout_kept_by_server_pings),
        cmocka_unit_test(test_keepalive_pings_without_data_limit),
        cmocka_unit_test(test_keepalive_idle_without_calls),
        cmocka_unit_test(test_keepalive_idle_without_calls_fixed_by_client_idle_timeout),
        cmocka_unit_test(test_keepalive_below_server_min_ping_interval),
        cmocka_unit_test(test_keepalive_at_server_min_ping_interval),
        cmocka_unit_test(test_keepalive_min_ping_interval_warning_without_strikes),
        cmocka_unit_test(test_keepalive_misnamed_server_arg_keeps_default),
        cmocka_unit_test(test_keepalive_permit_mismatch),
        cmocka_unit_test(test_keepalive_timeout_above_time_client),
        cmocka_unit_test(test_keepalive_timeout_above_time_server),
        cmocka_unit_test(test_keepalive_too_frequent),
        cmocka_unit_test(test_keepalive_invalid_value_does_not_cascade),
        cmocka_unit_test(test_age_grace_below_declared_deadline),
        cmocka_unit_test(test_age_grace_below_method_timeout),
        cmocka_unit_test(test_age_without_grace_warns),
        cmocka_unit_test(test_age_too_short),
        cmocka_unit_test(test_reconnect_initial_above_max),
        cmocka_unit_test(test_reconnect_initial_above_default_max),
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
        cmocka_unit_test(test_rule_ids_are_unique),
        cmocka_unit_test(test_method_config_lookup_order),
    };
    return cmocka_run_group_tests(tests, NULL, teardown);
}
