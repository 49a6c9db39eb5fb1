/* test_server: rl_server's timing options and its bounded teardown
 * (lib/rl_server.c); the shutdown itself is exercised on real processes in
 * tests/integration/test_shutdown.py. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_server.h"

static void drain_delay_must_be_below_the_grace(void **state)
{
    (void)state;
    char err[200];
    assert_int_equal(rl_server_check_timing(1000, 0, err, sizeof err), RL_OK);
    assert_int_equal(rl_server_check_timing(1000, 999, err, sizeof err), RL_OK);
    assert_int_equal(rl_server_check_timing(1000, 1000, err, sizeof err), RL_EINVAL);
    assert_non_null(strstr(err, "shorter than the grace (1000 ms)"));
    assert_int_equal(rl_server_check_timing(0, 0, err, sizeof err), RL_OK); /* grace 0: cancel at once */
    /* A negative grace is the default one. */
    assert_int_equal(rl_server_check_timing(-1, RL_SERVER_GRACE_MS - 1, err, sizeof err), RL_OK);
    assert_int_equal(rl_server_check_timing(-1, RL_SERVER_GRACE_MS, err, sizeof err), RL_EINVAL);
}

/* A server may have the private listener alone (a coverage tunnel server),
 * but not no listener at all: refused before anything starts. */
static void a_server_needs_some_listener(void **state)
{
    (void)state;
    char err[200] = "";
    rl_server_options o = {.name = "test", .listen = NULL, .private_listen = NULL, .grace_ms = -1};
    rl_server *s = NULL;
    assert_int_equal(rl_server_start(&o, &s, err, sizeof err), RL_EINVAL);
    assert_null(s);
    assert_non_null(strstr(err, "no address to listen on"));
}

static void default_grace_is_well_under_kubernetes_kill_timeout(void **state)
{
    (void)state;
    assert_true(RL_SERVER_GRACE_MS < 30000);
}

/* A teardown that ends at once, and one that waits until the test lets it
 * go (gRPC's executor in its 10 s poll). */
static int quick_runs;
static void quick_teardown(void)
{
    quick_runs++;
}

static pthread_mutex_t held_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t held_cv = PTHREAD_COND_INITIALIZER;
static bool held_released;
static void held_teardown(void)
{
    pthread_mutex_lock(&held_mu);
    while (!held_released)
        pthread_cond_wait(&held_cv, &held_mu);
    pthread_mutex_unlock(&held_mu);
}

static void teardown_that_ends_is_waited_for(void **state)
{
    (void)state;
    quick_runs = 0;
    assert_int_equal(rl_server_teardown(quick_teardown, 10000), RL_OK);
    assert_int_equal(quick_runs, 1);
}

static void teardown_that_hangs_is_left_after_the_bound(void **state)
{
    (void)state;
    int64_t t0 = rl_now_ns();
    assert_int_equal(rl_server_teardown(held_teardown, 50), RL_ETIMEOUT);
    /* It waited for the bound (never less), and returned while the
     * teardown was still held. */
    assert_true(rl_now_ns() - t0 >= 50 * RL_NS_PER_MS);
    pthread_mutex_lock(&held_mu);
    held_released = true;
    pthread_cond_signal(&held_cv);
    pthread_mutex_unlock(&held_mu);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(drain_delay_must_be_below_the_grace),
        cmocka_unit_test(a_server_needs_some_listener),
        cmocka_unit_test(default_grace_is_well_under_kubernetes_kill_timeout),
        cmocka_unit_test(teardown_that_ends_is_waited_for),
        cmocka_unit_test(teardown_that_hangs_is_left_after_the_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
