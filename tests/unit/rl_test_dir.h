/* rl_test_dir: a fresh folder for each test of a suite that writes files.
 *
 * RL_TEST_DIR("name") defines, in the including test file:
 *   static char dir[];                  the folder's path,
 *                                       /tmp/rl-test-name-XXXXXX made unique
 *   static int make_dir(void **state);  a cmocka setup that makes it
 *   static int remove_dir(void **state); a teardown that removes it and
 *                                       everything in it
 * Use them as cmocka_unit_test_setup_teardown(test, make_dir, remove_dir).
 * The removal walks the folder itself (nftw, no shell), depth first, and
 * never follows a symbolic link a test made inside it. */
#ifndef RL_TEST_DIR_H
#define RL_TEST_DIR_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static int rl_test_dir_remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return (flag == FTW_DP ? rmdir(path) : unlink(path)) == 0 ? 0 : -1;
}

/* Removes |path| and everything below it. Returns 0 or -1. */
__attribute__((unused)) static int rl_test_dir_remove(const char *path)
{
    return nftw(path, rl_test_dir_remove_one, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : -1;
}

#define RL_TEST_DIR(name)                                                                                              \
    static char dir[64];                                                                                               \
    static int make_dir(void **state)                                                                                  \
    {                                                                                                                  \
        (void)state;                                                                                                   \
        snprintf(dir, sizeof dir, "/tmp/rl-test-%s-XXXXXX", name);                                                     \
        return mkdtemp(dir) ? 0 : -1;                                                                                  \
    }                                                                                                                  \
    static int remove_dir(void **state)                                                                                \
    {                                                                                                                  \
        (void)state;                                                                                                   \
        return rl_test_dir_remove(dir);                                                                                \
    }

#endif
