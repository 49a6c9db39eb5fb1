/* Unit tests for the no-leak judge: a pool that grows a little passes, one
 * thread or file per call fails with the per-call figure named, memory is
 * judged against its own budget, and a runaway group is told apart. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "leak.h"

#define MIB (UINT64_C(1) << 20)

static rl_proc_sample sample(int threads, int fds, uint64_t rss_mib)
{
    rl_proc_sample s = {.nprocs = 1, .nthreads = threads, .nfds = fds, .rss_bytes = rss_mib * MIB};
    return s;
}

static void unchanged_group_passes(void **state)
{
    (void)state;
    rl_proc_sample a = sample(10, 8, 33), b = sample(10, 8, 33);
    gr_leak_check c;
    gr_leak_judge(&a, &b, GR_LEAK_CALLS, &c);
    assert_true(c.pass);
    char buf[512];
    gr_leak_feedback(&c, "cancelled calls", buf, sizeof buf);
    assert_non_null(strstr(buf, "nothing was left behind"));
}

static void pool_growth_within_a_third_passes(void **state)
{
    (void)state;
    rl_proc_sample a = sample(10, 8, 33), b = sample(10 + GR_LEAK_CALLS / 3, 8 + GR_LEAK_CALLS / 3, 33);
    gr_leak_check c;
    gr_leak_judge(&a, &b, GR_LEAK_CALLS, &c);
    assert_true(c.pass);
}

static void thread_per_call_fails_and_says_so(void **state)
{
    (void)state;
    rl_proc_sample a = sample(11, 7, 33), b = sample(11 + GR_LEAK_CALLS, 7, 34);
    gr_leak_check c;
    gr_leak_judge(&a, &b, GR_LEAK_CALLS, &c);
    assert_false(c.pass);
    assert_true(c.threads_grew);
    assert_false(c.fds_grew);
    char buf[512];
    gr_leak_feedback(&c, "cancelled calls", buf, sizeof buf);
    assert_non_null(strstr(buf, "30 more threads (1.00 per call"));
    assert_null(strstr(buf, "open files"));
}

static void file_per_call_fails(void **state)
{
    (void)state;
    rl_proc_sample a = sample(10, 14, 33), b = sample(10, 14 + GR_LEAK_CALLS / 3 + 1, 33);
    gr_leak_check c;
    gr_leak_judge(&a, &b, GR_LEAK_CALLS, &c);
    assert_false(c.pass);
    assert_true(c.fds_grew);
    char buf[512];
    gr_leak_feedback(&c, "cancelled calls", buf, sizeof buf);
    assert_non_null(strstr(buf, "11 more open files"));
}

static void unreadable_descriptors_are_not_judged(void **state)
{
    (void)state;
    rl_proc_sample a = sample(10, -1, 33), b = sample(10, 500, 33);
    gr_leak_check c;
    gr_leak_judge(&a, &b, GR_LEAK_CALLS, &c);
    assert_true(c.pass);
}

static void memory_past_its_budget_fails(void **state)
{
    (void)state;
    rl_proc_sample a = sample(10, 8, 60), b = sample(10, 8, 60 + GR_LEAK_RSS_MIB);
    gr_leak_check c;
    gr_leak_judge(&a, &b, GR_LEAK_CALLS, &c);
    assert_true(c.pass);
    b.rss_bytes += MIB;
    gr_leak_judge(&a, &b, GR_LEAK_CALLS, &c);
    assert_false(c.pass);
    assert_true(c.rss_grew);
    /* Shrinking is never a leak. */
    gr_leak_judge(&b, &a, GR_LEAK_CALLS, &c);
    assert_true(c.pass);
}

static void runaway_is_past_the_give_up_growth(void **state)
{
    (void)state;
    rl_proc_sample a = sample(10, 8, 30), b = sample(10, 8, 30 + GR_LEAK_GIVE_UP_MIB);
    assert_false(gr_leak_runaway(&a, &b));
    b.rss_bytes += MIB;
    assert_true(gr_leak_runaway(&a, &b));
    char buf[512];
    gr_leak_runaway_feedback(&a, &b, 9, "cancelled Produce calls", buf, sizeof buf);
    assert_non_null(strstr(buf, "while 9 cancelled Produce calls ran, RSS grew 513.0 MiB"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unchanged_group_passes),
        cmocka_unit_test(pool_growth_within_a_third_passes),
        cmocka_unit_test(thread_per_call_fails_and_says_so),
        cmocka_unit_test(file_per_call_fails),
        cmocka_unit_test(unreadable_descriptors_are_not_judged),
        cmocka_unit_test(memory_past_its_budget_fails),
        cmocka_unit_test(runaway_is_past_the_give_up_growth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
