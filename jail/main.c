/* jail: the last step into the grader's sandbox (bin/jail, docs/sandbox.md).
 * The grader runs it as root inside a fresh PID and mount namespace (made by
 * util-linux unshare); it builds the submission's view of the filesystem --
 * everything read-only, only the system's folders and what it is shown
 * visible, the kit's private parts hidden, a small tmpfs for scratch -- then
 * confines itself (confine.h: an unprivileged user, or, under an
 * unprivileged grader, a user namespace of its own without capabilities;
 * then a system call filter) and runs the submission as its child (see
 * init). It reports one line, "ok" or why it failed, on a status descriptor
 * that the submission never holds, so a sandbox failure can never pass for
 * the submission's own. */
#include "confine.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/magic.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/mount.h>
#include <unistd.h>

#define MAX_PATHS 32
/* The jail's own exit statuses; otherwise it exits as its command did (its
 * status, or JAIL_EXIT_SIGNAL + the signal that killed it). A command can
 * exit with any status, so the grader trusts only the status descriptor
 * for why the sandbox failed; these say it to a person running it. */
enum jail_exit {
    JAIL_EXIT_HELP = 0,      /* --help */
    JAIL_EXIT_USAGE = 2,     /* a bad command line (the usage printed) */
    JAIL_EXIT_FAILED = 125,  /* the view or the confinement could not be made: the descriptor says why */
    JAIL_EXIT_NOT_RUN = 127, /* the command could not be run (exec failed), or its wait failed */
    JAIL_EXIT_SIGNAL = 128,  /* plus the signal that killed the command, as a shell reports it */
};
/* The descriptor the grader hands the submission's folder on (--tree). */
#define TREE_FD 4

typedef struct jail_opts {
    const char *hide[MAX_PATHS]; /* made empty: tmpfs over a folder, /dev/null over a file */
    size_t nhide;
    const char *show[MAX_PATHS]; /* visible (read-only) even inside a hidden or scratch path */
    size_t nshow;
    const char *tree;               /* --tree PATH: the detached mount tree on fd 4 (the grader's
                                     * clone of the submission's folder, held since it was
                                     * checked) is shown at PATH */
    const char *scratch[MAX_PATHS]; /* fresh writable tmpfs, |scratch_mb| each */
    size_t nscratch;
    long scratch_mb;
    uid_t uid; /* --user: become this user (the grader is root) */
    gid_t gid;
    bool userns; /* --userns: the grader is not root; see confine.h */
    long nproc;  /* --nproc: tasks of the submission's user namespace */
    int status_fd;
    char **argv; /* the command, after "--" */
} jail_opts;

static int status_fd = -1;

/* Reports the failure on the status descriptor (and stderr) and exits. */
void jail_fail(const char *fmt, ...)
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
    _exit(JAIL_EXIT_FAILED);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: jail --status-fd N (--user UID:GID | --userns [--nproc N]) [--hide PATH]...\n"
               "            [--show PATH]... [--tree PATH] [--scratch PATH]... [--scratch-mb N] -- COMMAND [ARG]...\n"
               "Run as root in a new mount (and PID) namespace, by the grader: builds a read-only view\n"
               "of the system's folders with PATHs hidden, shown and scratch, confines itself (UID:GID,\n"
               "or a user namespace without capabilities) and runs COMMAND. --tree: the mount tree\n"
               "open on fd 4 (open_tree's clone of the submission's folder) is shown at PATH.\n"
               "Exit status: COMMAND's own (128 + the signal that killed it); 125 when the sandbox could\n"
               "not be made (the status descriptor says why), 127 when COMMAND could not be run, 2 for a\n"
               "bad command line.\n");
}

static int parse(int argc, char **argv, jail_opts *o)
{
    memset(o, 0, sizeof *o);
    o->status_fd = -1;
    o->scratch_mb = 64;
    o->nproc = 512;
    bool have_user = false;
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (strcmp(a, "--userns") == 0) {
            o->userns = true;
            continue;
        }
        if (i + 1 >= argc)
            return -1;
        const char *v = argv[++i];
        char *end;
        if (strcmp(a, "--hide") == 0 && o->nhide < MAX_PATHS)
            o->hide[o->nhide++] = v;
        else if (strcmp(a, "--show") == 0 && o->nshow < MAX_PATHS)
            o->show[o->nshow++] = v;
        else if (strcmp(a, "--tree") == 0 && v[0] == '/')
            o->tree = v;
        else if (strcmp(a, "--scratch") == 0 && o->nscratch < MAX_PATHS)
            o->scratch[o->nscratch++] = v;
        else if (strcmp(a, "--scratch-mb") == 0) {
            o->scratch_mb = strtol(v, &end, 10);
            if (*end || o->scratch_mb < 1 || o->scratch_mb > 65536)
                return -1;
        } else if (strcmp(a, "--nproc") == 0) {
            o->nproc = strtol(v, &end, 10);
            if (*end || o->nproc < 1 || o->nproc > 1000000)
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
    /* Exactly one way to stop being root. */
    if (i >= argc || have_user == o->userns || o->status_fd < 0)
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
            jail_fail("cannot make %s for a shown path", buf);
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
            jail_fail("cannot hide %s", path);
    } else if (mount("/dev/null", path, NULL, MS_BIND, NULL) != 0) {
        jail_fail("cannot hide %s", path);
    }
}

/* The top-level folders a program needs: the system's own. Everything
 * else at / (home folders, /root, /srv, /mnt, /media, /var, /run with its
 * daemons' sockets, a kit like /work) is hidden whole, so files the grader's
 * user or anyone else left readable -- another student's submission among
 * them -- are not in the view, and the sandbox does not depend on the
 * permissions of folders it never heard of. Symbolic links at / stay: each
 * leads into a folder that is shown or hidden on its own. */
static const char *const system_dirs[] = {"bin", "dev",  "etc",  "lib", "lib32", "lib64", "libx32",
                                          "opt", "proc", "sbin", "sys", "tmp",   "usr"};

static void hide_all_but_the_system(void)
{
    DIR *d = opendir("/");
    if (!d)
        jail_fail("cannot list /");
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        bool keep = false;
        for (size_t i = 0; i < sizeof system_dirs / sizeof *system_dirs && !keep; i++)
            keep = strcmp(e->d_name, system_dirs[i]) == 0;
        char path[300];
        snprintf(path, sizeof path, "/%s", e->d_name);
        struct stat st;
        if (keep || lstat(path, &st) != 0 || S_ISLNK(st.st_mode))
            continue;
        hide(path);
    }
    closedir(d);
}

static void scratch(const char *path, long mb)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        /* Under a hidden folder (/var/tmp under /var) it is made in the
         * hiding tmpfs; on the real filesystem, never. */
        char parent[4096];
        snprintf(parent, sizeof parent, "%s", path);
        char *slash = strrchr(parent, '/');
        struct statfs fs;
        if (!slash || slash == parent)
            return;
        *slash = '\0';
        if (statfs(parent, &fs) != 0 || fs.f_type != TMPFS_MAGIC || mkdir(path, 0755) != 0)
            return;
    } else if (!S_ISDIR(st.st_mode)) {
        return;
    }
    char opts[64];
    snprintf(opts, sizeof opts, "size=%ldm,mode=1777", mb);
    if (mount("relaylab-scratch", path, "tmpfs", MS_NOSUID | MS_NODEV, opts) != 0)
        jail_fail("cannot mount a scratch tmpfs on %s", path);
}

/* Puts |fd| (opened before the hiding) back at |path| if the path no longer
 * leads to it. */
static void show(const char *path, int fd)
{
    struct stat was, now;
    if (fstat(fd, &was) != 0)
        jail_fail("cannot stat %s", path);
    if (stat(path, &now) == 0 && now.st_dev == was.st_dev && now.st_ino == was.st_ino)
        return;
    make_parents(path);
    if (S_ISDIR(was.st_mode)) {
        if (mkdir(path, 0755) != 0 && errno != EEXIST)
            jail_fail("cannot make %s to show it", path);
    } else {
        int t = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (t < 0)
            jail_fail("cannot make %s to show it", path);
        close(t);
    }
    char src[64];
    snprintf(src, sizeof src, "/proc/self/fd/%d", fd);
    if (mount(src, path, NULL, MS_BIND | MS_REC, NULL) != 0)
        jail_fail("cannot show %s", path);
}

/* Attaches the detached tree on |fd| (the submission's folder as the
 * grader checked it, never looked up by path again) at |path|. */
static void show_tree(const char *path, int fd)
{
    make_parents(path);
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
        jail_fail("cannot make %s to show it", path);
    if (syscall(SYS_move_mount, fd, "", AT_FDCWD, path, MOVE_MOUNT_F_EMPTY_PATH) != 0)
        jail_fail("cannot show the submission's folder at %s", path);
}

static void read_only_except_scratch(const jail_opts *o)
{
    struct mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID};
    if (mount_setattr(AT_FDCWD, "/", AT_RECURSIVE, &ro, sizeof ro) != 0)
        jail_fail("cannot make the filesystem read-only (mount_setattr needs Linux 5.12)");
    struct mount_attr rw = {.attr_clr = MOUNT_ATTR_RDONLY};
    for (size_t i = 0; i < o->nscratch; i++) {
        struct stat st;
        if (stat(o->scratch[i], &st) == 0 && mount_setattr(AT_FDCWD, o->scratch[i], 0, &rw, sizeof rw) != 0)
            jail_fail("cannot make %s writable", o->scratch[i]);
    }
}

/* The jail stays as the namespace's init, with the command as its child.
 * The kernel shields a PID namespace's init from every signal it has no
 * handler for, so a command run as init would ignore the grader's SIGTERM
 * and abort() would end in SIGSEGV. Signals to the process group reach the
 * command directly; the jail keeps them blocked (delivering none to itself
 * and forwarding none, so none arrives twice), reaps what is re-parented to
 * it, and exits as the command did: its status, or JAIL_EXIT_SIGNAL + the signal that
 * killed it, which the grader reads as that signal. When it exits, the
 * kernel kills whatever is left in the namespace. */
static int reap_until(pid_t child)
{
    for (;;) {
        int st;
        pid_t pid = waitpid(-1, &st, 0);
        if (pid < 0 && errno == EINTR)
            continue;
        if (pid < 0)
            return JAIL_EXIT_NOT_RUN;
        if (pid == child)
            return WIFEXITED(st) ? WEXITSTATUS(st) : JAIL_EXIT_SIGNAL + WTERMSIG(st);
    }
}

/* What is left to do in the command's process once it is confined: check
 * that what it was shown can be read, enter the working folder, report
 * "ok" and run the command. */
static void run_command(const jail_opts *o, const char *cwd, const sigset_t *mask)
{
    /* Whatever it is given must be readable as the confined user: say so
     * now, as the sandbox's failure, not later as the submission's. */
    for (size_t i = 0; i <= o->nshow; i++) {
        const char *shown = i < o->nshow ? o->show[i] : o->tree;
        struct stat st;
        if (!shown)
            continue;
        int mode = stat(shown, &st) == 0 && S_ISDIR(st.st_mode) ? R_OK | X_OK : R_OK;
        if (access(shown, mode) != 0)
            jail_fail("the submission's %s is not readable by %s in the sandbox: make it and the folders above it "
                      "readable by others (chmod o+rX)",
                      shown, o->userns ? "the grader's user" : "uid 65534");
    }
    if (chdir(cwd) != 0 && chdir("/tmp") != 0)
        jail_fail("cannot enter a working folder");
    errno = 0;
    if (write(status_fd, "ok\n", 3) != 3)
        jail_fail("cannot report to the grader");
    close(status_fd);
    sigprocmask(SIG_SETMASK, mask, NULL);
    execvp(o->argv[0], o->argv);
    fprintf(stderr, "jail: cannot run %s: %s\n", o->argv[0], strerror(errno));
    _exit(JAIL_EXIT_NOT_RUN);
}

/* Waits for one byte on |fd| (the other side's go-ahead). */
static void await(int fd, const char *what)
{
    char c;
    ssize_t n;
    while ((n = read(fd, &c, 1)) < 0 && errno == EINTR)
        ;
    if (n != 1) {
        errno = 0;
        jail_fail("%s", what);
    }
    close(fd);
}

/* Blocks every signal in the jail (see reap_until), keeping the mask the
 * command gets back in |old|, and forks the command's process. */
static pid_t fork_command(sigset_t *old)
{
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, old);
    pid_t child = fork();
    if (child < 0)
        jail_fail("cannot fork the command");
    return child;
}

/* As root (the grader is root): the view is made read-only, the jail itself
 * becomes the unprivileged user, filters its system calls and forks the
 * command, which inherits all of it. */
static int confine_as_user(const jail_opts *o, const char *cwd)
{
    read_only_except_scratch(o);
    confine_become_user(o->uid, o->gid);
    confine_syscalls();
    sigset_t old;
    pid_t child = fork_command(&old);
    if (child == 0)
        run_command(o, cwd, &old);
    return reap_until(child);
}

/* Under an unprivileged grader, the jail is root only in the grader's user
 * namespace, which maps that one user. The command's process moves into a
 * user namespace of its own first, and the jail writes its id maps from
 * outside: the process inside could not, once /proc is read-only, and
 * /proc must be read-only before the command runs (its sysctls answer to
 * the namespace's root). Then the jail makes the view read-only and lets
 * the child confine itself; the jail drops its own capabilities and stops
 * being dumpable, so the command, which runs as the same user outside,
 * cannot trace it. */
static int confine_in_user_namespace(const jail_opts *o, const char *cwd)
{
    int up[2], down[2];
    if (pipe2(up, O_CLOEXEC) != 0 || pipe2(down, O_CLOEXEC) != 0)
        jail_fail("cannot make the jail's pipes");
    sigset_t old;
    pid_t child = fork_command(&old);
    if (child == 0) {
        close(up[0]);
        close(down[1]);
        if (unshare(CLONE_NEWUSER) != 0)
            jail_fail("cannot make the submission's user namespace");
        if (write(up[1], "u", 1) != 1)
            jail_fail("cannot tell the jail");
        close(up[1]);
        await(down[0], "the jail did not map the submission's user namespace");
        confine_limit_tasks(o->nproc);
        confine_drop_capabilities();
        confine_syscalls();
        run_command(o, cwd, &old);
    }
    close(up[1]);
    close(down[0]);
    await(up[0], "the submission's user namespace was not made");
    static const char *const files[] = {"setgroups", "uid_map", "gid_map"};
    static const char *const text[] = {"deny", "0 0 1", "0 0 1"};
    for (int i = 0; i < 3; i++) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/%s", (int)child, files[i]);
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        ssize_t n = (ssize_t)strlen(text[i]);
        if (fd < 0 || write(fd, text[i], (size_t)n) != n)
            jail_fail("cannot write %s", path);
        close(fd);
    }
    read_only_except_scratch(o);
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
        jail_fail("cannot make the jail undumpable");
    if (write(down[1], "g", 1) != 1)
        jail_fail("cannot release the command");
    close(down[1]);
    /* The jail keeps no capability either: it only waits from here on. */
    confine_drop_capabilities();
    return reap_until(child);
}

int main(int argc, char **argv)
{
    jail_opts o;
    if (argc == 2 && strcmp(argv[1], "--help") == 0) {
        usage(stdout);
        return JAIL_EXIT_HELP;
    }
    if (parse(argc, argv, &o) != 0) {
        usage(stderr);
        return JAIL_EXIT_USAGE;
    }
    status_fd = o.status_fd;
    if (fcntl(status_fd, F_SETFD, FD_CLOEXEC) != 0)
        jail_fail("no status descriptor %d", status_fd);
    if (getuid() != 0)
        jail_fail("must start as root (the grader runs it)");

    /* Nothing we mount may propagate back to the grader's namespace. */
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        jail_fail("cannot make the mounts private (not in a new mount namespace?)");
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd))
        snprintf(cwd, sizeof cwd, "/");
    struct stat tree_st, here;
    if (o.tree) {
        /* Never the command's: closed once attached, close-on-exec before. */
        if (fcntl(TREE_FD, F_SETFD, FD_CLOEXEC) != 0 || fstat(TREE_FD, &tree_st) != 0)
            jail_fail("no submission folder on descriptor %d", TREE_FD);
        /* Started in the folder itself (grade-class): enter it again where
         * it is shown, whatever its name outside has become. */
        if (stat(".", &here) == 0 && here.st_dev == tree_st.st_dev && here.st_ino == tree_st.st_ino)
            snprintf(cwd, sizeof cwd, "%s", o.tree);
    }
    int show_fd[MAX_PATHS];
    for (size_t i = 0; i < o.nshow; i++)
        if ((show_fd[i] = open(o.show[i], O_PATH | O_CLOEXEC)) < 0)
            jail_fail("cannot open %s to show it", o.show[i]);
    hide_all_but_the_system();
    for (size_t i = 0; i < o.nhide; i++)
        hide(o.hide[i]);
    for (size_t i = 0; i < o.nscratch; i++)
        scratch(o.scratch[i], o.scratch_mb);
    for (size_t i = 0; i < o.nshow; i++) {
        show(o.show[i], show_fd[i]);
        close(show_fd[i]);
    }
    if (o.tree) {
        show_tree(o.tree, TREE_FD);
        close(TREE_FD);
    }
    return o.userns ? confine_in_user_namespace(&o, cwd) : confine_as_user(&o, cwd);
}
