/* batch: the exercises a grade-class run chose, and how --exercises EX/ID
 * and --world apply to them (batch.h). No file is read here. */
#include "batch.h"

#include "rl_err.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int gc_batch_find_exercise(const gc_batch *b, const char *name)
{
    for (size_t i = 0; i < b->nex; i++)
        if (strcmp(b->ex[i].name, name) == 0)
            return (int)i;
    return -1;
}

const char *gc_batch_world_for(const gc_batch *b, const char *ex)
{
    size_t n = strlen(ex);
    for (size_t i = 0; i < b->nworlds; i++)
        if (strncmp(b->worlds[i], ex, n) == 0 && b->worlds[i][n] == '=')
            return b->worlds[i] + n + 1;
    return NULL;
}

int gc_batch_add_only(gc_batch *b, size_t ex, const char *id)
{
    bool known = false;
    for (size_t i = 0; i < b->ex[ex].nscenarios; i++)
        known |= strcmp(b->ex[ex].scenarios[i], id) == 0;
    size_t n = strlen(b->only[ex]);
    if (!known || n + strlen(id) + 2 > sizeof b->only[ex])
        return RL_EINVAL;
    snprintf(b->only[ex] + n, sizeof b->only[ex] - n, "%s%s", n ? "," : "", id);
    return RL_OK;
}

void gc_batch_trim_to_only(gc_batch *b)
{
    for (size_t e = 0; e < b->nex; e++) {
        if (!b->only[e][0])
            continue;
        gc_exercise *x = &b->ex[e];
        size_t k = 0;
        for (size_t i = 0; i < x->nscenarios; i++) {
            char list[sizeof b->only[e]], *save = NULL;
            bool keep = false;
            snprintf(list, sizeof list, "%s", b->only[e]);
            for (char *w = strtok_r(list, ",", &save); w && !keep; w = strtok_r(NULL, ",", &save))
                keep = strcmp(w, x->scenarios[i]) == 0;
            if (!keep)
                continue;
            if (k != i) {
                memcpy(x->scenarios[k], x->scenarios[i], sizeof x->scenarios[k]);
                x->points[k] = x->points[i];
                memcpy(x->visibility[k], x->visibility[i], sizeof x->visibility[k]);
            }
            k++;
        }
        x->nscenarios = k;
    }
}

const char *gc_batch_shown_path(const gc_batch *b, const char *path)
{
    size_t n = strlen(b->class_dir);
    return strncmp(path, b->class_dir, n) == 0 && path[n] == '/' ? path + n + 1 : path;
}

int gc_batch_make_dir(const char *path)
{
    if (mkdir(path, 0755) == 0)
        return RL_OK;
    /* One that is there must be a folder, not a link planted to one: the
     * results written into it would land wherever it leads. */
    struct stat st;
    if (errno != EEXIST || lstat(path, &st) != 0)
        return RL_ESYS;
    if (!S_ISDIR(st.st_mode)) {
        errno = S_ISLNK(st.st_mode) ? ELOOP : ENOTDIR;
        return RL_ESYS;
    }
    return RL_OK;
}
