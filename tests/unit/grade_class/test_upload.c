/* Unit tests for upload: the listing of an unexpected hand-in shows folders
 * with '/', links with '@' (never followed), names made printable, and stops
 * at its cap with a count of what it left out; the message names the hidden
 * .relaylab and the exercises expected. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "upload.h"
#include "rl_test_dir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

RL_TEST_DIR("upload")

static void touch(const char *rel)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
}

static void the_listing_shows_kinds_and_printable_names(void **state)
{
    (void)state;
    char path[512], buf[4096];
    snprintf(path, sizeof path, "%s/relay", dir);
    mkdir(path, 0755);
    touch("relay/relay.py");
    touch("bad\x1b[31mname");
    snprintf(path, sizeof path, "%s/outside", dir);
    assert_int_equal(symlink("/etc", path), 0);
    gc_upload_tree(dir, buf, sizeof buf);
    assert_non_null(strstr(buf, "  relay/\n"));
    assert_non_null(strstr(buf, "    relay.py\n"));
    assert_non_null(strstr(buf, "  outside@\n"));
    assert_non_null(strstr(buf, "bad\\x1b[31mname"));
    assert_null(strchr(buf, '\x1b'));
    assert_null(strstr(buf, "passwd")); /* the link was not followed */
}

static void the_listing_is_capped(void **state)
{
    (void)state;
    char name[64], buf[8192];
    for (int i = 0; i < GC_UPLOAD_MAX_ENTRIES + 25; i++) {
        snprintf(name, sizeof name, "f%03d", i);
        touch(name);
    }
    gc_upload_tree(dir, buf, sizeof buf);
    assert_non_null(strstr(buf, "f000"));
    assert_null(strstr(buf, "f064"));
    assert_non_null(strstr(buf, "(25 more not listed)"));
}

static void one_wrapping_folder_is_seen_through(void **state)
{
    (void)state;
    char path[512], out[512], want[512];
    snprintf(path, sizeof path, "%s/my-work", dir);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/__MACOSX", dir);
    mkdir(path, 0755);
    touch(".DS_Store");
    assert_int_equal(gc_upload_wrapper(dir, out, sizeof out), 0);
    snprintf(want, sizeof want, "%s/my-work", dir);
    assert_string_equal(out, want);
    touch("stray.txt"); /* then it is not just a wrapper */
    assert_int_not_equal(gc_upload_wrapper(dir, out, sizeof out), 0);
}

static void an_empty_upload_says_so_and_names_the_marker(void **state)
{
    (void)state;
    char buf[8192];
    gc_upload_unexpected(dir, "deadline, keepalive", buf, sizeof buf);
    assert_non_null(strstr(buf, "  (empty)\n"));
    assert_non_null(strstr(buf, ".relaylab"));
    assert_non_null(strstr(buf, "deadline, keepalive"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(the_listing_shows_kinds_and_printable_names, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(the_listing_is_capped, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(an_empty_upload_says_so_and_names_the_marker, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(one_wrapping_folder_is_seen_through, make_dir, remove_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
