/* Unit tests for rl_file: a submission's regular file is read whole; a FIFO
 * is refused at once (never a hang), as are folders, devices, links leading
 * out of the submission's folder, files above the cap and, for root, a file
 * the submission's user could not read; no refusal quotes the file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rl_err.h"
#include "rl_file.h"

typedef struct {
    char dir[64];   /* the submission's folder */
    char outer[64]; /* a folder beside it, the "rest of the machine" */
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/rl_file_XXXXXX");
    snprintf(f->outer, sizeof f->outer, "/tmp/rl_file_out_XXXXXX");
    if (!mkdtemp(f->dir) || !mkdtemp(f->outer))
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf %s %s", f->dir, f->outer);
    if (system(cmd) != 0)
        return -1;
    free(f);
    return 0;
}

static void put(const char *dir, const char *name, const char *text, mode_t mode)
{
    char p[128];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, mode);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    assert_int_equal(fchmod(fd, mode), 0);
    close(fd);
}

static int read_in(const fixture *f, const char *name, const char *root, size_t max, char **out, char *err)
{
    char p[128];
    snprintf(p, sizeof p, "%s/%s", f->dir, name);
    size_t len;
    int rc = rl_file_read_untrusted(p, root, max, out, &len, err, 200);
    if (rc == 0)
        assert_int_equal(len, strlen(*out));
    else
        assert_null(*out);
    return rc;
}

static void reads_a_regular_file(void **state)
{
    fixture *f = *state;
    put(f->dir, "c.json", "{\"a\": 1}", 0644);
    char *out, err[200];
    assert_int_equal(read_in(f, "c.json", NULL, 100, &out, err), 0);
    assert_string_equal(out, "{\"a\": 1}");
    free(out);
    put(f->dir, "empty", "", 0644);
    assert_int_equal(read_in(f, "empty", f->dir, 100, &out, err), 0);
    assert_string_equal(out, "");
    free(out);
}

static void refuses_a_fifo_at_once(void **state)
{
    fixture *f = *state;
    char p[128], *out, err[200];
    snprintf(p, sizeof p, "%s/fifo", f->dir);
    assert_int_equal(mkfifo(p, 0644), 0);
    /* No writer ever comes: a blocking open or read would hang the test
     * until rl_test's limit ends it. */
    assert_int_equal(read_in(f, "fifo", NULL, 100, &out, err), RL_EINVAL);
    assert_non_null(strstr(err, "FIFO"));
}

static void refuses_folders_and_devices(void **state)
{
    fixture *f = *state;
    char p[128], *out, err[200];
    snprintf(p, sizeof p, "%s/sub", f->dir);
    assert_int_equal(mkdir(p, 0755), 0);
    assert_int_equal(read_in(f, "sub", NULL, 100, &out, err), RL_EINVAL);
    assert_non_null(strstr(err, "folder"));
    size_t len;
    assert_int_equal(rl_file_read_untrusted("/dev/zero", "/dev", 100, &out, &len, err, sizeof err), RL_EINVAL);
    assert_non_null(strstr(err, "device"));
    assert_null(out);
}

static void refuses_a_link_out_of_the_folder_without_quoting_it(void **state)
{
    fixture *f = *state;
    put(f->outer, "secret.json", "{\"secret_key_name\": 1}", 0644);
    char target[128], link[128], *out, err[200];
    snprintf(target, sizeof target, "%s/secret.json", f->outer);
    snprintf(link, sizeof link, "%s/c.json", f->dir);
    assert_int_equal(symlink(target, link), 0);
    assert_int_equal(read_in(f, "c.json", NULL, 100, &out, err), RL_EINVAL);
    assert_non_null(strstr(err, "out of the submission's folder"));
    assert_null(strstr(err, "secret"));
    assert_null(strstr(err, f->outer));
    /* With a root that holds both folders, the same link is fine. */
    assert_int_equal(read_in(f, "c.json", "/tmp", 100, &out, err), 0);
    free(out);
    /* A link to a FIFO outside says "out of the folder", not "a FIFO". */
    snprintf(target, sizeof target, "%s/fifo", f->outer);
    assert_int_equal(mkfifo(target, 0644), 0);
    snprintf(link, sizeof link, "%s/f.json", f->dir);
    assert_int_equal(symlink(target, link), 0);
    assert_int_equal(read_in(f, "f.json", NULL, 100, &out, err), RL_EINVAL);
    assert_null(strstr(err, "FIFO"));
}

static void follows_a_link_inside_the_folder(void **state)
{
    fixture *f = *state;
    put(f->dir, "real.json", "{}", 0644);
    char link[128], *out, err[200];
    snprintf(link, sizeof link, "%s/c.json", f->dir);
    assert_int_equal(symlink("real.json", link), 0);
    assert_int_equal(read_in(f, "c.json", NULL, 100, &out, err), 0);
    assert_string_equal(out, "{}");
    free(out);
}

static void refuses_a_file_above_the_cap(void **state)
{
    fixture *f = *state;
    put(f->dir, "big", "0123456789", 0644);
    char *out, err[200];
    assert_int_equal(read_in(f, "big", NULL, 9, &out, err), RL_ETOOBIG);
    assert_int_equal(read_in(f, "big", NULL, 10, &out, err), 0);
    free(out);
}

static void refuses_a_missing_file(void **state)
{
    fixture *f = *state;
    char link[128], *out, err[200];
    assert_int_equal(read_in(f, "nothing", NULL, 9, &out, err), RL_ENOTFOUND);
    snprintf(link, sizeof link, "%s/dangling", f->dir);
    assert_int_equal(symlink("/nonexistent/x", link), 0);
    assert_int_equal(read_in(f, "dangling", NULL, 9, &out, err), RL_ENOTFOUND);
}

/* As root, a file of another user that others may not read (a hard link to
 * a root-only file, say) is what the student could not have read. */
static void root_refuses_what_the_student_could_not_read(void **state)
{
    fixture *f = *state;
    if (geteuid() != 0)
        skip();
    put(f->dir, "theirs.json", "{\"x\": 1}", 0600);
    char p[128], *out, err[200];
    snprintf(p, sizeof p, "%s/theirs.json", f->dir);
    assert_int_equal(chown(p, 1, 1), 0);
    assert_int_equal(read_in(f, "theirs.json", NULL, 100, &out, err), RL_EINVAL);
    assert_non_null(strstr(err, "not readable by the submission's user"));
    assert_int_equal(chmod(p, 0604), 0);
    assert_int_equal(read_in(f, "theirs.json", NULL, 100, &out, err), 0);
    free(out);
    /* The folder's owner's own 0600 file is theirs to hand in. */
    put(f->dir, "mine.json", "{}", 0600);
    assert_int_equal(read_in(f, "mine.json", NULL, 100, &out, err), 0);
    free(out);
}

/* A link planted where results were once written first (PATH.tmp) is never
 * written through; the file lands at PATH, and nothing else is left. */
static void tmp_file_never_follows_a_planted_link(void **state)
{
    fixture *f = *state;
    put(f->outer, "victim", "precious", 0644);
    char path[128], planted[128], victim[128], tmp[160];
    snprintf(path, sizeof path, "%s/results.json", f->dir);
    snprintf(planted, sizeof planted, "%s/results.json.tmp", f->dir);
    snprintf(victim, sizeof victim, "%s/victim", f->outer);
    assert_int_equal(symlink(victim, planted), 0);
    FILE *out = rl_file_tmp_open(path, 0644, tmp, sizeof tmp);
    assert_non_null(out);
    assert_string_not_equal(tmp, planted);
    fputs("{}", out);
    assert_int_equal(rl_file_tmp_commit(out, tmp, path), 0);
    char *text, err[200];
    size_t len;
    assert_int_equal(rl_file_read_untrusted(victim, NULL, 100, &text, &len, err, sizeof err), 0);
    assert_string_equal(text, "precious");
    free(text);
    assert_int_equal(rl_file_read_untrusted(path, NULL, 100, &text, &len, err, sizeof err), 0);
    assert_string_equal(text, "{}");
    free(text);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0644);
    assert_int_equal(access(tmp, F_OK), -1);
    /* A link at PATH itself is replaced, not followed. */
    assert_int_equal(unlink(path), 0);
    assert_int_equal(symlink(victim, path), 0);
    out = rl_file_tmp_open(path, 0644, tmp, sizeof tmp);
    assert_non_null(out);
    assert_int_equal(rl_file_tmp_commit(out, tmp, path), 0);
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(rl_file_read_untrusted(victim, NULL, 100, &text, &len, err, sizeof err), 0);
    assert_string_equal(text, "precious");
    free(text);
}

/* rl_file_read_untrusted_at: the same rules beneath a folder held open. */
static void read_at_keeps_the_rules_beneath_the_held_folder(void **state)
{
    fixture *f = *state;
    int d;
    char real[128], *out, err[200], link[128], target[128];
    size_t len;
    assert_int_equal(rl_file_open_dir(f->dir, &d, real, sizeof real), RL_OK);
    assert_true(d > 2);
    assert_string_equal(real, f->dir);
    put(f->dir, "real.json", "{}", 0644);
    snprintf(link, sizeof link, "%s/in.json", f->dir);
    assert_int_equal(symlink("real.json", link), 0);
    assert_int_equal(rl_file_read_untrusted_at(d, "in.json", 100, &out, &len, err, sizeof err), RL_OK);
    assert_string_equal(out, "{}");
    free(out);
    /* Out of the folder, relative or absolute: refused unquoted. */
    put(f->outer, "secret.json", "{\"secret_key_name\": 1}", 0644);
    snprintf(target, sizeof target, "%s/secret.json", f->outer);
    snprintf(link, sizeof link, "%s/out.json", f->dir);
    assert_int_equal(symlink(target, link), 0);
    assert_int_equal(rl_file_read_untrusted_at(d, "out.json", 100, &out, &len, err, sizeof err), RL_EINVAL);
    assert_non_null(strstr(err, "out of the submission's folder"));
    assert_null(strstr(err, "secret"));
    assert_null(out);
    assert_int_equal(rl_file_read_untrusted_at(d, "../x", 100, &out, &len, err, sizeof err), RL_EINVAL);
    /* A FIFO at once, a missing file, a file above the cap. */
    snprintf(target, sizeof target, "%s/fifo", f->dir);
    assert_int_equal(mkfifo(target, 0644), 0);
    assert_int_equal(rl_file_read_untrusted_at(d, "fifo", 100, &out, &len, err, sizeof err), RL_EINVAL);
    assert_non_null(strstr(err, "FIFO"));
    assert_int_equal(rl_file_read_untrusted_at(d, "none", 100, &out, &len, err, sizeof err), RL_ENOTFOUND);
    assert_int_equal(rl_file_read_untrusted_at(d, "real.json", 1, &out, &len, err, sizeof err), RL_ETOOBIG);
    close(d);
}

/* The handle is the folder that was checked: a folder swapped for a link to
 * another one afterwards is not what is read. */
static void read_at_reads_the_folder_as_it_was_opened(void **state)
{
    fixture *f = *state;
    put(f->dir, "c.json", "mine", 0644);
    put(f->outer, "c.json", "theirs", 0644);
    int d;
    char moved[160], *out, err[200];
    size_t len;
    assert_int_equal(rl_file_open_dir(f->dir, &d, NULL, 0), RL_OK);
    snprintf(moved, sizeof moved, "%s.moved", f->dir);
    assert_int_equal(rename(f->dir, moved), 0);
    assert_int_equal(symlink(f->outer, f->dir), 0);
    assert_int_equal(rl_file_read_untrusted_at(d, "c.json", 100, &out, &len, err, sizeof err), RL_OK);
    assert_string_equal(out, "mine");
    free(out);
    /* The name is a link now: opening it again is refused, not followed. */
    int d2;
    assert_int_equal(rl_file_open_dir(f->dir, &d2, NULL, 0), RL_EINVAL);
    assert_int_equal(unlink(f->dir), 0);
    assert_int_equal(rename(moved, f->dir), 0);
    close(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(reads_a_regular_file, setup, teardown),
        cmocka_unit_test_setup_teardown(refuses_a_fifo_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(refuses_folders_and_devices, setup, teardown),
        cmocka_unit_test_setup_teardown(refuses_a_link_out_of_the_folder_without_quoting_it, setup, teardown),
        cmocka_unit_test_setup_teardown(follows_a_link_inside_the_folder, setup, teardown),
        cmocka_unit_test_setup_teardown(refuses_a_file_above_the_cap, setup, teardown),
        cmocka_unit_test_setup_teardown(refuses_a_missing_file, setup, teardown),
        cmocka_unit_test_setup_teardown(root_refuses_what_the_student_could_not_read, setup, teardown),
        cmocka_unit_test_setup_teardown(tmp_file_never_follows_a_planted_link, setup, teardown),
        cmocka_unit_test_setup_teardown(read_at_keeps_the_rules_beneath_the_held_folder, setup, teardown),
        cmocka_unit_test_setup_teardown(read_at_reads_the_folder_as_it_was_opened, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
