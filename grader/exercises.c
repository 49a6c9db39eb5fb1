/* exercises: the one table of graded exercises. Adding an exercise is one
 * X(name) entry here plus its ex_NAME.c defining `const rl_exercise
 * rl_ex_NAME`; the CLI, `grader list` and the rubric lookup all read this.
 * The grader's own test exercises are apart (TEST_EXERCISES). */
#include "exercise.h"

#include <stdlib.h>
#include <string.h>

#define EXERCISES(X) \
    X(deadline)      \
    X(cancel)        \
    X(flow)          \
    X(keepalive)     \
    X(retry)         \
    X(shutdown)

#define DECLARE(name) extern const rl_exercise rl_ex_##name;
EXERCISES(DECLARE)
#undef DECLARE

#define ENTRY(name) &rl_ex_##name,
const rl_exercise *const rl_exercises[] = {EXERCISES(ENTRY) NULL};
#undef ENTRY

extern const rl_exercise rl_ex_driver_test;
extern const rl_exercise rl_ex_driver_test_instances;
static const rl_exercise *const test_exercises[] = {&rl_ex_driver_test, &rl_ex_driver_test_instances, NULL};

const rl_exercise *rl_exercise_find(const char *name)
{
    for (size_t i = 0; rl_exercises[i]; i++)
        if (strcmp(rl_exercises[i]->name, name) == 0)
            return rl_exercises[i];
    const char *hook = getenv(RL_TEST_EXERCISES_ENV);
    for (size_t i = 0; hook && *hook && test_exercises[i]; i++)
        if (strcmp(test_exercises[i]->name, name) == 0)
            return test_exercises[i];
    return NULL;
}
