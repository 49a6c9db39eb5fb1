/* Unit tests for the roster: `grader list` is read into exercises and
 * scenario ids (a config exercise is known by its --submission FILE), the
 * rubric's points in either form, and a student's folders by their
 * .relaylab markers, whose exercises match by whole word; a folder or a
 * marker that leads out of the student's folder (a symlink), a marker that
 * is a FIFO or /dev/zero, and a student folder that is a symlink are
 * refused with a line naming them, never read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "rl_err.h"
#include "roster.h"
#include "rl_test_dir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

RL_TEST_DIR("roster")

static void put(const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    /* Make the folders on the way. */
    for (char *p = path + strlen(dir) + 1; (p = strchr(p, '/')); p++) {
        *p = '\0';
        mkdir(path, 0755);
        *p = '/';
    }
    if (text) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
    } else {
        mkdir(path, 0755);
    }
}

static const char *LIST = "deadline: the relay's deadlines (--submission 'COMMAND')\n"
                          "  shrinks              Work gets what is left\n"
                          "  none                 no deadline stays none\n"
                          "keepalive: a channel config (--submission FILE)\n"
                          "  check                the rules\n";

static void grader_list_is_read(void **state)
{
    (void)state;
    gc_exercise ex[4];
    size_t n;
    char err[256];
    assert_int_equal(gc_roster_parse_list(LIST, ex, 4, &n, err, sizeof err), RL_OK);
    assert_int_equal(n, 2);
    assert_string_equal(ex[0].name, "deadline");
    assert_false(ex[0].config);
    assert_int_equal(ex[0].nscenarios, 2);
    assert_string_equal(ex[0].scenarios[1], "none");
    assert_string_equal(ex[1].name, "keepalive");
    assert_true(ex[1].config);
    assert_int_equal(ex[1].nscenarios, 1);
}

static void grader_list_errors_are_named(void **state)
{
    (void)state;
    gc_exercise ex[1];
    size_t n;
    char err[256];
    assert_int_equal(gc_roster_parse_list("", ex, 1, &n, err, sizeof err), RL_EPARSE);
    assert_int_equal(gc_roster_parse_list("  orphan  x\n", ex, 1, &n, err, sizeof err), RL_EPARSE);
    assert_non_null(strstr(err, "line 1"));
    assert_int_equal(gc_roster_parse_list(LIST, ex, 1, &n, err, sizeof err), RL_ETOOBIG);
}

static void rubric_points_in_both_forms(void **state)
{
    (void)state;
    gc_exercise ex[4];
    size_t n;
    char err[256], path[128];
    assert_int_equal(gc_roster_parse_list(LIST, ex, 4, &n, err, sizeof err), RL_OK);
    put("rubric.json", "{\"deadline\": {\"shrinks\": 4, \"none\": {\"points\": 2, \"visibility\": \"hidden\"}}}");
    snprintf(path, sizeof path, "%s/rubric.json", dir);
    assert_int_equal(gc_roster_read_points(path, ex, n, err, sizeof err), RL_OK);
    assert_true(ex[0].points[0] == 4.0 && ex[0].points[1] == 2.0);
    assert_string_equal(ex[0].visibility[0], "");
    assert_string_equal(ex[0].visibility[1], "hidden");
    assert_true(ex[1].points[0] == 0.0); /* absent: no points */
}

static void starters_are_found_by_marker(void **state)
{
    (void)state;
    put("alice/relay/.relaylab", "# c\nexercises deadline cancel\nlang python\nsubmission ./run\nvariant \n");
    put("alice/ka/.relaylab", "exercises keepalive\nlang json\nsubmission keepalive.json\nvariant s123\n");
    put("alice/notes/readme.txt", "no marker");
    put("alice/.hidden/.relaylab", "exercises retry\nsubmission x\n");
    put("alice/broken/.relaylab", "lang python\n");
    char sdir[128];
    snprintf(sdir, sizeof sdir, "%s/alice", dir);
    gc_starter st[8];
    char notes[1024] = "";
    size_t n = gc_roster_starters(sdir, "alice", "keepalive retry", st, 8, notes, sizeof notes);
    assert_int_equal(n, 2); /* ka, relay: by name; hidden and malformed skipped */
    assert_non_null(strstr(notes, "alice/broken/.relaylab names no exercises"));
    assert_true(gc_starter_has(&st[0], "keepalive"));
    assert_string_equal(st[0].variant, "s123");
    assert_string_equal(st[0].submission, "keepalive.json");
    assert_true(gc_starter_has(&st[1], "deadline") && gc_starter_has(&st[1], "cancel"));
    assert_false(gc_starter_has(&st[1], "dead"));
    assert_false(gc_starter_has(&st[1], "line"));
}

static void a_student_folder_may_be_a_starter(void **state)
{
    (void)state;
    put("bob/.relaylab", "exercises flow\nsubmission ./run\n");
    char sdir[128];
    snprintf(sdir, sizeof sdir, "%s/bob", dir);
    gc_starter st[2];
    char notes[256] = "";
    assert_int_equal(gc_roster_starters(sdir, "bob", "keepalive retry", st, 2, notes, sizeof notes), 1);
    assert_string_equal(notes, "");
    assert_string_equal(st[0].dir, sdir);
}

static char scratch_notes[1024];

static void folders_without_marker_are_recognised_by_their_files(void **state)
{
    (void)state;
    /* A command starter: run and the README lab init wrote; a config
     * starter: its EXERCISE.json; junk is not a starter. */
    put("carl/relay/run", "#!/bin/sh\n");
    put("carl/relay/README.md",
        "# x\n    lab check              # every exercise this folder is for: deadline cancel\n");
    put("carl/ka/keepalive.json", "{}");
    put("carl/junk/notes.txt", "x");
    char sdir[128];
    snprintf(sdir, sizeof sdir, "%s/carl", dir);
    gc_starter st[8];
    assert_int_equal(gc_roster_starters(sdir, "x", "keepalive retry", st, 8, scratch_notes, sizeof scratch_notes), 2);
    assert_string_equal(st[0].exercises, "keepalive");
    assert_string_equal(st[0].submission, "keepalive.json");
    assert_non_null(strstr(st[0].inferred, "keepalive.json"));
    assert_string_equal(st[1].exercises, "deadline cancel");
    assert_string_equal(st[1].submission, "./run");
    assert_true(st[1].inferred[0]);
    /* Any marker wins: the unmarked folders are then not guessed at. */
    put("carl/other/.relaylab", "exercises flow\nsubmission ./run\n");
    assert_int_equal(gc_roster_starters(sdir, "x", "keepalive retry", st, 8, scratch_notes, sizeof scratch_notes), 1);
    assert_string_equal(st[0].exercises, "flow");
    assert_string_equal(st[0].inferred, "");
}

static void ambiguous_or_unnamed_folders_are_not_guessed(void **state)
{
    (void)state;
    put("dana/run", "#!/bin/sh\n"); /* a run without the README: which exercise? */
    put("dana/relay.py", "x");
    put("dana/cfg/keepalive.json", "{}");
    put("dana/cfg/retry.json", "{}"); /* two configs: which one? */
    char sdir[128];
    snprintf(sdir, sizeof sdir, "%s/dana", dir);
    gc_starter st[4];
    assert_int_equal(gc_roster_starters(sdir, "x", "keepalive retry", st, 4, scratch_notes, sizeof scratch_notes), 0);
}

static void a_marker_that_is_not_a_regular_file_is_refused(void **state)
{
    (void)state;
    put("erin/relay", NULL);
    char path[256], sdir[128];
    snprintf(path, sizeof path, "%s/erin/relay/.relaylab", dir);
    assert_int_equal(symlink("/dev/zero", path), 0);
    snprintf(sdir, sizeof sdir, "%s/erin", dir);
    gc_starter st[2];
    /* /dev/zero would never end: refused at once, and nothing recognised. */
    assert_int_equal(gc_roster_starters(sdir, "x", "keepalive", st, 2, scratch_notes, sizeof scratch_notes), 0);
}

static void the_roster_file_maps_folders_to_ids(void **state)
{
    (void)state;
    put("roster.csv", "folder,id\n# comment\n\nalice, s1001\nbob,bob@uni.edu,extra\nbad,has space\nnocomma\n");
    char path[128], id[128], err[256];
    snprintf(path, sizeof path, "%s/roster.csv", dir);
    assert_int_equal(gc_roster_identity(path, "alice", id, sizeof id, err, sizeof err), RL_OK);
    assert_string_equal(id, "s1001");
    assert_int_equal(gc_roster_identity(path, "bob", id, sizeof id, err, sizeof err), RL_OK);
    assert_string_equal(id, "bob@uni.edu");
    assert_int_equal(gc_roster_identity(path, "bad", id, sizeof id, err, sizeof err), RL_EPARSE);
    assert_non_null(strstr(err, "line 6"));
    assert_int_equal(gc_roster_identity(path, "carl", id, sizeof id, err, sizeof err), RL_EPARSE); /* nocomma */
    put("short.csv", "alice,s1\n");
    snprintf(path, sizeof path, "%s/short.csv", dir);
    assert_int_equal(gc_roster_identity(path, "zed", id, sizeof id, err, sizeof err), RL_ENOTFOUND);
}

/* The whole roster checked once: a spreadsheet's BOM, blank and repeated
 * lines are warnings naming the line; a folder with two ids or an id for
 * two folders an error naming it. */
static void the_roster_is_checked_whole(void **state)
{
    (void)state;
    char path[128], id[128], err[512], *warned = NULL;
    size_t wlen = 0;
    put("bom.csv", "\xef\xbb\xbf"
                   "alice,S1\n\nbob,S2\nbob,S2\n");
    snprintf(path, sizeof path, "%s/bom.csv", dir);
    FILE *w = open_memstream(&warned, &wlen);
    assert_int_equal(gc_roster_check(path, w, err, sizeof err), RL_OK);
    fclose(w);
    assert_non_null(strstr(warned, "line 1: it begins with a UTF-8 byte order mark"));
    assert_non_null(strstr(warned, "line 2: blank"));
    assert_non_null(strstr(warned, "line 4: repeats line 3"));
    free(warned);
    /* The first line's folder is found despite the mark. */
    assert_int_equal(gc_roster_identity(path, "alice", id, sizeof id, err, sizeof err), RL_OK);
    assert_string_equal(id, "S1");
    put("twoids.csv", "alice,S1\nbob,S2\nalice,S3\n");
    snprintf(path, sizeof path, "%s/twoids.csv", dir);
    assert_int_equal(gc_roster_check(path, NULL, err, sizeof err), RL_EPARSE);
    assert_non_null(strstr(err, "line 3: the folder alice is listed again"));
    put("shared.csv", "folder,id\nalice,S1\nbob,S1\n");
    snprintf(path, sizeof path, "%s/shared.csv", dir);
    assert_int_equal(gc_roster_check(path, NULL, err, sizeof err), RL_EPARSE);
    assert_non_null(strstr(err, "line 3: the id S1 is given to bob too (line 2)"));
    put("nocomma.csv", "alice,S1\nbob\n");
    snprintf(path, sizeof path, "%s/nocomma.csv", dir);
    assert_int_equal(gc_roster_check(path, NULL, err, sizeof err), RL_EPARSE);
    assert_non_null(strstr(err, "line 2: expected FOLDER,ID"));
}

static void students_are_sorted_and_names_checked(void **state)
{
    (void)state;
    put("zed", NULL);
    put("amy", NULL);
    put(".git", NULL);
    put("file.txt", "not a folder");
    put("a b", NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/link", dir);
    assert_int_equal(symlink("amy", path), 0);
    char **names;
    size_t n;
    char err[256];
    assert_int_equal(gc_roster_students(dir, &names, &n, err, sizeof err), RL_OK);
    assert_int_equal(n, 4); /* bad names and links too: the caller gives them a row each */
    assert_string_equal(names[0], "a b");
    assert_string_equal(names[1], "amy");
    assert_string_equal(names[2], "link");
    assert_string_equal(names[3], "zed");
    gc_roster_free_names(names, n);
    assert_int_equal(gc_roster_refuse_folder(path, "link", err, sizeof err), RL_EINVAL);
    assert_non_null(strstr(err, "the student folder link is a symlink"));
    snprintf(path, sizeof path, "%s/amy", dir);
    assert_int_equal(gc_roster_refuse_folder(path, "amy", err, sizeof err), RL_OK);
    char shown[64];
    gc_roster_name_shown("a b\n\033[31m", shown, sizeof shown);
    assert_string_equal(shown, "a\\x20b\\x0a\\x1b\\x5b31m");
    assert_true(gc_roster_name_ok("s1234-ann.b@x+y"));
    assert_false(gc_roster_name_ok(".x"));
    assert_false(gc_roster_name_ok("a,b"));
    assert_false(gc_roster_name_ok("a b"));
    assert_false(gc_roster_name_ok(""));
}

/* Past the arrays' first sizes (64 roster lines, 16 folders): every line
 * is still compared with every earlier one, every folder listed. */
static void a_long_roster_and_a_large_class_are_read_whole(void **state)
{
    (void)state;
    char *text = NULL, path[128], err[512];
    size_t tlen = 0;
    FILE *f = open_memstream(&text, &tlen);
    for (int i = 0; i < 150; i++)
        fprintf(f, "s%03d,id%03d\n", i, i);
    fprintf(f, "s000,another\n");
    fclose(f);
    put("long.csv", text);
    free(text);
    snprintf(path, sizeof path, "%s/long.csv", dir);
    assert_int_equal(gc_roster_check(path, NULL, err, sizeof err), RL_EPARSE);
    assert_non_null(strstr(err, "line 151: the folder s000 is listed again"));
    char name[32];
    for (int i = 39; i >= 0; i--) {
        snprintf(name, sizeof name, "class/s%02d", i);
        put(name, NULL);
    }
    char **names;
    size_t n;
    snprintf(path, sizeof path, "%s/class", dir);
    assert_int_equal(gc_roster_students(path, &names, &n, err, sizeof err), RL_OK);
    assert_int_equal(n, 40);
    for (size_t i = 0; i < n; i++) {
        snprintf(name, sizeof name, "s%02zu", i);
        assert_string_equal(names[i], name);
    }
    gc_roster_free_names(names, n);
}

static void links_out_and_odd_markers_are_refused(void **state)
{
    (void)state;
    put("bob/retry/.relaylab", "exercises retry\nsubmission config.json\n");
    put("erin/own/.relaylab", "exercises deadline\nsubmission ./run\n");
    put("erin/z/x", "");
    put("erin/f/x", "");
    char path[256], target[256], sdir[128];
    snprintf(path, sizeof path, "%s/erin/retry", dir);
    assert_int_equal(symlink("../bob/retry", path), 0); /* a classmate's folder */
    snprintf(path, sizeof path, "%s/erin/inner", dir);
    assert_int_equal(symlink("own", path), 0); /* inside: followed */
    snprintf(path, sizeof path, "%s/erin/z/.relaylab", dir);
    assert_int_equal(symlink("/dev/zero", path), 0);
    snprintf(path, sizeof path, "%s/erin/f/.relaylab", dir);
    assert_int_equal(mkfifo(path, 0644), 0);
    snprintf(sdir, sizeof sdir, "%s/erin", dir);
    snprintf(target, sizeof target, "%s/erin/own", dir);
    gc_starter st[8];
    char notes[2048] = "";
    size_t n = gc_roster_starters(sdir, "erin", "keepalive retry", st, 8, notes, sizeof notes);
    assert_int_equal(n, 2); /* inner (as own) and own */
    assert_string_equal(st[0].dir, target);
    assert_false(gc_starter_has(&st[0], "retry") || gc_starter_has(&st[1], "retry"));
    assert_non_null(strstr(notes, "erin/retry is a symlink that leads outside erin's folder"));
    assert_non_null(strstr(notes, "erin/z/.relaylab"));
    assert_non_null(strstr(notes, "erin/f/.relaylab"));
    assert_null(strstr(notes, dir)); /* named relative to the class, not by the instructor's paths */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(grader_list_is_read),
        cmocka_unit_test(grader_list_errors_are_named),
        cmocka_unit_test_setup_teardown(rubric_points_in_both_forms, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(starters_are_found_by_marker, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(a_student_folder_may_be_a_starter, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(the_roster_is_checked_whole, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(students_are_sorted_and_names_checked, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(folders_without_marker_are_recognised_by_their_files, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(ambiguous_or_unnamed_folders_are_not_guessed, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(a_marker_that_is_not_a_regular_file_is_refused, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(the_roster_file_maps_folders_to_ids, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(links_out_and_odd_markers_are_refused, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(a_long_roster_and_a_large_class_are_read_whole, make_dir, remove_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
