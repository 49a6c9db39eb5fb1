/* upload: a listing of an unexpected hand-in and the message around it; see
 * upload.h. */
#include "upload.h"

#include "rl_alloc.h"
#include "rl_err.h"
#include "rl_marker.h"

#include <dirent.h>
#include <stdbool.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct listing {
    char *buf;
    size_t len, used;
    size_t shown, left_out;
} listing;

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void add_line(listing *l, int depth, const char *name, char kind)
{
    if (l->shown >= GC_UPLOAD_MAX_ENTRIES) {
        l->left_out++;
        return;
    }
    char shown[96];
    rl_printable(name, shown, sizeof shown);
    if (l->used < l->len)
        l->used += (size_t)snprintf(l->buf + l->used, l->len - l->used, "%*s%s%s\n", 2 + 2 * depth, "", shown,
                                    kind == 'd'   ? "/"
                                    : kind == 'l' ? "@"
                                                  : "");
    l->shown++;
}

/* Counts everything under |dir| (not following links) into left_out, up to
 * a bound, for the "(N more)" line without walking a huge tree. */
static void count_rest(const char *dir, int depth, listing *l)
{
    DIR *d = depth < GC_UPLOAD_MAX_DEPTH ? opendir(dir) : NULL;
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) && l->left_out < 10000) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        l->left_out++;
        char path[PATH_MAX];
        struct stat st;
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path && lstat(path, &st) == 0 &&
            S_ISDIR(st.st_mode))
            count_rest(path, depth + 1, l);
    }
    closedir(d);
}

static void walk(const char *dir, int depth, listing *l)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    size_t n = 0, cap = 16;
    char **names = rl_xcalloc(cap, sizeof *names);
    struct dirent *e;
    /* A folder of a million files is listed from its first thousand names. */
    while ((e = readdir(d)) && n < 1000) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        RL_GROW(names, n, cap, 16);
        names[n++] = rl_xstrdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_names);
    for (size_t i = 0; i < n; i++) {
        char path[PATH_MAX];
        struct stat st;
        bool ok = snprintf(path, sizeof path, "%s/%s", dir, names[i]) < (int)sizeof path && lstat(path, &st) == 0;
        char kind = !ok ? '?' : S_ISLNK(st.st_mode) ? 'l' : S_ISDIR(st.st_mode) ? 'd' : 'f';
        bool was_shown = l->shown < GC_UPLOAD_MAX_ENTRIES;
        add_line(l, depth, names[i], kind);
        if (kind == 'd') {
            if (was_shown && depth + 1 < GC_UPLOAD_MAX_DEPTH)
                walk(path, depth + 1, l);
            else
                count_rest(path, depth + 1, l);
        }
        free(names[i]);
    }
    free(names);
}

void gc_upload_tree(const char *dir, char *buf, size_t len)
{
    listing l = {.buf = buf, .len = len};
    if (!len)
        return;
    buf[0] = '\0';
    walk(dir, 0, &l);
    if (!l.shown && l.used < len)
        snprintf(buf + l.used, len - l.used, "  (empty)\n");
    else if (l.left_out && l.used < len)
        snprintf(buf + l.used, len - l.used, "  ... (%zu%s more not listed)\n", l.left_out,
                 l.left_out >= 10000 ? " or" : "");
}

int gc_upload_wrapper(const char *dir, char *out, size_t len)
{
    DIR *d = opendir(dir);
    if (!d)
        return RL_ENOTFOUND;
    int folders = 0, others = 0;
    struct dirent *e;
    while ((e = readdir(d)) && folders + others < 2) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "__MACOSX") == 0)
            continue;
        char path[PATH_MAX];
        struct stat st;
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path || lstat(path, &st) != 0 ||
            !S_ISDIR(st.st_mode)) {
            others++;
            continue;
        }
        folders++;
        snprintf(out, len, "%s", path);
    }
    closedir(d);
    return folders == 1 && others == 0 ? RL_OK : RL_ENOTFOUND;
}

void gc_upload_unexpected(const char *dir, const char *exercises, char *buf, size_t len)
{
    char tree[4096];
    gc_upload_tree(dir, tree, sizeof tree);
    char ex[512];
    rl_printable(exercises, ex, sizeof ex);
    snprintf(buf, len,
             "Nothing here could be graded: your upload holds no folder that `lab init` made.\n"
             "What was uploaded:\n%s"
             "What was expected: for each exercise (%s), the folder `lab init` made, with the files it put in "
             "it, among them a hidden file named .relaylab that says which exercises the folder is for (e.g. "
             "deadline/.relaylab, deadline/run, deadline/relay.py; keepalive/.relaylab, keepalive/keepalive.json), "
             "or one such folder's files at the top of the upload. Zip tools and drag-and-drop often leave out "
             "hidden files: zip the folders themselves (`zip -r upload.zip deadline keepalive`) and upload "
             "the zip. A folder without its .relaylab is still recognised when its files tell what it is (a `run` "
             "script with the README `lab init` wrote, or a config file named after its exercise).",
             tree, ex);
}
