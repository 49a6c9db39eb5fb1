/* Unit tests for rl_svg: round tick steps, XML escaping (a submission's
 * command line becomes a legend label), a written plot that carries its
 * labels, one polyline per series, and refuses empty or non-finite data; a
 * second y axis with its own ticks; labels placed off the curves. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdbool.h>
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
    double m = 0.013;
    for (int i = 0; i < 35; i++) { /* 0.013 x 1.7^34 is about 8e5 */
        double s = rl_svg_tick_step(m);
        double ticks = m / s;
        assert_true(ticks >= 2 && ticks <= 10);
        m *= 1.7;
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

/* Not inlined: gcc 12 then takes |buf| for a local the result points to
 * (-Wdangling-pointer), which open_memstream made a heap block. */
__attribute__((noinline)) static char *plot_to_string(const rl_svg_plot *p, int *rc)
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
    rl_svg_plot p = {
        .title = "RSS while the reader stalls", .xlabel = "time (s)", .ylabel = "RSS (MiB)", .series = s, .nseries = 2};
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

static void escape_replaces_control_and_non_ascii(void **state)
{
    (void)state;
    char out[64];
    /* An escape sequence or a stray byte would make the XML ill-formed. */
    assert_string_equal(rl_svg_escape("a\033[31mb\001\xff", out, sizeof out), "a?[31mb??");
}

/* A text longer than any one buffer is written whole, escaped across the
 * pieces it is cut into. */
static void write_escaped_writes_it_all(void **state)
{
    (void)state;
    char in[1001], want[4096];
    size_t w = 0;
    for (int i = 0; i < 1000; i++) {
        in[i] = i % 7 == 0 ? '<' : (char)('a' + i % 26);
        w += (size_t)snprintf(want + w, sizeof want - w, "%s", in[i] == '<' ? "&lt;" : (char[]){in[i], 0});
    }
    in[1000] = '\0';
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    rl_svg_write_escaped(f, in);
    rl_svg_write_escaped(f, NULL);
    fclose(f);
    assert_string_equal(buf, want);
    free(buf);
}

static void plot_draws_references_events_dashes_and_caption(void **state)
{
    (void)state;
    double x[] = {0, 1, 2, 3.2}, a[] = {13, 14, 14, 14}, b[] = {13, 14, 14, 14};
    rl_svg_series s[] = {{.label = "reference", .x = x, .y = a, .n = 4, .markers = 1},
                         {.label = "wait-for-ready", .x = x, .y = b, .n = 4, .dash = RL_SVG_DASHED, .markers = 1}};
    rl_svg_ref budget = {.label = "budget <48 MiB>", .value = 61};
    rl_svg_ref stall = {.label = "stall", .value = 0.1};
    rl_svg_plot p = {.xlabel = "t (s)",
                     .ylabel = "RSS (MiB)",
                     .series = s,
                     .nseries = 2,
                     .refs = &budget,
                     .nrefs = 1,
                     .events = &stall,
                     .nevents = 1,
                     .caption = "what it shows",
                     .fragment = 1};
    int rc;
    char *svg = plot_to_string(&p, &rc);
    assert_int_equal(rc, RL_OK);
    assert_null(strstr(svg, "<?xml")); /* a fragment, for HTML */
    assert_int_equal(count(svg, "class=\"ref\""), 1);
    assert_int_equal(count(svg, "class=\"event\""), 1);
    assert_non_null(strstr(svg, "budget &lt;48 MiB&gt;"));
    assert_non_null(strstr(svg, ">what it shows<"));
    assert_non_null(strstr(svg, "stroke-dasharray=\"9 5\""));
    /* Coinciding series told apart: two marker shapes, 4 points each. */
    assert_int_equal(count(svg, "class=\"marker\""), 2 * 4 + 2);
    /* The y axis reaches past the budget line; the x axis ends at the data
     * (3.2), never a tick's worth past it (4). */
    assert_non_null(strstr(svg, ">80<"));
    assert_null(strstr(svg, ">4<"));
    free(svg);
}

static char *timeline_to_string(const rl_svg_timeline *t, int *rc)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    *rc = rl_svg_timeline_write(f, t);
    fclose(f);
    return buf;
}

static void timeline_draws_rows_spans_and_events(void **state)
{
    (void)state;
    const char *rows[] = {"client", "Work: deadline received", "Work: time that remained"};
    rl_svg_span spans[] = {{.row = 0, .x0 = 0, .x1 = 600, .label = "Process"},
                           {.row = 1, .x0 = 500, .x1 = 2500, .label = "received 2000 ms", .kind = RL_SVG_SPAN_BAD},
                           {.row = 2, .x0 = 500, .x1 = 2000, .label = "1500 ms remained", .kind = RL_SVG_SPAN_GOOD},
                           {.row = 2, .x0 = 700, .x1 = 700, .label = "<point>"}};
    rl_svg_ref d = {.label = "client's deadline", .value = 2000};
    rl_svg_timeline t = {.title = "one axis",
                         .xlabel = "ms",
                         .rows = rows,
                         .nrows = 3,
                         .spans = spans,
                         .nspans = 4,
                         .events = &d,
                         .nevents = 1};
    int rc;
    char *svg = timeline_to_string(&t, &rc);
    assert_int_equal(rc, RL_OK);
    assert_non_null(strstr(svg, "<?xml"));
    assert_int_equal(count(svg, "class=\"row\""), 3);
    assert_int_equal(count(svg, "class=\"span\""), 3);
    assert_int_equal(count(svg, "class=\"span-point\""), 1);
    assert_non_null(strstr(svg, "fill=\"#D55E00\""));
    assert_non_null(strstr(svg, "client&#39;s deadline"));
    assert_non_null(strstr(svg, "&lt;point&gt;"));
    /* The event's line goes under the bars' labels, and a label beside
     * its bar has a white halo, so the line stops at its letters (one
     * inside, white on the bar, has none: its bar may lie under another);
     * row names end 12 px before the frame, clear of a point marker at 0
     * ("Work: time that remained", 173 px estimated, sets it at 193). */
    const char *ev = strstr(svg, "class=\"event\""), *in_bar = strstr(svg, ">received 2000 ms<");
    assert_non_null(ev);
    assert_non_null(in_bar);
    assert_true(ev < in_bar);
    assert_non_null(strstr(svg, "fill=\"white\">received 2000 ms<"));
    assert_non_null(
        strstr(svg, "fill=\"#222\" paint-order=\"stroke\" stroke=\"white\" stroke-width=\"3\">&lt;point&gt;"));
    assert_non_null(strstr(svg, "class=\"row\" x=\"180.8\""));
    free(svg);
    /* A row name longer than the margin moves the plot right (26
     * characters: estimated 187 px, starting 8 px in), never off the
     * picture's edge. */
    rows[2] = "Lookup: time that remained";
    svg = timeline_to_string(&t, &rc);
    assert_int_equal(rc, RL_OK);
    assert_non_null(strstr(svg, "class=\"row\" x=\"195.2\""));
    free(svg);
    spans[0].row = 3; /* no such row */
    free(timeline_to_string(&t, &rc));
    assert_int_equal(rc, RL_EINVAL);
    t.nrows = 0;
    free(timeline_to_string(&t, &rc));
    assert_int_equal(rc, RL_EINVAL);
}

/* The y pixel of the last point of the |k|-th polyline of |svg|. */
static double last_y(const char *svg, int k)
{
    const char *p = svg;
    for (int i = 0; i <= k; i++) {
        p = strstr(p, "<polyline");
        assert_non_null(p);
        p++;
    }
    const char *pts = strstr(p, "points=\"") + 8, *end = strchr(pts, '"');
    const char *comma = end;
    while (*comma != ',')
        comma--;
    return atof(comma + 1);
}

static void a_right_axis_has_its_own_ticks_and_says_so(void **state)
{
    (void)state;
    double x[] = {0, 1, 2, 3}, few[] = {0, 1, 2, 3}, many[] = {0, 100, 300, 400};
    rl_svg_series s[] = {{.label = "streams", .x = x, .y = few, .n = 4},
                         {.label = "calls", .x = x, .y = many, .n = 4, .right = 1}};
    rl_svg_ref cover = {.label = "to cover", .value = 302, .right = 1};
    rl_svg_plot p = {.xlabel = "s",
                     .ylabel = "streams",
                     .y2label = "calls <queued>",
                     .series = s,
                     .nseries = 2,
                     .refs = &cover,
                     .nrefs = 1};
    int rc;
    char *svg = plot_to_string(&p, &rc);
    assert_int_equal(rc, RL_OK);
    /* The right axis: 0 to 500 in steps of 100, its label escaped. */
    assert_int_equal(count(svg, "class=\"y2-tick\""), 6);
    assert_non_null(strstr(svg, "class=\"y2-tick\" x=\"728.0\" y=\"24.0\">500<"));
    assert_non_null(strstr(svg, "calls &lt;queued&gt;"));
    /* The left axis ends at 4, not at 500: the streams' 3 is three
     * quarters up the plot (y 20 to 400, 0 at 392), not a line at 0. */
    assert_non_null(strstr(svg, "text-anchor=\"end\">4<"));
    assert_true(last_y(svg, 0) < 120 && last_y(svg, 0) > 100);
    assert_true(last_y(svg, 1) < 100);
    /* Every entry says which axis it is read on. */
    assert_non_null(strstr(svg, ">streams (left axis)<"));
    assert_non_null(strstr(svg, ">calls (right axis)<"));
    assert_non_null(strstr(svg, ">to cover (right axis)<"));
    free(svg);
    /* No series on the right: one axis, nothing said, a reference marked
     * right read on the one axis there is. */
    s[1].right = 0;
    svg = plot_to_string(&p, &rc);
    assert_int_equal(rc, RL_OK);
    assert_null(strstr(svg, "y2-tick"));
    assert_null(strstr(svg, "axis)"));
    assert_null(strstr(svg, "queued"));
    assert_true(last_y(svg, 0) > 380);
    free(svg);
}

/* Whether a curve of |svg| passes within 1 px of the box of a text of
 * class |cls| (its box as rl_svg estimates it: 7.2 px a character, 11 px
 * above its baseline and 4 below). */
static bool text_meets_curve(const char *svg, const char *cls)
{
    char key[64];
    snprintf(key, sizeof key, "class=\"%s\"", cls);
    for (const char *t = strstr(svg, key); t; t = strstr(t + 1, key)) {
        double x = atof(strstr(t, " x=\"") + 4), y = atof(strstr(t, " y=\"") + 4);
        const char *anchor = strstr(t, "text-anchor=\"") + 13, *body = strchr(t, '>') + 1;
        double w = 7.2 * (double)(strchr(body, '<') - body);
        double x0 = *anchor == 'e' ? x - w : *anchor == 'm' ? x - w / 2 : x;
        for (const char *p = strstr(svg, "<polyline"); p; p = strstr(p + 1, "<polyline")) {
            const char *q = strstr(p, "points=\"") + 8;
            double px = -1, py = -1;
            while (*q != '"') {
                double nx = strtod(q, (char **)&q), ny = strtod(q + 1, (char **)&q);
                for (int k = 0; px >= 0 && k <= 200; k++) {
                    double sx = px + (nx - px) * k / 200, sy = py + (ny - py) * k / 200;
                    if (sx > x0 - 1 && sx < x0 + w + 1 && sy > y - 12 && sy < y + 5)
                        return true;
                }
                px = nx;
                py = ny;
                while (*q == ' ')
                    q++;
            }
        }
    }
    return false;
}

static void labels_slide_off_the_curves(void **state)
{
    (void)state;
    /* A curve through every fixed spot of the reference's label (its ends,
     * its middle, above and below) and over the event's label at the top;
     * free from 5.5 to 8.5 along the reference, and lower down at 2. */
    double x[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, y[] = {10, 95, 95, 95, 10, 90, 10, 10, 10, 90, 10};
    rl_svg_series s = {.label = "zigzag", .x = x, .y = y, .n = 11};
    rl_svg_ref ref = {.label = "capacity 50", .value = 50}, ev = {.label = "event here", .value = 2};
    rl_svg_plot p = {.xlabel = "s",
                     .ylabel = "y",
                     .series = &s,
                     .nseries = 1,
                     .refs = &ref,
                     .nrefs = 1,
                     .events = &ev,
                     .nevents = 1};
    int rc;
    char *svg = plot_to_string(&p, &rc);
    assert_int_equal(rc, RL_OK);
    assert_false(text_meets_curve(svg, "ref-label"));
    assert_false(text_meets_curve(svg, "event-label"));
    /* The checker sees a crossing where there is one: a curve from 30 to 70
     * and back every second crosses every spot (any label's width holds a
     * half second, where it goes from 30 to 70, and every offset lies
     * between), and the label stays on its line at the right, across it. */
    double hx[21], zig[21];
    for (int i = 0; i < 21; i++) {
        hx[i] = i / 2.0;
        zig[i] = i % 2 ? 70 : 30;
    }
    s.x = hx;
    s.y = zig;
    s.n = 21;
    p.nevents = 0;
    free(svg);
    svg = plot_to_string(&p, &rc);
    assert_int_equal(rc, RL_OK);
    assert_true(text_meets_curve(svg, "ref-label"));
    free(svg);
}

/* The y of the |k|-th text of class |cls| in |svg|. */
static double text_y(const char *svg, const char *cls, int k)
{
    char key[64];
    snprintf(key, sizeof key, "class=\"%s\"", cls);
    const char *t = strstr(svg, key);
    for (int i = 0; t && i < k; i++)
        t = strstr(t + 1, key);
    assert_non_null(t);
    return atof(strstr(t, " y=\"") + 4);
}

static void an_event_label_keeps_off_reference_lines(void **state)
{
    (void)state;
    /* A budget at 93 of 100 runs through the second event label's row
     * (its baseline at 49, the box 38 to 53): the label goes a row lower. */
    double x[] = {0, 5, 10}, y[] = {10, 10, 10};
    rl_svg_series s = {.label = "rss", .x = x, .y = y, .n = 3};
    rl_svg_ref ref = {.label = "budget", .value = 93},
               ev[] = {{.label = "later", .value = 8}, {.label = "batch starts", .value = 2}};
    rl_svg_plot p = {
        .xlabel = "s", .ylabel = "y", .series = &s, .nseries = 1, .refs = &ref, .nrefs = 1, .events = ev, .nevents = 2};
    int rc;
    char *svg = plot_to_string(&p, &rc);
    assert_int_equal(rc, RL_OK);
    double ry = atof(strstr(strstr(svg, "class=\"ref\""), " y1=\"") + 5), ly = text_y(svg, "event-label", 1);
    assert_true(ry > 38 && ry < 53);
    assert_true(ry < ly - 12 || ry > ly + 5);
    free(svg);
}

static void labels_side_by_side_keep_a_gap(void **state)
{
    (void)state;
    /* coverage/evacuation's picture as a layout run drew it (its events
     * and the busy server's line through their first rows): the last two
     * labels slid to one row, and 'C emptied' (estimated to end 0.2 px
     * before the next label) ran into 'evacuate by (+ slack)' in
     * chromium. Estimated boxes now keep 6 px apart. */
    double bx[] = {0, 0.45, 0.5, 11.06}, by[] = {1, 1, 2, 2}, cx[] = {0, 3.25, 3.3, 11.06}, cy[] = {1, 1, 0, 0};
    rl_svg_series s[] = {{.label = "B", .x = bx, .y = by, .n = 4}, {.label = "C", .x = cx, .y = cy, .n = 4}};
    rl_svg_ref ev[] = {{.label = "calls start on B", .value = 0.5},
                       {.label = "C overdue", .value = 2.77},
                       {.label = "evacuate by (+ slack)", .value = 3.92},
                       {.label = "C emptied", .value = 2.96}};
    rl_svg_plot p = {.title = "t",
                     .xlabel = "s",
                     .ylabel = "y",
                     .series = s,
                     .nseries = 2,
                     .events = ev,
                     .nevents = 4,
                     .caption = "c",
                     .width = 860,
                     .height = 420};
    int rc;
    char *svg = plot_to_string(&p, &rc);
    assert_int_equal(rc, RL_OK);
    double x0[4], x1[4], ly[4];
    for (int i = 0; i < 4; i++) {
        ly[i] = text_y(svg, "event-label", i);
        const char *t = strstr(svg, "class=\"event-label\"");
        for (int k = 0; k < i; k++)
            t = strstr(t + 1, "class=\"event-label\"");
        double tx = atof(strstr(t, " x=\"") + 4), w = 7.2 * (double)strlen(ev[i].label);
        x0[i] = strstr(t, "text-anchor=\"end\"") == strstr(t, "text-anchor=") ? tx - w : tx;
        x1[i] = x0[i] + w;
    }
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++)
            assert_true(fabs(ly[i] - ly[j]) >= 15 || x1[i] + 6 <= x0[j] || x1[j] + 6 <= x0[i]);
    free(svg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tick_steps_are_round),
        cmocka_unit_test(escape_handles_markup),
        cmocka_unit_test(plot_has_labels_series_and_legend),
        cmocka_unit_test(plot_refuses_empty_or_nan),
        cmocka_unit_test(escape_replaces_control_and_non_ascii),
        cmocka_unit_test(plot_draws_references_events_dashes_and_caption),
        cmocka_unit_test(timeline_draws_rows_spans_and_events),
        cmocka_unit_test(write_escaped_writes_it_all),
        cmocka_unit_test(a_right_axis_has_its_own_ticks_and_says_so),
        cmocka_unit_test(labels_slide_off_the_curves),
        cmocka_unit_test(an_event_label_keeps_off_reference_lines),
        cmocka_unit_test(labels_side_by_side_keep_a_gap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
