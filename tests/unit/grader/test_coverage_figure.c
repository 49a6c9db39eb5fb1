/* Unit tests for coverage_figure: a picture's samples are at least 25 ms
 * apart and never more than GR_FIG_MAX_POINTS; the longest queue wait at an
 * instant counts only calls dispatched since the start and not yet handed;
 * the stream series put the busy server first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "coverage_figure.h"

#define MS 1000000LL

static void samples_are_25_ms_apart_at_least_and_capped(void **state)
{
    (void)state;
    int64_t step;
    assert_int_equal(gr_cov_fig_samples(0, 1000 * MS, &step), 41);
    assert_int_equal(step, 25 * MS);
    assert_int_equal(gr_cov_fig_samples(5 * MS, 5 * MS, &step), 1);
    assert_int_equal(gr_cov_fig_samples(10 * MS, 0, &step), 1); /* a span backwards is empty */
    size_t n = gr_cov_fig_samples(0, 600000 * MS, &step);
    assert_true(n <= GR_FIG_MAX_POINTS);
    assert_true((int64_t)(n - 1) * step <= 600000 * MS);
    assert_true(step > 25 * MS);
}

static void the_oldest_wait_counts_calls_still_queued(void **state)
{
    (void)state;
    Relaylab__TunnelCallRecord c[3], *cp[3];
    gr_cov_server s;
    relaylab__observe_tunnel_reply__init(&s);
    const int64_t disp[3] = {100, 300, 50}, handed[3] = {400, 0, 60};
    for (int i = 0; i < 3; i++) {
        relaylab__tunnel_call_record__init(&c[i]);
        c[i].dispatched_ns = disp[i] * MS;
        c[i].handed_ns = handed[i] * MS;
        cp[i] = &c[i];
    }
    s.calls = cp;
    s.n_calls = 3;
    /* At 350 ms: the first (queued since 100) and the second (since 300). */
    assert_true(gr_cov_oldest_wait_ms(&s, 0, 350 * MS) == 250.0);
    /* At 400 ms the first was handed: only the second waits. */
    assert_true(gr_cov_oldest_wait_ms(&s, 0, 400 * MS) == 100.0);
    /* Calls dispatched before |t0| are another burst's. */
    assert_true(gr_cov_oldest_wait_ms(&s, 200 * MS, 350 * MS) == 50.0);
    assert_true(gr_cov_oldest_wait_ms(&s, 0, 55 * MS) == 5.0);
    assert_true(gr_cov_oldest_wait_ms(&s, 0, 40 * MS) == 0.0);
}

static void the_busy_server_comes_first(void **state)
{
    (void)state;
    gr_cov_server s[3];
    gr_cov_server *sp[3];
    for (int i = 0; i < 3; i++) {
        relaylab__observe_tunnel_reply__init(&s[i]);
        sp[i] = &s[i];
    }
    static const char *const names[3] = {"A", "B", "C"};
    static gr_figure f;
    gr_fig_plot(&f, "t", "x", "y");
    gr_cov_fig_streams(&f, sp, names, 3, 1, 0, 100 * MS);
    assert_int_equal(f.nseries, 3);
    assert_string_equal(f.series[0].label, "streams on B (the busy server)");
    assert_string_equal(f.series[1].label, "streams on A");
    assert_string_equal(f.series[2].label, "streams on C");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(samples_are_25_ms_apart_at_least_and_capped),
        cmocka_unit_test(the_oldest_wait_counts_calls_still_queued),
        cmocka_unit_test(the_busy_server_comes_first),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
