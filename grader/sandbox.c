/* sandbox: the grader's side of the submission's sandbox; see sandbox.h
 * and docs/sandbox.md for what each piece defends against. */
#include "sandbox.h"

#include "rl_alloc.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_log.h"
#include "rl_proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define UNSHARE "/usr/bin/unshare"

/* How this grader sandboxes, decided once by gr_sandbox_enter (or, for a
 * unit test that prepares runs without entering, by the first prepare). */
static gr_sandbox_mode mode = GR_SANDBOX_NONE;
#define GR_STR_(x) #x
#define GR_STR(x) GR_STR_(x)

/* ---- the view ---- */

static char *absolute(const char *path)
{
    char buf[PATH_MAX];
    return realpath(path, buf) ? rl_xstrdup(buf) : NULL;
}

int gr_sandbox_submission_dir(const char *cmd, char *buf, size_t len)
{
    /* Words split on blanks and shell punctuation: enough for "python3
     * relay.py", "/usr/bin/python3 x/relay.py --flag" or "./bin/relay"; the
     * last word that names a file is the submission's (the interpreter
     * comes before its script). A quoted path with spaces falls back to the
     * working directory, as does a command of words alone. */
    char found[PATH_MAX] = "";
    const char *p = cmd;
    while (*p) {
        size_t n = strcspn(p, " \t\n;&|<>()'\"`");
        if (n && n < PATH_MAX) {
            char word[PATH_MAX], real[PATH_MAX];
            memcpy(word, p, n);
            word[n] = '\0';
            struct stat st;
            if (stat(word, &st) == 0 && S_ISREG(st.st_mode) && realpath(word, real))
                memcpy(found, real, sizeof found);
        }
        p += n ? n : 1;
    }
    if (!found[0])
        return RL_ENOTFOUND;
    *strrchr(found, '/') = '\0';
    snprintf(buf, len, "%s", found[0] ? found : "/");
    return RL_OK;
}

int gr_sandbox_view_init(gr_sandbox_view *v, const char *bin_dir, const char *submission_dir,
                         const char *const *private_files, char *err, size_t errlen)
{
    memset(v, 0, sizeof *v);
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/jail", bin_dir);
    v->jail = rl_xstrdup(path);
    /* The kit: bin/.. for bin/, build/SAN/bin/../../.. for a sanitizer build. */
    snprintf(path, sizeof path, "%s/..", bin_dir);
    char *kit = absolute(path);
    snprintf(path, sizeof path, "%s/../../../grader", bin_dir);
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        free(kit);
        snprintf(path, sizeof path, "%s/../../..", bin_dir);
        kit = absolute(path);
    }
    char *sub = submission_dir ? absolute(submission_dir) : NULL;
    if (kit && sub && strcmp(kit, sub) == 0) {
        snprintf(err, errlen, "the submission is in the kit's own folder %s: put it in a folder of its own", kit);
        free(kit);
        free(sub);
        gr_sandbox_view_fini(v);
        return RL_EINVAL;
    }
    if (kit) {
        v->hide[v->nhide++] = kit;
        /* Public parts a submission may use: the protocol (proto/), the
         * stubs generated from it (build/gen) and the Node packages the
         * starters pin (build/node-packages: NODE_PATH, run.c). */
        static const char *const public_parts[] = {"proto", "build/gen", "build/node-packages"};
        for (size_t i = 0; i < sizeof public_parts / sizeof *public_parts; i++) {
            snprintf(path, sizeof path, "%s/%s", kit, public_parts[i]);
            if (stat(path, &st) == 0)
                v->show[v->nshow++] = rl_xstrdup(path);
        }
    }
    for (size_t i = 0; private_files && private_files[i] && v->nhide < 16; i++) {
        char *f = absolute(private_files[i]);
        if (f)
            v->hide[v->nhide++] = f;
    }
    if (sub)
        v->show[v->nshow++] = sub;
    return RL_OK;
}

void gr_sandbox_view_fini(gr_sandbox_view *v)
{
    free(v->jail);
    for (size_t i = 0; i < v->nhide; i++)
        free(v->hide[i]);
    for (size_t i = 0; i < v->nshow; i++)
        free(v->show[i]);
    memset(v, 0, sizeof *v);
}

char **gr_sandbox_argv(const gr_sandbox_view *v, const char *cmd)
{
    size_t max = 16 + 2 * (v->nhide + v->nshow) + 12;
    char **a = rl_xcalloc(max, sizeof *a);
    size_t n = 0;
#define ARG(s) (a[n++] = rl_xstrdup(s))
    /* --kill-child: the namespace's init (and so every process in it) dies
     * when unshare does, which PR_SET_PDEATHSIG makes happen when the
     * grader dies, however it dies. */
    ARG(UNSHARE);
    /* Its own System V IPC and POSIX message queues too: nothing shared
     * with the grader or with a neighbour's sandbox, which runs as the
     * same user. */
    ARG("--ipc");
    ARG("--pid");
    ARG("--fork");
    ARG("--kill-child");
    ARG("--mount-proc");
    ARG("--");
    ARG(v->jail);
    ARG("--status-fd");
    ARG("3");
    if (mode == GR_SANDBOX_USERNS) {
        ARG("--userns");
        ARG("--nproc");
        ARG(GR_STR(GR_SANDBOX_PIDS_MAX));
    } else {
        ARG("--user");
        ARG(GR_STR(GR_SANDBOX_UID) ":" GR_STR(GR_SANDBOX_GID));
    }
    ARG("--scratch-mb");
    ARG(GR_STR(GR_SANDBOX_SCRATCH_MB));
    for (size_t i = 0; i < v->nhide; i++) {
        ARG("--hide");
        ARG(v->hide[i]);
    }
    for (size_t i = 0; i < v->nshow; i++) {
        ARG("--show");
        ARG(v->show[i]);
    }
    static const char *const scratch[] = {"/tmp", "/var/tmp", "/dev/shm"};
    for (size_t i = 0; i < sizeof scratch / sizeof *scratch; i++) {
        ARG("--scratch");
        ARG(scratch[i]);
    }
    ARG("--");
    ARG("/bin/sh");
    ARG("-c");
    ARG(cmd);
#undef ARG
    return a;
}

void gr_sandbox_argv_free(char **argv)
{
    for (size_t i = 0; argv && argv[i]; i++)
        free(argv[i]);
    free(argv);
}

/* ---- cgroups ----
 *
 * cgroup v1 (this machine: one hierarchy per controller) is used when the
 * pids, memory and cpuacct hierarchies exist; else cgroup v2 (Debian 12's
 * default: one hierarchy) when its root offers pids, memory and cpu. The
 * files differ (pids.max is the same; memory.limit_in_bytes or memory.max;
 * cpuacct.usage in ns or cpu.stat's usage_usec; memory.oom_control or
 * memory.events), so each run records which it got. */

static char cg_root[256] = "/sys/fs/cgroup";
static char cg_self[256] = "/proc/self/cgroup";


void gr_sandbox_set_cgroup_paths(const char *root, const char *self)
{
    snprintf(cg_root, sizeof cg_root, "%s", root ? root : "/sys/fs/cgroup");
    snprintf(cg_self, sizeof cg_self, "%s", self ? self : "/proc/self/cgroup");
    mode = GR_SANDBOX_NONE;
}

gr_sandbox_mode gr_sandbox_get_mode(void)
{
    return mode;
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
        snprintf(err, errlen, "the sandbox needs cgroups: neither the v1 pids, memory and cpuacct hierarchies nor "
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

/* Which cgroups the sandbox uses here; GR_SANDBOX_NONE when none (reason
 * in |err|). Enabling v2's controllers is its one side effect. */
static gr_sandbox_mode cgroup_mode(char *err, size_t errlen)
{
    if (have_v1())
        return GR_SANDBOX_CGROUP_V1;
    return v2_ready(err, errlen) == RL_OK ? GR_SANDBOX_CGROUP_V2 : GR_SANDBOX_NONE;
}

void gr_sandbox_sweep_stale(void)
{
    if (mode == GR_SANDBOX_NONE) {
        char err[256];
        mode = cgroup_mode(err, sizeof err);
    }
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

/* ---- entering ---- */

/* Brings up loopback in the grader's new network namespace. */
static int loopback_up(void)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return RL_ESYS;
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
    int rc = ioctl(fd, SIOCGIFFLAGS, &ifr);
    if (rc == 0) {
        ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
        rc = ioctl(fd, SIOCSIFFLAGS, &ifr);
    }
    close(fd);
    return rc == 0 ? RL_OK : RL_ESYS;
}

/* Reads the jail's status line from |fd| until |until_ns|. Returns 0 for
 * "ok", else RL_ESYS with the reason in |err|. */
static int read_status(int fd, int64_t until_ns, char *err, size_t errlen)
{
    char line[320] = {0};
    size_t n = 0;
    while (n < sizeof line - 1 && !memchr(line, '\n', n)) {
        int64_t left = (until_ns - rl_now_ns()) / RL_NS_PER_MS;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (left <= 0)
            break;
        int pr = poll(&p, 1, (int)left);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0)
            break;
        ssize_t r = read(fd, line + n, sizeof line - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    line[n] = '\0';
    line[strcspn(line, "\n")] = '\0';
    if (strcmp(line, "ok") == 0)
        return RL_OK;
    snprintf(err, errlen, "%s", line[0] ? line : "the jail did not report (util-linux unshare failed to start it)");
    return RL_ESYS;
}

/* Runs `true` through unshare and the jail with the real view: whatever
 * stops the sandbox (no namespaces, a kernel without mount_setattr, a
 * submission folder nobody cannot read) is found before any grading. */
static int probe(const gr_sandbox_view *v, char *err, size_t errlen)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return RL_ESYS;
    char **argv = gr_sandbox_argv(v, "exec true");
    pid_t pid = fork();
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDWR);
        if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(devnull, 1) < 0 || dup2(devnull, 2) < 0 ||
            dup2(fds[1], 3) < 0)
            _exit(127);
        execv(argv[0], argv);
        _exit(127);
    }
    gr_sandbox_argv_free(argv);
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return RL_ESYS;
    }
    char why[512];
    int rc = read_status(fds[0], rl_now_ns() + 10 * RL_NS_PER_SEC, why, sizeof why);
    close(fds[0]);
    int64_t until = rl_now_ns() + 5 * RL_NS_PER_SEC;
    int st;
    while (waitpid(pid, &st, WNOHANG) == 0) {
        if (rl_now_ns() > until) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            break;
        }
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (rc != RL_OK)
        snprintf(err, errlen, "the sandbox cannot start a program: %s", why);
    return rc;
}

/* Writes |text| to /proc/self/|name| (one write: fclose flushes it). */
static int write_self(const char *name, const char *text)
{
    return write_file("/proc/self", name, text);
}

/* Moves the grader into a network namespace with loopback alone. */
static int enter_network(int extra_flags, char *err, size_t errlen)
{
    uid_t uid = getuid();
    gid_t gid = getgid();
    if (unshare(CLONE_NEWNET | extra_flags) != 0) {
        if (extra_flags & CLONE_NEWUSER)
            snprintf(err, errlen,
                     "the sandbox needs root or an unprivileged user namespace, which the kernel refused: %s",
                     strerror(errno));
        else
            snprintf(err, errlen, "the kernel refused the sandbox a network namespace: %s", strerror(errno));
        return RL_ESYS;
    }
    if (extra_flags & CLONE_NEWUSER) {
        /* Root in the new namespace is the grader's own user outside,
         * the only id an unprivileged process may map. */
        char map[64];
        int rc = write_self("setgroups", "deny");
        snprintf(map, sizeof map, "0 %u 1", (unsigned)uid);
        rc = rc == RL_OK ? write_self("uid_map", map) : rc;
        snprintf(map, sizeof map, "0 %u 1", (unsigned)gid);
        rc = rc == RL_OK ? write_self("gid_map", map) : rc;
        if (rc != RL_OK) {
            snprintf(err, errlen, "cannot map the grader's user in its user namespace: %s", strerror(errno));
            return RL_ESYS;
        }
    }
    if (loopback_up() != RL_OK) {
        snprintf(err, errlen, "cannot bring up loopback in the sandbox's network namespace: %s", strerror(errno));
        return RL_ESYS;
    }
    return RL_OK;
}

/* Makes and removes one cgroup of each kind the runs will need: a root
 * whose cgroup folders exist but cannot be written (a container's) is
 * found before grading, not at its first run. */
static int try_cgroups(char *err, size_t errlen)
{
    gr_sandbox_run r;
    int rc = gr_sandbox_prepare(&r, 0, err, errlen);
    gr_sandbox_teardown(&r);
    return rc;
}

int gr_sandbox_enter(const gr_sandbox_view *v, char *err, size_t errlen)
{
    if (access(UNSHARE, X_OK) != 0) {
        snprintf(err, errlen, "the sandbox needs util-linux's %s: %s", UNSHARE, strerror(errno));
        return RL_ESYS;
    }
    if (access(v->jail, X_OK) != 0) {
        snprintf(err, errlen, "the sandbox needs %s: %s (run make)", v->jail, strerror(errno));
        return RL_ESYS;
    }
    if (geteuid() != 0) {
        /* Not root: a user namespace of the grader's own, where it is
         * root over its network, mounts and PID namespaces but no cgroup
         * can be made. The probe runs inside it (it needs it). */
        mode = GR_SANDBOX_USERNS;
        if (enter_network(CLONE_NEWUSER, err, errlen) != RL_OK || probe(v, err, errlen) != RL_OK)
            return RL_ESYS;
        return RL_OK;
    }
    mode = cgroup_mode(err, errlen);
    if (mode == GR_SANDBOX_NONE)
        return RL_ESYS;
    gr_sandbox_sweep_stale();
    if (try_cgroups(err, errlen) != RL_OK || probe(v, err, errlen) != RL_OK)
        return RL_ESYS;
    return enter_network(0, err, errlen);
}

const char *gr_sandbox_mode_note(void)
{
    if (mode != GR_SANDBOX_USERNS)
        return NULL;
    return "sandboxed without root (a user namespace of the grader's own user): no cgroups, so the memory limit is "
           "RLIMIT_DATA (shared memory not counted) and the tasks limit RLIMIT_NPROC; grade as root for both";
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

int gr_sandbox_prepare(gr_sandbox_run *r, uint64_t mem_limit_bytes, char *err, size_t errlen)
{
    static int serial;
    int id = ++serial;
    memset(r, 0, sizeof *r);
    r->status_r = r->status_w = -1;
    const char *what = "cgroup";
    if (mode == GR_SANDBOX_NONE && (mode = cgroup_mode(err, errlen)) == GR_SANDBOX_NONE)
        return RL_ESYS;
    if (mode == GR_SANDBOX_CGROUP_V1 && prepare_v1(r, id, mem_limit_bytes, &what) != RL_OK)
        goto fail;
    if (mode == GR_SANDBOX_CGROUP_V2 && prepare_v2(r, id, mem_limit_bytes, &what) != RL_OK)
        goto fail;
    what = "status pipe";
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        goto fail;
    r->status_r = fds[0];
    r->status_w = fds[1];
    return RL_OK;
fail:
    snprintf(err, errlen, "cannot set up the sandbox (%s cgroup): %s", what, strerror(errno));
    return RL_ESYS;
}

void gr_sandbox_spawned(gr_sandbox_run *r)
{
    if (r->status_w >= 0)
        close(r->status_w);
    r->status_w = -1;
}

int gr_sandbox_wait_started(gr_sandbox_run *r, int64_t timeout_ms, char *err, size_t errlen)
{
    char why[512];
    if (read_status(r->status_r, rl_now_ns() + timeout_ms * RL_NS_PER_MS, why, sizeof why) == RL_OK)
        return RL_OK;
    snprintf(err, errlen, "the sandbox failed to start the submission: %s", why);
    return RL_ESYS;
}

void gr_sandbox_measure(const gr_sandbox_run *r, pid_t pid)
{
    if (r->join[0][0]) {
        rl_proc_sample_by_cgroup(pid, r->join[0], pid, r->cpu_usage);
        return;
    }
    /* No cgroup: the PID namespace unshare made for its child holds the
     * submission, whatever sessions or groups it makes (it cannot make a
     * namespace of its own: the jail's filter refuses). */
    char path[64];
    struct stat st;
    snprintf(path, sizeof path, "/proc/%ld/ns/pid_for_children", (long)pid);
    if (stat(path, &st) == 0)
        rl_proc_sample_by_pidns(pid, st.st_ino, pid);
    else
        RL_WARN("cannot find the sandbox's PID namespace (%s): measuring the process group alone", strerror(errno));
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

static void remove_cgroup(char *dir)
{
    if (dir[0] && rmdir(dir) != 0)
        RL_DEBUG("cannot remove %s: %s", dir, strerror(errno));
    dir[0] = '\0';
}

/* ---- the command's process ---- */

/* The parent of |pid| (/proc/PID/stat's 4th field), 0 when it is gone. */
static pid_t parent_pid(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    /* The name in parentheses may hold anything, spaces and ')' included. */
    const char *rp = strrchr(buf, ')');
    char state;
    long ppid;
    if (!rp || sscanf(rp + 1, " %c %ld", &state, &ppid) != 2)
        return 0;
    return (pid_t)ppid;
}

/* The pid of |pid| in its own (innermost) PID namespace: the last number
 * of /proc/PID/status's NSpid line; 0 when it is gone. */
static long own_ns_pid(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    long last = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "NSpid:", 6) != 0)
            continue;
        char *p = line + 6, *end;
        for (;;) {
            long v = strtol(p, &end, 10);
            if (end == p)
                break;
            last = v;
            p = end;
        }
        break;
    }
    fclose(f);
    return last;
}

/* The child of |parent| that is pid |ns_pid| in its namespace, or 0. */
static pid_t child_with_ns_pid(pid_t parent, long ns_pid)
{
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    pid_t found = 0;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0)
            continue;
        if (parent_pid((pid_t)pid) == parent && own_ns_pid((pid_t)pid) == ns_pid)
            found = (pid_t)pid;
    }
    closedir(d);
    return found;
}

int gr_sandbox_signal_command(pid_t launcher, int sig)
{
    /* unshare --fork made the jail pid 1 of the new namespace, and the
     * jail's one fork, the command, is pid 2 there (the jail never forks
     * again; orphans it adopts have other numbers). */
    pid_t jail = child_with_ns_pid(launcher, 1);
    pid_t cmd = jail ? child_with_ns_pid(jail, 2) : 0;
    if (!cmd)
        return RL_ENOTFOUND;
    int fd = (int)syscall(SYS_pidfd_open, cmd, 0);
    if (fd < 0)
        return errno == ESRCH ? RL_ENOTFOUND : RL_ESYS;
    int rc = RL_OK;
    /* Checked after the pidfd is open: from here on it names one process,
     * which these checks show is still the command. */
    if (parent_pid(cmd) != jail || own_ns_pid(cmd) != 2 || parent_pid(jail) != launcher)
        rc = RL_ENOTFOUND;
    else if (syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0) != 0)
        rc = errno == ESRCH ? RL_ENOTFOUND : RL_ESYS;
    close(fd);
    return rc;
}

void gr_sandbox_teardown(gr_sandbox_run *r)
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
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    remove_cgroup(r->cg_pids);
    remove_cgroup(r->cg_mem);
    remove_cgroup(r->cg_cpu);
    if (r->status_r >= 0)
        close(r->status_r);
    if (r->status_w >= 0)
        close(r->status_w);
    r->status_r = r->status_w = -1;
}
