/* Unit tests for rl_stats: samples sort ascending, negatives and extremes
 * included (a subtraction would overflow), and percentiles read the sample
 * at n * pct / 100, the last for 100, 0 with no samples. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "rl_stats.h"

static void sorts_ascending_with_extremes(void **state)
{
    (void)state;
    int64_t v[] = {5, INT64_MIN, 3, INT64_MAX, -7, 3, 0};
    const int64_t want[] = {INT64_MIN, -7, 0, 3, 3, 5, INT64_MAX};
    rl_stats_sort_i64(v, sizeof v / sizeof v[0]);
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        assert_true(v[i] == want[i]);
}

static void no_samples_sort_and_read_zero(void **state)
{
    (void)state;
    rl_stats_sort_i64(NULL, 0);
    assert_true(rl_stats_pct_i64(NULL, 0, 50) == 0);
    assert_true(rl_stats_pct_i64(NULL, 0, 99) == 0);
}

static void percentile_is_the_sample_at_n_pct_over_100(void **state)
{
    (void)state;
    int64_t v[200];
    for (size_t i = 0; i < 200; i++)
        v[i] = (int64_t)i * 10;
    assert_true(rl_stats_pct_i64(v, 200, 0) == 0);
    assert_true(rl_stats_pct_i64(v, 200, 50) == 1000);  /* index 100 */
    assert_true(rl_stats_pct_i64(v, 200, 99) == 1980);  /* index 198 */
    assert_true(rl_stats_pct_i64(v, 200, 100) == 1990); /* the last */
    assert_true(rl_stats_pct_i64(v, 3, 50) == 10);      /* index 1 */
    assert_true(rl_stats_pct_i64(v, 3, 99) == 20);      /* index 2 */
    assert_true(rl_stats_pct_i64(v, 1, 99) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sorts_ascending_with_extremes),
        cmocka_unit_test(no_samples_sort_and_read_zero),
        cmocka_unit_test(percentile_is_the_sample_at_n_pct_over_100),
    };
    return cmocka_run_group_tests_name("rl_stats", tests, NULL, NULL);
}
