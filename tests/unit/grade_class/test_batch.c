/* Unit tests for batch: exercises are found by exact name, --world by its
 * exercise, --exercises EX/ID adds only known scenarios and trims each
 * exercise to those in the grader's order (points and visibility move with
 * them), and paths inside the class are shown relative to it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "batch.h"

#include "rl_err.h"

#include <stdio.h>
#include <string.h>

static gc_batch b;

static void two_exercises(void)
{
    memset(&b, 0, sizeof b);
    b.nex = 2;
    snprintf(b.ex[0].name, sizeof b.ex[0].name, "deadline");
    snprintf(b.ex[1].name, sizeof b.ex[1].name, "keepalive");
    b.ex[1].config = true;
    const char *sc[] = {"check", "idle", "ping", "storm"};
    b.ex[1].nscenarios = 4;
    for (size_t i = 0; i < 4; i++) {
        snprintf(b.ex[1].scenarios[i], sizeof b.ex[1].scenarios[i], "%s", sc[i]);
        b.ex[1].points[i] = (double)(i + 1);
        snprintf(b.ex[1].visibility[i], sizeof b.ex[1].visibility[i], "v%zu", i);
    }
}

static void exercises_are_found_by_their_whole_name(void **state)
{
    (void)state;
    two_exercises();
    assert_int_equal(gc_batch_find_exercise(&b, "deadline"), 0);
    assert_int_equal(gc_batch_find_exercise(&b, "keepalive"), 1);
    assert_int_equal(gc_batch_find_exercise(&b, "keep"), -1);
    assert_int_equal(gc_batch_find_exercise(&b, ""), -1);
}

static void a_world_belongs_to_the_exercise_named_before_its_equals(void **state)
{
    (void)state;
    two_exercises();
    snprintf(b.worlds[0], sizeof b.worlds[0], "keepalive=/w/k.json");
    snprintf(b.worlds[1], sizeof b.worlds[1], "keep=/w/short.json");
    b.nworlds = 2;
    assert_string_equal(gc_batch_world_for(&b, "keepalive"), "/w/k.json");
    assert_string_equal(gc_batch_world_for(&b, "keep"), "/w/short.json");
    assert_null(gc_batch_world_for(&b, "deadline"));
}

static void only_known_scenarios_are_added(void **state)
{
    (void)state;
    two_exercises();
    assert_int_equal(gc_batch_add_only(&b, 1, "storm"), RL_OK);
    assert_int_equal(gc_batch_add_only(&b, 1, "check"), RL_OK);
    assert_int_equal(gc_batch_add_only(&b, 1, "nope"), RL_EINVAL);
    assert_int_equal(gc_batch_add_only(&b, 0, "check"), RL_EINVAL);
    assert_string_equal(b.only[1], "storm,check");
    assert_string_equal(b.only[0], "");
}

static void trimming_keeps_the_graders_order_and_moves_points(void **state)
{
    (void)state;
    two_exercises();
    snprintf(b.only[1], sizeof b.only[1], "storm,idle");
    gc_batch_trim_to_only(&b);
    assert_int_equal(b.ex[1].nscenarios, 2);
    assert_string_equal(b.ex[1].scenarios[0], "idle");
    assert_string_equal(b.ex[1].scenarios[1], "storm");
    assert_true(b.ex[1].points[0] == 2.0 && b.ex[1].points[1] == 4.0);
    assert_string_equal(b.ex[1].visibility[0], "v1");
    assert_string_equal(b.ex[1].visibility[1], "v3");
    assert_int_equal(b.ex[0].nscenarios, 0); /* no --only: untouched */
}

static void paths_inside_the_class_are_shown_relative_to_it(void **state)
{
    (void)state;
    two_exercises();
    snprintf(b.class_dir, sizeof b.class_dir, "/c/class");
    assert_string_equal(gc_batch_shown_path(&b, "/c/class/alice/deadline"), "alice/deadline");
    assert_string_equal(gc_batch_shown_path(&b, "/c/classmate/x"), "/c/classmate/x");
    assert_string_equal(gc_batch_shown_path(&b, "/elsewhere"), "/elsewhere");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exercises_are_found_by_their_whole_name),
        cmocka_unit_test(a_world_belongs_to_the_exercise_named_before_its_equals),
        cmocka_unit_test(only_known_scenarios_are_added),
        cmocka_unit_test(trimming_keeps_the_graders_order_and_moves_points),
        cmocka_unit_test(paths_inside_the_class_are_shown_relative_to_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
