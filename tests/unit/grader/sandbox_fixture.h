/* sandbox_fixture: what the sandbox modules' unit tests share (included by
 * test_sandbox.c and test_sandbox_cgroup.c): a scratch folder per test,
 * made by setup and removed by teardown, which also points the sandbox
 * back at the real cgroup paths, and files and folders made in one call.
 * Include it after cmocka.h. */
#ifndef GR_SANDBOX_FIXTURE_H
#define GR_SANDBOX_FIXTURE_H

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sandbox.h"

static char tmp[128];

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void dir(const char *path)
{
    assert_true(mkdir(path, 0755) == 0 || errno == EEXIST);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmp, sizeof tmp, "/tmp/relaylab-sandbox-test-XXXXXX");
    assert_non_null(mkdtemp(tmp));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    gr_sandbox_set_cgroup_paths(NULL, NULL);
    nftw(tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}

#endif
