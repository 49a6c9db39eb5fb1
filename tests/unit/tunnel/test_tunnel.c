/* Unit tests for the tunnel server's pure parts (tunnel/tunnel.c): the
 * work of each call of a jittered Dispatch batch (DispatchRequest's
 * work_jitter_ms), which keeps the coverage bursts' answers out of step
 * with an agent's tick. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tunnel.h"

static void no_jitter_is_the_work(void **state)
{
    (void)state;
    for (uint32_t k = 0; k < 50; k++)
        assert_int_equal(tn_jittered_work(500, 0, k), 500);
}

static void jitter_spreads_evenly_around_the_work(void **state)
{
    (void)state;
    /* 1500 +- 300: every value within, each of the 601 once per 601 calls
     * (7919 is prime to 601), so the mean is the work. */
    static int seen[601];
    uint64_t sum = 0;
    for (uint32_t k = 0; k < 601; k++) {
        uint32_t w = tn_jittered_work(1500, 300, k);
        assert_true(w >= 1200 && w <= 1800);
        seen[w - 1200]++;
        sum += w;
    }
    for (int i = 0; i < 601; i++)
        assert_int_equal(seen[i], 1);
    assert_int_equal(sum, 1500ull * 601);
    /* The same every run, and not a multiple of the 250 ms tick in step:
     * consecutive calls differ. */
    assert_int_equal(tn_jittered_work(1500, 300, 7), tn_jittered_work(1500, 300, 7));
    assert_int_not_equal(tn_jittered_work(1500, 300, 1), tn_jittered_work(1500, 300, 2));
    /* The whole range of uint32 work is safe: jitter up to the work. */
    assert_true(tn_jittered_work(10, 10, 3) <= 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_jitter_is_the_work),
        cmocka_unit_test(jitter_spreads_evenly_around_the_work),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
