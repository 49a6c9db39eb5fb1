/* test_server: rl_server's timing options (lib/rl_server.c); the shutdown
 * itself is exercised on real processes in tests/integration/test_shutdown.py. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rl_err.h"
#include "rl_server.h"

static void parse_ms_takes_whole_milliseconds_up_to_an_hour(void **state)
{
    (void)state;
    int64_t v = -1;
    assert_int_equal(rl_server_parse_ms("0", &v), RL_OK);
    assert_int_equal(v, 0);
    assert_int_equal(rl_server_parse_ms("3600000", &v), RL_OK);
    assert_int_equal(v, 3600000);
    const char *bad[] = {"", "-1", "1e3", "10ms", "3600001", "99999999999999999999", " "};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        v = 42;
        assert_int_equal(rl_server_parse_ms(bad[i], &v), RL_EINVAL);
        assert_int_equal(v, 42); /* untouched on error */
    }
}

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

static void default_grace_is_well_under_kubernetes_kill_timeout(void **state)
{
    (void)state;
    assert_true(RL_SERVER_GRACE_MS < 30000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_ms_takes_whole_milliseconds_up_to_an_hour),
        cmocka_unit_test(drain_delay_must_be_below_the_grace),
        cmocka_unit_test(default_grace_is_well_under_kubernetes_kill_timeout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
