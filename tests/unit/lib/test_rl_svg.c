/* Unit tests for rl_svg: round tick steps, XML escaping (a submission's
 * command line becomes a legend label), and a written plot that carries its
 * labels, one polyline per series, and refuses empty or non-finite data. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rl_err.h"
#include "rl_svg.h"

static void tick_steps_are_round(void **state)
{
    (void)state;
    assert_true(rl_svg_tick_step(210) == 50);
    assert_true(rl_svg_tick_step(4) == 1);
    assert_true(rl_svg_tick_step(8) == 2);
    assert_true(rl_svg_tick_step(0.9) == 0.2);
    assert_true(rl_svg_tick_step(0) == 1);
    assert_true(rl_svg_tick_step(-3) == 1);
    for (double m = 0.013; m < 1e6; m *= 1.7) {
        double s = rl_svg_tick_step(m);
        double ticks = m / s;
        assert_true(ticks >= 2 && ticks <= 10);
    }
}

static void escape_handles_markup(void **state)
{
    (void)state;
    char out[64];
    assert_string_equal(rl_svg_escape("python3 a.py <x> & 'y' \"z\"", out, sizeof out),
                        "python3 a.py &lt;x&gt; &amp; &#39;y&#39; &quot;z&quot;");
    /* Truncation never cuts an entity in half. */
    assert_string_equal(rl_svg_escape("ab&cd", out, 6), "ab");
}

static char *plot_to_string(const rl_svg_plot *p, int *rc)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    *rc = rl_svg_write(f, p);
    fclose(f);
    return buf;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

static void plot_has_labels_series_and_legend(void **state)
{
    (void)state;
    double x[] = {0, 1, 2, 3}, a[] = {13, 13.5, 13.5, 13.6}, b[] = {13, 120, 210, 210};
    rl_svg_series s[] = {{.label = "streamer", .x = x, .y = a, .n = 4},
                         {.label = "streamer --unbounded <mistake>", .x = x, .y = b, .n = 4}};
    rl_svg_plot p = {.title = "RSS while the reader stalls", .xlabel = "time (s)", .ylabel = "RSS (MiB)", .series = s, .nseries = 2};
    int rc;
    char *svg = plot_to_string(&p, &rc);
    assert_int_equal(rc, RL_OK);
    assert_non_null(strstr(svg, "<svg "));
    assert_non_null(strstr(svg, "</svg>"));
    assert_non_null(strstr(svg, ">time (s)<"));
    assert_non_null(strstr(svg, ">RSS (MiB)<"));
    assert_non_null(strstr(svg, "streamer --unbounded &lt;mistake&gt;"));
    assert_int_equal(count(svg, "<polyline"), 2);
    /* y axis to 250 in steps of 50: ticks 0..250. */
    assert_non_null(strstr(svg, ">250<"));
    free(svg);
}

static void plot_refuses_empty_or_nan(void **state)
{
    (void)state;
    rl_svg_plot p = {.xlabel = "x", .ylabel = "y"};
    int rc;
    free(plot_to_string(&p, &rc));
    assert_int_equal(rc, RL_EINVAL);
    double x[] = {0, 1}, y[] = {1, NAN};
    rl_svg_series s = {.label = "a", .x = x, .y = y, .n = 2};
    p.series = &s;
    p.nseries = 1;
    free(plot_to_string(&p, &rc));
    assert_int_equal(rc, RL_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tick_steps_are_round),
        cmocka_unit_test(escape_handles_markup),
        cmocka_unit_test(plot_has_labels_series_and_legend),
        cmocka_unit_test(plot_refuses_empty_or_nan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
