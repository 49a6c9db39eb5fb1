/* Unit tests for rl_path's containment checks: a path inside its folder is
 * inside whatever links it takes on the way, a symlink out of the folder
 * (to a sibling's folder, to /dev/zero) is not, "/a/bc" is not inside
 * "/a/b", and a command's words are checked only where they name the
 * folder's files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "rl_err.h"
#include "rl_path.h"
#include "rl_test_dir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

RL_TEST_DIR("path")

static void at(char *buf, size_t len, const char *rel)
{
    snprintf(buf, len, "%s/%s", dir, rel);
}

static void touch(const char *rel)
{
    char p[256];
    at(p, sizeof p, rel);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fclose(f);
}

static void link_to(const char *target, const char *rel)
{
    char p[256];
    at(p, sizeof p, rel);
    assert_int_equal(symlink(target, p), 0);
}

static void links_inside_stay_inside_and_links_out_do_not(void **state)
{
    (void)state;
    char a[256], ab[256], p[256], real[256];
    at(a, sizeof a, "a");
    at(ab, sizeof ab, "a/b");
    mkdir(a, 0755);
    mkdir(ab, 0755);
    at(p, sizeof p, "bc");
    mkdir(p, 0755);
    touch("a/b/run");
    link_to("run", "a/b/again");
    link_to("../../bc", "a/b/out");
    link_to("/dev/zero", "a/b/zero");
    link_to("nowhere", "a/b/dangling");
    at(p, sizeof p, "a/b/again");
    assert_int_equal(rl_path_within(ab, p, real, sizeof real), RL_OK);
    assert_non_null(strstr(real, "/a/b/run"));
    at(p, sizeof p, "a/b/out");
    assert_int_equal(rl_path_within(ab, p, NULL, 0), RL_EINVAL);
    at(p, sizeof p, "a/b/zero");
    assert_int_equal(rl_path_within(ab, p, NULL, 0), RL_EINVAL);
    at(p, sizeof p, "a/b/dangling");
    assert_int_equal(rl_path_within(ab, p, NULL, 0), RL_ENOTFOUND);
    at(p, sizeof p, "bc");
    assert_int_equal(rl_path_within(ab, p, NULL, 0), RL_EINVAL); /* a prefix, not a folder above */
    assert_int_equal(rl_path_within(ab, ab, NULL, 0), RL_OK);
}

static void a_command_is_checked_where_it_names_the_folder(void **state)
{
    (void)state;
    char ab[256], bad[256];
    at(ab, sizeof ab, "a");
    mkdir(ab, 0755);
    touch("a/relay.py");
    touch("other.py");
    link_to("../other.py", "a/run");
    assert_int_equal(rl_path_command_within(ab, ab, "python3 relay.py --port 1", bad, sizeof bad), RL_OK);
    assert_int_equal(rl_path_command_within(ab, ab, "/usr/bin/python3 relay.py", bad, sizeof bad), RL_OK);
    assert_int_equal(rl_path_command_within(ab, ab, "./run", bad, sizeof bad), RL_EINVAL);
    assert_string_equal(bad, "./run");
    assert_int_equal(rl_path_command_within(ab, ab, "sh -c 'python3 ../other.py'", bad, sizeof bad), RL_EINVAL);
    assert_string_equal(bad, "../other.py");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(links_inside_stay_inside_and_links_out_do_not, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(a_command_is_checked_where_it_names_the_folder, make_dir, remove_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
