/* Unit tests for balance_figure: the reconnect rate so far counts only the
 * opens after each client's first, up to each window's end, per client per
 * world minute; the bunch sizes count the opens within the span of each
 * one, the span's end included, as rl_bw_bunches does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "balance_figure.h"

#define MS 1000000LL

static void the_rate_so_far_counts_reconnects_per_client_per_minute(void **state)
{
    (void)state;
    /* Two clients' first connections, then reconnects at 100, 600 and
     * 900 lab ms; 500 ms windows; the world runs 30x faster, so a window
     * is 15 world s, a quarter of a minute. */
    const int64_t open[] = {0, 1 * MS, 100 * MS, 600 * MS, 900 * MS};
    double x[3], y[3];
    assert_int_equal(gr_bal_rate_so_far(open, 5, 2, 0, 500 * MS, 3, 2, 30, x, y), 3);
    assert_true(x[0] == 15.0 && x[1] == 30.0 && x[2] == 45.0);
    assert_float_equal(y[0], 1.0 / 2 / 0.25, 1e-9); /* 1 reconnect, 2 clients, 0.25 min */
    assert_float_equal(y[1], 3.0 / 2 / 0.5, 1e-9);
    assert_float_equal(y[2], 3.0 / 2 / 0.75, 1e-9);
    /* No reconnect: zero; no client or window: nothing. */
    assert_int_equal(gr_bal_rate_so_far(open, 2, 2, 0, 500 * MS, 1, 2, 30, x, y), 1);
    assert_float_equal(y[0], 0, 0);
    assert_int_equal(gr_bal_rate_so_far(open, 5, 2, 0, 500 * MS, 1, 0, 30, x, y), 0);
    assert_int_equal(gr_bal_rate_so_far(open, 5, 2, 0, 0, 1, 2, 30, x, y), 0);
}

static void the_bunch_sizes_count_opens_within_the_span(void **state)
{
    (void)state;
    /* One first connection skipped; then 10, 30, 60 (span 50: the end
     * included) and 200 ms. */
    const int64_t open[] = {0, 10 * MS, 30 * MS, 60 * MS, 200 * MS};
    double x[4], y[4];
    assert_int_equal(gr_bal_bunch_sizes(open, 5, 1, 0, 50 * MS, 30, x, y, 4), 4);
    assert_float_equal(y[0], 3, 0); /* 10, 30, 60 */
    assert_float_equal(y[1], 2, 0); /* 30, 60 */
    assert_float_equal(y[2], 1, 0);
    assert_float_equal(y[3], 1, 0);
    assert_float_equal(x[0], 0.3, 1e-9); /* 10 lab ms, in world s */
    assert_float_equal(x[3], 6.0, 1e-9);
    /* Capped at |max|; nothing past the skip gives nothing. */
    assert_int_equal(gr_bal_bunch_sizes(open, 5, 1, 0, 50 * MS, 30, x, y, 2), 2);
    assert_int_equal(gr_bal_bunch_sizes(open, 1, 1, 0, 50 * MS, 30, x, y, 4), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_rate_so_far_counts_reconnects_per_client_per_minute),
        cmocka_unit_test(the_bunch_sizes_count_opens_within_the_span),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
