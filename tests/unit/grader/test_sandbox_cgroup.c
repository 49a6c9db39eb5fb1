/* Unit tests for the sandbox's cgroups (grader/sandbox_cgroup.c), which
 * need no root: each run's cgroups written into a fake cgroup tree, v1 and
 * v2 (so the v2 path, which this machine's kernel cannot run, is at least
 * held to the files it must write), OOM kills and limit hits read from
 * either, the stale cgroups of a gone grader swept, and a v2 hierarchy
 * without a needed controller named. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

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

/* The first line of DIR/NAME, or "" when there is none. */
static const char *got(const char *d, const char *name)
{
    static char line[256];
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", d, name);
    line[0] = '\0';
    FILE *f = fopen(path, "r");
    if (f) {
        if (!fgets(line, sizeof line, f))
            line[0] = '\0';
        fclose(f);
    }
    line[strcspn(line, "\n")] = '\0';
    return line;
}

/* A fake cgroup v1 tree TMP/|name| with the pids, memory and cpuacct
 * hierarchies (and |memory_sub| under memory, unless NULL), and a fake
 * /proc/self/cgroup holding |self_text|; the sandbox module is pointed at
 * both. The tree's root goes to |root|. */
static void fake_v1(const char *name, const char *memory_sub, const char *self_text, char *root, size_t len)
{
    char path[512], self[256];
    snprintf(root, len, "%s/%s", tmp, name);
    dir(root);
    const char *ctrls[] = {"pids", "memory", "cpuacct"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", root, ctrls[i]);
        dir(path);
    }
    if (memory_sub) {
        snprintf(path, sizeof path, "%s/memory/%s", root, memory_sub);
        dir(path);
    }
    snprintf(self, sizeof self, "%s/%s.self", tmp, name);
    put(self, self_text);
    gr_sandbox_set_cgroup_paths(root, self);
}

static void v1_run_gets_a_cgroup_per_controller(void **state)
{
    (void)state;
    char root[256], path[512], err[256];
    fake_v1("cg", "grader", "8:pids:/\n4:memory:/grader\n2:cpuacct,cpu:/\n0::/\n", root, sizeof root);

    gr_sandbox_run r;
    assert_int_equal(gr_sandbox_prepare(&r, UINT64_C(256) << 20, err, sizeof err), RL_OK);
    assert_false(r.v2);
    assert_string_equal(got(r.cg_pids, "pids.max"), "512");
    /* Nested in the grader's own memory cgroup. */
    snprintf(path, sizeof path, "%s/memory/grader/relaylab-", root);
    assert_memory_equal(r.cg_mem, path, strlen(path));
    assert_string_equal(got(r.cg_mem, "memory.limit_in_bytes"), "268435456");
    assert_non_null(strstr(r.cpu_usage, "/cpuacct/relaylab-"));
    assert_non_null(strstr(r.cpu_usage, "cpuacct.usage"));
    assert_non_null(r.joins[2]);
    assert_null(r.joins[3]);
    assert_int_equal(gr_sandbox_oom_kills(&r), 0);
    snprintf(path, sizeof path, "%s/memory.oom_control", r.cg_mem);
    put(path, "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n");
    assert_int_equal(gr_sandbox_oom_kills(&r), 3);
    uint64_t hits = 99;
    assert_int_equal(gr_sandbox_memory_hits(&r, &hits), RL_ESYS); /* no file yet: unknown, not 0 */
    snprintf(path, sizeof path, "%s/memory.failcnt", r.cg_mem);
    put(path, "17\n");
    assert_int_equal(gr_sandbox_memory_hits(&r, &hits), RL_OK);
    assert_int_equal(hits, 17);
    gr_sandbox_teardown(&r);
}

static void v2_run_gets_one_cgroup_under_the_root(void **state)
{
    (void)state;
    char root[PATH_MAX + 8], self[PATH_MAX + 8], path[PATH_MAX + 32], err[256];
    snprintf(root, sizeof root, "%s/cg2", tmp);
    dir(root);
    snprintf(path, sizeof path, "%s/cgroup.controllers", root);
    put(path, "cpuset cpu io memory hugetlb pids rdma misc\n");
    snprintf(path, sizeof path, "%s/cgroup.subtree_control", root);
    put(path, "memory\n");
    snprintf(self, sizeof self, "%s/self2", tmp);
    put(self, "0::/user.slice/session-1.scope\n");
    gr_sandbox_set_cgroup_paths(root, self);

    gr_sandbox_run r;
    assert_int_equal(gr_sandbox_prepare(&r, UINT64_C(64) << 20, err, sizeof err), RL_OK);
    assert_true(r.v2);
    /* The controllers that were not on yet were asked for (the fake file
     * keeps the last write; the kernel's would add it to the list). */
    assert_string_equal(got(root, "cgroup.subtree_control"), "+cpu");
    snprintf(path, sizeof path, "%s/relaylab-", root);
    assert_memory_equal(r.cg_pids, path, strlen(path));
    assert_string_equal(got(r.cg_pids, "pids.max"), "512");
    assert_string_equal(got(r.cg_pids, "memory.max"), "67108864");
    assert_string_equal(got(r.cg_pids, "memory.swap.max"), "0");
    assert_non_null(strstr(r.cpu_usage, "/cpu.stat"));
    assert_null(r.joins[1]);
    snprintf(path, sizeof path, "%s/memory.events", r.cg_pids);
    put(path, "low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\n");
    assert_int_equal(gr_sandbox_oom_kills(&r), 1);
    uint64_t hits = 0;
    assert_int_equal(gr_sandbox_memory_hits(&r, &hits), RL_OK);
    assert_int_equal(hits, 4);
    gr_sandbox_teardown(&r);
}

static void stale_cgroups_of_a_gone_grader_are_swept(void **state)
{
    (void)state;
    char root[256], path[512];
    fake_v1("cg4", NULL, "8:pids:/\n4:memory:/\n2:cpuacct:/\n", root, sizeof root);
    /* pid_max is at most 4194304: no process 9999999 exists. */
    const char *gone[] = {"pids/relaylab-9999999-1", "memory/relaylab-9999999-1", "cpuacct/relaylab-9999999-2"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", root, gone[i]);
        dir(path);
    }
    char mine[320], busy[320], other[320];
    snprintf(mine, sizeof mine, "%s/pids/relaylab-%ld-1", root, (long)getpid()); /* a live grader's: kept */
    dir(mine);
    snprintf(busy, sizeof busy, "%s/memory/relaylab-9999999-3", root); /* not empty: kept */
    dir(busy);
    snprintf(path, sizeof path, "%s/cgroup.procs", busy);
    put(path, "1\n");
    snprintf(other, sizeof other, "%s/pids/someone-else", root); /* not ours: kept */
    dir(other);
    gr_sandbox_sweep_stale();
    struct stat st;
    for (size_t i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", root, gone[i]);
        assert_int_not_equal(stat(path, &st), 0);
    }
    assert_int_equal(stat(mine, &st), 0);
    assert_int_equal(stat(busy, &st), 0);
    assert_int_equal(stat(other, &st), 0);
}

static void v2_without_a_controller_says_which(void **state)
{
    (void)state;
    char root[PATH_MAX + 8], self[PATH_MAX + 8], path[PATH_MAX + 32], err[256];
    snprintf(root, sizeof root, "%s/cg3", tmp);
    dir(root);
    snprintf(path, sizeof path, "%s/cgroup.controllers", root);
    put(path, "cpuset io memory hugetlb\n"); /* no pids, no cpu: "cpuset" must not count as cpu */
    snprintf(self, sizeof self, "%s/self3", tmp);
    put(self, "0::/\n");
    gr_sandbox_set_cgroup_paths(root, self);
    gr_sandbox_run r;
    assert_int_equal(gr_sandbox_prepare(&r, 0, err, sizeof err), RL_ESYS);
    assert_non_null(strstr(err, "pids controller"));
    put(path, "cpuset io memory pids\n");
    assert_int_equal(gr_sandbox_prepare(&r, 0, err, sizeof err), RL_ESYS);
    assert_non_null(strstr(err, "cpu controller"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(v1_run_gets_a_cgroup_per_controller, setup, teardown),
        cmocka_unit_test_setup_teardown(v2_run_gets_one_cgroup_under_the_root, setup, teardown),
        cmocka_unit_test_setup_teardown(v2_without_a_controller_says_which, setup, teardown),
        cmocka_unit_test_setup_teardown(stale_cgroups_of_a_gone_grader_are_swept, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
