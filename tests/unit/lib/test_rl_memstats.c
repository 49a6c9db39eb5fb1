/* Unit tests for the streamer's memory figures: RSS is always read, and
 * with jemalloc a large live allocation shows in stats.allocated (which
 * proves the epoch refresh works: without it the figure would not move). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rl_memstats.h"

static void rss_is_read(void **state)
{
    (void)state;
    rl_memstats m;
    assert_int_equal(rl_memstats_read(&m), 0);
    assert_true(m.rss > 0);
}

static void allocation_shows_in_allocated(void **state)
{
    (void)state;
    rl_memstats before, after;
    assert_int_equal(rl_memstats_read(&before), 0);
#ifdef RL_HAVE_JEMALLOC
    size_t n = 32u << 20;
    /* Volatile, so the compiler can neither elide the pair nor skip the
     * writes that make the pages resident. */
    volatile char *p = malloc(n);
    for (size_t i = 0; i < n; i += 4096)
        p[i] = 1;
    assert_int_equal(rl_memstats_read(&after), 0);
    assert_true(after.allocated - before.allocated >= (int64_t)n);
    assert_true(after.resident >= after.allocated);
    assert_true(after.rss - before.rss >= (int64_t)n / 2);
    free((void *)p);
#else
    assert_int_equal(rl_memstats_read(&after), 0);
    assert_int_equal(after.allocated, -1);
    assert_int_equal(after.resident, -1);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rss_is_read),
        cmocka_unit_test(allocation_shows_in_allocated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
