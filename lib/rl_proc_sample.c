/* rl_proc_sample: what /proc says about a process group and our children;
 * see rl_proc_sample.h. Every scan reads /proc/PID/stat, whose command name
 * may hold spaces and parentheses, so fields are counted from the last ')'. */
#include "rl_proc_sample.h"

#include "rl_alloc.h"
#include "rl_deadline.h"
#include "rl_err.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Reads /proc/|pid|/stat and returns the fields after the command name
 * (which may hold spaces and parentheses), starting at field 3 (state). */
static bool read_stat(const char *pid, char *buf, size_t len, char **rest)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%s/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, len - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    char *paren = strrchr(buf, ')');
    if (!paren || paren[1] != ' ')
        return false;
    *rest = paren + 2;
    return true;
}

/* Splits |rest| (field 3 onwards) into fields; fields[k] is field k+3. */
static int split_fields(char *rest, char **fields, int max)
{
    int n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(rest, " ", &save); tok && n < max; tok = strtok_r(NULL, " ", &save))
        fields[n++] = tok;
    return n;
}

static bool all_digits(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return false;
    return true;
}

/* Entries of /proc/PID/fd, or -1 when it cannot be read (another user's
 * process, or one that just exited). */
static int count_fds(const char *pid)
{
    char path[300];
    snprintf(path, sizeof path, "/proc/%s/fd", pid);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* The one registration: a cgroup (rl_proc_sample_by_cgroup) or a PID
 * namespace (rl_proc_sample_by_pidns, |cg_ns| non-zero). */
static pthread_mutex_t cg_mu = PTHREAD_MUTEX_INITIALIZER;
static pid_t cg_pgid, cg_exclude;
static ino_t cg_ns;
static char cg_path[512], cg_cpu_path[512];

void rl_proc_sample_by_cgroup(pid_t pgid, const char *procs_path, pid_t exclude, const char *cpu_usage_path)
{
    pthread_mutex_lock(&cg_mu);
    cg_pgid = procs_path ? pgid : 0;
    cg_exclude = exclude;
    cg_ns = 0;
    snprintf(cg_path, sizeof cg_path, "%s", procs_path ? procs_path : "");
    snprintf(cg_cpu_path, sizeof cg_cpu_path, "%s", procs_path && cpu_usage_path ? cpu_usage_path : "");
    pthread_mutex_unlock(&cg_mu);
}

void rl_proc_sample_by_pidns(pid_t pgid, ino_t pidns, pid_t exclude)
{
    pthread_mutex_lock(&cg_mu);
    cg_pgid = pidns ? pgid : 0;
    cg_exclude = exclude;
    cg_ns = pidns;
    cg_path[0] = cg_cpu_path[0] = '\0';
    pthread_mutex_unlock(&cg_mu);
}

/* The PID namespace |pid| (a /proc entry) is in, or 0 when it cannot be
 * read (gone, or not ours to look at). */
static ino_t pidns_of(const char *pid)
{
    char path[300];
    struct stat st;
    snprintf(path, sizeof path, "/proc/%s/ns/pid", pid);
    return stat(path, &st) == 0 ? st.st_ino : 0;
}

/* The registered cgroup's CPU time in ns, or -1 when |pgid| has none: a
 * cgroup v1 cpuacct.usage holds ns, a v2 cpu.stat a "usage_usec N" line. */
static int64_t cgroup_cpu_ns(pid_t pgid)
{
    pthread_mutex_lock(&cg_mu);
    long long v = -1;
    if (cg_pgid && cg_pgid == pgid && cg_cpu_path[0]) {
        FILE *f = fopen(cg_cpu_path, "re");
        char line[128];
        while (f && fgets(line, sizeof line, f)) {
            long long n;
            if (sscanf(line, "usage_usec %lld", &n) == 1) {
                v = n * 1000;
                break;
            }
            if (sscanf(line, "%lld", &n) == 1) {
                v = n;
                break;
            }
        }
        if (f)
            fclose(f);
    }
    pthread_mutex_unlock(&cg_mu);
    return (int64_t)v;
}

#define CG_MAX_PIDS 4096

/* Reads the registered cgroup's members for |pgid| into |pids|; returns
 * how many, or -1 when |pgid| is not registered. */
static int cgroup_members(pid_t pgid, pid_t *pids, int max)
{
    pthread_mutex_lock(&cg_mu);
    if (!cg_pgid || cg_pgid != pgid || cg_ns) {
        pthread_mutex_unlock(&cg_mu);
        return -1;
    }
    int n = 0;
    FILE *f = fopen(cg_path, "re");
    long v;
    while (f && n < max && fscanf(f, "%ld", &v) == 1)
        if ((pid_t)v != cg_exclude)
            pids[n++] = (pid_t)v;
    if (f)
        fclose(f);
    pthread_mutex_unlock(&cg_mu);
    return n;
}

/* Who is group |pgid| during one scan of /proc: the members of the cgroup
 * or PID namespace registered for it, else the processes whose process
 * group it is. */
typedef struct membership {
    pid_t pgid;
    pid_t *members; /* the cgroup's; NULL when none is registered */
    int nmembers;
    ino_t ns;      /* the PID namespace's; 0 when none is registered */
    pid_t exclude; /* the namespace's wrapper */
} membership;

static void membership_init(membership *m, pid_t pgid)
{
    m->pgid = pgid;
    m->members = rl_xcalloc(CG_MAX_PIDS, sizeof *m->members);
    m->nmembers = cgroup_members(pgid, m->members, CG_MAX_PIDS);
    if (m->nmembers < 0) {
        free(m->members);
        m->members = NULL;
    }
    pthread_mutex_lock(&cg_mu);
    m->ns = cg_pgid == pgid ? cg_ns : 0;
    m->exclude = cg_exclude;
    pthread_mutex_unlock(&cg_mu);
}

/* Whether the process of /proc entry |name|, in process group |pgrp|, is
 * a member. */
static bool membership_has(const membership *m, const char *name, pid_t pgrp)
{
    pid_t pid = (pid_t)atol(name);
    if (m->ns)
        return pidns_of(name) == m->ns && pid != m->exclude;
    if (!m->members)
        return pgrp == m->pgid;
    for (int i = 0; i < m->nmembers; i++)
        if (m->members[i] == pid)
            return true;
    return false;
}

static void membership_fini(membership *m)
{
    free(m->members);
}

int rl_proc_group_sample(pid_t pgid, rl_proc_sample *out)
{
    memset(out, 0, sizeof *out);
    DIR *d = opendir("/proc");
    if (!d)
        return RL_ESYS;
    membership m;
    membership_init(&m, pgid);
    long ticks = sysconf(_SC_CLK_TCK);
    long page = sysconf(_SC_PAGESIZE);
    struct dirent *e;
    char buf[1024];
    while ((e = readdir(d))) {
        char *rest, *f[24];
        if (!all_digits(e->d_name) || !read_stat(e->d_name, buf, sizeof buf, &rest))
            continue;
        /* f[0]=state(3) f[2]=pgrp(5) f[11]=utime(14) f[12]=stime(15)
         * f[13]=cutime(16) f[14]=cstime(17) f[17]=num_threads(20)
         * f[21]=rss(24) */
        /* Zombies hold no memory and run no more: they are not the group. */
        if (split_fields(rest, f, 24) < 22 || f[0][0] == 'Z' || !membership_has(&m, e->d_name, (pid_t)atol(f[2])))
            continue;
        out->nprocs++;
        out->nthreads += atoi(f[17]);
        int nfd = count_fds(e->d_name);
        out->nfds = out->nfds < 0 || nfd < 0 ? -1 : out->nfds + nfd;
        out->rss_bytes += (uint64_t)strtoull(f[21], NULL, 10) * (uint64_t)page;
        /* Children a member already reaped count too: CPU the group spent. */
        int64_t t =
            strtoll(f[11], NULL, 10) + strtoll(f[12], NULL, 10) + strtoll(f[13], NULL, 10) + strtoll(f[14], NULL, 10);
        out->cpu_ns += t * (RL_NS_PER_SEC / ticks);
    }
    closedir(d);
    membership_fini(&m);
    int64_t cg_cpu = cgroup_cpu_ns(pgid);
    if (cg_cpu >= 0)
        out->cpu_ns = cg_cpu;
    return out->nprocs ? RL_OK : RL_ENOTFOUND;
}

void rl_proc_peak_sample(void *peak)
{
    rl_proc_peak *p = peak;
    rl_proc_sample s;
    if (rl_proc_group_sample(p->pgid, &s) == RL_OK && s.rss_bytes > p->peak_rss)
        p->peak_rss = s.rss_bytes;
}

/* Calls |each| with the run and wait times of every thread of process
 * |pid|. */
static void each_task_sched(const char *pid, rl_thread_sched_fn each, void *user)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%.16s/task", pid);
    DIR *d = opendir(path);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char file[96];
        snprintf(file, sizeof file, "/proc/%.16s/task/%.16s/schedstat", pid, e->d_name);
        FILE *f = fopen(file, "re");
        if (!f)
            continue;
        long long run = 0, wait = 0;
        if (fscanf(f, "%lld %lld", &run, &wait) == 2)
            each(user, (pid_t)atol(e->d_name), run, wait);
        fclose(f);
    }
    closedir(d);
}

int rl_proc_stat_ids(const char *name, char *state, pid_t *ppid, pid_t *pgrp)
{
    char buf[1024], *rest, *f[3];
    if (!all_digits(name) || !read_stat(name, buf, sizeof buf, &rest) || split_fields(rest, f, 3) < 3)
        return RL_ENOTFOUND;
    /* f[0]=state(3) f[1]=ppid(4) f[2]=pgrp(5) */
    *state = f[0][0];
    *ppid = (pid_t)atol(f[1]);
    *pgrp = (pid_t)atol(f[2]);
    return RL_OK;
}

typedef struct sched_sum {
    int64_t run_ns, wait_ns;
} sched_sum;

static void add_sched(void *user, pid_t tid, int64_t run_ns, int64_t wait_ns)
{
    (void)tid;
    sched_sum *sum = user;
    sum->run_ns += run_ns;
    sum->wait_ns += wait_ns;
}

int rl_proc_group_sched(pid_t pgid, int64_t *run_ns, int64_t *wait_ns)
{
    sched_sum sum = {0, 0};
    int rc = rl_proc_group_threads(pgid, add_sched, &sum);
    *run_ns = sum.run_ns;
    *wait_ns = sum.wait_ns;
    return rc;
}

int rl_proc_group_threads(pid_t pgid, rl_thread_sched_fn each, void *user)
{
    DIR *d = opendir("/proc");
    if (!d)
        return RL_ESYS;
    membership m;
    membership_init(&m, pgid);
    int members = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char state;
        pid_t ppid, pgrp;
        /* Zombies run no more: they are not the group. */
        if (rl_proc_stat_ids(e->d_name, &state, &ppid, &pgrp) != RL_OK || state == 'Z' ||
            !membership_has(&m, e->d_name, pgrp))
            continue;
        members++;
        each_task_sched(e->d_name, each, user);
    }
    closedir(d);
    membership_fini(&m);
    return members ? RL_OK : RL_ENOTFOUND;
}

int rl_proc_become_subreaper(void)
{
    return prctl(PR_SET_CHILD_SUBREAPER, 1) == 0 ? RL_OK : RL_ESYS;
}

/* Appends to |out| (room for |max|) our children not in |keep|. */
static size_t list_children(const pid_t *keep, size_t nkeep, pid_t *out, size_t max)
{
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    pid_t me = getpid();
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        char state;
        pid_t ppid, pgrp;
        if (rl_proc_stat_ids(e->d_name, &state, &ppid, &pgrp) != RL_OK || ppid != me)
            continue;
        pid_t pid = (pid_t)atol(e->d_name);
        bool kept = false;
        for (size_t i = 0; i < nkeep && !kept; i++)
            kept = keep[i] == pid;
        if (!kept)
            out[n++] = pid;
    }
    closedir(d);
    return n;
}

int rl_proc_reap_orphans(const pid_t *keep, size_t nkeep, int64_t timeout_ms)
{
    int64_t until = rl_now_ns() + timeout_ms * RL_NS_PER_MS;
    int killed = 0;
    for (;;) {
        pid_t kids[256];
        size_t n = list_children(keep, nkeep, kids, 256);
        if (!n || rl_now_ns() >= until)
            return killed;
        for (size_t i = 0; i < n; i++) {
            /* Its own group too: whatever it started goes with it. */
            if (getpgid(kids[i]) == kids[i])
                kill(-kids[i], SIGKILL);
            if (kill(kids[i], SIGKILL) == 0)
                killed++;
        }
        for (size_t i = 0; i < n; i++) {
            while (rl_now_ns() < until) {
                pid_t r = waitpid(kids[i], NULL, WNOHANG);
                if (r == kids[i] || (r < 0 && errno == ECHILD))
                    break;
                rl_sleep_ms(1, NULL);
            }
        }
    }
}
