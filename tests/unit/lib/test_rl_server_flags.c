/* test_rl_server_flags: the flags every server shares (lib/rl_server_flags.c):
 * defaults and the environment, each flag taken only by a program that
 * takes it, whole milliseconds up to an hour, and the drain against the
 * grace; each error names the program and the value. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rl_err.h"
#include "rl_server_flags.h"

static int env_setup(void **state)
{
    (void)state;
    unsetenv("RELAYLAB_LISTEN");
    unsetenv("RELAYLAB_GRACE_MS");
    return 0;
}

static void defaults_and_the_environment(void **state)
{
    (void)state;
    rl_server_flags f;
    char err[200];
    assert_int_equal(rl_server_flags_init(&f, "relay", RL_FLAG_SERVER, 1, 256, 10000, err, sizeof err), RL_OK);
    assert_int_equal(rl_server_flags_done(&f, err, sizeof err), RL_OK);
    assert_string_equal(f.listen, "127.0.0.1:0");
    assert_int_equal(f.threads, 1);
    assert_int_equal(f.grace_ms, 10000);
    assert_int_equal(f.drain_delay_ms, 0);

    setenv("RELAYLAB_LISTEN", "127.0.0.1:7000", 1);
    setenv("RELAYLAB_GRACE_MS", "2000", 1);
    assert_int_equal(rl_server_flags_init(&f, "relay", RL_FLAG_SERVER, 1, 256, 10000, err, sizeof err), RL_OK);
    assert_string_equal(f.listen, "127.0.0.1:7000");
    assert_int_equal(f.grace_ms, 2000);
    /* the flag is above the environment */
    assert_int_equal(rl_server_flags_take(&f, "--grace-ms", "300", err, sizeof err), RL_OK);
    assert_int_equal(f.grace_ms, 300);
    /* a program that does not read RELAYLAB_GRACE_MS keeps its own default */
    assert_int_equal(rl_server_flags_init(&f, "tunnel", RL_FLAG_GRACE, 0, 0, 500, err, sizeof err), RL_OK);
    assert_int_equal(f.grace_ms, 500);

    setenv("RELAYLAB_GRACE_MS", "2s", 1);
    assert_int_equal(rl_server_flags_init(&f, "baseline", RL_FLAG_SERVER, 0, 256, 10000, err, sizeof err), RL_EINVAL);
    assert_string_equal(err, "baseline: RELAYLAB_GRACE_MS wants whole milliseconds from 0 to 3600000, not '2s'");
}

static void whole_milliseconds_up_to_an_hour(void **state)
{
    (void)state;
    rl_server_flags f;
    char err[200];
    assert_int_equal(rl_server_flags_init(&f, "relay", RL_FLAG_SERVER, 1, 256, 10000, err, sizeof err), RL_OK);
    assert_int_equal(rl_server_flags_take(&f, "--drain-delay-ms", "0", err, sizeof err), RL_OK);
    assert_int_equal(rl_server_flags_take(&f, "--grace-ms", "3600000", err, sizeof err), RL_OK);
    assert_int_equal(f.grace_ms, 3600000);
    const char *bad[] = {"", "-1", "+5", " 5", "1e3", "10ms", "3600001", "99999999999999999999", " "};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(rl_server_flags_take(&f, "--grace-ms", bad[i], err, sizeof err), RL_EINVAL);
        assert_int_equal(f.grace_ms, 3600000); /* untouched on error */
        assert_non_null(strstr(err, "relay: --grace-ms wants whole milliseconds"));
    }
}

static void each_flag_only_where_the_program_takes_it(void **state)
{
    (void)state;
    rl_server_flags f;
    char err[200];
    assert_int_equal(rl_server_flags_init(&f, "relay", RL_FLAG_SERVER, 1, 256, 10000, err, sizeof err), RL_OK);
    assert_int_equal(rl_server_flags_take(&f, "--listen", "127.0.0.1:9", err, sizeof err), RL_OK);
    assert_string_equal(f.listen, "127.0.0.1:9");
    /* The tunnel takes the grace alone: its --listen is its own, with no
     * default and no environment (a coverage server has no TCP port). */
    assert_int_equal(rl_server_flags_init(&f, "tunnel", RL_FLAG_GRACE, 0, 0, 500, err, sizeof err), RL_OK);
    assert_int_equal(rl_server_flags_take(&f, "--grace-ms", "300", err, sizeof err), RL_OK);
    assert_int_equal(rl_server_flags_take(&f, "--listen", "127.0.0.1:9", err, sizeof err), RL_ENOTFOUND);
    assert_int_equal(rl_server_flags_take(&f, "--threads", "2", err, sizeof err), RL_ENOTFOUND);
    assert_int_equal(rl_server_flags_take(&f, "--drain-delay-ms", "2", err, sizeof err), RL_ENOTFOUND);
    assert_int_equal(rl_server_flags_take(&f, "--id", "A", err, sizeof err), RL_ENOTFOUND);
}

static void threads_within_the_programs_bound(void **state)
{
    (void)state;
    rl_server_flags f;
    char err[200];
    assert_int_equal(rl_server_flags_init(&f, "streamer", RL_FLAG_SERVER, 0, 64, 10000, err, sizeof err), RL_OK);
    assert_int_equal(rl_server_flags_take(&f, "--threads", "64", err, sizeof err), RL_OK);
    assert_int_equal(f.threads, 64);
    const char *bad[] = {"0", "65", "two", "", "4x"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(rl_server_flags_take(&f, "--threads", bad[i], err, sizeof err), RL_EINVAL);
        assert_non_null(strstr(err, "streamer: --threads wants a number from 1 to 64"));
    }
    assert_int_equal(f.threads, 64);
}

static void drain_delay_below_the_grace(void **state)
{
    (void)state;
    rl_server_flags f;
    char err[200];
    assert_int_equal(rl_server_flags_init(&f, "relay", RL_FLAG_SERVER, 1, 256, 10000, err, sizeof err), RL_OK);
    assert_int_equal(rl_server_flags_take(&f, "--grace-ms", "1000", err, sizeof err), RL_OK);
    assert_int_equal(rl_server_flags_take(&f, "--drain-delay-ms", "1000", err, sizeof err), RL_OK);
    assert_int_equal(rl_server_flags_done(&f, err, sizeof err), RL_EINVAL);
    assert_non_null(strstr(err, "relay: the drain delay (1000 ms) must be shorter than the grace (1000 ms)"));
    assert_int_equal(rl_server_flags_take(&f, "--drain-delay-ms", "999", err, sizeof err), RL_OK);
    assert_int_equal(rl_server_flags_done(&f, err, sizeof err), RL_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(defaults_and_the_environment, env_setup),
        cmocka_unit_test_setup(whole_milliseconds_up_to_an_hour, env_setup),
        cmocka_unit_test_setup(each_flag_only_where_the_program_takes_it, env_setup),
        cmocka_unit_test_setup(threads_within_the_programs_bound, env_setup),
        cmocka_unit_test_setup(drain_delay_below_the_grace, env_setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
