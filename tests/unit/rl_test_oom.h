/* rl_test_oom: fail each allocation of a library in turn.
 *
 * A library with an allocator hook (rl_chancfg_set_alloc_funcs) is given
 * rl_test_oom_malloc and rl_test_oom_free; rl_test_oom_sweep(pass, arg)
 * then runs |pass| once without a failure, which counts its allocations,
 * and again with allocation 0, 1, 2, ... failing in turn. Every pass must
 * free all it allocated (a leak fails the test, naming the allocation),
 * and the sweep ends at the first pass that succeeded with no allocation
 * left to fail. Passes are deterministic, so a sweep still going past the
 * unfailing pass's count is a failure, never a loop without end. Include
 * after <cmocka.h>; one sweep at a time (the counters are the file's). */
#ifndef RL_TEST_OOM_H
#define RL_TEST_OOM_H

#include <stdbool.h>
#include <stdlib.h>

static long rl_test_oom_fail_at = -1; /* the allocation to fail, or -1 */
static long rl_test_oom_allocs;       /* allocations tried in this pass */
static long rl_test_oom_live;         /* allocations not yet freed */

__attribute__((unused)) static void *rl_test_oom_malloc(size_t n)
{
    if (rl_test_oom_allocs++ == rl_test_oom_fail_at)
        return NULL;
    void *p = malloc(n);
    if (p)
        rl_test_oom_live++;
    return p;
}

__attribute__((unused)) static void rl_test_oom_free(void *p)
{
    if (p)
        rl_test_oom_live--;
    free(p);
}

/* Runs the sweep over |pass| (true: it succeeded; on an allocation failure
 * it must return false and have freed everything). Returns how many
 * passes failed an allocation. */
__attribute__((unused)) static long rl_test_oom_sweep(bool (*pass)(void *arg), void *arg)
{
    rl_test_oom_fail_at = -1;
    rl_test_oom_allocs = 0;
    rl_test_oom_live = 0;
    assert_true(pass(arg));
    assert_int_equal(rl_test_oom_live, 0);
    long total = rl_test_oom_allocs, passes = 0;
    bool done = false;
    for (rl_test_oom_fail_at = 0; rl_test_oom_fail_at <= total && !done; rl_test_oom_fail_at++, passes++) {
        rl_test_oom_allocs = 0;
        rl_test_oom_live = 0;
        bool ok = pass(arg);
        if (rl_test_oom_live != 0)
            fail_msg("%ld allocations leaked when allocation %ld failed", rl_test_oom_live, rl_test_oom_fail_at);
        done = ok && rl_test_oom_allocs <= rl_test_oom_fail_at; /* the failure point is past the last one */
    }
    rl_test_oom_fail_at = -1;
    if (!done)
        fail_msg("failing allocation %ld still changed the outcome, but an unfailing pass made only %ld", total, total);
    return passes;
}

#endif
