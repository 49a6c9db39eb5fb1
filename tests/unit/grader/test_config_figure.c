/* Unit tests for the config exercises' check pictures: keepalive colours
 * each side's ping period by the window the server and the intermediary
 * leave, retry lays out Lookup's attempts with gRPC's longest backoffs and
 * the backend that answers, balance sets the grace against the longest
 * call; each caption says what to see in one line, and a config without
 * the numbers gets no picture. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "config_figure.h"

#include <stdio.h>
#include <string.h>

static rl_chancfg *parse(const char *json)
{
    rl_chancfg *cfg = NULL;
    rl_chancfg_diag diag;
    memset(&diag, 0, sizeof diag);
    assert_int_equal(rl_chancfg_parse(json, strlen(json), &cfg, &diag), 0);
    return cfg;
}

static void draw(gr_figure *f, const char *exercise, const char *json, int fails, const char *broken)
{
    rl_chancfg *cfg = parse(json);
    gr_config_fig_in in = {.cfg = cfg, .unavailable_in_a_row = fails, .broken = broken};
    gr_config_figure(f, exercise, &in);
    rl_chancfg_free(cfg);
}

/* The bar on the row named |row| with the label starting |label|, or NULL. */
static const gr_fig_span *span(const gr_figure *f, const char *row, const char *label)
{
    for (int i = 0; i < f->nspans; i++) {
        const gr_fig_span *s = &f->spans[i];
        if (strcmp(f->rows[s->row], row) == 0 && strncmp(s->label, label, strlen(label)) == 0)
            return s;
    }
    return NULL;
}

/* Every caption fits the picture's one line (the pages test holds it to 110). */
static void one_line(const gr_figure *f)
{
    assert_true(strlen(f->caption) > 20);
    assert_true(strlen(f->caption) <= 110);
}

#define NAT                                                                                                            \
    "\"intermediary\": {\"kind\": \"nat\", \"idle_timeout_ms\": 350000}, "                                             \
    "\"server\": {\"grpc.http2.min_ping_interval_without_data_ms\": 60000}"

static void keepalive_in_the_window_is_blue(void **state)
{
    (void)state;
    gr_figure f;
    draw(&f, "keepalive",
         "{" NAT ", \"client\": {\"grpc.keepalive_time_ms\": 120000, \"grpc.keepalive_permit_without_calls\": 1}}", 0,
         NULL);
    assert_int_equal(f.kind, GR_FIG_TIMELINE);
    const gr_fig_span *w = span(&f, "client pings that fit", "from 60 s to under 350 s");
    assert_non_null(w);
    assert_int_equal(w->bar, GR_FIG_TRUTH);
    assert_true(w->x0 == 60.0 && w->x1 == 350.0);
    const gr_fig_span *c = span(&f, "client: keepalive_time", "every 120 s");
    assert_non_null(c);
    assert_int_equal(c->bar, GR_FIG_GIVEN);
    assert_int_equal(f.nevents, 2);
    assert_non_null(strstr(f.caption, "The client pings every 120 s"));
    one_line(&f);
}

static void keepalive_too_early_is_red_and_names_the_goaway(void **state)
{
    (void)state;
    gr_figure f;
    draw(&f, "keepalive", "{" NAT ", \"client\": {\"grpc.keepalive_time_ms\": 20000}}", 0,
         "keepalive.min-ping-interval");
    const gr_fig_span *c = span(&f, "client: keepalive_time", "every 20 s");
    assert_non_null(c);
    assert_int_equal(c->bar, GR_FIG_WRONG);
    assert_non_null(strstr(f.caption, "too_many_pings"));
    one_line(&f);
}

static void keepalive_past_the_cut_off_is_red_and_cut(void **state)
{
    (void)state;
    gr_figure f;
    draw(&f, "keepalive", "{" NAT ", \"client\": {\"grpc.keepalive_time_ms\": 400000}}", 0, "keepalive.idle-timeout");
    const gr_fig_span *c = span(&f, "client: keepalive_time", "every 400 s");
    assert_non_null(c);
    assert_int_equal(c->bar, GR_FIG_WRONG);
    assert_true(c->x1 == 400.0);
    /* The axis ends a quarter past the larger bound (437.5 s): the
     * server's 2 h default is cut there. */
    const gr_fig_span *s = span(&f, "server: keepalive_time", "every 7200 s (cut here)");
    assert_non_null(s);
    assert_true(s->x1 == 437.5);
    assert_non_null(strstr(f.caption, "drops the quiet connection"));
    one_line(&f);
    /* Off altogether: no client bar pretends to a period. */
    draw(&f, "keepalive", "{" NAT "}", 0, "keepalive.idle-timeout");
    const gr_fig_span *off = span(&f, "client: keepalive_time", "never: keepalive is off");
    assert_non_null(off);
    assert_int_equal(off->bar, GR_FIG_WRONG);
}

static void keepalive_names_a_broken_rule_it_does_not_draw(void **state)
{
    (void)state;
    gr_figure f;
    draw(&f, "keepalive", "{" NAT ", \"client\": {\"grpc.keepalive_time_ms\": 120000}}", 0,
         "keepalive.idle-without-calls");
    assert_non_null(strstr(f.caption, "keepalive.idle-without-calls is broken all the same"));
    one_line(&f);
}

static void keepalive_without_an_intermediary_has_no_picture(void **state)
{
    (void)state;
    gr_figure f;
    draw(&f, "keepalive", "{\"client\": {\"grpc.keepalive_time_ms\": 120000}}", 0, NULL);
    assert_int_equal(f.kind, GR_FIG_NONE);
}

static void retry_waits_follow_grpc_backoff(void **state)
{
    (void)state;
    rl_chancfg_method m = {.has_retry = true,
                           .max_attempts = 5,
                           .initial_backoff_ms = 100,
                           .max_backoff_ms = 1000,
                           .backoff_multiplier = 2.0};
    assert_int_equal(gr_retry_longest_wait_ms(&m, 0), 0);
    assert_int_equal(gr_retry_longest_wait_ms(&m, 1), 100);  /* the first: no jitter */
    assert_int_equal(gr_retry_longest_wait_ms(&m, 2), 240);  /* 200 + 20 % */
    assert_int_equal(gr_retry_longest_wait_ms(&m, 3), 480);  /* 400 + 20 % */
    assert_int_equal(gr_retry_longest_wait_ms(&m, 5), 1200); /* capped at 1000, + 20 % */
}

#define RETRY_SC(attempts, codes)                                                                                      \
    "{\"calls\": {\"longest_deadline_ms\": 2000}, \"client\": {\"service_config\": {\"methodConfig\": [{\"name\": "    \
    "[{\"service\": \"relaylab.Baseline\", \"method\": \"Lookup\"}], \"retryPolicy\": {\"maxAttempts\": " attempts     \
    ", \"initialBackoff\": \"0.05s\", \"maxBackoff\": \"0.5s\", \"backoffMultiplier\": 2, "                            \
    "\"retryableStatusCodes\": [" codes "]}}]}}}"

static void retry_draws_attempts_to_the_one_that_answers(void **state)
{
    (void)state;
    gr_figure f;
    draw(&f, "retry", RETRY_SC("5", "\"UNAVAILABLE\""), 3, NULL);
    assert_int_equal(f.kind, GR_FIG_TIMELINE);
    assert_int_equal(f.nrows, 4); /* the 4th answers: no 5th is made */
    const gr_fig_span *ok = span(&f, "attempt 4", "OK after up to 240 ms");
    assert_non_null(ok);
    assert_int_equal(ok->bar, GR_FIG_GIVEN);
    assert_true(ok->x0 == 410.0); /* 50 + 120 + 240 */
    assert_non_null(span(&f, "attempt 2", "UNAVAILABLE after up to 50 ms"));
    assert_non_null(strstr(f.caption, "attempt 4 answers, at the latest 410 ms"));
    one_line(&f);
}

static void retry_giving_up_too_soon_is_red(void **state)
{
    (void)state;
    gr_figure f;
    draw(&f, "retry", RETRY_SC("3", "\"UNAVAILABLE\""), 3, NULL);
    assert_int_equal(f.nrows, 3);
    assert_int_equal(span(&f, "attempt 3", "UNAVAILABLE")->bar, GR_FIG_WRONG);
    assert_non_null(strstr(f.caption, "gives up after 3 attempts"));
    one_line(&f);
    /* UNAVAILABLE not retried: one attempt. */
    draw(&f, "retry", RETRY_SC("5", "\"RESOURCE_EXHAUSTED\""), 3, NULL);
    assert_int_equal(f.nrows, 1);
    assert_non_null(strstr(f.caption, "not in Lookup's retryableStatusCodes"));
    one_line(&f);
}

static void retry_without_a_policy_is_one_attempt(void **state)
{
    (void)state;
    gr_figure f;
    draw(&f, "retry", "{\"calls\": {\"longest_deadline_ms\": 2000}}", 3, NULL);
    assert_int_equal(f.nrows, 1);
    assert_int_equal(f.spans[0].bar, GR_FIG_WRONG);
    assert_non_null(strstr(f.caption, "no retryPolicy"));
    one_line(&f);
    /* Retries switched off: gRPC ignores the policy. */
    draw(&f, "retry",
         "{\"client\": {\"grpc.enable_retries\": 0, \"service_config\": {\"methodConfig\": [{\"name\": [{\"service\": "
         "\"relaylab.Baseline\"}], \"retryPolicy\": {\"maxAttempts\": 4, \"initialBackoff\": \"0.1s\", "
         "\"maxBackoff\": \"1s\", \"backoffMultiplier\": 2, \"retryableStatusCodes\": [\"UNAVAILABLE\"]}}]}}}",
         3, "retry.disabled");
    assert_int_equal(f.nrows, 1);
    assert_non_null(strstr(f.caption, "retry.disabled"));
    one_line(&f);
}

#define AGE(age, grace)                                                                                                \
    "{\"calls\": {\"longest_deadline_ms\": 20000}, \"server\": {\"grpc.max_connection_age_ms\": " age                  \
    ", \"grpc.max_connection_age_grace_ms\": " grace "}}"

static void balance_sets_the_grace_against_the_longest_call(void **state)
{
    (void)state;
    gr_figure f;
    draw(&f, "balance", AGE("60000", "30000"), 0, NULL);
    assert_int_equal(f.kind, GR_FIG_TIMELINE);
    const gr_fig_span *g = span(&f, "then its grace", "grace 30 s");
    assert_non_null(g);
    assert_int_equal(g->bar, GR_FIG_GIVEN);
    assert_true(g->x0 == 60.0 && g->x1 == 90.0);
    const gr_fig_span *call = span(&f, "the longest call", "runs up to 20 s");
    assert_non_null(call);
    assert_int_equal(call->bar, GR_FIG_TRUTH);
    assert_non_null(strstr(f.caption, "outlasts the longest call (20 s)"));
    one_line(&f);

    draw(&f, "balance", AGE("60000", "5000"), 0, "age.grace-below-deadline");
    assert_int_equal(span(&f, "then its grace", "grace 5 s")->bar, GR_FIG_WRONG);
    assert_non_null(strstr(f.caption, "ends before the longest call"));
    one_line(&f);

    draw(&f, "balance", AGE("1000", "30000"), 0, "age.too-short");
    assert_int_equal(span(&f, "the connection", "max_connection_age 1 s")->bar, GR_FIG_WRONG);
    assert_non_null(strstr(f.caption, "60 times a minute"));
    one_line(&f);

    draw(&f, "balance", "{\"calls\": {\"longest_deadline_ms\": 20000}}", 0, NULL);
    assert_int_equal(span(&f, "the connection", "for ever")->bar, GR_FIG_WRONG);
    assert_non_null(strstr(f.caption, "never age out"));
    one_line(&f);
}

static void other_exercises_get_no_picture(void **state)
{
    (void)state;
    gr_figure f;
    draw(&f, "deadline", AGE("60000", "30000"), 0, NULL);
    assert_int_equal(f.kind, GR_FIG_NONE);
    gr_config_fig_in none = {0};
    gr_config_figure(&f, "keepalive", &none);
    assert_int_equal(f.kind, GR_FIG_NONE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(keepalive_in_the_window_is_blue),
        cmocka_unit_test(keepalive_too_early_is_red_and_names_the_goaway),
        cmocka_unit_test(keepalive_past_the_cut_off_is_red_and_cut),
        cmocka_unit_test(keepalive_names_a_broken_rule_it_does_not_draw),
        cmocka_unit_test(keepalive_without_an_intermediary_has_no_picture),
        cmocka_unit_test(retry_waits_follow_grpc_backoff),
        cmocka_unit_test(retry_draws_attempts_to_the_one_that_answers),
        cmocka_unit_test(retry_giving_up_too_soon_is_red),
        cmocka_unit_test(retry_without_a_policy_is_one_attempt),
        cmocka_unit_test(balance_sets_the_grace_against_the_longest_call),
        cmocka_unit_test(other_exercises_get_no_picture),
    };
    return cmocka_run_group_tests_name("config_figure", tests, NULL, NULL);
}
