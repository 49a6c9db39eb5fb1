/* Unit tests for turning a channel config into gRPC channel args, the
 * service config string, and Python/Node option text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "chancfg/rl_chancfg.h"

static const char *const k_config =
    "{\"client\": {\"grpc.keepalive_time_ms\": 60000, \"grpc.keepalive_permit_without_calls\": true,"
    " \"grpc.primary_user_agent\": \"relay \\\"one\\\" \\u00e9\","
    " \"service_config\": {\"methodConfig\": [{\"name\": [{\"service\": \"relaylab.Baseline\"}],"
    " \"retryPolicy\": {\"maxAttempts\": 3, \"initialBackoff\": \"0.1s\", \"maxBackoff\": \"1s\","
    " \"backoffMultiplier\": 2, \"retryableStatusCodes\": [\"UNAVAILABLE\"]}}]}},"
    " \"server\": {\"grpc.http2.min_ping_interval_without_data_ms\": 30000,"
    " \"grpc.keepalive_permit_without_calls\": 1, \"grpc.max_connection_age_ms\": 600000,"
    " \"grpc.max_connection_age_grace_ms\": 30000}}";

static int setup(void **state)
{
    rl_chancfg *cfg;
    if (rl_chancfg_parse(k_config, strlen(k_config), &cfg, NULL) != 0)
        return -1;
    *state = cfg;
    return 0;
}

static int teardown(void **state)
{
    rl_chancfg_free(*state);
    return 0;
}

static const grpc_arg *find(const grpc_channel_args *a, const char *key)
{
    for (size_t i = 0; i < a->num_args; i++)
        if (strcmp(a->args[i].key, key) == 0)
            return &a->args[i];
    return NULL;
}

static void test_client_args_in_file_order_with_service_config_last(void **state)
{
    grpc_channel_args *a;
    assert_int_equal(rl_chancfg_channel_args(*state, RL_CHANCFG_CLIENT, NULL, 0, &a), 0);
    assert_int_equal(a->num_args, 4);
    assert_string_equal(a->args[0].key, GRPC_ARG_KEEPALIVE_TIME_MS);
    assert_int_equal(a->args[0].type, GRPC_ARG_INTEGER);
    assert_int_equal(a->args[0].value.integer, 60000);
    assert_string_equal(a->args[1].key, GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS);
    assert_int_equal(a->args[1].value.integer, 1); /* true became 1 */
    assert_int_equal(a->args[2].type, GRPC_ARG_STRING);
    assert_string_equal(a->args[2].value.string, "relay \"one\" \xc3\xa9");
    assert_string_equal(a->args[3].key, GRPC_ARG_SERVICE_CONFIG);
    assert_int_equal(a->args[3].type, GRPC_ARG_STRING);
    json_error_t err;
    json_t *sc = json_loads(a->args[3].value.string, 0, &err);
    assert_non_null(sc);
    json_t *rp = json_object_get(json_array_get(json_object_get(sc, "methodConfig"), 0), "retryPolicy");
    assert_int_equal(json_integer_value(json_object_get(rp, "maxAttempts")), 3);
    json_decref(sc);
    rl_chancfg_args_free(a);
}

static void test_server_args_exclude_client_things(void **state)
{
    grpc_channel_args *a;
    assert_int_equal(rl_chancfg_channel_args(*state, RL_CHANCFG_SERVER, NULL, 0, &a), 0);
    assert_int_equal(a->num_args, 4);
    assert_non_null(find(a, GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS));
    assert_int_equal(find(a, GRPC_ARG_MAX_CONNECTION_AGE_MS)->value.integer, 600000);
    assert_null(find(a, GRPC_ARG_SERVICE_CONFIG));
    assert_null(find(a, GRPC_ARG_KEEPALIVE_TIME_MS));
    rl_chancfg_args_free(a);
}

static void test_extra_args_are_copied_after_the_file_args(void **state)
{
    char key[] = GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL;
    char skey[] = GRPC_ARG_SECONDARY_USER_AGENT_STRING;
    char sval[] = "grader";
    grpc_arg extra[2];
    extra[0].type = GRPC_ARG_INTEGER;
    extra[0].key = key;
    extra[0].value.integer = 1;
    extra[1].type = GRPC_ARG_STRING;
    extra[1].key = skey;
    extra[1].value.string = sval;
    grpc_channel_args *a;
    assert_int_equal(rl_chancfg_channel_args(*state, RL_CHANCFG_CLIENT, extra, 2, &a), 0);
    assert_int_equal(a->num_args, 6);
    assert_string_equal(a->args[4].key, key);
    assert_true(a->args[4].key != key); /* a copy, owned by the args */
    assert_int_equal(a->args[4].value.integer, 1);
    assert_string_equal(a->args[5].value.string, "grader");
    assert_true(a->args[5].value.string != sval);
    rl_chancfg_args_free(a);
}

static void test_pointer_extra_args_are_refused(void **state)
{
    char key[] = "grpc.resource_quota";
    grpc_arg extra;
    memset(&extra, 0, sizeof(extra));
    extra.type = GRPC_ARG_POINTER;
    extra.key = key;
    grpc_channel_args *a = (grpc_channel_args *)1;
    assert_int_equal(rl_chancfg_channel_args(*state, RL_CHANCFG_CLIENT, &extra, 1, &a), RL_EINVAL);
    assert_null(a);
}

static void test_args_outlive_the_config(void **state)
{
    (void)state;
    rl_chancfg *cfg;
    assert_int_equal(rl_chancfg_parse(k_config, strlen(k_config), &cfg, NULL), 0);
    grpc_channel_args *a;
    assert_int_equal(rl_chancfg_channel_args(cfg, RL_CHANCFG_CLIENT, NULL, 0, &a), 0);
    rl_chancfg_free(cfg);
    assert_string_equal(a->args[0].key, GRPC_ARG_KEEPALIVE_TIME_MS);
    assert_non_null(strstr(a->args[3].value.string, "relaylab.Baseline"));
    rl_chancfg_args_free(a);
    rl_chancfg_args_free(NULL);
}

static void test_config_with_errors_gives_no_args(void **state)
{
    (void)state;
    const char *text = "{\"client\": {\"grpc.keepalive_time\": 60000}}";
    rl_chancfg *cfg;
    assert_int_equal(rl_chancfg_parse(text, strlen(text), &cfg, NULL), 0);
    grpc_channel_args *a = (grpc_channel_args *)1;
    assert_int_equal(rl_chancfg_channel_args(cfg, RL_CHANCFG_CLIENT, NULL, 0, &a), RL_EINVAL);
    assert_null(a);
    char *s = (char *)1;
    assert_int_equal(rl_chancfg_format_args(cfg, RL_CHANCFG_CLIENT, RL_CHANCFG_FORMAT_PYTHON, &s), RL_EINVAL);
    assert_null(s);
    rl_chancfg_free(cfg);
}

static void test_config_with_only_warnings_gives_args(void **state)
{
    (void)state;
    const char *text = "{\"server\": {\"grpc.max_connection_age_ms\": 600000}}";
    rl_chancfg *cfg;
    assert_int_equal(rl_chancfg_parse(text, strlen(text), &cfg, NULL), 0);
    grpc_channel_args *a;
    assert_int_equal(rl_chancfg_channel_args(cfg, RL_CHANCFG_SERVER, NULL, 0, &a), 0);
    assert_int_equal(a->num_args, 1);
    rl_chancfg_args_free(a);
    rl_chancfg_free(cfg);
}

static void test_service_config_string(void **state)
{
    char *sc;
    assert_int_equal(rl_chancfg_service_config(*state, &sc), 0);
    assert_string_equal(sc, "{\"methodConfig\":[{\"name\":[{\"service\":\"relaylab.Baseline\"}],"
                            "\"retryPolicy\":{\"maxAttempts\":3,\"initialBackoff\":\"0.1s\","
                            "\"maxBackoff\":\"1s\",\"backoffMultiplier\":2,\"retryableStatusCodes\":"
                            "[\"UNAVAILABLE\"]}}]}");
    free(sc);
}

static void test_service_config_absent_is_null(void **state)
{
    (void)state;
    rl_chancfg *cfg;
    assert_int_equal(rl_chancfg_parse("{}", 2, &cfg, NULL), 0);
    char *sc = (char *)1;
    assert_int_equal(rl_chancfg_service_config(cfg, &sc), 0);
    assert_null(sc);
    rl_chancfg_free(cfg);
}

static void test_fractions_are_printed_short(void **state)
{
    (void)state;
    const char *text = "{\"client\": {\"service_config\": {\"retryThrottling\": "
                       "{\"maxTokens\": 10, \"tokenRatio\": 0.1}}}}";
    rl_chancfg *cfg;
    assert_int_equal(rl_chancfg_parse(text, strlen(text), &cfg, NULL), 0);
    char *sc;
    assert_int_equal(rl_chancfg_service_config(cfg, &sc), 0);
    assert_string_equal(sc, "{\"retryThrottling\":{\"maxTokens\":10,\"tokenRatio\":0.1}}");
    free(sc);
    rl_chancfg_free(cfg);
}

static void test_python_options_text(void **state)
{
    char *s;
    assert_int_equal(rl_chancfg_format_args(*state, RL_CHANCFG_SERVER, RL_CHANCFG_FORMAT_PYTHON, &s), 0);
    assert_string_equal(s, "options=[\n"
                           "    (\"grpc.http2.min_ping_interval_without_data_ms\", 30000),\n"
                           "    (\"grpc.keepalive_permit_without_calls\", 1),\n"
                           "    (\"grpc.max_connection_age_ms\", 600000),\n"
                           "    (\"grpc.max_connection_age_grace_ms\", 30000),\n"
                           "]\n");
    free(s);
}

static void test_python_strings_are_escaped_literals(void **state)
{
    char *s;
    assert_int_equal(rl_chancfg_format_args(*state, RL_CHANCFG_CLIENT, RL_CHANCFG_FORMAT_PYTHON, &s), 0);
    assert_non_null(strstr(s, "(\"grpc.primary_user_agent\", \"relay \\\"one\\\" \xc3\xa9\"),\n"));
    assert_non_null(strstr(s, "(\"grpc.service_config\", \"{\\\"methodConfig\\\":"));
    free(s);
}

static void test_node_options_text(void **state)
{
    char *s;
    assert_int_equal(rl_chancfg_format_args(*state, RL_CHANCFG_SERVER, RL_CHANCFG_FORMAT_NODE, &s), 0);
    assert_string_equal(s, "{\n"
                           "  \"grpc.http2.min_ping_interval_without_data_ms\": 30000,\n"
                           "  \"grpc.keepalive_permit_without_calls\": 1,\n"
                           "  \"grpc.max_connection_age_ms\": 600000,\n"
                           "  \"grpc.max_connection_age_grace_ms\": 30000\n"
                           "}\n");
    /* and it is JSON */
    json_error_t err;
    json_t *j = json_loads(s, 0, &err);
    assert_non_null(j);
    json_decref(j);
    free(s);
}

static void test_empty_side_gives_empty_options(void **state)
{
    (void)state;
    rl_chancfg *cfg;
    assert_int_equal(rl_chancfg_parse("{}", 2, &cfg, NULL), 0);
    char *s;
    assert_int_equal(rl_chancfg_format_args(cfg, RL_CHANCFG_CLIENT, RL_CHANCFG_FORMAT_PYTHON, &s), 0);
    assert_string_equal(s, "options=[\n]\n");
    free(s);
    grpc_channel_args *a;
    assert_int_equal(rl_chancfg_channel_args(cfg, RL_CHANCFG_CLIENT, NULL, 0, &a), 0);
    assert_int_equal(a->num_args, 0);
    rl_chancfg_args_free(a);
    rl_chancfg_free(cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_client_args_in_file_order_with_service_config_last, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_args_exclude_client_things, setup, teardown),
        cmocka_unit_test_setup_teardown(test_extra_args_are_copied_after_the_file_args, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pointer_extra_args_are_refused, setup, teardown),
        cmocka_unit_test(test_args_outlive_the_config),
        cmocka_unit_test(test_config_with_errors_gives_no_args),
        cmocka_unit_test(test_config_with_only_warnings_gives_args),
        cmocka_unit_test_setup_teardown(test_service_config_string, setup, teardown),
        cmocka_unit_test(test_service_config_absent_is_null),
        cmocka_unit_test(test_fractions_are_printed_short),
        cmocka_unit_test_setup_teardown(test_python_options_text, setup, teardown),
        cmocka_unit_test_setup_teardown(test_python_strings_are_escaped_literals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_node_options_text, setup, teardown),
        cmocka_unit_test(test_empty_side_gives_empty_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
