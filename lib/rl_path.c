/* rl_path: locating sibling programs and repository files; see rl_path.h. */
#include "rl_path.h"

#include "rl_err.h"

#include <limits.h>
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
