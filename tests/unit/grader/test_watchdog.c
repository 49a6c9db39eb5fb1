/* Unit tests for the grader's watchdog: it refuses the ids whose group kill
 * would hit the grader itself or everything, kills a published group when it
 * fires, spares a group released before it fires, and does nothing when
 * disarmed in time. Children are real processes in their own groups. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rl_deadline.h"
#include "rl_err.h"
#include "watchdog.h"

/* A child leading its own process group, waiting to be killed. */
static pid_t spawn_group(void)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setpgid(0, 0);
        for (;;)
            pause();
    }
    setpgid(pid, pid); /* also from here, so the group exists on return */
    return pid;
}

/* Waits up to |ms| for |pid| to end; returns its wait status or -1. */
static int wait_end(pid_t pid, int64_t ms)
{
    int64_t until = rl_now_ns() + ms * RL_NS_PER_MS;
    int st;
    while (rl_now_ns() < until) {
        if (waitpid(pid, &st, WNOHANG) == pid)
            return st;
        struct timespec ts = {0, 2000000L};
        nanosleep(&ts, NULL);
    }
    return -1;
}

static void wait_fired(gr_watchdog *w, int64_t ms)
{
    int64_t until = rl_now_ns() + ms * RL_NS_PER_MS;
    while (!gr_watchdog_fired(w) && rl_now_ns() < until) {
        struct timespec ts = {0, 2000000L};
        nanosleep(&ts, NULL);
    }
    assert_true(gr_watchdog_fired(w));
}

static void refuses_ids_that_would_hit_the_grader(void **state)
{
    (void)state;
    gr_watchdog w;
    gr_watchdog_init(&w);
    assert_int_equal(gr_watchdog_guard(&w, GR_WATCHDOG_SUBMISSION, 0), RL_EINVAL);
    assert_int_equal(gr_watchdog_guard(&w, GR_WATCHDOG_SUBMISSION, 1), RL_EINVAL);
    assert_int_equal(gr_watchdog_guard(&w, GR_WATCHDOG_SUBMISSION, -1), RL_EINVAL);
    assert_int_equal(gr_watchdog_guard(&w, GR_WATCHDOG_BASELINE, getpid()), RL_EINVAL);
    assert_int_equal(gr_watchdog_guard(&w, GR_WATCHDOG_BASELINE, getpgrp()), RL_EINVAL);
    assert_int_equal(gr_watchdog_guard(&w, GR_WATCHDOG_NSLOTS, 12345), RL_EINVAL);
    assert_int_equal(w.groups[GR_WATCHDOG_SUBMISSION], 0);
    assert_int_equal(w.groups[GR_WATCHDOG_BASELINE], 0);
    /* Firing with only refused ids published must leave this process alive
     * (kill(-0) would have killed the test itself). */
    assert_int_equal(gr_watchdog_arm(&w, 1), RL_OK);
    wait_fired(&w, 5000);
    gr_watchdog_fini(&w);
}

static void fire_kills_published_groups(void **state)
{
    (void)state;
    gr_watchdog w;
    gr_watchdog_init(&w);
    pid_t a = spawn_group(), b = spawn_group();
    assert_int_equal(gr_watchdog_guard(&w, GR_WATCHDOG_SUBMISSION, a), RL_OK);
    assert_int_equal(gr_watchdog_guard(&w, GR_WATCHDOG_BASELINE, b), RL_OK);
    assert_int_equal(gr_watchdog_arm(&w, 20), RL_OK);
    int sa = wait_end(a, 5000), sb = wait_end(b, 5000);
    assert_true(gr_watchdog_fired(&w));
    assert_true(sa != -1 && WIFSIGNALED(sa) && WTERMSIG(sa) == SIGKILL);
    assert_true(sb != -1 && WIFSIGNALED(sb) && WTERMSIG(sb) == SIGKILL);
    gr_watchdog_fini(&w);
}

static void released_group_is_spared(void **state)
{
    (void)state;
    gr_watchdog w;
    gr_watchdog_init(&w);
    pid_t a = spawn_group();
    assert_int_equal(gr_watchdog_guard(&w, GR_WATCHDOG_SUBMISSION, a), RL_OK);
    assert_int_equal(gr_watchdog_arm(&w, 20), RL_OK);
    gr_watchdog_release(&w, GR_WATCHDOG_SUBMISSION);
    wait_fired(&w, 5000);
    gr_watchdog_fini(&w);
    /* Fired and joined: the child must still be running. */
    assert_int_equal(wait_end(a, 0), -1);
    assert_int_equal(kill(a, 0), 0);
    kill(a, SIGKILL);
    assert_true(wait_end(a, 5000) != -1);
}

static void disarm_in_time_kills_nothing(void **state)
{
    (void)state;
    gr_watchdog w;
    gr_watchdog_init(&w);
    pid_t a = spawn_group();
    assert_int_equal(gr_watchdog_guard(&w, GR_WATCHDOG_SUBMISSION, a), RL_OK);
    assert_int_equal(gr_watchdog_arm(&w, 60000), RL_OK);
    gr_watchdog_disarm(&w);
    assert_false(gr_watchdog_fired(&w));
    assert_int_equal(kill(a, 0), 0);
    kill(a, SIGKILL);
    assert_true(wait_end(a, 5000) != -1);
    gr_watchdog_fini(&w);
}

/* The driver's order around a restart while the watchdog may fire at any
 * moment: release, reap, spawn, publish. Whatever the interleaving, every
 * child dies either by the watchdog or by us, and this process survives. */
static void release_reap_publish_races_the_fire(void **state)
{
    (void)state;
    for (int round = 0; round < 50; round++) {
        gr_watchdog w;
        gr_watchdog_init(&w);
        pid_t a = spawn_group();
        assert_int_equal(gr_watchdog_guard(&w, GR_WATCHDOG_BASELINE, a), RL_OK);
        assert_int_equal(gr_watchdog_arm(&w, round % 3), RL_OK);
        gr_watchdog_release(&w, GR_WATCHDOG_BASELINE);
        kill(a, SIGKILL);
        assert_true(wait_end(a, 5000) != -1);
        pid_t b = spawn_group();
        assert_int_equal(gr_watchdog_guard(&w, GR_WATCHDOG_BASELINE, b), RL_OK);
        wait_fired(&w, 5000);
        gr_watchdog_fini(&w);
        kill(b, SIGKILL);
        assert_true(wait_end(b, 5000) != -1);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(refuses_ids_that_would_hit_the_grader),
        cmocka_unit_test(fire_kills_published_groups),
        cmocka_unit_test(released_group_is_spared),
        cmocka_unit_test(disarm_in_time_kills_nothing),
        cmocka_unit_test(release_reap_publish_races_the_fire),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
