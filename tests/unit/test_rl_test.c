/* Unit tests for the per-test time limit of tests/unit/rl_test.h (force-
 * included here as in every suite): a hung test ends its suite with status 1
 * and a line naming it, and tests within their limit pass even when the group
 * as a whole takes longer. Each case runs a small group in a forked child. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "rl_deadline.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void quick_test(void **state)
{
    (void)state;
}

static void hangs_forever(void **state)
{
    (void)state;
    for (;;)
        pause();
}

static void sleeps_1500_ms(void **state)
{
    (void)state;
    rl_sleep_ms(1500, NULL);
}

/* Runs |tests| in a child with RELAYLAB_TEST_LIMIT_S=|limit|; returns the
 * child's wait status and its stderr in |err|. A child still alive after 10 s
 * is killed (status SIGKILL), which fails the caller's assertions. */
static int run_child(const struct CMUnitTest *tests, size_t n, const char *limit, char *err, size_t errlen)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], STDERR_FILENO);
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, STDOUT_FILENO); /* cmocka's progress lines */
        close(fds[0]);
        setenv("RELAYLAB_TEST_LIMIT_S", limit, 1);
        _exit(rl_test_run_group("child group", tests, n, NULL, NULL) ? 2 : 0);
    }
    close(fds[1]);
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    size_t got = 0;
    int status = 0;
    int64_t until = rl_now_ns() + 10000 * RL_NS_PER_MS;
    for (;;) {
        ssize_t r = read(fds[0], err + got, errlen - 1 - got);
        if (r > 0)
            got += (size_t)r;
        if (waitpid(pid, &status, WNOHANG) == pid)
            break;
        if (rl_now_ns() > until) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            break;
        }
        rl_sleep_ms(10, NULL);
    }
    ssize_t r;
    while (got < errlen - 1 && (r = read(fds[0], err + got, errlen - 1 - got)) > 0)
        got += (size_t)r;
    err[got] = '\0';
    close(fds[0]);
    return status;
}

static void hung_test_fails_and_is_named(void **state)
{
    (void)state;
    const struct CMUnitTest tests[] = {cmocka_unit_test(quick_test), cmocka_unit_test(hangs_forever),
                                       cmocka_unit_test(quick_test)};
    char err[4096];
    int64_t t0 = rl_now_ns();
    int status = run_child(tests, 3, "1", err, sizeof err);
    int64_t took_ms = (rl_now_ns() - t0) / RL_NS_PER_MS;
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 1);
    assert_non_null(strstr(err, "[  TIMEOUT ] child group: hangs_forever is still running after its 1 s limit"));
    assert_true(took_ms >= 1000);
}

static void test_within_its_limit_passes(void **state)
{
    (void)state;
    /* Two tests of 1.5 s under a 2 s limit: the limit is per test, not per
     * group, and a teardown disarms it. */
    const struct CMUnitTest tests[] = {cmocka_unit_test(sleeps_1500_ms), cmocka_unit_test(sleeps_1500_ms)};
    char err[4096];
    int status = run_child(tests, 2, "2", err, sizeof err);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_null(strstr(err, "TIMEOUT"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hung_test_fails_and_is_named),
        cmocka_unit_test(test_within_its_limit_passes),
    };
    return cmocka_run_group_tests_name("rl_test", tests, NULL, NULL);
}
