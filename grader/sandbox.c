/* sandbox: the grader's side of the submission's sandbox; see sandbox.h
 * and docs/sandbox.md for what each piece defends against. The view, the
 * jail's argv, entering the namespaces, a run's life and finding its
 * command are here; the cgroups are sandbox_cgroup.c's. */
#include "sandbox.h"
#include "sandbox_cgroup.h"

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
#include <linux/mount.h>
#include <time.h>
#include <unistd.h>

#define UNSHARE "/usr/bin/unshare"

/* How this grader sandboxes, decided once by gr_sandbox_enter (or, for a
 * unit test that prepares runs without entering, by the first prepare). */
static gr_sandbox_mode mode = GR_SANDBOX_NONE;
#define GR_STR_(x) #x
#define GR_STR(x)  GR_STR_(x)

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

int gr_sandbox_view_init(gr_sandbox_view *v, const char *bin_dir, int submission_fd, const char *submission_real,
                         const char *const *private_files, char *err, size_t errlen)
{
    memset(v, 0, sizeof *v);
    v->sub_fd = -1;
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
    char *sub = submission_fd >= 0 && submission_real ? rl_xstrdup(submission_real) : NULL;
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
    if (sub) {
        v->sub_fd = submission_fd;
        v->tree = sub;
    }
    return RL_OK;
}

void gr_sandbox_view_fini(gr_sandbox_view *v)
{
    free(v->jail);
    for (size_t i = 0; i < v->nhide; i++)
        free(v->hide[i]);
    for (size_t i = 0; i < v->nshow; i++)
        free(v->show[i]);
    free(v->tree);
    if (v->own_fd && v->sub_fd >= 0)
        close(v->sub_fd);
    memset(v, 0, sizeof *v);
    v->sub_fd = -1;
}

int gr_sandbox_tree(const gr_sandbox_view *v)
{
    errno = 0;
    if (!v || v->sub_fd < 0)
        return -1;
    /* Recursive: a folder with mounts below it is shown whole, as a bind
     * of its path would have shown it. */
    return (int)syscall(SYS_open_tree, v->sub_fd, "",
                        OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
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
    if (v->tree) {
        ARG("--tree");
        ARG(v->tree);
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

/* ---- the mode ---- */

void gr_sandbox_set_cgroup_paths(const char *root, const char *self)
{
    gr_cgroup_set_paths(root, self);
    mode = GR_SANDBOX_NONE;
}

void gr_sandbox_sweep_stale(void)
{
    if (mode == GR_SANDBOX_NONE) {
        char err[256];
        mode = gr_cgroup_mode(err, sizeof err);
    }
    gr_cgroup_sweep_stale(mode);
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
    int tree = gr_sandbox_tree(v);
    if (tree < 0 && errno) {
        snprintf(err, errlen, "the sandbox cannot show the submission's folder (open_tree): %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return RL_ESYS;
    }
    char **argv = gr_sandbox_argv(v, "exec true");
    pid_t pid = fork();
    if (pid == 0) {
        int devnull = open("/dev/null", O_RDWR);
        if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(devnull, 1) < 0 || dup2(devnull, 2) < 0 || dup2(fds[1], 3) < 0)
            _exit(RL_PROC_EXEC_FAILED);
        if (tree >= 0 && dup2(tree, 4) < 0)
            _exit(RL_PROC_EXEC_FAILED);
        execv(argv[0], argv);
        _exit(RL_PROC_EXEC_FAILED);
    }
    gr_sandbox_argv_free(argv);
    close(fds[1]);
    if (tree >= 0)
        close(tree);
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
        struct timespec ts = {0, 5 * RL_NS_PER_MS};
        nanosleep(&ts, NULL);
    }
    if (rc != RL_OK)
        snprintf(err, errlen, "the sandbox cannot start a program: %s", why);
    return rc;
}

/* Writes |text| to /proc/self/|name| in one write(2), as uid_map and
 * gid_map require. */
static int write_self(const char *name, const char *text)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/%s", name);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return RL_ESYS;
    size_t len = strlen(text);
    bool ok = write(fd, text, len) == (ssize_t)len;
    ok = close(fd) == 0 && ok;
    return ok ? RL_OK : RL_ESYS;
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

/* After the grader entered a mount namespace of its own, v->sub_fd (opened
 * before, in the old one) cannot be cloned: open_tree clones only mounts of
 * the caller's namespace. The same folder is opened again there, by the
 * real path it had when it was opened, and kept only if it is the same
 * folder (device and inode): a folder swapped in between is refused. */
static int hold_again(gr_sandbox_view *v, char *err, size_t errlen)
{
    if (v->sub_fd < 0)
        return RL_OK;
    struct stat was, now;
    int fd = open(v->tree, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || fstat(v->sub_fd, &was) != 0 || fstat(fd, &now) != 0 || was.st_dev != now.st_dev ||
        was.st_ino != now.st_ino) {
        if (fd >= 0)
            close(fd);
        snprintf(err, errlen,
                 "the submission's folder %s changed since it was checked (it is not the folder that was "
                 "opened): not graded",
                 v->tree);
        return RL_EINVAL;
    }
    v->sub_fd = fd;
    v->own_fd = true;
    return RL_OK;
}

int gr_sandbox_enter(gr_sandbox_view *v, char *err, size_t errlen)
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
        /* A mount namespace of its own too: open_tree's clone of the
         * submission's folder needs CAP_SYS_ADMIN over the grader's mount
         * namespace, which only one its user namespace owns gives. */
        if (enter_network(CLONE_NEWUSER | CLONE_NEWNS, err, errlen) != RL_OK)
            return RL_ESYS;
        int rc = hold_again(v, err, errlen);
        if (rc != RL_OK)
            return rc;
        if (probe(v, err, errlen) != RL_OK)
            return RL_ESYS;
        return RL_OK;
    }
    mode = gr_cgroup_mode(err, errlen);
    if (mode == GR_SANDBOX_NONE)
        return RL_ESYS;
    gr_sandbox_sweep_stale();
    if (try_cgroups(err, errlen) != RL_OK || probe(v, err, errlen) != RL_OK)
        return RL_ESYS;
    return enter_network(0, err, errlen);
}

int gr_sandbox_enter_lane_network(char *err, size_t errlen)
{
    /* Root, or root in the grader's own user namespace: either way
     * CAP_SYS_ADMIN over the grader's network namespace's owner. */
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

int gr_sandbox_prepare(gr_sandbox_run *r, uint64_t mem_limit_bytes, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->status_r = r->status_w = r->tree_fd = -1;
    const char *what = "cgroup";
    if (mode == GR_SANDBOX_NONE && (mode = gr_cgroup_mode(err, errlen)) == GR_SANDBOX_NONE)
        return RL_ESYS;
    if (gr_cgroup_prepare(r, mode, mem_limit_bytes, &what) != RL_OK)
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
    if (r->tree_fd >= 0)
        close(r->tree_fd);
    r->status_w = r->tree_fd = -1;
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
    gr_cgroup_release(r);
    if (r->status_r >= 0)
        close(r->status_r);
    if (r->status_w >= 0)
        close(r->status_w);
    if (r->tree_fd >= 0)
        close(r->tree_fd);
    r->status_r = r->status_w = r->tree_fd = -1;
}
