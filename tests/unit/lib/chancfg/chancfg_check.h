/* chancfg_check: what the checker's unit tests share (test_rl_chancfg_rules.c,
 * test_rl_chancfg_sc.c): check() runs the checker on a config written with
 * single quotes (turned into JSON) into g_rep and asserts the report's
 * invariants (known rule ids, one-line paths and reasons); expect(),
 * expect_none() and expect_clean() assert on it; the bases to add one
 * mistake to. Static, one copy per test program; include after cmocka.h. */
#ifndef CHANCFG_CHECK_H
#define CHANCFG_CHECK_H

#include "chancfg/rl_chancfg.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static rl_chancfg_report g_rep;

static inline bool known_rule(const char *id)
{
    size_t n;
    const rl_chancfg_rule *r = rl_chancfg_rules(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(r[i].id, id) == 0)
            return true;
    return false;
}

/* Checks |text| (single quotes stand for double quotes) into g_rep. */
static inline void check(const char *text)
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

static inline void dump(void)
{
    for (size_t i = 0; i < g_rep.nfindings; i++)
        print_message("  %s %s %s\n", g_rep.findings[i].rule, g_rep.findings[i].path, g_rep.findings[i].why);
}

/* Asserts a finding of |rule| at |path| with |severity|, whose why contains
 * |needle| (may be NULL). */
static inline void expect(const char *rule, rl_chancfg_severity severity, const char *path, const char *needle)
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

static inline void expect_none(const char *rule)
{
    if (rl_chancfg_report_find(&g_rep, rule)) {
        dump();
        fail_msg("unexpected %s", rule);
    }
}

static inline void expect_clean(void)
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

/* Reads the repo file |path| (tests run from the repo root) into |buf|. */
static inline void read_repo_file(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("run from the repo root: %s not found", path);
    size_t n = fread(buf, 1, len - 1, f);
    fclose(f);
    buf[n] = '\0';
}

static inline int teardown(void **state)
{
    (void)state;
    rl_chancfg_report_fini(&g_rep);
    return 0;
}
#endif
