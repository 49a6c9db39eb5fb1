/* Unit tests for channel-config loading and the shared helpers: JSON error
 * positions, unreadable files, did-you-mean, durations, status names, value
 * lookups with gRPC's defaults, and out-of-memory returned at every
 * allocation instead of aborting. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "chancfg/rl_chancfg_int.h"
#include "rl_test_oom.h"

static rl_chancfg *parse_ok(const char *text)
{
    rl_chancfg *cfg = NULL;
    rl_chancfg_diag diag;
    int rc = rl_chancfg_parse(text, strlen(text), &cfg, &diag);
    if (rc != 0)
        fail_msg("parse failed: %d:%d %s", diag.line, diag.column, diag.text);
    return cfg;
}

/* ---- JSON errors ---- */

static void test_parse_error_has_line_and_column(void **state)
{
    (void)state;
    const char *text = "{\n  \"client\": {\n    \"grpc.keepalive_time_ms\": 60000,\n  }\n}\n";
    rl_chancfg *cfg = (rl_chancfg *)1;
    rl_chancfg_diag diag;
    assert_int_equal(rl_chancfg_parse(text, strlen(text), &cfg, &diag), RL_EPARSE);
    assert_null(cfg);
    assert_int_equal(diag.line, 4);
    assert_int_equal(diag.column, 3);
    assert_non_null(strstr(diag.text, "'}'") ? diag.text : strstr(diag.text, "expected"));
}

static void test_parse_duplicate_key_is_an_error_with_position(void **state)
{
    (void)state;
    const char *text = "{\"client\": {\"grpc.keepalive_time_ms\": 1,\n \"grpc.keepalive_time_ms\": 2}}";
    rl_chancfg *cfg;
    rl_chancfg_diag diag;
    assert_int_equal(rl_chancfg_parse(text, strlen(text), &cfg, &diag), RL_EPARSE);
    assert_int_equal(diag.line, 2);
    assert_non_null(strstr(diag.text, "duplicate"));
}

static void test_parse_empty_input_is_an_error(void **state)
{
    (void)state;
    rl_chancfg *cfg;
    rl_chancfg_diag diag;
    assert_int_equal(rl_chancfg_parse("", 0, &cfg, &diag), RL_EPARSE);
    assert_int_equal(rl_chancfg_parse("  \n", 3, &cfg, NULL), RL_EPARSE);
}

static void test_parse_trailing_garbage_is_an_error(void **state)
{
    (void)state;
    rl_chancfg *cfg;
    rl_chancfg_diag diag;
    assert_int_equal(rl_chancfg_parse("{} {}", 5, &cfg, &diag), RL_EPARSE);
    assert_int_equal(diag.line, 1);
}

static void test_parse_needs_no_terminating_nul(void **state)
{
    (void)state;
    const char text[] = {'{', '}', 'x'};
    rl_chancfg *cfg;
    assert_int_equal(rl_chancfg_parse(text, 2, &cfg, NULL), 0);
    rl_chancfg_free(cfg);
}

static void test_parse_too_big_is_refused(void **state)
{
    (void)state;
    size_t n = RL_CHANCFG_MAX_BYTES + 1;
    char *big = malloc(n);
    assert_non_null(big);
    memset(big, ' ', n);
    rl_chancfg *cfg;
    rl_chancfg_diag diag;
    assert_int_equal(rl_chancfg_parse(big, n, &cfg, &diag), RL_ETOOBIG);
    free(big);
}

static void test_load_missing_file_is_not_found(void **state)
{
    (void)state;
    rl_chancfg *cfg;
    rl_chancfg_diag diag;
    assert_int_equal(rl_chancfg_load("/nonexistent/relaylab.json", &cfg, &diag), RL_ENOTFOUND);
    assert_non_null(strstr(diag.text, "No such file"));
}

static void test_load_directory_is_unreadable(void **state)
{
    (void)state;
    rl_chancfg *cfg;
    rl_chancfg_diag diag;
    assert_int_equal(rl_chancfg_load("/tmp", &cfg, &diag), RL_EINVAL);
    assert_non_null(strstr(diag.text, "not a regular file"));
}

/* A FIFO no one writes is refused at once: open() and read() of it used
 * to wait for ever (the test's time limit would end it). */
static void test_load_refuses_a_fifo_at_once(void **state)
{
    (void)state;
    char dir[] = "/tmp/rl_chancfg_fifo_XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/c.json", dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    rl_chancfg *cfg;
    rl_chancfg_diag diag;
    assert_int_equal(rl_chancfg_load(path, &cfg, &diag), RL_EINVAL);
    assert_non_null(strstr(diag.text, "not a regular file"));
    unlink(path);
    rmdir(dir);
}

static void test_load_reads_a_file_larger_than_one_read(void **state)
{
    (void)state;
    char path[] = "/tmp/rl_chancfg_test_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    /* 20 KiB of whitespace around a small object: several reads and grows. */
    char pad[1024];
    memset(pad, ' ', sizeof(pad));
    for (int i = 0; i < 10; i++)
        assert_int_equal(write(fd, pad, sizeof(pad)), sizeof(pad));
    const char *obj = "{\"client\": {\"grpc.keepalive_time_ms\": 60000}}";
    assert_int_equal(write(fd, obj, strlen(obj)), (ssize_t)strlen(obj));
    for (int i = 0; i < 10; i++)
        assert_int_equal(write(fd, pad, sizeof(pad)), sizeof(pad));
    close(fd);
    rl_chancfg *cfg;
    assert_int_equal(rl_chancfg_load(path, &cfg, NULL), 0);
    int64_t v;
    bool configured;
    assert_int_equal(rl_chancfg_effective_int(cfg, RL_CHANCFG_CLIENT, "grpc.keepalive_time_ms", &v, &configured), 0);
    assert_int_equal(v, 60000);
    assert_true(configured);
    rl_chancfg_free(cfg);
    unlink(path);
}

/* ---- helpers ---- */

static void test_edit_distance_counts_edits_case_insensitively(void **state)
{
    (void)state;
    assert_int_equal(cc_edit_distance("", ""), 0);
    assert_int_equal(cc_edit_distance("abc", "abc"), 0);
    assert_int_equal(cc_edit_distance("UNAVAILABLE", "unavailable"), 0);
    assert_int_equal(cc_edit_distance("kitten", "sitting"), 3);
    assert_int_equal(cc_edit_distance("abc", ""), 3);
    char longer[200];
    memset(longer, 'a', sizeof(longer) - 1);
    longer[sizeof(longer) - 1] = '\0';
    assert_int_equal(cc_edit_distance(longer, "a"), 255);
}

static void test_suggest_finds_typos_and_not_strangers(void **state)
{
    (void)state;
    size_t n;
    const cc_argdef *t = cc_argdef_table(&n);
    assert_string_equal(cc_suggest("grpc.keepalive_timeout", t, n, sizeof(t[0])), "grpc.keepalive_timeout_ms");
    assert_string_equal(cc_suggest("grpc.keeplive_time_ms", t, n, sizeof(t[0])), "grpc.keepalive_time_ms");
    assert_string_equal(cc_suggest("max_connection_age_ms", t, n, sizeof(t[0])), "grpc.max_connection_age_ms");
    assert_null(cc_suggest("colour", t, n, sizeof(t[0])));
    assert_null(cc_suggest("grpc.totally_different_thing", t, n, sizeof(t[0])));
}

static void test_argdef_names_are_grpc_strings(void **state)
{
    (void)state;
    /* The catalogue is built from gRPC's macros: spot-check the classic. */
    const cc_argdef *d = cc_argdef_find("grpc.http2.min_ping_interval_without_data_ms");
    assert_non_null(d);
    assert_string_equal(d->macro, "GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS");
    assert_int_equal(d->sides, CC_SIDE_SERVER);
    assert_null(cc_argdef_find("grpc.http2.min_recv_ping_interval_without_data_ms"));
    size_t n;
    const cc_argdef *t = cc_argdef_table(&n);
    for (size_t i = 0; i < n; i++) {
        assert_true(strncmp(t[i].name, "grpc", 4) == 0);
        assert_true(strncmp(t[i].macro, "GRPC_", 5) == 0);
        for (size_t j = i + 1; j < n; j++)
            assert_string_not_equal(t[i].name, t[j].name);
    }
}

static void test_duration_accepts_proto3_forms(void **state)
{
    (void)state;
    cc_duration d;
    const char *why;
    assert_true(cc_parse_duration("0.1s", &d, &why));
    assert_int_equal(d.seconds, 0);
    assert_int_equal(d.nanos, 100000000);
    assert_int_equal(cc_duration_ms(&d), 100);
    assert_true(cc_parse_duration("30s", &d, &why));
    assert_int_equal(cc_duration_ms(&d), 30000);
    assert_true(cc_parse_duration("1.000000001s", &d, &why));
    assert_int_equal(d.nanos, 1);
    assert_true(cc_parse_duration("315576000000s", &d, &why));
}

static void test_duration_refuses_what_grpc_refuses(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "1", "1ms", "-1s", ".5s", "1.s", "0.0000000001s", "1.5S", "1e3s", "", "315576000001s", "99999999999999999999s"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cc_duration d;
        const char *why = NULL;
        if (cc_parse_duration(bad[i], &d, &why))
            fail_msg("\"%s\" accepted", bad[i]);
        assert_non_null(why);
    }
}

static void test_duration_below_a_millisecond_is_zero_ms(void **state)
{
    (void)state;
    cc_duration d;
    const char *why;
    assert_true(cc_parse_duration("0.0009s", &d, &why));
    assert_int_equal(cc_duration_ms(&d), 0);
}

static void test_status_names_round_trip(void **state)
{
    (void)state;
    for (int i = 0; i <= 16; i++)
        assert_int_equal(cc_status_from_name(cc_status_name(i)), i);
    assert_string_equal(cc_status_name(14), "UNAVAILABLE");
    assert_int_equal(cc_status_from_name("unavailable"), -1);
    assert_null(cc_status_name(17));
}

static void test_path_quotes_keys_that_are_not_identifiers(void **state)
{
    (void)state;
    cc_buf b;
    cc_buf_init(&b);
    cc_buf_puts(&b, "$");
    cc_buf_path_key(&b, "client");
    cc_buf_path_key(&b, "grpc.keepalive_time_ms");
    cc_buf_path_key(&b, "a\"b");
    assert_string_equal(cc_buf_str(&b), "$.client[\"grpc.keepalive_time_ms\"][\"a\\\"b\"]");
    cc_buf_fini(&b);
}

static void test_user_text_is_cut_and_escaped(void **state)
{
    (void)state;
    cc_buf b;
    cc_buf_init(&b);
    char longer[100];
    memset(longer, 'x', sizeof(longer) - 1);
    longer[sizeof(longer) - 1] = '\0';
    cc_buf_user(&b, longer);
    assert_int_equal(strlen(cc_buf_str(&b)), 60 + 2 + 3);
    cc_buf_fini(&b);
    cc_buf_user(&b, "a\nb\xc3\xa9");
    assert_string_equal(cc_buf_str(&b), "\"a\\x0ab\\xc3\\xa9\"");
    cc_buf_fini(&b);
}

/* ---- values with gRPC's defaults ---- */

static void test_effective_int_falls_back_to_grpc_defaults(void **state)
{
    (void)state;
    rl_chancfg *cfg = parse_ok("{}");
    int64_t v;
    bool configured = true;
    assert_int_equal(rl_chancfg_effective_int(cfg, RL_CHANCFG_CLIENT, "grpc.keepalive_time_ms", &v, &configured), 0);
    assert_int_equal(v, INT32_MAX);
    assert_false(configured);
    assert_int_equal(rl_chancfg_effective_int(cfg, RL_CHANCFG_SERVER, "grpc.keepalive_time_ms", &v, NULL), 0);
    assert_int_equal(v, 7200000);
    assert_int_equal(
        rl_chancfg_effective_int(cfg, RL_CHANCFG_SERVER, "grpc.http2.min_ping_interval_without_data_ms", &v, NULL), 0);
    assert_int_equal(v, 300000);
    assert_int_equal(rl_chancfg_effective_int(cfg, RL_CHANCFG_SERVER, "grpc.http2.max_ping_strikes", &v, NULL), 0);
    assert_int_equal(v, 2);
    rl_chancfg_free(cfg);
}

static void test_effective_int_knows_sides(void **state)
{
    (void)state;
    rl_chancfg *cfg = parse_ok("{\"client\": {\"grpc.keepalive_permit_without_calls\": true}}");
    int64_t v;
    bool configured;
    assert_int_equal(
        rl_chancfg_effective_int(cfg, RL_CHANCFG_CLIENT, "grpc.keepalive_permit_without_calls", &v, &configured), 0);
    assert_int_equal(v, 1);
    assert_true(configured);
    assert_int_equal(rl_chancfg_effective_int(cfg, RL_CHANCFG_CLIENT, "grpc.http2.max_ping_strikes", &v, NULL),
                     RL_ENOTFOUND);
    assert_int_equal(rl_chancfg_effective_int(cfg, RL_CHANCFG_CLIENT, "grpc.nonsense", &v, NULL), RL_ENOTFOUND);
    rl_chancfg_free(cfg);
}

static void test_effective_int_ignores_invalid_values(void **state)
{
    (void)state;
    rl_chancfg *cfg = parse_ok("{\"client\": {\"grpc.keepalive_time_ms\": -5}}");
    int64_t v;
    bool configured = true;
    assert_int_equal(rl_chancfg_effective_int(cfg, RL_CHANCFG_CLIENT, "grpc.keepalive_time_ms", &v, &configured), 0);
    assert_int_equal(v, INT32_MAX);
    assert_false(configured);
    rl_chancfg_free(cfg);
}

static void test_intermediary_read(void **state)
{
    (void)state;
    rl_chancfg *cfg = parse_ok("{\"intermediary\": {\"idle_timeout_ms\": 350000, \"kind\": \"nat\"}}");
    int64_t idle;
    const char *kind;
    assert_int_equal(rl_chancfg_intermediary(cfg, &idle, &kind), 0);
    assert_int_equal(idle, 350000);
    assert_string_equal(kind, "nat");
    rl_chancfg_free(cfg);
    cfg = parse_ok("{}");
    assert_int_equal(rl_chancfg_intermediary(cfg, &idle, &kind), RL_ENOTFOUND);
    rl_chancfg_free(cfg);
}

static void test_report_add_find_and_reuse(void **state)
{
    (void)state;
    rl_chancfg_report rep;
    rl_chancfg_report_init(&rep);
    for (int i = 0; i < 40; i++) /* past the first growth */
        assert_int_equal(rl_chancfg_report_add(&rep, i % 2 ? RL_CHANCFG_WARNING : RL_CHANCFG_ERROR,
                                               i == 33 ? "grpc.rejected" : "arg.unknown", "$", "why"),
                         0);
    assert_int_equal(rep.nfindings, 40);
    assert_int_equal(rep.nerrors, 20);
    assert_int_equal(rep.nwarnings, 20);
    const rl_chancfg_finding *f = rl_chancfg_report_find(&rep, "grpc.rejected");
    assert_non_null(f);
    assert_int_equal(f - rep.findings, 33);
    assert_null(rl_chancfg_report_find(&rep, "keepalive.idle-timeout"));
    rl_chancfg_report_fini(&rep);
    assert_int_equal(rep.nfindings, 0);
    assert_null(rep.findings);
    rl_chancfg_report_fini(&rep);
}

/* ---- out of memory ---- */

/* One pass over everything a caller does with a config. Returns true if
 * every step succeeded; each step may only fail with RL_ENOMEM. */
static bool full_pass(const char *text, bool clean)
{
    rl_chancfg *cfg = NULL;
    int rc = rl_chancfg_parse(text, strlen(text), &cfg, NULL);
    if (rc) {
        assert_int_equal(rc, RL_ENOMEM);
        return false;
    }
    bool ok = true;
    rl_chancfg_report rep;
    rl_chancfg_report_init(&rep);
    rc = rl_chancfg_check(cfg, &rep);
    if (rc) {
        assert_int_equal(rc, RL_ENOMEM);
        ok = false;
    }
    rl_chancfg_report_fini(&rep);
    for (int side = 0; side < 2; side++) {
        grpc_channel_args *a = NULL;
        rc = rl_chancfg_channel_args(cfg, side ? RL_CHANCFG_SERVER : RL_CHANCFG_CLIENT, NULL, 0, &a);
        if (rc) {
            /* A config with errors is refused whenever memory suffices. */
            assert_int_equal(rc, clean ? RL_ENOMEM : rc == RL_ENOMEM ? RL_ENOMEM : RL_EINVAL);
            assert_null(a);
            ok = ok && !clean && rc == RL_EINVAL;
        }
        rl_chancfg_args_free(a);
        char *s = NULL;
        rc = rl_chancfg_format_args(cfg, side ? RL_CHANCFG_SERVER : RL_CHANCFG_CLIENT,
                                    side ? RL_CHANCFG_FORMAT_NODE : RL_CHANCFG_FORMAT_PYTHON, &s);
        if (rc) {
            assert_int_equal(rc, clean ? RL_ENOMEM : rc == RL_ENOMEM ? RL_ENOMEM : RL_EINVAL);
            assert_null(s);
            ok = ok && !clean && rc == RL_EINVAL;
        }
        rl_test_oom_free(s);
    }
    char *sc = NULL;
    rc = rl_chancfg_service_config(cfg, &sc);
    if (rc) {
        assert_int_equal(rc, RL_ENOMEM);
        ok = false;
    }
    rl_test_oom_free(sc);
    rl_chancfg_free(cfg);
    return ok;
}

/* Fails each of the library's allocations in turn. jansson keeps its own
 * allocator: it is not safe under allocation failure (measured with 2.14: a
 * failed allocation in its lexer silently truncated a key, "idle_timeout_m"),
 * so the library's guarantee covers its own allocations only. */
typedef struct sweep_arg {
    const char *text;
    bool clean;
} sweep_arg;

static bool sweep_pass(void *arg)
{
    const sweep_arg *a = arg;
    return full_pass(a->text, a->clean);
}

static void sweep(const char *text, bool clean)
{
    sweep_arg a = {text, clean};
    rl_chancfg_set_alloc_funcs(rl_test_oom_malloc, rl_test_oom_free);
    long passes = rl_test_oom_sweep(sweep_pass, &a);
    rl_chancfg_set_alloc_funcs(NULL, NULL);
    assert_true(passes > 20); /* it really went through many allocations */
}

static void test_out_of_memory_is_returned_at_every_allocation(void **state)
{
    (void)state;
    sweep("{\"intermediary\": {\"idle_timeout_ms\": 350000}, \"client\": {"
          "\"grpc.keepalive_time_ms\": 60000, \"grpc.keepalive_permit_without_calls\": 1,"
          "\"grpc.http2.max_pings_without_data\": 0, \"grpc.primary_user_agent\": \"x\","
          "\"service_config\": {\"methodConfig\": [{\"name\": [{\"service\": \"relaylab.Baseline\"}],"
          "\"retryPolicy\": {\"maxAttempts\": 3, \"initialBackoff\": \"0.1s\", \"maxBackoff\": \"1s\","
          "\"backoffMultiplier\": 2, \"retryableStatusCodes\": [\"UNAVAILABLE\"]}}]}},"
          "\"server\": {\"grpc.http2.min_ping_interval_without_data_ms\": 30000,"
          "\"grpc.keepalive_permit_without_calls\": 1}}",
          true);
}

static void test_out_of_memory_while_reporting_many_findings(void **state)
{
    (void)state;
    sweep("{\"clients\": 1, \"client\": {\"grpc.keepalive_time\": 1, \"x\": 2, "
          "\"service_config\": {\"methodConfig\": [{\"name\": [{\"service\": \"a\"}, {\"service\": \"a\"}],"
          "\"retryPolicy\": {\"maxAttempts\": 1, \"retryableStatusCodes\": [14, \"nope\"]}}]}}}",
          false);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_error_has_line_and_column),
        cmocka_unit_test(test_parse_duplicate_key_is_an_error_with_position),
        cmocka_unit_test(test_parse_empty_input_is_an_error),
        cmocka_unit_test(test_parse_trailing_garbage_is_an_error),
        cmocka_unit_test(test_parse_needs_no_terminating_nul),
        cmocka_unit_test(test_parse_too_big_is_refused),
        cmocka_unit_test(test_load_missing_file_is_not_found),
        cmocka_unit_test(test_load_directory_is_unreadable),
        cmocka_unit_test(test_load_refuses_a_fifo_at_once),
        cmocka_unit_test(test_load_reads_a_file_larger_than_one_read),
        cmocka_unit_test(test_edit_distance_counts_edits_case_insensitively),
        cmocka_unit_test(test_suggest_finds_typos_and_not_strangers),
        cmocka_unit_test(test_argdef_names_are_grpc_strings),
        cmocka_unit_test(test_duration_accepts_proto3_forms),
        cmocka_unit_test(test_duration_refuses_what_grpc_refuses),
        cmocka_unit_test(test_duration_below_a_millisecond_is_zero_ms),
        cmocka_unit_test(test_status_names_round_trip),
        cmocka_unit_test(test_path_quotes_keys_that_are_not_identifiers),
        cmocka_unit_test(test_user_text_is_cut_and_escaped),
        cmocka_unit_test(test_effective_int_falls_back_to_grpc_defaults),
        cmocka_unit_test(test_effective_int_knows_sides),
        cmocka_unit_test(test_effective_int_ignores_invalid_values),
        cmocka_unit_test(test_intermediary_read),
        cmocka_unit_test(test_report_add_find_and_reuse),
        cmocka_unit_test(test_out_of_memory_is_returned_at_every_allocation),
        cmocka_unit_test(test_out_of_memory_while_reporting_many_findings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
