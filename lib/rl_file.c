/* rl_file: reading a submission's file as its student could; see rl_file.h.
 * The checks run in an order that leaks nothing: where a link leads is
 * judged before anything about the file it leads to is looked at, and the
 * file's type before it is opened (opening a device can have effects). */
#include "rl_file.h"

#include "rl_alloc.h"
#include "rl_err.h"

#include <errno.h>
#include <linux/openat2.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int fail(int rc, char *err, size_t errlen, const char *fmt, ...)
{
    if (errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return rc;
}

static const char *kind(mode_t m)
{
    if (S_ISDIR(m))
        return "a folder";
    if (S_ISFIFO(m))
        return "a FIFO";
    if (S_ISSOCK(m))
        return "a socket";
    if (S_ISCHR(m) || S_ISBLK(m))
        return "a device";
    return "not a regular file";
}

/* True when |real| (a resolved path) is |root| or lies below it. */
static int inside(const char *real, const char *root)
{
    size_t n = strlen(root);
    if (n == 1 && root[0] == '/')
        return 1;
    return strncmp(real, root, n) == 0 && (real[n] == '/' || real[n] == '\0');
}

/* Reads the open regular file |fd| (|st| its fstat) whole into |*out| and
 * |*len|, after the owner rule against |root_uid| and the cap |max|.
 * Closes |fd| whatever happens. */
static int read_open(int fd, const struct stat *stp, uid_t root_uid, size_t max, char **out, size_t *len, char *err,
                     size_t errlen)
{
    int rc;
    struct stat st = *stp;
    /* Root reads anything; the sandbox's nobody reads what others may, and
     * the student owns what they handed in. A hard link to a root-only file
     * is neither. */
    if (geteuid() == 0 && st.st_uid != root_uid && !(st.st_mode & S_IROTH)) {
        rc = fail(RL_EINVAL, err, errlen,
                  "is not readable by the submission's user (owned by another user, not readable by others)");
        goto fail_fd;
    }
    if ((unsigned long long)st.st_size > max) {
        rc = fail(RL_ETOOBIG, err, errlen, "is %lld bytes; the limit is %zu", (long long)st.st_size, max);
        goto fail_fd;
    }
    /* Read to the end rather than st_size bytes: the file may grow after the
     * fstat, and a cap is a cap. */
    size_t cap = (size_t)st.st_size + 1, got = 0;
    char *buf = rl_xmalloc(cap + 1);
    for (;;) {
        if (got == cap) {
            if (cap > max) {
                rc = fail(RL_ETOOBIG, err, errlen, "grew above the limit of %zu bytes while it was read", max);
                goto fail_buf;
            }
            cap = cap * 2 > max + 1 ? max + 1 : cap * 2;
            buf = rl_xrealloc(buf, cap + 1);
        }
        ssize_t r = read(fd, buf + got, cap - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = fail(RL_ESYS, err, errlen, "cannot read: %s", strerror(errno));
            goto fail_buf;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    if (got > max) {
        rc = fail(RL_ETOOBIG, err, errlen, "grew above the limit of %zu bytes while it was read", max);
        goto fail_buf;
    }
    close(fd);
    buf[got] = '\0';
    *out = buf;
    *len = got;
    return 0;

fail_buf:
    free(buf);
fail_fd:
    close(fd);
    return rc;
}

int rl_file_read_untrusted(const char *path, const char *root, size_t max, char **out, size_t *len, char *err,
                           size_t errlen)
{
    *out = NULL;
    *len = 0;
    if (errlen)
        err[0] = '\0';

    /* The folder the file must stay in: |root|, or the one |path| names. */
    char folder[PATH_MAX];
    if (!root) {
        const char *slash = strrchr(path, '/');
        if (!slash)
            snprintf(folder, sizeof folder, ".");
        else if (slash == path)
            snprintf(folder, sizeof folder, "/");
        else
            snprintf(folder, sizeof folder, "%.*s", (int)(slash - path), path);
        root = folder;
    }
    char rroot[PATH_MAX], rpath[PATH_MAX];
    struct stat rst;
    if (!realpath(root, rroot) || stat(rroot, &rst) != 0)
        return fail(errno == ENOENT ? RL_ENOTFOUND : RL_ESYS, err, errlen, "its folder cannot be resolved: %s",
                    strerror(errno));
    if (!realpath(path, rpath)) {
        int e = errno;
        if (e == ENOENT)
            return fail(RL_ENOTFOUND, err, errlen, "no such file (or a link to nothing)");
        return fail(RL_ESYS, err, errlen, "cannot be resolved: %s", strerror(e));
    }
    if (!inside(rpath, rroot))
        return fail(RL_EINVAL, err, errlen, "is a symbolic link leading out of the submission's folder");

    /* rpath holds no link now, so lstat sees what open would open. */
    struct stat st;
    if (lstat(rpath, &st) != 0)
        return fail(errno == ENOENT ? RL_ENOTFOUND : RL_ESYS, err, errlen, "cannot stat: %s", strerror(errno));
    if (!S_ISREG(st.st_mode))
        return fail(RL_EINVAL, err, errlen, "is %s, not a regular file", kind(st.st_mode));

    int fd = open(rpath, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        if (e == ELOOP)
            return fail(RL_EINVAL, err, errlen, "changed into a symbolic link while it was opened");
        return fail(e == ENOENT ? RL_ENOTFOUND : RL_ESYS, err, errlen, "cannot open: %s", strerror(e));
    }
    int rc;
    /* What was opened, judged again: a folder above may have been swapped for
     * a link since realpath, and the file itself for a FIFO. */
    char link[64], real[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, real, sizeof real - 1);
    if (fstat(fd, &st) != 0) {
        rc = fail(RL_ESYS, err, errlen, "cannot stat: %s", strerror(errno));
        goto fail_fd;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = fail(RL_EINVAL, err, errlen, "is %s, not a regular file", kind(st.st_mode));
        goto fail_fd;
    }
    if (n > 0) {
        real[n] = '\0';
        if (!inside(real, rroot)) {
            rc = fail(RL_EINVAL, err, errlen, "is a symbolic link leading out of the submission's folder");
            goto fail_fd;
        }
    }
    return read_open(fd, &st, rst.st_uid, max, out, len, err, errlen);

fail_fd:
    close(fd);
    return rc;
}

int rl_file_open_dir(const char *path, int *fd, char *real, size_t reallen)
{
    /* O_NOFOLLOW with O_DIRECTORY: a link at |path| itself is ENOTDIR,
     * told apart from a file by lstat only for the message. */
    int d = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (d < 0) {
        int e = errno;
        struct stat st;
        if (e == ENOTDIR && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
            e = ELOOP;
        errno = e;
        return e == ENOENT ? RL_ENOTFOUND : e == ELOOP || e == ENOTDIR ? RL_EINVAL : RL_ESYS;
    }
    if (d < 3) {
        /* Never 0-2 (a grader started with them closed): callers take 0
         * for "none", and a child's stdio must not land on it. */
        int hi = fcntl(d, F_DUPFD_CLOEXEC, 3);
        close(d);
        if (hi < 0)
            return RL_ESYS;
        d = hi;
    }
    if (real && reallen) {
        char link[64];
        snprintf(link, sizeof link, "/proc/self/fd/%d", d);
        ssize_t n = readlink(link, real, reallen - 1);
        if (n <= 0 || (size_t)n >= reallen - 1 || real[0] != '/') {
            close(d);
            errno = ENAMETOOLONG;
            return RL_ESYS;
        }
        real[n] = '\0';
    }
    *fd = d;
    return RL_OK;
}

int rl_file_open_beneath(int dirfd, const char *rel, int flags)
{
    /* RESOLVE_BENEATH: every component, links included, must stay below
     * |dirfd| while it is resolved (EXDEV otherwise; an absolute link too);
     * no /proc magic link can jump elsewhere. EAGAIN means a rename raced
     * with a "..": tried again a few times, then given up as EXDEV. */
    struct open_how how = {
        .flags = (uint64_t)flags | O_CLOEXEC,
        .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
    };
    for (int i = 0; i < 8; i++) {
        long fd = syscall(SYS_openat2, dirfd, rel, &how, sizeof how);
        if (fd >= 0)
            return (int)fd;
        if (errno != EAGAIN)
            return -1;
    }
    errno = EXDEV;
    return -1;
}

int rl_file_read_untrusted_at(int dirfd, const char *rel, size_t max, char **out, size_t *len, char *err, size_t errlen)
{
    *out = NULL;
    *len = 0;
    if (errlen)
        err[0] = '\0';
    struct stat rst, st;
    if (fstat(dirfd, &rst) != 0)
        return fail(RL_ESYS, err, errlen, "its folder cannot be read: %s", strerror(errno));
    /* O_PATH first: where it leads and what it is are judged before it is
     * opened for reading (opening a device or a FIFO can have effects). */
    int p = rl_file_open_beneath(dirfd, rel, O_PATH);
    if (p < 0) {
        int e = errno;
        if (e == ENOENT)
            return fail(RL_ENOTFOUND, err, errlen, "no such file (or a link to nothing)");
        if (e == EXDEV)
            return fail(RL_EINVAL, err, errlen, "is a symbolic link leading out of the submission's folder");
        if (e == ELOOP)
            return fail(RL_EINVAL, err, errlen, "is a chain of too many symbolic links");
        return fail(RL_ESYS, err, errlen, "cannot be resolved: %s", strerror(e));
    }
    if (fstat(p, &st) != 0) {
        int e = errno;
        close(p);
        return fail(RL_ESYS, err, errlen, "cannot stat: %s", strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(p);
        return fail(RL_EINVAL, err, errlen, "is %s, not a regular file", kind(st.st_mode));
    }
    /* Reopened through the descriptor: the very file judged above, whatever
     * its path names by now. */
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", p);
    int fd = open(link, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    int e = errno;
    close(p);
    if (fd < 0)
        return fail(RL_ESYS, err, errlen, "cannot open: %s", strerror(e));
    struct stat again;
    if (fstat(fd, &again) != 0 || again.st_dev != st.st_dev || again.st_ino != st.st_ino) {
        close(fd);
        return fail(RL_ESYS, err, errlen, "changed while it was opened");
    }
    return read_open(fd, &again, rst.st_uid, max, out, len, err, errlen);
}

FILE *rl_file_tmp_open(const char *path, mode_t mode, char *tmp, size_t tmplen)
{
    int n = snprintf(tmp, tmplen, "%s.tmp.XXXXXX", path);
    if (n < 0 || (size_t)n >= tmplen) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0)
        return NULL;
    FILE *f = fchmod(fd, mode) == 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        int e = errno;
        close(fd);
        unlink(tmp);
        errno = e;
    }
    return f;
}

int rl_file_tmp_commit(FILE *f, const char *tmp, const char *path)
{
    int bad = fflush(f) != 0 || ferror(f);
    int e = errno;
    if (fclose(f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (!bad && rename(tmp, path) != 0) {
        bad = 1;
        e = errno;
    }
    if (bad) {
        unlink(tmp);
        errno = e;
        return RL_ESYS;
    }
    return 0;
}
