/* Unit tests for world files and for putting a config into a world: which
 * deployment a variant picks (by name, by seed, by default), what a
 * malformed world is refused for, what rl_chancfg_in_world replaces and
 * notes, that the rules then judge the world's values, and out-of-memory
 * returned at every allocation of this module. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "chancfg/rl_chancfg_int.h"
#include "rl_test_oom.h"

static const char *const THREE =
    "{\"description\": \"three deployments\", \"default\": \"two\", \"deployments\": ["
    " {\"name\": \"one\", \"intermediary\": {\"kind\": \"nat\", \"idle_timeout_ms\": 100000}},"
    " {\"name\": \"two\", \"description\": \"the default\","
    "  \"intermediary\": {\"kind\": \"l4-lb\", \"idle_timeout_ms\": 240000},"
    "  \"calls\": {\"longest_deadline_ms\": 120000},"
    "  \"server\": {\"grpc.http2.min_ping_interval_without_data_ms\": 120000,"
    "             \"grpc.keepalive_permit_without_calls\": 1}},"
    " {\"name\": \"three\", \"intermediary\": {\"kind\": \"firewall\", \"idle_timeout_ms\": 600000}}]}";

/* Writes |text| to a fresh temporary file; the caller unlinks |path|. */
static void write_file(char *path, size_t len, const char *text)
{
    snprintf(path, len, "/tmp/rl_world_test.XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t n = strlen(text);
    assert_int_equal(write(fd, text, n), (ssize_t)n);
    close(fd);
}

static int load_text(const char *text, const char *variant, rl_chancfg_world *w, char *err, size_t errlen)
{
    char path[64];
    write_file(path, sizeof path, text);
    int rc = rl_chancfg_world_load(path, variant, w, err, errlen);
    unlink(path);
    return rc;
}

static rl_chancfg *parse_ok(const char *text)
{
    rl_chancfg *cfg = NULL;
    assert_int_equal(rl_chancfg_parse(text, strlen(text), &cfg, NULL), 0);
    return cfg;
}

/* The FNV-1a-64 pick, written out independently of the library. */
static size_t fnv_pick(const char *seed, size_t n)
{
    uint64_t h = 14695981039346656037ull;
    for (const char *p = seed; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    return (size_t)(h % n);
}

/* ---- picking a deployment ---- */

static void test_no_variant_picks_the_default(void **state)
{
    (void)state;
    rl_chancfg_world w;
    char err[256];
    assert_int_equal(load_text(THREE, NULL, &w, err, sizeof err), 0);
    assert_string_equal(w.name, "two");
    assert_string_equal(w.description, "the default");
    assert_int_equal(w.index, 1);
    assert_int_equal(w.count, 3);
    assert_false(w.by_seed);
    int64_t idle;
    const char *kind;
    assert_int_equal(rl_chancfg_intermediary(w.deployment, &idle, &kind), 0);
    assert_int_equal(idle, 240000);
    assert_string_equal(kind, "l4-lb");
    rl_chancfg_world_fini(&w);
    assert_null(w.deployment);
    rl_chancfg_world_fini(&w); /* twice is harmless */
}

static void test_variant_naming_a_deployment_picks_it(void **state)
{
    (void)state;
    rl_chancfg_world w;
    char err[256];
    assert_int_equal(load_text(THREE, "three", &w, err, sizeof err), 0);
    assert_string_equal(w.name, "three");
    assert_false(w.by_seed);
    rl_chancfg_world_fini(&w);
}

static void test_seed_picks_by_fnv1a64_and_covers_every_deployment(void **state)
{
    (void)state;
    bool seen[3] = {false, false, false};
    char seed[32];
    for (int i = 0; i < 30; i++) {
        snprintf(seed, sizeof seed, "student-%d", i);
        rl_chancfg_world w, again;
        char err[256];
        assert_int_equal(load_text(THREE, seed, &w, err, sizeof err), 0);
        assert_int_equal(load_text(THREE, seed, &again, err, sizeof err), 0);
        assert_int_equal(w.index, fnv_pick(seed, 3));
        assert_int_equal(w.index, again.index); /* the same seed, the same world */
        assert_true(w.by_seed);
        seen[w.index] = true;
        rl_chancfg_world_fini(&w);
        rl_chancfg_world_fini(&again);
    }
    assert_true(seen[0] && seen[1] && seen[2]);
}

static void test_a_single_deployment_file_is_the_world(void **state)
{
    (void)state;
    rl_chancfg_world w;
    char err[256];
    assert_int_equal(load_text("{\"calls\": {\"longest_deadline_ms\": 2000}}", "anyone", &w, err, sizeof err), 0);
    assert_string_equal(w.name, "world");
    assert_int_equal(w.count, 1);
    assert_false(w.by_seed); /* one choice: nothing was picked */
    int64_t ms, idle;
    assert_int_equal(rl_chancfg_calls_deadline(w.deployment, &ms), 0);
    assert_int_equal(ms, 2000);
    assert_int_equal(rl_chancfg_intermediary(w.deployment, &idle, NULL), RL_ENOTFOUND);
    char desc[256];
    rl_chancfg_world_describe(&w, desc, sizeof desc);
    assert_string_equal(desc, "world: no intermediary on the path; calls run up to 2000 ms");
    rl_chancfg_world_fini(&w);
}

static void test_backend_states_the_failures_in_a_row(void **state)
{
    (void)state;
    rl_chancfg_world w;
    char err[256], desc[256];
    assert_int_equal(
        load_text("{\"name\": \"r\", \"backend\": {\"unavailable_in_a_row\": 3}}", NULL, &w, err, sizeof err), 0);
    assert_int_equal(w.unavailable_in_a_row, 3);
    rl_chancfg_world_describe(&w, desc, sizeof desc);
    assert_string_equal(desc, "r: no intermediary on the path; a restarting backend fails up to 3 attempts in a row "
                              "UNAVAILABLE");
    /* Not a config section: the config put into the world does not carry it. */
    rl_chancfg *cfg = parse_ok("{}"), *out;
    assert_int_equal(rl_chancfg_in_world(cfg, &w, &out, NULL), 0);
    rl_chancfg_report rep;
    rl_chancfg_report_init(&rep);
    assert_int_equal(rl_chancfg_check(out, &rep), 0);
    assert_int_equal(rep.nfindings, 0);
    rl_chancfg_report_fini(&rep);
    rl_chancfg_free(out);
    rl_chancfg_free(cfg);
    rl_chancfg_world_fini(&w);
    assert_int_equal(load_text("{\"name\": \"r\"}", NULL, &w, err, sizeof err), 0);
    assert_int_equal(w.unavailable_in_a_row, 0);
    rl_chancfg_world_fini(&w);
}

static void test_describe_states_the_numbers(void **state)
{
    (void)state;
    rl_chancfg_world w;
    char err[256], desc[512];
    assert_int_equal(load_text(THREE, NULL, &w, err, sizeof err), 0);
    rl_chancfg_world_describe(&w, desc, sizeof desc);
    assert_string_equal(desc, "two: an l4-lb that drops connections idle for 240000 ms; calls run up to 120000 ms; "
                              "the platform fixes the servers' grpc.http2.min_ping_interval_without_data_ms "
                              "120000, grpc.keepalive_permit_without_calls 1");
    char small[8];
    rl_chancfg_world_describe(&w, small, sizeof small);
    assert_string_equal(small, "two: an");
    rl_chancfg_world_fini(&w);
}

/* ---- malformed worlds ---- */

static void refused(const char *text, const char *variant, int want_rc, const char *want_text)
{
    rl_chancfg_world w;
    char err[512] = "";
    int rc = load_text(text, variant, &w, err, sizeof err);
    if (rc != want_rc || !strstr(err, want_text))
        fail_msg("rc %d (want %d), err \"%s\" (want \"%s\")", rc, want_rc, err, want_text);
    assert_null(w.deployment);
}

static void test_malformed_worlds_are_refused_with_a_reason(void **state)
{
    (void)state;
    refused("[1]", NULL, RL_EINVAL, "a world file is a JSON object");
    refused("{\"deployments\": []}", NULL, RL_EINVAL, "1..64 deployments");
    refused("{\"deployments\": [{\"intermediary\": {\"idle_timeout_ms\": 1}}]}", NULL, RL_EINVAL,
            "deployments[0] needs a \"name\"");
    refused("{\"deployments\": [{\"name\": \"Azure LB\"}]}", NULL, RL_EINVAL, "needs a \"name\"");
    refused("{\"deployments\": [{\"name\": \"a\"}, {\"name\": \"a\"}]}", NULL, RL_EINVAL,
            "deployments[1] repeats the name of deployments[0]");
    refused("{\"default\": \"b\", \"deployments\": [{\"name\": \"a\"}]}", NULL, RL_EINVAL,
            "default \"b\" names no deployment");
    refused("{\"deployments\": [{\"name\": \"a\"}], \"extra\": 1}", NULL, RL_EINVAL, "not \"extra\"");
    /* A deployment states the world, not a client's choices. */
    refused("{\"name\": \"a\", \"client\": {}}", NULL, RL_EINVAL, "has a field \"client\"");
    /* Its sections follow the format's rules: a misspelt arg would fix nothing. */
    refused("{\"name\": \"a\", \"server\": {\"grpc.http2.min_recv_ping_interval_without_data_ms\": 1000}}", NULL,
            RL_EINVAL, "error[arg.macro-name]");
    refused("{\"name\": \"a\", \"intermediary\": {\"kind\": \"nat\"}}", NULL, RL_EINVAL, "error[schema.required]");
    refused("{\"name\": \"a\", \"server\": {\"grpc.enable_retries\": 1}}", NULL, RL_EINVAL, "error[arg.wrong-side]");
    refused("{\"name\": \"a\",}", NULL, RL_EPARSE, "invalid JSON");
    /* gRPC clamps maxAttempts to 5: a fifth failure in a row is unbeatable. */
    refused("{\"backend\": {\"unavailable_in_a_row\": 5}}", NULL, RL_EINVAL, "backend must be");
    refused("{\"backend\": {\"unavailable_in_a_row\": 2, \"x\": 1}}", NULL, RL_EINVAL, "backend must be");
    rl_chancfg_world w;
    char err[256];
    assert_int_equal(rl_chancfg_world_load("/nonexistent/world.json", NULL, &w, err, sizeof err), RL_ENOTFOUND);
    assert_non_null(strstr(err, "/nonexistent/world.json"));
}

static void test_a_world_alone_breaks_no_combining_rule(void **state)
{
    (void)state;
    /* An intermediary and no keepalive is a world, not a broken config. */
    rl_chancfg_world w;
    char err[256];
    assert_int_equal(load_text("{\"intermediary\": {\"idle_timeout_ms\": 1000},"
                               " \"calls\": {\"longest_deadline_ms\": 5000},"
                               " \"server\": {\"grpc.max_connection_age_ms\": 1000,"
                               "             \"grpc.max_connection_age_grace_ms\": 10}}",
                               NULL, &w, err, sizeof err),
                     0);
    rl_chancfg_world_fini(&w);
}

/* ---- putting a config into the world ---- */

static rl_chancfg *in_world(const char *world_text, const char *variant, const char *cfg_text, rl_chancfg_report *notes)
{
    rl_chancfg_world w;
    char err[256];
    assert_int_equal(load_text(world_text, variant, &w, err, sizeof err), 0);
    rl_chancfg *cfg = parse_ok(cfg_text), *out = NULL;
    assert_int_equal(rl_chancfg_in_world(cfg, &w, &out, notes), 0);
    rl_chancfg_free(cfg);
    rl_chancfg_world_fini(&w);
    return out;
}

static void test_the_world_replaces_what_the_config_declares(void **state)
{
    (void)state;
    /* The example: a 24 h NAT declared so that 2 h keepalives look right. */
    const char *text = "{\"intermediary\": {\"kind\": \"nat\", \"idle_timeout_ms\": 86400000},"
                       " \"calls\": {\"longest_deadline_ms\": 30000},"
                       " \"client\": {\"grpc.keepalive_time_ms\": 7200000, \"grpc.keepalive_permit_without_calls\": 1,"
                       "            \"grpc.http2.max_pings_without_data\": 0},"
                       " \"server\": {\"grpc.keepalive_time_ms\": 7200000,"
                       "            \"grpc.http2.min_ping_interval_without_data_ms\": 3600000,"
                       "            \"grpc.keepalive_permit_without_calls\": true}}";
    rl_chancfg_report notes;
    rl_chancfg_report_init(&notes);
    rl_chancfg *cfg = in_world(THREE, NULL, text, &notes);

    int64_t v;
    const char *kind;
    assert_int_equal(rl_chancfg_intermediary(cfg, &v, &kind), 0);
    assert_int_equal(v, 240000);
    assert_string_equal(kind, "l4-lb");
    assert_int_equal(rl_chancfg_calls_deadline(cfg, &v), 0);
    assert_int_equal(v, 120000);
    assert_int_equal(
        rl_chancfg_effective_int(cfg, RL_CHANCFG_SERVER, "grpc.http2.min_ping_interval_without_data_ms", &v, NULL), 0);
    assert_int_equal(v, 120000);
    /* The config's own choices stay. */
    assert_int_equal(rl_chancfg_effective_int(cfg, RL_CHANCFG_SERVER, "grpc.keepalive_time_ms", &v, NULL), 0);
    assert_int_equal(v, 7200000);

    /* Three notes, at the paths of what was ignored; true and 1 agree. */
    assert_int_equal(notes.nfindings, 3);
    assert_int_equal(notes.nwarnings, 3);
    assert_string_equal(notes.findings[0].rule, "world.ignored");
    assert_string_equal(notes.findings[0].path, "$.intermediary");
    assert_non_null(strstr(notes.findings[0].why, "\"two\" has an l4-lb that drops connections idle for 240000 ms"));
    assert_non_null(strstr(notes.findings[0].why, "the nat declared here (86400000 ms) is ignored"));
    assert_string_equal(notes.findings[1].path, "$.calls");
    assert_non_null(strstr(notes.findings[1].why, "run up to 120000 ms; the 30000 ms declared here is ignored"));
    assert_string_equal(notes.findings[2].path, "$.server[\"grpc.http2.min_ping_interval_without_data_ms\"]");
    assert_non_null(strstr(notes.findings[2].why, "fixes this server arg at 120000"));

    /* And the rules judge the world's values: 2 h is not below 240 s. */
    rl_chancfg_report rep;
    rl_chancfg_report_init(&rep);
    assert_int_equal(rl_chancfg_check(cfg, &rep), 0);
    const rl_chancfg_finding *f = rl_chancfg_report_find(&rep, "keepalive.idle-timeout");
    assert_non_null(f);
    assert_non_null(strstr(f->why, "240000 ms"));
    rl_chancfg_report_fini(&rep);
    rl_chancfg_report_fini(&notes);
    rl_chancfg_free(cfg);
}

static void test_what_agrees_with_the_world_gets_no_note(void **state)
{
    (void)state;
    rl_chancfg_report notes;
    rl_chancfg_report_init(&notes);
    rl_chancfg *cfg = in_world(THREE, "two",
                               "{\"intermediary\": {\"kind\": \"l4-lb\", \"idle_timeout_ms\": 240000},"
                               " \"calls\": {\"longest_deadline_ms\": 120000},"
                               " \"server\": {\"grpc.keepalive_permit_without_calls\": true}}",
                               &notes);
    assert_int_equal(notes.nfindings, 0);
    rl_chancfg_free(cfg);
    /* No notes wanted: NULL is accepted. */
    cfg = in_world(THREE, "one", "{\"calls\": {\"longest_deadline_ms\": 1}}", NULL);
    int64_t ms;
    assert_int_equal(rl_chancfg_calls_deadline(cfg, &ms), RL_ENOTFOUND); /* the world "one" has none */
    rl_chancfg_free(cfg);
    rl_chancfg_report_fini(&notes);
}

static void test_a_world_without_intermediary_removes_the_declared_one(void **state)
{
    (void)state;
    rl_chancfg_report notes;
    rl_chancfg_report_init(&notes);
    rl_chancfg *cfg = in_world("{\"name\": \"direct\"}", NULL,
                               "{\"intermediary\": {\"idle_timeout_ms\": 1000}, \"client\": {}}", &notes);
    int64_t idle;
    assert_int_equal(rl_chancfg_intermediary(cfg, &idle, NULL), RL_ENOTFOUND);
    assert_int_equal(notes.nfindings, 1);
    assert_non_null(strstr(notes.findings[0].why, "\"direct\" has no intermediary on the path"));
    rl_chancfg_report_fini(&notes);
    rl_chancfg_free(cfg);
}

static void test_malformed_configs_are_left_to_the_checker(void **state)
{
    (void)state;
    rl_chancfg_report notes, rep;
    rl_chancfg_report_init(&notes);
    rl_chancfg_report_init(&rep);
    rl_chancfg *cfg = in_world(THREE, NULL, "[1, 2]", &notes);
    assert_int_equal(notes.nfindings, 0);
    assert_int_equal(rl_chancfg_check(cfg, &rep), 0);
    assert_non_null(rl_chancfg_report_find(&rep, "schema.type"));
    rl_chancfg_free(cfg);
    rl_chancfg_report_fini(&rep);
    rl_chancfg_report_init(&rep);
    cfg = in_world(THREE, NULL, "{\"server\": 7}", &notes);
    assert_int_equal(rl_chancfg_check(cfg, &rep), 0);
    assert_non_null(rl_chancfg_report_find(&rep, "schema.type"));
    rl_chancfg_free(cfg);
    rl_chancfg_report_fini(&rep);
    rl_chancfg_report_fini(&notes);
}

/* ---- out of memory ---- */

/* Loads THREE, puts a config declaring all three kinds of world into it,
 * and describes it; every step may fail only with RL_ENOMEM. */
static bool world_pass(const char *path, const rl_chancfg *cfg)
{
    rl_chancfg_world w;
    char err[256];
    int rc = rl_chancfg_world_load(path, "s3", &w, err, sizeof err);
    if (rc) {
        assert_int_equal(rc, RL_ENOMEM);
        assert_null(w.deployment);
        return false;
    }
    char desc[512];
    rl_chancfg_world_describe(&w, desc, sizeof desc);
    rl_chancfg_report notes;
    rl_chancfg_report_init(&notes);
    rl_chancfg *out = (rl_chancfg *)1;
    rc = rl_chancfg_in_world(cfg, &w, &out, &notes);
    bool ok = rc == 0;
    if (rc) {
        assert_int_equal(rc, RL_ENOMEM);
        assert_null(out);
    }
    rl_chancfg_free(out);
    rl_chancfg_report_fini(&notes);
    rl_chancfg_world_fini(&w);
    return ok;
}

typedef struct world_arg {
    const char *path;
    const rl_chancfg *cfg;
} world_arg;

static bool world_sweep_pass(void *arg)
{
    const world_arg *a = arg;
    return world_pass(a->path, a->cfg);
}

static void test_out_of_memory_is_returned_at_every_allocation(void **state)
{
    (void)state;
    char path[64];
    write_file(path, sizeof path, THREE);
    rl_chancfg *cfg = parse_ok("{\"intermediary\": {\"idle_timeout_ms\": 1},"
                               " \"calls\": {\"longest_deadline_ms\": 1},"
                               " \"server\": {\"grpc.http2.min_ping_interval_without_data_ms\": 1}}");
    world_arg a = {path, cfg};
    rl_chancfg_set_alloc_funcs(rl_test_oom_malloc, rl_test_oom_free);
    long passes = rl_test_oom_sweep(world_sweep_pass, &a);
    rl_chancfg_set_alloc_funcs(NULL, NULL);
    unlink(path);
    rl_chancfg_free(cfg);
    assert_true(passes > 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_variant_picks_the_default),
        cmocka_unit_test(test_variant_naming_a_deployment_picks_it),
        cmocka_unit_test(test_seed_picks_by_fnv1a64_and_covers_every_deployment),
        cmocka_unit_test(test_a_single_deployment_file_is_the_world),
        cmocka_unit_test(test_backend_states_the_failures_in_a_row),
        cmocka_unit_test(test_describe_states_the_numbers),
        cmocka_unit_test(test_malformed_worlds_are_refused_with_a_reason),
        cmocka_unit_test(test_a_world_alone_breaks_no_combining_rule),
        cmocka_unit_test(test_the_world_replaces_what_the_config_declares),
        cmocka_unit_test(test_what_agrees_with_the_world_gets_no_note),
        cmocka_unit_test(test_a_world_without_intermediary_removes_the_declared_one),
        cmocka_unit_test(test_malformed_configs_are_left_to_the_checker),
        cmocka_unit_test(test_out_of_memory_is_returned_at_every_allocation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
