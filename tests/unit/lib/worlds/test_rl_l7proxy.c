/* Unit tests for the L7 proxy's placement: each policy's share over a run
 * of streams, that "none on" never places there, and that a policy naming
 * no server of the fleet falls back to uniform. (The proxy's pumping is
 * driven end to end by tests/integration/test_coverage.py.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "worlds/rl_l7proxy.h"

static void counts(const rl_placement *p, int n, uint64_t from, uint64_t count, int *out)
{
    memset(out, 0, sizeof(int) * (size_t)n);
    for (uint64_t s = from; s < from + count; s++) {
        int b = rl_placement_pick(p, s, n);
        assert_true(b >= 0 && b < n);
        out[b]++;
    }
}

static void uniform_is_round_robin(void **state)
{
    (void)state;
    rl_placement p = {RL_PLACE_UNIFORM, 0, 0};
    for (uint64_t s = 0; s < 9; s++)
        assert_int_equal(rl_placement_pick(&p, s, 3), (int)(s % 3));
    /* The first eight streams of an agent: 3, 3, 2. */
    int c[3];
    counts(&p, 3, 0, 8, c);
    assert_int_equal(c[0], 3);
    assert_int_equal(c[1], 3);
    assert_int_equal(c[2], 2);
}

static void skewed_gives_its_share_in_every_hundred(void **state)
{
    (void)state;
    rl_placement p = {RL_PLACE_SKEWED, 1, 80};
    int c[3];
    for (uint64_t from = 0; from < 300; from += 37) {
        counts(&p, 3, from, 100, c);
        assert_int_equal(c[1], 80);
        /* The rest alternates between the other two. */
        assert_true(c[0] >= 9 && c[0] <= 11);
        assert_int_equal(c[0] + c[2], 20);
    }
}

static void skewed_to_a_leaves_one_each_on_b_and_c_in_the_first_eight(void **state)
{
    (void)state;
    /* The evacuation scenario's start (grader/ex_coverage.c). */
    rl_placement p = {RL_PLACE_SKEWED, 0, 80};
    int c[3];
    counts(&p, 3, 0, 8, c);
    assert_int_equal(c[0], 6);
    assert_int_equal(c[1], 1);
    assert_int_equal(c[2], 1);
}

static void avoid_never_places_on_the_server(void **state)
{
    (void)state;
    rl_placement p = {RL_PLACE_AVOID, 1, 0};
    int c[3];
    counts(&p, 3, 0, 1000, c);
    assert_int_equal(c[1], 0);
    assert_int_equal(c[0], 500);
    assert_int_equal(c[2], 500);
}

static void only_places_on_the_server(void **state)
{
    (void)state;
    rl_placement p = {RL_PLACE_ONLY, 2, 0};
    int c[3];
    counts(&p, 3, 0, 50, c);
    assert_int_equal(c[2], 50);
}

static void unknown_server_falls_back_to_uniform(void **state)
{
    (void)state;
    rl_placement p = {RL_PLACE_AVOID, 7, 0};
    int c[3];
    counts(&p, 3, 0, 9, c);
    assert_int_equal(c[0], 3);
    assert_int_equal(c[1], 3);
    assert_int_equal(c[2], 3);
    p = (rl_placement){RL_PLACE_SKEWED, -1, 80};
    assert_int_equal(rl_placement_pick(&p, 4, 3), 1);
    /* One backend: always it. */
    assert_int_equal(rl_placement_pick(&p, 4, 1), 0);
}

static void describes_each_policy(void **state)
{
    (void)state;
    char buf[64];
    rl_placement p = {RL_PLACE_SKEWED, 1, 80};
    rl_placement_describe(&p, buf, sizeof buf);
    assert_string_equal(buf, "skewed 80% to server 1");
    p = (rl_placement){RL_PLACE_AVOID, 2, 0};
    rl_placement_describe(&p, buf, sizeof buf);
    assert_string_equal(buf, "none on server 2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(uniform_is_round_robin),
        cmocka_unit_test(skewed_gives_its_share_in_every_hundred),
        cmocka_unit_test(skewed_to_a_leaves_one_each_on_b_and_c_in_the_first_eight),
        cmocka_unit_test(avoid_never_places_on_the_server),
        cmocka_unit_test(only_places_on_the_server),
        cmocka_unit_test(unknown_server_falls_back_to_uniform),
        cmocka_unit_test(describes_each_policy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
