/* Unit tests for coverage_figure: a picture's samples are at least 25 ms
 * apart and never more than GR_FIG_MAX_POINTS; the stream series put the
 * busy server first; a burst's queue is read on an axis of its own when the
 * streams are orders of magnitude fewer (a failing agent), on the streams'
 * axis when they covered it. */
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
    assert_string_equal(f.series[0].label, "streams on B, the busy server");
    assert_string_equal(f.series[1].label, "streams on A");
    assert_string_equal(f.series[2].label, "streams on C");
}

/* Three servers, A B C, each holding |streams| streams from 0 on; B gets
 * 400 calls over 2 s, |handed| of every 4 handed 10 ms after dispatch (the
 * rest queued to the end). Returns the burst's figure. */
static gr_cov_server burst_servers[3];
static gr_cov_server *burst_sp[3];

/* The servers burst() filled last. */
static gr_cov_server **servers_of_burst(void)
{
    return burst_sp;
}

static gr_figure *burst(int streams, int handed)
{
    static Relaylab__TunnelStreamRecord st[3][320], *stp[3][320];
    static Relaylab__TunnelCallRecord c[400], *cp[400];
    gr_cov_server *s = burst_servers, **sp = burst_sp;
    static gr_scenario_result out;
    static const char *const names[3] = {"A", "B", "C"};
    for (int i = 0; i < 3; i++) {
        relaylab__observe_tunnel_reply__init(&s[i]);
        for (int k = 0; k < streams; k++) {
            relaylab__tunnel_stream_record__init(&st[i][k]);
            st[i][k].opened_ns = 0;
            stp[i][k] = &st[i][k];
        }
        s[i].streams = stp[i];
        s[i].n_streams = (size_t)streams;
        sp[i] = &s[i];
    }
    for (int k = 0; k < 400; k++) {
        relaylab__tunnel_call_record__init(&c[k]);
        c[k].dispatched_ns = (int64_t)k * 5 * MS;
        c[k].handed_ns = k % 4 < handed ? c[k].dispatched_ns + 10 * MS : 0;
        cp[k] = &c[k];
    }
    s[1].calls = cp;
    s[1].n_calls = 400;
    gr_cov_waits w = {.max_ns = 4000 * MS};
    memset(&out, 0, sizeof out);
    out.verdict = GR_FAIL;
    gr_cov_burst_figure(&out, sp, names, 3, 1, 0, 3000 * MS, 3000 * MS, &w, 400, 300, 2000, false);
    return &out.figure;
}

static void a_queue_hundreds_of_times_the_streams_has_its_own_axis(void **state)
{
    (void)state;
    /* 3 streams a server against 400 calls queued and the 302 to cover. */
    gr_figure *f = burst(3, 0);
    assert_int_equal(f->nseries, 4);
    assert_string_equal(f->series[3].label, "calls queued on B");
    assert_true(f->series[3].right);
    assert_false(f->series[0].right || f->series[1].right || f->series[2].right);
    assert_int_equal(f->nrefs, 1);
    assert_true(f->refs[0].right);
    assert_string_equal(f->ylabel, "streams open");
    assert_string_equal(f->y2label, "calls");
}

static void streams_that_covered_the_calls_share_their_axis(void **state)
{
    (void)state;
    /* 300 streams a server and three calls of four handed at once: one
     * quantity of one order, one axis. */
    gr_figure *f = burst(300, 3);
    assert_int_equal(f->nseries, 4);
    assert_false(f->series[3].right);
    assert_false(f->refs[0].right);
    assert_string_equal(f->ylabel, "streams open, calls queued");
    assert_string_equal(f->y2label, "");
}

static void unfillable_total_and_bound_have_their_own_axis_when_far_above(void **state)
{
    (void)state;
    static gr_scenario_result out;
    static const char *const names[3] = {"A", "B", "C"};
    /* burst() leaves three servers with 3 streams each: 9 in all against
     * a bound of 256 split; 300 each (900 in all) share one axis. */
    burst(3, 0);
    gr_cov_server **sp = servers_of_burst();
    memset(&out, 0, sizeof out);
    gr_cov_unfillable_figure(&out, sp, names, 3, 1, 0, 1000 * MS, 256, 9, true);
    assert_int_equal(out.figure.nseries, 4);
    assert_true(out.figure.series[3].right && out.figure.refs[0].right);
    assert_string_equal(out.figure.y2label, "streams in all");
    burst(300, 3);
    memset(&out, 0, sizeof out);
    gr_cov_unfillable_figure(&out, sp, names, 3, 1, 0, 1000 * MS, 256, 900, true);
    assert_false(out.figure.series[3].right || out.figure.refs[0].right);
    assert_string_equal(out.figure.ylabel, "streams open");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(samples_are_25_ms_apart_at_least_and_capped),
        cmocka_unit_test(the_busy_server_comes_first),
        cmocka_unit_test(a_queue_hundreds_of_times_the_streams_has_its_own_axis),
        cmocka_unit_test(streams_that_covered_the_calls_share_their_axis),
        cmocka_unit_test(unfillable_total_and_bound_have_their_own_axis_when_far_above),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
