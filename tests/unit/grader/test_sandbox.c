/* Unit tests for the grader's sandbox module, the parts that need no root:
 * the submission's folder found in its command, the view (kit hidden, the
 * protocol and the submission shown, the kit itself refused) and the
 * jail's argv. The cgroups are test_sandbox_cgroup.c's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rl_err.h"
#include "sandbox.h"
#include "sandbox_fixture.h"

static void finds_the_submission_folder_in_its_command(void **state)
{
    (void)state;
    char sub[PATH_MAX + 16], script[PATH_MAX + 32], cmd[3 * PATH_MAX], out[PATH_MAX];
    snprintf(sub, sizeof sub, "%s/student", tmp);
    dir(sub);
    snprintf(script, sizeof script, "%s/relay.py", sub);
    put(script, "");
    /* The script after its interpreter, with arguments after it. */
    snprintf(cmd, sizeof cmd, "/bin/sh %s --port 5", script);
    assert_int_equal(gr_sandbox_submission_dir(cmd, out, sizeof out), RL_OK);
    assert_string_equal(out, sub);
    /* The last word naming a file wins; shell punctuation splits words. */
    snprintf(cmd, sizeof cmd, "cd /; exec %s", script);
    assert_int_equal(gr_sandbox_submission_dir(cmd, out, sizeof out), RL_OK);
    assert_string_equal(out, sub);
    assert_int_equal(gr_sandbox_submission_dir("echo oops >&2; exit 3", out, sizeof out), RL_ENOTFOUND);
}

static void view_hides_the_kit_and_shows_the_submission(void **state)
{
    (void)state;
    char kit[PATH_MAX], path[PATH_MAX + 32], err[256];
    snprintf(kit, sizeof kit, "%s/kit", tmp);
    dir(kit);
    const char *parts[] = {"bin", "proto", "build", "build/gen", "grader", "tests"};
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
        snprintf(path, sizeof path, "%s/%s", kit, parts[i]);
        dir(path);
    }
    char bin[PATH_MAX + 8], sub[PATH_MAX + 16], rubric[PATH_MAX + 16];
    snprintf(bin, sizeof bin, "%s/bin", kit);
    snprintf(sub, sizeof sub, "%s/tests", kit);
    snprintf(rubric, sizeof rubric, "%s/rubric.json", tmp);
    put(rubric, "{}");
    const char *private_files[] = {rubric, NULL};
    gr_sandbox_view v;
    int sub_fd = open(sub, O_PATH | O_DIRECTORY | O_CLOEXEC);
    assert_true(sub_fd >= 0);
    assert_int_equal(gr_sandbox_view_init(&v, bin, sub_fd, sub, private_files, err, sizeof err), RL_OK);
    assert_int_equal(v.nhide, 2);
    assert_string_equal(v.hide[0], kit);
    assert_string_equal(v.hide[1], rubric);
    assert_int_equal(v.nshow, 2);
    snprintf(path, sizeof path, "%s/proto", kit);
    assert_string_equal(v.show[0], path);
    snprintf(path, sizeof path, "%s/build/gen", kit);
    assert_string_equal(v.show[1], path);
    /* The submission's folder: the handle, shown where it was when opened. */
    assert_int_equal(v.sub_fd, sub_fd);
    assert_string_equal(v.tree, sub);

    /* The argv: unshare, then the jail as nobody with the view. */
    char **argv = gr_sandbox_argv(&v, "exec relay");
    assert_string_equal(argv[0], "/usr/bin/unshare");
    bool kill_child = false, user = false, hides_kit = false, tree = false;
    size_t n = 0;
    for (; argv[n]; n++) {
        tree = tree || (strcmp(argv[n], "--tree") == 0 && argv[n + 1] && strcmp(argv[n + 1], sub) == 0);
        kill_child = kill_child || strcmp(argv[n], "--kill-child") == 0;
        user = user || (strcmp(argv[n], "--user") == 0 && argv[n + 1] && strcmp(argv[n + 1], "65534:65534") == 0);
        hides_kit = hides_kit || (strcmp(argv[n], "--hide") == 0 && argv[n + 1] && strcmp(argv[n + 1], kit) == 0);
    }
    assert_true(kill_child && user && hides_kit && tree);
    assert_string_equal(argv[n - 1], "exec relay");
    assert_string_equal(argv[n - 3], "/bin/sh");
    gr_sandbox_argv_free(argv);
    gr_sandbox_view_fini(&v);

    /* The kit itself as the submission's folder would show it all. */
    int kit_fd = open(kit, O_PATH | O_DIRECTORY | O_CLOEXEC);
    assert_int_equal(gr_sandbox_view_init(&v, bin, kit_fd, kit, NULL, err, sizeof err), RL_EINVAL);
    close(kit_fd);
    close(sub_fd);
    assert_non_null(strstr(err, "folder of its own"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(finds_the_submission_folder_in_its_command, setup, teardown),
        cmocka_unit_test_setup_teardown(view_hides_the_kit_and_shows_the_submission, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
