/* rl_test: a time limit for every cmocka test, the way libuv's runner gives
 * each test one. The Makefile force-includes this header into every
 * tests/unit/test_*.c, so a new test gets its limit without asking.
 *
 * cmocka_run_group_tests(_name) is redefined to run a copy of the group in
 * which every test's setup arms a one-shot POSIX timer and its teardown
 * disarms it. The timer notifies on a thread of its own rather than with a
 * signal: tests use SIGALRM themselves (test_deadline) and a blocked loop
 * may have signals masked. When it fires, the test is hung: the thread
 * names the group and the test on stderr and ends the process with status 1,
 * because a hung test cannot be unwound safely (it may hold gRPC's locks).
 *
 * The limit is RL_TEST_LIMIT_S seconds per test (setup, test and teardown
 * together), or $RELAYLAB_TEST_LIMIT_S when set (0: no limit, for a
 * debugger). Every suite ran in under 3 s whole when this was written; 30 s
 * leaves room for ASan and a machine loaded twice over. */
#ifndef RL_TEST_H
#define RL_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RL_TEST_LIMIT_S 30

/* The group being run; one group at a time per process. */
static struct {
    const char *group;
    const struct CMUnitTest *orig; /* the caller's tests, for setup/teardown/state */
    struct CMUnitTest *copy;       /* what cmocka runs: our setup and teardown */
    size_t next;                   /* index of the next test to start */
    size_t current;                /* index of the test being run */
    const char *volatile running;  /* the test being timed, read by the timer thread */
    CMFixtureFunction group_setup, group_teardown;
    long limit_s;
    timer_t timer;
    int armed; /* the timer exists */
} rl_test_;

static void rl_test_expired(union sigval v)
{
    (void)v;
    char msg[512];
    int n = snprintf(msg, sizeof msg,
                     "[  TIMEOUT ] %s: %s is still running after its %ld s limit (RELAYLAB_TEST_LIMIT_S); "
                     "failing the suite\n",
                     rl_test_.group, rl_test_.running ? rl_test_.running : "?", rl_test_.limit_s);
    if (n > 0 && write(STDERR_FILENO, msg, (size_t)n) < 0)
        n = 0;
    _exit(EXIT_FAILURE);
}

static void rl_test_arm(const char *name)
{
    if (!rl_test_.armed)
        return;
    rl_test_.running = name;
    struct itimerspec it;
    memset(&it, 0, sizeof it);
    it.it_value.tv_sec = rl_test_.limit_s;
    timer_settime(rl_test_.timer, 0, &it, NULL);
}

static void rl_test_disarm(void)
{
    if (!rl_test_.armed)
        return;
    struct itimerspec it;
    memset(&it, 0, sizeof it);
    timer_settime(rl_test_.timer, 0, &it, NULL);
}

/* cmocka runs a group's tests one after the other in array order and calls
 * a test's teardown even when the test failed, so a counter finds the
 * original test (its initial_state is left to cmocka, which may replace it
 * with the group's state). */
static int rl_test_setup(void **state)
{
    const struct CMUnitTest *t = &rl_test_.orig[rl_test_.next];
    rl_test_.current = rl_test_.next++;
    rl_test_arm(t->name);
    int rc = t->setup_func ? t->setup_func(state) : 0;
    if (rc != 0) /* cmocka skips the test and its teardown */
        rl_test_disarm();
    return rc;
}

static int rl_test_teardown(void **state)
{
    const struct CMUnitTest *t = &rl_test_.orig[rl_test_.current];
    int rc = t->teardown_func ? t->teardown_func(state) : 0;
    rl_test_disarm();
    return rc;
}

static int rl_test_group_setup(void **state)
{
    rl_test_arm("the group setup");
    int rc = rl_test_.group_setup(state);
    rl_test_disarm();
    return rc;
}

static int rl_test_group_teardown(void **state)
{
    rl_test_arm("the group teardown");
    int rc = rl_test_.group_teardown(state);
    rl_test_disarm();
    return rc;
}

static int rl_test_run_group(const char *group, const struct CMUnitTest *tests, size_t n, CMFixtureFunction setup,
                             CMFixtureFunction teardown)
{
    const char *env = getenv("RELAYLAB_TEST_LIMIT_S");
    rl_test_.limit_s = env && *env ? strtol(env, NULL, 10) : RL_TEST_LIMIT_S;
    rl_test_.group = group;
    rl_test_.group_setup = setup;
    rl_test_.group_teardown = teardown;
    rl_test_.armed = 0;
    if (rl_test_.limit_s > 0) {
        struct sigevent sev;
        memset(&sev, 0, sizeof sev);
        sev.sigev_notify = SIGEV_THREAD;
        sev.sigev_notify_function = rl_test_expired;
        if (timer_create(CLOCK_MONOTONIC, &sev, &rl_test_.timer) != 0) {
            fprintf(stderr, "%s: cannot create the per-test timer\n", group);
            return 1;
        }
        rl_test_.armed = 1;
    }
    rl_test_.orig = tests; /* only while the group runs: cleared below */
    rl_test_.next = rl_test_.current = 0;
    rl_test_.copy = calloc(n, sizeof *rl_test_.copy);
    if (!rl_test_.copy)
        abort();
    for (size_t i = 0; i < n; i++) {
        rl_test_.copy[i] = tests[i];
        rl_test_.copy[i].setup_func = rl_test_setup;
        rl_test_.copy[i].teardown_func = rl_test_teardown;
    }
    int rc = _cmocka_run_group_tests(group, rl_test_.copy, n, setup ? rl_test_group_setup : NULL,
                                     teardown ? rl_test_group_teardown : NULL);
    rl_test_disarm();
    if (rl_test_.armed)
        timer_delete(rl_test_.timer);
    rl_test_.armed = 0;
    free(rl_test_.copy);
    /* Nothing of the caller's (its tests array is on its stack) or freed is
     * kept once the group has run. */
    rl_test_.copy = NULL;
    rl_test_.orig = NULL;
    return rc;
}

#undef cmocka_run_group_tests
#undef cmocka_run_group_tests_name
#define cmocka_run_group_tests(tests, setup, teardown)                                                                 \
    rl_test_run_group(#tests, tests, sizeof(tests) / sizeof((tests)[0]), setup, teardown)
#define cmocka_run_group_tests_name(name, tests, setup, teardown)                                                      \
    rl_test_run_group(name, tests, sizeof(tests) / sizeof((tests)[0]), setup, teardown)

#endif
