/* jail: the last step into the grader's sandbox (bin/jail, docs/sandbox.md).
 * The grader runs it as root inside a fresh PID and mount namespace (made by
 * util-linux unshare); it builds the submission's view of the filesystem --
 * everything read-only, the kit's private parts hidden, the submission's own
 * folder shown, a small tmpfs for scratch -- then becomes an unprivileged
 * user with no way back and runs the submission as its child (see init). It
 * reports one line, "ok"
 * or why it failed, on a status descriptor that the submission never holds, so a
 * sandbox failure can never pass for the submission's own. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_PATHS 32
/* Exit status when the view could not be built; the status descriptor says
 * why (a submission could exit with any status, so the grader trusts only
 * the descriptor). */
#define JAIL_FAILED 125

typedef struct jail_opts {
    const char *hide[MAX_PATHS]; /* made empty: tmpfs over a folder, /dev/null over a file */
    size_t nhide;
    const char *show[MAX_PATHS]; /* visible (read-only) even inside a hidden or scratch path */
    size_t nshow;
    const char *scratch[MAX_PATHS]; /* fresh writable tmpfs, |scratch_mb| each */
    size_t nscratch;
    long scratch_mb;
    uid_t uid;
    gid_t gid;
    int status_fd;
    char **argv; /* the command, after "--" */
} jail_opts;

static int status_fd = -1;

/* Reports the failure on the status descriptor (and stderr) and exits. */
__attribute__((format(printf, 1, 2), noreturn)) static void fail(const char *fmt, ...)
{
    char msg[512];
    int e = errno;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    if ((size_t)n >= sizeof msg)
        n = sizeof msg - 1;
    if (e)
        n += snprintf(msg + n, sizeof msg - (size_t)n, ": %s", strerror(e));
    if ((size_t)n >= sizeof msg - 1)
        n = sizeof msg - 2;
    msg[n++] = '\n';
    msg[n] = '\0';
    if (status_fd >= 0)
        (void)!write(status_fd, msg, (size_t)n);
    fprintf(stderr, "jail: %s", msg);
    _exit(JAIL_FAILED);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: jail --status-fd N --user UID:GID [--hide PATH]... [--show PATH]...\n"
               "            [--scratch PATH]... [--scratch-mb N] -- COMMAND [ARG]...\n"
               "Run as root in a new mount (and PID) namespace, by the grader: builds a read-only view\n"
               "with PATHs hidden, shown and scratch, drops to UID:GID with no new privileges, runs COMMAND.\n");
}

static int parse(int argc, char **argv, jail_opts *o)
{
    memset(o, 0, sizeof *o);
    o->status_fd = -1;
    o->scratch_mb = 64;
    bool have_user = false;
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (i + 1 >= argc)
            return -1;
        const char *v = argv[++i];
        char *end;
        if (strcmp(a, "--hide") == 0 && o->nhide < MAX_PATHS)
            o->hide[o->nhide++] = v;
        else if (strcmp(a, "--show") == 0 && o->nshow < MAX_PATHS)
            o->show[o->nshow++] = v;
        else if (strcmp(a, "--scratch") == 0 && o->nscratch < MAX_PATHS)
            o->scratch[o->nscratch++] = v;
        else if (strcmp(a, "--scratch-mb") == 0) {
            o->scratch_mb = strtol(v, &end, 10);
            if (*end || o->scratch_mb < 1 || o->scratch_mb > 65536)
                return -1;
        } else if (strcmp(a, "--status-fd") == 0) {
            o->status_fd = (int)strtol(v, &end, 10);
            if (*end || o->status_fd < 3)
                return -1;
        } else if (strcmp(a, "--user") == 0) {
            unsigned long u = strtoul(v, &end, 10), g;
            if (*end != ':')
                return -1;
            g = strtoul(end + 1, &end, 10);
            if (*end || u == 0 || g == 0)
                return -1; /* never root: the point is to leave it */
            o->uid = (uid_t)u;
            o->gid = (gid_t)g;
            have_user = true;
        } else
            return -1;
    }
    if (i >= argc || !have_user || o->status_fd < 0)
        return -1;
    o->argv = argv + i;
    return 0;
}

/* mkdir -p for the parents of |path| (inside a tmpfs we just mounted). */
static void make_parents(const char *path)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; (p = strchr(p, '/')); p++) {
        *p = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            fail("cannot make %s for a shown path", buf);
        *p = '/';
    }
}

static void hide(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return; /* nothing there to hide */
    if (S_ISDIR(st.st_mode)) {
        if (mount("relaylab-hidden", path, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=1m,mode=0755") != 0)
            fail("cannot hide %s", path);
    } else if (mount("/dev/null", path, NULL, MS_BIND, NULL) != 0) {
        fail("cannot hide %s", path);
    }
}

static void scratch(const char *path, long mb)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return;
    char opts[64];
    snprintf(opts, sizeof opts, "size=%ldm,mode=1777", mb);
    if (mount("relaylab-scratch", path, "tmpfs", MS_NOSUID | MS_NODEV, opts) != 0)
        fail("cannot mount a scratch tmpfs on %s", path);
}

/* Puts |fd| (opened before the hiding) back at |path| if the path no longer
 * leads to it. */
static void show(const char *path, int fd)
{
    struct stat was, now;
    if (fstat(fd, &was) != 0)
        fail("cannot stat %s", path);
    if (stat(path, &now) == 0 && now.st_dev == was.st_dev && now.st_ino == was.st_ino)
        return;
    make_parents(path);
    if (S_ISDIR(was.st_mode)) {
        if (mkdir(path, 0755) != 0 && errno != EEXIST)
            fail("cannot make %s to show it", path);
    } else {
        int t = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (t < 0)
            fail("cannot make %s to show it", path);
        close(t);
    }
    char src[64];
    snprintf(src, sizeof src, "/proc/self/fd/%d", fd);
    if (mount(src, path, NULL, MS_BIND | MS_REC, NULL) != 0)
        fail("cannot show %s", path);
}

static void read_only_except_scratch(const jail_opts *o)
{
    struct mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID};
    if (mount_setattr(AT_FDCWD, "/", AT_RECURSIVE, &ro, sizeof ro) != 0)
        fail("cannot make the filesystem read-only (mount_setattr needs Linux 5.12)");
    struct mount_attr rw = {.attr_clr = MOUNT_ATTR_RDONLY};
    for (size_t i = 0; i < o->nscratch; i++) {
        struct stat st;
        if (stat(o->scratch[i], &st) == 0 && mount_setattr(AT_FDCWD, o->scratch[i], 0, &rw, sizeof rw) != 0)
            fail("cannot make %s writable", o->scratch[i]);
    }
}

static void drop_privileges(const jail_opts *o)
{
    if (setgroups(0, NULL) != 0 || setresgid(o->gid, o->gid, o->gid) != 0 || setresuid(o->uid, o->uid, o->uid) != 0)
        fail("cannot become %u:%u", (unsigned)o->uid, (unsigned)o->gid);
    /* setuid away from root cleared every capability; make sure it did,
     * and that no setuid program can give one back. */
    if (setuid(0) == 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        errno = 0;
        fail("could not leave root for good");
    }
}

/* The jail stays as the namespace's init, with the command as its child.
 * The kernel shields a PID namespace's init from every signal it has no
 * handler for, so a command run as init would ignore the grader's SIGTERM
 * and abort() would end in SIGSEGV. Signals to the process group reach the
 * command directly; the jail keeps them blocked (delivering none to itself
 * and forwarding none, so none arrives twice), reaps what is re-parented to
 * it, and exits as the command did: its status, or 128 + the signal that
 * killed it, which the grader reads as that signal. When it exits, the
 * kernel kills whatever is left in the namespace. */
static int init(char **argv)
{
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    pid_t child = fork();
    if (child < 0)
        fail("cannot fork the command");
    if (child == 0) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        execvp(argv[0], argv);
        fprintf(stderr, "jail: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    for (;;) {
        int st;
        pid_t pid = waitpid(-1, &st, 0);
        if (pid < 0 && errno == EINTR)
            continue;
        if (pid < 0)
            return 127;
        if (pid == child)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    }
}

int main(int argc, char **argv)
{
    jail_opts o;
    if (argc == 2 && strcmp(argv[1], "--help") == 0) {
        usage(stdout);
        return 0;
    }
    if (parse(argc, argv, &o) != 0) {
        usage(stderr);
        return 2;
    }
    status_fd = o.status_fd;
    if (fcntl(status_fd, F_SETFD, FD_CLOEXEC) != 0)
        fail("no status descriptor %d", status_fd);
    if (getuid() != 0)
        fail("must start as root (the grader runs it)");

    /* Nothing we mount may propagate back to the grader's namespace. */
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        fail("cannot make the mounts private (not in a new mount namespace?)");
    int show_fd[MAX_PATHS];
    for (size_t i = 0; i < o.nshow; i++)
        if ((show_fd[i] = open(o.show[i], O_PATH | O_CLOEXEC)) < 0)
            fail("cannot open %s to show it", o.show[i]);
    for (size_t i = 0; i < o.nhide; i++)
        hide(o.hide[i]);
    for (size_t i = 0; i < o.nscratch; i++)
        scratch(o.scratch[i], o.scratch_mb);
    for (size_t i = 0; i < o.nshow; i++) {
        show(o.show[i], show_fd[i]);
        close(show_fd[i]);
    }
    read_only_except_scratch(&o);

    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd))
        snprintf(cwd, sizeof cwd, "/");
    drop_privileges(&o);
    /* Whatever it is given must be readable as the unprivileged user: say
     * so now, as the sandbox's failure, not later as the submission's. */
    for (size_t i = 0; i < o.nshow; i++) {
        struct stat st;
        int mode = stat(o.show[i], &st) == 0 && S_ISDIR(st.st_mode) ? R_OK | X_OK : R_OK;
        if (access(o.show[i], mode) != 0)
            fail("the submission's %s is not readable by uid %u in the sandbox: make it and the folders above it "
                 "readable by others (chmod o+rX)",
                 o.show[i], (unsigned)o.uid);
    }
    if (chdir(cwd) != 0 && chdir("/tmp") != 0)
        fail("cannot enter a working folder");

    errno = 0;
    if (write(status_fd, "ok\n", 3) != 3)
        fail("cannot report to the grader");
    close(status_fd);
    return init(o.argv);
}
