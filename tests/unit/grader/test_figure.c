/* Unit tests for figure: a scenario's picture as data. Labels are cut,
 * never overflow; a long series is thinned to GR_FIG_MAX_POINTS keeping its
 * first, last and peak samples (the judged RSS peak must show); limits
 * are ignored, not failures; the SVG drawn escapes a submission's words;
 * and series orders of magnitude apart get a second axis, the others
 * not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "figure.h"
#include "rl_err.h"

static void long_series_is_thinned_keeping_the_peak(void **state)
{
    (void)state;
    static double x[5000], y[5000];
    for (int i = 0; i < 5000; i++) {
        x[i] = i / 100.0;
        y[i] = 10;
    }
    y[1234] = 99; /* the peak, between two kept samples */
    static gr_figure f;
    gr_fig_plot(&f, "t", "x", "y");
    assert_int_equal(gr_fig_series_add(&f, "rss", x, y, 5000), 0);
    const gr_fig_series *s = &f.series[0];
    assert_true(s->n <= GR_FIG_MAX_POINTS && s->n > GR_FIG_MAX_POINTS / 2);
    assert_true(s->x[0] == 0 && s->x[s->n - 1] == x[4999]);
    double peak = 0;
    for (size_t i = 0; i < s->n; i++) {
        peak = s->y[i] > peak ? s->y[i] : peak;
        if (i)
            assert_true(s->x[i] >= s->x[i - 1]);
    }
    assert_true(peak == 99);
}

static void limits_are_ignored(void **state)
{
    (void)state;
    static gr_figure f;
    gr_fig_timeline(&f, "t", "ms");
    for (int i = 0; i < GR_FIG_MAX_ROWS; i++)
        assert_int_equal(gr_fig_row(&f, "r"), i);
    assert_int_equal(gr_fig_row(&f, "one too many"), -1);
    for (int i = 0; i < GR_FIG_MAX_SPANS + 3; i++)
        gr_fig_span_add(&f, 0, 0, 1, GR_FIG_RAN, "%d", i);
    gr_fig_span_add(&f, -1, 0, 1, GR_FIG_RAN, NULL);
    assert_int_equal(f.nspans, GR_FIG_MAX_SPANS);
    char big[1000];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    gr_fig_event(&f, 1, "%s", big);
    assert_int_equal(strlen(f.events[0].label), GR_FIG_LABEL - 1);
}

static void svg_escapes_labels(void **state)
{
    (void)state;
    static gr_figure f;
    gr_fig_timeline(&f, "t", "ms");
    int r = gr_fig_row(&f, "<script>alert(1)</script>");
    gr_fig_span_add(&f, r, 10, 0, GR_FIG_WRONG, "\033[31m%s", "&");
    gr_fig_caption(&f, "caption \"q\"");
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    assert_int_equal(gr_fig_svg(out, &f), RL_OK);
    fclose(out);
    assert_null(strstr(buf, "<script"));
    assert_non_null(strstr(buf, "&lt;script&gt;"));
    assert_null(strchr(buf, '\033'));
    assert_non_null(strstr(buf, "?[31m&amp;"));
    assert_non_null(strstr(buf, "caption &quot;q&quot;"));
    free(buf);
    gr_figure none;
    memset(&none, 0, sizeof none);
    assert_int_equal(gr_fig_svg(stdout, &none), RL_EINVAL);
}

static void fill(double *x, double *y, size_t n, double top)
{
    for (size_t i = 0; i < n; i++) {
        x[i] = (double)i;
        y[i] = top * (double)i / (double)(n - 1);
    }
}

static void own_scale_only_for_orders_of_magnitude(void **state)
{
    (void)state;
    static gr_figure f;
    double x[5], small[5], big[5], mid[5];
    fill(x, small, 5, 3);
    fill(x, big, 5, 400);
    fill(x, mid, 5, 30);
    /* 3 against 400: the small one would be a flat line at 0. */
    gr_fig_plot(&f, "t", "s", "streams, calls");
    gr_fig_series_add(&f, "streams", x, small, 5);
    int q = gr_fig_series_add(&f, "calls", x, big, 5);
    assert_int_equal(gr_fig_own_scale(&f, q, -1, "streams", "calls"), 1);
    assert_true(f.series[q].right && !f.series[0].right);
    assert_string_equal(f.ylabel, "streams");
    assert_string_equal(f.y2label, "calls");
    /* 3 against 30 is exactly 10x: one axis, nothing changed. */
    gr_fig_plot(&f, "t", "s", "streams, calls");
    gr_fig_series_add(&f, "streams", x, small, 5);
    q = gr_fig_series_add(&f, "calls", x, mid, 5);
    assert_int_equal(gr_fig_own_scale(&f, q, -1, "streams", "calls"), 0);
    assert_false(f.series[q].right);
    assert_string_equal(f.ylabel, "streams, calls");
    assert_string_equal(f.y2label, "");
    /* A reference counts with its group: 30 calls and a line at 302 against
     * 3 streams split; without the reference they would not. */
    int r = f.nrefs;
    gr_fig_ref(&f, 302, "to cover");
    assert_int_equal(gr_fig_own_scale(&f, q, r, "streams", "calls"), 1);
    assert_true(f.series[q].right && f.refs[r].right);
    /* A reference left with the others counts with them: 400 calls
     * against 3 streams and a line at 302 on the streams' side is 1.3x. */
    gr_fig_plot(&f, "t", "s", "y");
    gr_fig_series_add(&f, "streams", x, small, 5);
    q = gr_fig_series_add(&f, "calls", x, big, 5);
    gr_fig_ref(&f, 302, "to cover");
    assert_int_equal(gr_fig_own_scale(&f, q, -1, "a", "b"), 0);
    /* Nothing that does not exist is moved. */
    assert_int_equal(gr_fig_own_scale(&f, 7, -1, "a", "b"), 0);
    assert_int_equal(gr_fig_own_scale(&f, q, 3, "a", "b"), 0);
    assert_false(f.series[q].right);
    /* Drawn: the right axis and its legend entries. */
    gr_fig_plot(&f, "t", "s", "y");
    gr_fig_series_add(&f, "streams", x, small, 5);
    q = gr_fig_series_add(&f, "calls", x, big, 5);
    assert_int_equal(gr_fig_own_scale(&f, q, -1, "streams", "calls"), 1);
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    assert_int_equal(gr_fig_svg(out, &f), RL_OK);
    fclose(out);
    assert_non_null(strstr(buf, ">calls (right axis)<"));
    assert_non_null(strstr(buf, ">streams (left axis)<"));
    assert_non_null(strstr(buf, "class=\"y2label\""));
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(long_series_is_thinned_keeping_the_peak),
        cmocka_unit_test(limits_are_ignored),
        cmocka_unit_test(svg_escapes_labels),
        cmocka_unit_test(own_scale_only_for_orders_of_magnitude),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
