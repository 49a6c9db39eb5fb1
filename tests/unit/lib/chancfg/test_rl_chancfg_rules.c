/* Unit tests for the channel-config checker's sections and args: every rule,
 * once broken and once kept (the service config's: test_rl_chancfg_sc.c).
 * Configs are written with single quotes for readability; check()
 * (chancfg_check.h) turns them into JSON and asserts the report's
 * invariants: known rule ids, one-line paths and reasons. */
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
/* ---- the reference config ---- */

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
        cmocka_unit_test(test_rule_ids_are_unique),
    };
    return cmocka_run_group_tests(tests, NULL, teardown);
}
