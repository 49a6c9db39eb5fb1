/* files: the file operations `lab init` and `lab stubs` build a starter
 * folder with (files.h). Modes are set exactly, never left to the umask:
 * the grader's sandbox reads the folder as user nobody. */
#include "files.h"

#include "rl_alloc.h"
#include "rl_err.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int lab_files_read(const char *path, char **out, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return errno == ENOENT ? RL_ENOTFOUND : RL_ESYS;
    size_t cap = 4096, n = 0;
    char *buf = rl_xmalloc(cap);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (cap - n - 1 == 0)
            buf = rl_xrealloc(buf, cap *= 2);
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(buf);
        return RL_ESYS;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return RL_OK;
}

int lab_files_write(const char *path, const char *data, size_t len, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return RL_ESYS;
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            close(fd);
            return RL_ESYS;
        }
        off += (size_t)w;
    }
    if (fchmod(fd, mode) != 0 || close(fd) != 0)
        return RL_ESYS;
    return RL_OK;
}

int lab_files_copy(const char *from, const char *to)
{
    struct stat st;
    char *data;
    size_t len;
    if (stat(from, &st) != 0)
        return RL_ESYS;
    int rc = lab_files_read(from, &data, &len);
    if (rc)
        return rc;
    rc = lab_files_write(to, data, len, (st.st_mode & S_IXUSR) ? 0755 : 0644);
    free(data);
    return rc;
}

int lab_files_make_dir(const char *path)
{
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
        return RL_ESYS;
    return chmod(path, 0755) == 0 ? RL_OK : RL_ESYS;
}

int lab_files_make_dirs(const char *dir)
{
    char path[PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s", dir) >= sizeof path)
        return RL_ETOOBIG;
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST)
            return RL_ESYS;
        *p = '/';
    }
    return lab_files_make_dir(path);
}

int lab_files_fresh_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? lab_files_make_dirs(dir) : RL_ESYS;
    struct dirent *e;
    int rc = RL_OK;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            rc = RL_EINVAL;
    closedir(d);
    return rc ? rc : lab_files_make_dir(dir);
}

/* What npm or a student's umask left unreadable becomes readable by others:
 * the grader runs the folder as nobody. */
static int readable(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)ftw;
    if (type == FTW_SL)
        return 0;
    mode_t want = st->st_mode | S_IROTH | S_IRGRP;
    if (S_ISDIR(st->st_mode) || (st->st_mode & S_IXUSR))
        want |= S_IXOTH | S_IXGRP;
    if (want != st->st_mode && chmod(path, want & 07777) != 0)
        return -1;
    return 0;
}

int lab_files_make_readable(const char *dir)
{
    return nftw(dir, readable, 32, FTW_PHYS) == 0 ? RL_OK : RL_ESYS;
}
