/* sandbox_cgroup: the per-run cgroups of the grader's sandbox, v1 or v2;
 * see sandbox_cgroup.h and docs/sandbox.md. */
#include "sandbox_cgroup.h"

#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_log.h"
#include "rl_proc.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Where the hierarchies are mounted and where this process's own cgroups
 * are listed (a unit test points them at a fake tree). */
static char cg_root[256] = "/sys/fs/cgroup";
static char cg_self[256] = "/proc/self/cgroup";

/* Called by gr_sandbox_set_cgroup_paths (sandbox.c), which also forgets
 * the mode decided from the old paths. */
void gr_cgroup_set_paths(const char *root, const char *self)
{
    snprintf(cg_root, sizeof cg_root, "%s", root ? root : "/sys/fs/cgroup");
    snprintf(cg_self, sizeof cg_self, "%s", self ? self : "/proc/self/cgroup");
}

/* cgroup v1: ROOT/CTRL + this process's own cgroup under it, so a grader
 * confined by its own cgroup nests its submissions inside. */
static int cgroup_base(const char *ctrl, char *buf, size_t len)
{
    FILE *f = fopen(cg_self, "re");
    if (!f)
        return RL_ESYS;
    char line[512];
    int rc = RL_ENOTFOUND;
    while (fgets(line, sizeof line, f)) {
        /* "4:memory:/some/path" or "2:cpu,cpuacct:/" */
        char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;
        if (!b)
            continue;
        *b = '\0';
        bool match = false;
        for (char *save = NULL, *c = strtok_r(a + 1, ",", &save); c; c = strtok_r(NULL, ",", &save))
            match = match || strcmp(c, ctrl) == 0;
        if (!match)
            continue;
        b[1 + strcspn(b + 1, "\n")] = '\0';
        snprintf(buf, len, "%s/%s%s", cg_root, ctrl, strcmp(b + 1, "/") == 0 ? "" : b + 1);
        rc = RL_OK;
        break;
    }
    fclose(f);
    struct stat st;
    if (rc == RL_OK && stat(buf, &st) != 0)
        rc = RL_ENOTFOUND;
    return rc;
}

static bool have_v1(void)
{
    char base[300];
    return cgroup_base("pids", base, sizeof base) == RL_OK && cgroup_base("memory", base, sizeof base) == RL_OK &&
           cgroup_base("cpuacct", base, sizeof base) == RL_OK;
}

/* True when |word| is one of the blank-separated words of |list|. */
static bool has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; (p = strstr(p, word)); p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' ' || p[n] == '\n'))
            return true;
    return false;
}

static int read_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return RL_ESYS;
    if (!fgets(buf, (int)len, f))
        buf[0] = '\0';
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
    return RL_OK;
}

static int write_file(const char *dir, const char *name, const char *value)
{
    char path[400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "we");
    if (!f)
        return RL_ESYS;
    int ok = fputs(value, f) >= 0;
    ok = (fclose(f) == 0) && ok;
    return ok ? RL_OK : RL_ESYS;
}

static const char *const v2_needs[] = {"pids", "memory", "cpu"};

/* cgroup v2: the runs' cgroups are made under the hierarchy's root, the
 * one place (besides a delegated subtree) where a process may enable
 * controllers for its children while processes live in it. Returns 0 once
 * pids, memory and cpu are enabled for the root's children, else an error
 * with the reason in |err|. */
static int v2_ready(char *err, size_t errlen)
{
    char path[300], line[256];
    snprintf(path, sizeof path, "%s/cgroup.controllers", cg_root);
    if (read_line(path, line, sizeof line) != RL_OK) {
        snprintf(err, errlen,
                 "the sandbox needs cgroups: neither the v1 pids, memory and cpuacct hierarchies nor "
                 "a cgroup v2 hierarchy at %s",
                 cg_root);
        return RL_ESYS;
    }
    for (size_t i = 0; i < 3; i++)
        if (!has_word(line, v2_needs[i])) {
            snprintf(err, errlen, "the sandbox needs the %s controller, which cgroup v2 at %s does not offer (%s)",
                     v2_needs[i], cg_root, line);
            return RL_ESYS;
        }
    snprintf(path, sizeof path, "%s/cgroup.subtree_control", cg_root);
    if (read_line(path, line, sizeof line) != RL_OK)
        line[0] = '\0';
    for (size_t i = 0; i < 3; i++) {
        if (has_word(line, v2_needs[i]))
            continue;
        char on[32];
        snprintf(on, sizeof on, "+%s", v2_needs[i]);
        if (write_file(cg_root, "cgroup.subtree_control", on) != RL_OK) {
            snprintf(err, errlen, "cannot enable the %s controller in %s/cgroup.subtree_control: %s", v2_needs[i],
                     cg_root, strerror(errno));
            return RL_ESYS;
        }
    }
    return RL_OK;
}

/* Removes the empty cgroups "relaylab-PID-N" under |base| whose grader PID
 * is gone: a grader killed with SIGKILL could not remove its own. A
 * cgroup that still holds a task, or whose PID lives (perhaps reused), is
 * left alone. */
static void sweep_stale(const char *base)
{
    DIR *d = opendir(base);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        long pid;
        int n, used = 0;
        if (sscanf(e->d_name, "relaylab-%ld-%d%n", &pid, &n, &used) != 2 || e->d_name[used] != '\0' || pid <= 0 ||
            pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        char path[600];
        snprintf(path, sizeof path, "%s/%s", base, e->d_name);
        if (rmdir(path) == 0)
            RL_DEBUG("removed %s, left by a grader that is gone", path);
    }
    closedir(d);
}

gr_sandbox_mode gr_cgroup_mode(char *err, size_t errlen)
{
    if (have_v1())
        return GR_SANDBOX_CGROUP_V1;
    return v2_ready(err, errlen) == RL_OK ? GR_SANDBOX_CGROUP_V2 : GR_SANDBOX_NONE;
}

void gr_cgroup_sweep_stale(gr_sandbox_mode mode)
{
    if (mode == GR_SANDBOX_CGROUP_V2) {
        sweep_stale(cg_root);
        return;
    }
    if (mode != GR_SANDBOX_CGROUP_V1)
        return;
    static const char *const ctrls[] = {"pids", "memory", "cpuacct"};
    char base[300];
    for (size_t i = 0; i < 3; i++)
        if (cgroup_base(ctrls[i], base, sizeof base) == RL_OK)
            sweep_stale(base);
}

/* Makes |out| a new cgroup for run |id| under |base|. */
static int make_cgroup_in(const char *base, int id, char *out, size_t len)
{
    snprintf(out, len, "%.200s/relaylab-%ld-%d", base, (long)getpid(), id);
    if (mkdir(out, 0755) != 0) {
        out[0] = '\0';
        return RL_ESYS;
    }
    return RL_OK;
}

static int make_cgroup(const char *ctrl, int id, char *out, size_t len)
{
    char base[300];
    if (cgroup_base(ctrl, base, sizeof base) != RL_OK)
        return RL_ENOTFOUND;
    return make_cgroup_in(base, id, out, len);
}

/* ---- one run ---- */

/* cgroup v1: one cgroup per controller. */
static int prepare_v1(gr_sandbox_run *r, int id, uint64_t mem_limit_bytes, const char **what)
{
    char v[32];
    *what = "pids";
    if (make_cgroup("pids", id, r->cg_pids, sizeof r->cg_pids) != RL_OK)
        return RL_ESYS;
    snprintf(v, sizeof v, "%d", GR_SANDBOX_PIDS_MAX);
    if (write_file(r->cg_pids, "pids.max", v) != RL_OK)
        return RL_ESYS;
    *what = "memory";
    if (make_cgroup("memory", id, r->cg_mem, sizeof r->cg_mem) != RL_OK)
        return RL_ESYS;
    if (mem_limit_bytes) {
        snprintf(v, sizeof v, "%llu", (unsigned long long)mem_limit_bytes);
        if (write_file(r->cg_mem, "memory.limit_in_bytes", v) != RL_OK)
            return RL_ESYS;
    }
    *what = "cpuacct";
    if (make_cgroup("cpuacct", id, r->cg_cpu, sizeof r->cg_cpu) != RL_OK)
        return RL_ESYS;
    snprintf(r->cpu_usage, sizeof r->cpu_usage, "%s/cpuacct.usage", r->cg_cpu);
    snprintf(r->join[0], sizeof r->join[0], "%s/cgroup.procs", r->cg_pids);
    snprintf(r->join[1], sizeof r->join[1], "%s/cgroup.procs", r->cg_mem);
    snprintf(r->join[2], sizeof r->join[2], "%s/cgroup.procs", r->cg_cpu);
    for (int i = 0; i < 3; i++)
        r->joins[i] = r->join[i];
    return RL_OK;
}

/* cgroup v2: one cgroup for all three, under the hierarchy's root. */
static int prepare_v2(gr_sandbox_run *r, int id, uint64_t mem_limit_bytes, const char **what)
{
    char v[32];
    *what = "v2";
    if (make_cgroup_in(cg_root, id, r->cg_pids, sizeof r->cg_pids) != RL_OK)
        return RL_ESYS;
    snprintf(v, sizeof v, "%d", GR_SANDBOX_PIDS_MAX);
    if (write_file(r->cg_pids, "pids.max", v) != RL_OK)
        return RL_ESYS;
    if (mem_limit_bytes) {
        snprintf(v, sizeof v, "%llu", (unsigned long long)mem_limit_bytes);
        if (write_file(r->cg_pids, "memory.max", v) != RL_OK)
            return RL_ESYS;
        /* Swap would let memory.max be exceeded; a kernel without swap
         * accounting has no such file, which is fine. */
        if (write_file(r->cg_pids, "memory.swap.max", "0") != RL_OK && errno != ENOENT)
            return RL_ESYS;
    }
    r->v2 = true;
    snprintf(r->cpu_usage, sizeof r->cpu_usage, "%s/cpu.stat", r->cg_pids);
    snprintf(r->join[0], sizeof r->join[0], "%s/cgroup.procs", r->cg_pids);
    r->joins[0] = r->join[0];
    return RL_OK;
}

int gr_cgroup_prepare(gr_sandbox_run *r, gr_sandbox_mode mode, uint64_t mem_limit_bytes, const char **what)
{
    static int serial;
    int id = ++serial;
    if (mode == GR_SANDBOX_CGROUP_V1)
        return prepare_v1(r, id, mem_limit_bytes, what);
    if (mode == GR_SANDBOX_CGROUP_V2)
        return prepare_v2(r, id, mem_limit_bytes, what);
    return RL_OK;
}

int gr_sandbox_oom_kills(const gr_sandbox_run *r)
{
    char path[320], line[128];
    const char *dir = r->v2 ? r->cg_pids : r->cg_mem;
    snprintf(path, sizeof path, "%s/%s", dir, r->v2 ? "memory.events" : "memory.oom_control");
    FILE *f = dir[0] ? fopen(path, "re") : NULL;
    int n = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "oom_kill %d", &n) == 1)
            break;
    if (f)
        fclose(f);
    return n;
}

int gr_sandbox_memory_hits(const gr_sandbox_run *r, uint64_t *hits)
{
    char path[320], line[128];
    const char *dir = r->v2 ? r->cg_pids : r->cg_mem;
    snprintf(path, sizeof path, "%s/%s", dir, r->v2 ? "memory.events" : "memory.failcnt");
    FILE *f = dir[0] ? fopen(path, "re") : NULL;
    int rc = RL_ESYS;
    unsigned long long n;
    while (f && rc != RL_OK && fgets(line, sizeof line, f))
        if (sscanf(line, r->v2 ? "max %llu" : "%llu", &n) == 1)
            rc = RL_OK;
    if (f)
        fclose(f);
    if (rc == RL_OK)
        *hits = n;
    return rc;
}

int gr_sandbox_task_limit_hits(const gr_sandbox_run *r, uint64_t *hits)
{
    /* pids.events' "max N": forks and clones the pids limit refused (v1 and
     * v2 alike). */
    char path[320], line[128];
    snprintf(path, sizeof path, "%s/pids.events", r->cg_pids);
    FILE *f = r->cg_pids[0] ? fopen(path, "re") : NULL;
    int rc = RL_ESYS;
    unsigned long long n;
    while (f && rc != RL_OK && fgets(line, sizeof line, f))
        if (sscanf(line, "max %llu", &n) == 1)
            rc = RL_OK;
    if (f)
        fclose(f);
    if (rc == RL_OK)
        *hits = n;
    return rc;
}

static void remove_cgroup(char *dir)
{
    if (dir[0] && rmdir(dir) != 0)
        RL_DEBUG("cannot remove %s: %s", dir, strerror(errno));
    dir[0] = '\0';
}

void gr_cgroup_release(gr_sandbox_run *r)
{
    if (r->cg_pids[0]) {
        char procs[320];
        snprintf(procs, sizeof procs, "%s/cgroup.procs", r->cg_pids);
        int64_t until = rl_now_ns() + 3000 * RL_NS_PER_MS;
        for (;;) {
            FILE *f = fopen(procs, "re");
            long pid;
            int n = 0;
            while (f && fscanf(f, "%ld", &pid) == 1) {
                kill((pid_t)pid, SIGKILL);
                n++;
            }
            if (f)
                fclose(f);
            /* Our own children among them are reaped here; the rest are
             * the namespace's, reaped by its init's death. */
            rl_proc_reap_orphans(NULL, 0, 0);
            if (!n || rl_now_ns() > until)
                break;
            struct timespec ts = {0, 10 * RL_NS_PER_MS};
            nanosleep(&ts, NULL);
        }
    }
    remove_cgroup(r->cg_pids);
    remove_cgroup(r->cg_mem);
    remove_cgroup(r->cg_cpu);
}
