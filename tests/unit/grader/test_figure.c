/* Unit tests for figure: a scenario's picture as data. Labels are cut,
 * never overflow; a long series is thinned to GR_FIG_MAX_POINTS keeping its
 * first, last and peak samples (the judged RSS peak must show); limits
 * are ignored, not failures; and the SVG drawn escapes a submission's
 * words. */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(long_series_is_thinned_keeping_the_peak),
        cmocka_unit_test(limits_are_ignored),
        cmocka_unit_test(svg_escapes_labels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
