/* Unit tests for rl_marker: a .relaylab written is read back (student, and
 * the older `variant` line as the same); a marker that is a FIFO, a link out
 * of its folder or too big is refused at once; the identity rule compares
 * identities and its note names both and the command that makes a folder
 * right, with a hostile id made printable; a folder without its marker is
 * recognised, its language (python, c, go) told by its files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <sys/stat.h>
#include <unistd.h>

#include "rl_err.h"
#include "rl_marker.h"
#include "rl_test_dir.h"

RL_TEST_DIR("marker")

static void put(const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void a_marker_written_is_read_back(void **state)
{
    (void)state;
    rl_marker m = {0}, r;
    snprintf(m.exercises, sizeof m.exercises, "keepalive");
    snprintf(m.lang, sizeof m.lang, "json");
    snprintf(m.submission, sizeof m.submission, "keepalive.json");
    snprintf(m.student, sizeof m.student, "alice");
    assert_int_equal(rl_marker_write(dir, &m), RL_OK);
    char err[256];
    assert_int_equal(rl_marker_read(dir, &r, err, sizeof err), RL_OK);
    assert_string_equal(r.exercises, "keepalive");
    assert_string_equal(r.lang, "json");
    assert_string_equal(r.submission, "keepalive.json");
    assert_string_equal(r.student, "alice");
    assert_false(r.inferred);
}

static void the_older_variant_line_is_the_student(void **state)
{
    (void)state;
    put(".relaylab", "exercises keepalive\r\nsubmission k.json\r\nvariant s42\r\n");
    rl_marker r;
    char err[256];
    assert_int_equal(rl_marker_read(dir, &r, err, sizeof err), RL_OK);
    assert_string_equal(r.student, "s42");
    assert_string_equal(r.submission, "k.json");
}

static void missing_malformed_and_hostile_markers_are_refused(void **state)
{
    (void)state;
    rl_marker r;
    char err[512], path[128];
    assert_int_equal(rl_marker_read(dir, &r, err, sizeof err), RL_ENOTFOUND);
    put(".relaylab", "lang python\n");
    assert_int_equal(rl_marker_read(dir, &r, err, sizeof err), RL_EPARSE);
    snprintf(path, sizeof path, "%s/.relaylab", dir);
    unlink(path);
    /* A FIFO would block a reader forever: refused at once. */
    assert_int_equal(mkfifo(path, 0644), 0);
    assert_int_equal(rl_marker_read(dir, &r, err, sizeof err), RL_EINVAL);
    unlink(path);
    /* /dev/zero never ends, and is outside the folder. */
    assert_int_equal(symlink("/dev/zero", path), 0);
    assert_int_not_equal(rl_marker_read(dir, &r, err, sizeof err), RL_OK);
    unlink(path);
    char *big = malloc(RL_MARKER_MAX_BYTES + 100);
    memset(big, '#', RL_MARKER_MAX_BYTES + 99);
    big[RL_MARKER_MAX_BYTES + 99] = '\0';
    put(".relaylab", big);
    free(big);
    assert_int_equal(rl_marker_read(dir, &r, err, sizeof err), RL_ETOOBIG);
}

/* A folder without its .relaylab (a Gradescope upload drops dot files) is
 * recognised by its run script and README, its language by its files: a
 * Makefile beside a Go file is a Go folder, beside none a C one. */
static void a_folder_without_its_marker_gets_its_language_from_its_files(void **state)
{
    (void)state;
    rl_marker r;
    char why[512], path[128];
    put("run", "#!/bin/sh\n");
    put("README.md", "    lab check              # every exercise this folder is for: deadline cancel\n");
    assert_int_equal(rl_marker_infer(dir, "keepalive", &r, why, sizeof why), RL_OK);
    assert_true(r.inferred);
    assert_string_equal(r.exercises, "deadline cancel");
    assert_string_equal(r.lang, "python");
    put("Makefile", "relay:\n");
    assert_int_equal(rl_marker_infer(dir, "keepalive", &r, why, sizeof why), RL_OK);
    assert_string_equal(r.lang, "c");
    put("relay.go", "package main\n");
    assert_int_equal(rl_marker_infer(dir, "keepalive", &r, why, sizeof why), RL_OK);
    assert_string_equal(r.lang, "go");
    snprintf(path, sizeof path, "%s/relay.go", dir);
    unlink(path);
    put("streamer.go", "package main\n");
    assert_int_equal(rl_marker_infer(dir, "keepalive", &r, why, sizeof why), RL_OK);
    assert_string_equal(r.lang, "go");
}

static void identities_differ_by_value_none_included(void **state)
{
    (void)state;
    assert_false(rl_identity_differs("alice", "alice"));
    assert_false(rl_identity_differs(NULL, ""));
    assert_true(rl_identity_differs("bob", "alice"));
    assert_true(rl_identity_differs("bob", NULL));
    assert_true(rl_identity_differs(NULL, "alice"));
}

static void the_note_names_both_and_the_fix(void **state)
{
    (void)state;
    char note[512];
    rl_identity_note("keepalive", "bob", "alice", note, sizeof note);
    assert_non_null(strstr(note, "made for \"alice\""));
    assert_non_null(strstr(note, "graded as \"bob\""));
    assert_non_null(strstr(note, "`lab init keepalive --student bob NEW-FOLDER`"));
    rl_identity_note("keepalive", "bob", "", note, sizeof note);
    assert_non_null(strstr(note, "made with no --student"));
    rl_identity_note("keepalive", NULL, "al\x1b[2Jice\"", note, sizeof note);
    assert_null(strchr(note, '\x1b'));
    assert_non_null(strstr(note, "al\\x1b[2Jice?"));
    assert_non_null(strstr(note, "default deployment"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_marker_written_is_read_back, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(the_older_variant_line_is_the_student, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(missing_malformed_and_hostile_markers_are_refused, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(a_folder_without_its_marker_gets_its_language_from_its_files, make_dir,
                                        remove_dir),
        cmocka_unit_test(identities_differ_by_value_none_included),
        cmocka_unit_test(the_note_names_both_and_the_fix),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
