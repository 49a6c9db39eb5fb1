/* rl_path: locating sibling programs and repository files; see rl_path.h. */
#include "rl_path.h"

#include "rl_err.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int rl_path_exe_dir(char *out, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return RL_ESYS;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = '\0';
    if ((size_t)snprintf(out, len, "%s", self) >= len)
        return RL_ETOOBIG;
    return RL_OK;
}

int rl_path_sibling(const char *name, char *out, size_t len)
{
    char dir[PATH_MAX];
    int rc = rl_path_exe_dir(dir, sizeof dir);
    if (rc)
        return rc;
    if ((size_t)snprintf(out, len, "%s/%s", dir, name) >= len)
        return RL_ETOOBIG;
    return RL_OK;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

int rl_path_find_data(const char *rel, char *out, size_t len)
{
    const char *home = getenv("RELAYLAB_HOME");
    if (home && *home) {
        if ((size_t)snprintf(out, len, "%s/%s", home, rel) >= len)
            return RL_ETOOBIG;
        return exists(out) ? RL_OK : RL_ENOTFOUND;
    }
    char dir[PATH_MAX];
    if (rl_path_exe_dir(dir, sizeof dir))
        return RL_ENOTFOUND;
    for (int up = 0; up <= 4; up++) {
        if ((size_t)snprintf(out, len, "%s/%s", dir, rel) >= len)
            return RL_ETOOBIG;
        if (exists(out))
            return RL_OK;
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir)
            break;
        *slash = '\0';
    }
    return RL_ENOTFOUND;
}

int rl_path_within(const char *root, const char *path, char *real, size_t len)
{
    char r[PATH_MAX], p[PATH_MAX];
    if (!realpath(root, r) || !realpath(path, p))
        return errno == ENOENT || errno == ENOTDIR || errno == ELOOP ? RL_ENOTFOUND : RL_ESYS;
    if (real && (size_t)snprintf(real, len, "%s", p) >= len)
        return RL_ETOOBIG;
    size_t n = strlen(r);
    /* "/a/b" holds "/a/b" and "/a/b/c", not "/a/bc"; "/" holds everything. */
    if (strcmp(r, "/") == 0 || (strncmp(p, r, n) == 0 && (p[n] == '\0' || p[n] == '/')))
        return RL_OK;
    return RL_EINVAL;
}

int rl_path_command_within(const char *root, const char *cwd, const char *cmd, char *bad, size_t badlen)
{
    char rroot[PATH_MAX];
    if (!realpath(root, rroot))
        return RL_OK; /* no folder: nothing of it can lead out */
    size_t rlen = strlen(root);
    const char *p = cmd;
    while (*p) {
        size_t n = strcspn(p, " \t\n;&|<>()'\"`");
        if (n && n < PATH_MAX) {
            char word[PATH_MAX], path[2 * PATH_MAX + 2];
            struct stat st;
            memcpy(word, p, n);
            word[n] = '\0';
            bool mine = word[0] != '/' || (strncmp(word, root, rlen) == 0 && word[rlen] == '/') ||
                        (strncmp(word, rroot, strlen(rroot)) == 0 && word[strlen(rroot)] == '/');
            if (word[0] == '/')
                snprintf(path, sizeof path, "%s", word);
            else
                snprintf(path, sizeof path, "%s/%s", cwd, word);
            /* "cd .." names a folder, not a file handed in: the sandbox
             * shows nothing above the folder anyway. */
            bool dots = strcmp(word, ".") == 0 || strcmp(word, "..") == 0;
            if (mine && !dots && lstat(path, &st) == 0 && rl_path_within(rroot, path, NULL, 0) != RL_OK) {
                snprintf(bad, badlen, "%s", word);
                return RL_EINVAL;
            }
        }
        p += n ? n : 1;
    }
    return RL_OK;
}
