/* roster: the exercises (from `grader list`), their points (the rubric) and
 * the students and their starter folders (.relaylab markers); see roster.h. */
#include "roster.h"

#include "rl_alloc.h"
#include "rl_err.h"
#include "rl_file.h"
#include "rl_marker.h"
#include "rl_path.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

int gc_roster_parse_list(const char *text, gc_exercise *out, size_t max, size_t *n, char *err, size_t errlen)
{
    *n = 0;
    gc_exercise *cur = NULL;
    const char *p = text;
    int lineno = 0;
    while (*p) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char line[1024];
        lineno++;
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), p);
        p += len + (end ? 1 : 0);
        if (!line[0])
            continue;
        if (line[0] == ' ') {
            /* "  ID  TITLE": the id is the first word. */
            char id[GC_NAME_MAX];
            if (!cur || sscanf(line, " %127s", id) != 1) {
                snprintf(err, errlen, "grader list, line %d: a scenario outside an exercise", lineno);
                return RL_EPARSE;
            }
            if (cur->nscenarios == GC_MAX_SCENARIOS) {
                snprintf(err, errlen, "grader list: %s has more than %d scenarios", cur->name, GC_MAX_SCENARIOS);
                return RL_ETOOBIG;
            }
            snprintf(cur->scenarios[cur->nscenarios++], GC_NAME_MAX, "%s", id);
            continue;
        }
        char *colon = strchr(line, ':');
        if (!colon || colon == line || (size_t)(colon - line) >= GC_NAME_MAX) {
            snprintf(err, errlen, "grader list, line %d: expected \"NAME: SUMMARY\", got \"%s\"", lineno, line);
            return RL_EPARSE;
        }
        if (*n == max) {
            snprintf(err, errlen, "grader list: more than %zu exercises", max);
            return RL_ETOOBIG;
        }
        cur = &out[(*n)++];
        memset(cur, 0, sizeof *cur);
        snprintf(cur->name, sizeof cur->name, "%.*s", (int)(colon - line), line);
        cur->config = strstr(colon, "(--submission FILE)") != NULL;
    }
    if (*n == 0) {
        snprintf(err, errlen, "grader list printed no exercise");
        return RL_EPARSE;
    }
    return RL_OK;
}

int gc_roster_read_points(const char *path, gc_exercise *ex, size_t n, char *err, size_t errlen)
{
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root) {
        snprintf(err, errlen, "cannot read the rubric %s: %s", path, je.text);
        return RL_EPARSE;
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < ex[i].nscenarios; j++) {
            json_t *e = json_object_get(json_object_get(root, ex[i].name), ex[i].scenarios[j]);
            const char *vis = json_is_object(e) ? json_string_value(json_object_get(e, "visibility")) : NULL;
            snprintf(ex[i].visibility[j], sizeof ex[i].visibility[j], "%s", vis ? vis : "");
            if (json_is_object(e))
                e = json_object_get(e, "points");
            ex[i].points[j] = json_is_number(e) ? json_number_value(e) : 0.0;
        }
    json_decref(root);
    return RL_OK;
}

int gc_roster_read_marker(int dirfd, const char *dir, gc_starter *out, char *err, size_t errlen)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/.relaylab", dir);
    struct stat st;
    if (fstatat(dirfd, ".relaylab", &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT)
        return RL_ENOTFOUND;
    char *text;
    size_t len;
    char why[512];
    int rc = rl_file_read_untrusted_at(dirfd, ".relaylab", GC_MARKER_MAX, &text, &len, why, sizeof why);
    if (rc != RL_OK) {
        snprintf(err, errlen, "%s %s: not read", path, why); /* why names no path */
        return rc;
    }
    memset(out, 0, sizeof *out);
    out->fd = -1;
    snprintf(out->dir, sizeof out->dir, "%s", dir);
    char *save = NULL;
    for (char *line = strtok_r(text, "\r\n", &save); line; line = strtok_r(NULL, "\r\n", &save)) {
        char *val = strchr(line, ' ');
        if (line[0] == '#' || !val)
            continue;
        *val++ = '\0';
        if (strcmp(line, "exercises") == 0)
            snprintf(out->exercises, sizeof out->exercises, "%s", val);
        else if (strcmp(line, "submission") == 0)
            snprintf(out->submission, sizeof out->submission, "%s", val);
        else if (strcmp(line, "student") == 0 || strcmp(line, "variant") == 0) /* rl_marker.h */
            snprintf(out->variant, sizeof out->variant, "%s", val);
    }
    free(text);
    if (out->exercises[0] && out->submission[0])
        return RL_OK;
    snprintf(err, errlen, "%s names no %s", path, out->exercises[0] ? "submission" : "exercises");
    return RL_EPARSE;
}

/* The folder held as |fd| (shown as |dir|) recognised by its files into
 * |out|, read through the handle. */
static int infer(int fd, const char *dir, const char *config_exercises, gc_starter *out)
{
    memset(out, 0, sizeof *out);
    out->fd = -1;
    rl_marker m;
    char why[300], held[64];
    snprintf(held, sizeof held, "/proc/self/fd/%d", fd);
    if (rl_marker_infer(held, config_exercises, &m, why, sizeof why) != RL_OK)
        return RL_ENOTFOUND;
    snprintf(out->dir, sizeof out->dir, "%s", dir);
    snprintf(out->exercises, sizeof out->exercises, "%s", m.exercises);
    snprintf(out->submission, sizeof out->submission, "%s", m.submission);
    snprintf(out->inferred, sizeof out->inferred, "%s", why);
    return RL_OK;
}

bool gc_starter_has(const gc_starter *s, const char *exercise)
{
    size_t n = strlen(exercise);
    for (const char *p = s->exercises; (p = strstr(p, exercise)); p += n)
        if ((p == s->exercises || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return true;
    return false;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entries of |dir| not starting with '.' that are folders or symlinks
 * to folders, sorted. A FIFO or a device is not a folder: stat() only
 * looks at it, it never opens it. */
static int subfolders(const char *dir, char ***names, size_t *n)
{
    DIR *d = opendir(dir);
    if (!d)
        return RL_ESYS;
    size_t cap = 16;
    *names = rl_xcalloc(cap, sizeof **names);
    *n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[4400];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        RL_GROW(*names, *n, cap, 16);
        (*names)[(*n)++] = rl_xstrdup(e->d_name);
    }
    closedir(d);
    qsort(*names, *n, sizeof **names, cmp_names);
    return RL_OK;
}

/* A close-on-exec copy of |fd| (-1 stays -1). */
static int dup_cloexec(int fd)
{
    return fd < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 3);
}

static void note(char *notes, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void note(char *notes, size_t len, const char *fmt, ...)
{
    size_t used = strlen(notes);
    if (used + 3 >= len)
        return;
    if (used)
        used += (size_t)snprintf(notes + used, len - used, "; ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(notes + used, len - used, fmt, ap);
    va_end(ap);
}

/* Opens |path| (a folder of the student folder whose real path is |root|)
 * as the handle a starter is graded from: the folder it named when it was
 * checked, inside |root| (links followed, judged through the handle), its
 * real path then in |real|. Returns the descriptor, or -1: not a folder
 * (errno ENOTDIR, ENOENT), or leading out of |root| (errno EXDEV). */
static int hold(const char *root, const char *path, char *real, size_t reallen)
{
    int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char held[64];
    snprintf(held, sizeof held, "/proc/self/fd/%d", fd);
    if (rl_path_within(root, held, real, reallen) != RL_OK) {
        close(fd);
        errno = EXDEV;
        return -1;
    }
    return fd;
}

/* Reads the marker of the folder held as |fd| (real path |real|) into
 * |out|, keeping |fd| there when it is a starter. Returns true when it is. */
static bool take_starter(int fd, const char *real, const char *root, const char *label, gc_starter *out,
                         bool *saw_marker, char *notes, size_t noteslen)
{
    char err[4600];
    int rc = gc_roster_read_marker(fd, real, out, err, sizeof err);
    *saw_marker |= rc != RL_ENOTFOUND;
    if (rc == RL_OK) {
        out->fd = fd;
        return true;
    }
    if (rc != RL_ENOTFOUND) {
        gc_roster_relabel(err, sizeof err, root, label);
        note(notes, noteslen, "refused: %s", err);
    }
    return false;
}

size_t gc_roster_starters(const char *dir, const char *label, const char *config_exercises, gc_starter *out, size_t max,
                          char *notes, size_t noteslen)
{
    size_t found = 0;
    bool saw_marker = false; /* any .relaylab, even refused: then nothing is guessed */
    char root[4200], real[4200];
    if (!realpath(dir, root))
        return 0;
    /* Every starter is a handle, opened once here: what the grader is
     * handed later is this folder, whatever the names lead to by then. */
    int fds[GC_MAX_STARTERS_HELD];
    char reals[GC_MAX_STARTERS_HELD][sizeof out->dir];
    size_t nheld = 0;
    int self = hold(root, dir, real, sizeof real);
    if (self >= 0) {
        fds[nheld] = self;
        snprintf(reals[nheld++], sizeof reals[0], "%.4000s", real);
    }
    if (max > 0 && self >= 0 &&
        take_starter(dup_cloexec(self), real, root, label, &out[0], &saw_marker, notes, noteslen))
        found++;
    char **names;
    size_t n;
    if (subfolders(dir, &names, &n) != RL_OK)
        names = NULL, n = 0;
    for (size_t i = 0; i < n; i++) {
        char sub[4200], shown[GC_NAME_MAX * 4];
        snprintf(sub, sizeof sub, "%s/%s", dir, names[i]);
        gc_roster_name_shown(names[i], shown, sizeof shown);
        /* A symlink to a classmate's folder is the classmate's work: git
         * and tar keep symlinks, so one costs no access to their files. */
        int fd = hold(root, sub, real, sizeof real);
        if (fd < 0 && errno == EXDEV) {
            note(notes, noteslen,
                 "refused: %s/%s is a symlink that leads outside %s's folder: not followed (hand in the folder "
                 "itself, not a link to one)",
                 label, shown, label);
            continue;
        }
        if (fd < 0)
            continue;
        if (found < max && take_starter(dup_cloexec(fd), real, root, label, &out[found], &saw_marker, notes, noteslen))
            found++;
        if (nheld < GC_MAX_STARTERS_HELD) {
            fds[nheld] = fd;
            snprintf(reals[nheld++], sizeof reals[0], "%.4000s", real);
        } else {
            close(fd);
        }
    }
    /* No marker anywhere: a hand-in whose hidden files were dropped, in
     * the same places, read through the same handles. Only then, so that a
     * marker always wins. */
    bool any_marker = found > 0 || saw_marker;
    for (size_t i = 0; i < nheld && found < max && !any_marker; i++)
        if (infer(fds[i], reals[i], config_exercises, &out[found]) == RL_OK)
            out[found++].fd = dup_cloexec(fds[i]);
    for (size_t i = 0; i < nheld; i++)
        close(fds[i]);
    gc_roster_free_names(names, n);
    return found;
}

void gc_roster_starters_fini(gc_starter *st, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (st[i].fd >= 0)
            close(st[i].fd);
        st[i].fd = -1;
    }
}

/* What spreadsheets put first in a file saved as "CSV UTF-8". */
static const char utf8_bom[] = "\xef\xbb\xbf";

/* One line of a roster: FOLDER,ID (anything after a second comma is
 * ignored), trimmed; |blank| when it holds nothing, |skip| for a comment or
 * the header. */
typedef struct roster_line {
    char *folder, *id; /* into the text; NULL without a comma */
    bool blank, skip;
} roster_line;

/* Splits |line| (line |lineno|, modified in place) into |out|. */
static void split_line(char *line, int lineno, roster_line *out)
{
    memset(out, 0, sizeof *out);
    line[strcspn(line, "\r")] = '\0';
    if (lineno == 1 && strncmp(line, utf8_bom, 3) == 0)
        line += 3;
    while (*line == ' ' || *line == '\t')
        line++;
    out->blank = !*line;
    out->skip = out->blank || *line == '#' || (lineno == 1 && strncasecmp(line, "folder,", 7) == 0);
    char *comma = strchr(line, ',');
    if (out->skip || !comma)
        return;
    *comma = '\0';
    char *val = comma + 1;
    val[strcspn(val, ",")] = '\0';
    while (*val == ' ')
        val++;
    for (char *e = val + strlen(val); e > val && e[-1] == ' ';)
        *--e = '\0';
    for (char *e = line + strlen(line); e > line && e[-1] == ' ';)
        *--e = '\0';
    out->folder = line;
    out->id = val;
}

/* The roster |path| read whole (rl_file: regular, capped) into |*text|. */
static int read_roster(const char *path, char **text, char *err, size_t errlen)
{
    size_t len = 0;
    char why[256];
    /* The instructor's file, but read as any other: regular, capped. */
    int rc = rl_file_read_untrusted(path, NULL, 4 << 20, text, &len, why, sizeof why);
    if (rc != RL_OK) {
        snprintf(err, errlen, "cannot read the roster %s: %s", path, why);
        return rc == RL_ENOTFOUND ? RL_ESYS : rc;
    }
    return RL_OK;
}

int gc_roster_identity(const char *path, const char *folder, char *id, size_t idlen, char *err, size_t errlen)
{
    char *text = NULL;
    int rc = read_roster(path, &text, err, errlen);
    if (rc != RL_OK)
        return rc;
    rc = RL_ENOTFOUND;
    int lineno = 0;
    for (char *line = text, *next; line && *line && rc == RL_ENOTFOUND; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        roster_line l;
        split_line(line, ++lineno, &l);
        if (l.skip)
            continue;
        if (!l.folder) {
            snprintf(err, errlen, "%s, line %d: expected FOLDER,ID", path, lineno);
            rc = RL_EPARSE;
            break;
        }
        if (strcmp(l.folder, folder) != 0)
            continue;
        if (!gc_roster_name_ok(l.id) || strlen(l.id) >= idlen) {
            snprintf(err, errlen, "%s, line %d: the id of %s is not a roster name (letters, digits and ._-@+)", path,
                     lineno, folder);
            rc = RL_EPARSE;
            break;
        }
        snprintf(id, idlen, "%s", l.id);
        rc = RL_OK;
    }
    free(text);
    return rc;
}

/* Warns on |f| about line |lineno| of roster |path|. */
static void warn(FILE *f, const char *path, int lineno, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void warn(FILE *f, const char *path, int lineno, const char *fmt, ...)
{
    if (!f)
        return;
    fprintf(f, "grade-class: warning: the roster %s, line %d: ", path, lineno);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fputc('\n', f);
}

int gc_roster_check(const char *path, FILE *warnings, char *err, size_t errlen)
{
    char *text = NULL;
    int rc = read_roster(path, &text, err, errlen);
    if (rc != RL_OK)
        return rc;
    if (strncmp(text, utf8_bom, 3) == 0)
        warn(warnings, path, 1,
             "it begins with a UTF-8 byte order mark (what spreadsheets write as \"CSV UTF-8\"): ignored");
    /* The lines kept so far and where each was (at[i] is seen[i]'s). */
    roster_line *seen = NULL;
    int *at = NULL;
    size_t n = 0, capseen = 0, capat = 0;
    int lineno = 0;
    for (char *line = text, *next; line && *line && rc == RL_OK; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        roster_line l;
        split_line(line, ++lineno, &l);
        if (l.blank && next && *next)
            warn(warnings, path, lineno, "blank: skipped");
        if (l.skip)
            continue;
        char shown_f[GC_NAME_MAX * 4], shown_id[GC_NAME_MAX * 4];
        if (!l.folder) {
            snprintf(err, errlen, "%s, line %d: expected FOLDER,ID", path, lineno);
            rc = RL_EPARSE;
            break;
        }
        gc_roster_name_shown(l.folder, shown_f, sizeof shown_f);
        gc_roster_name_shown(l.id, shown_id, sizeof shown_id);
        if (!gc_roster_name_ok(l.id)) {
            snprintf(err, errlen, "%s, line %d: the id of %s is not a roster name (letters, digits and ._-@+)", path,
                     lineno, shown_f);
            rc = RL_EPARSE;
            break;
        }
        bool repeat = false;
        for (size_t i = 0; i < n && rc == RL_OK; i++) {
            bool same_folder = strcmp(seen[i].folder, l.folder) == 0, same_id = strcmp(seen[i].id, l.id) == 0;
            if (same_folder && same_id) {
                warn(warnings, path, lineno, "repeats line %d (%s,%s): ignored", at[i], shown_f, shown_id);
                repeat = true;
            } else if (same_folder) {
                snprintf(err, errlen,
                         "%s, line %d: the folder %s is listed again with another id (line %d gave it another): "
                         "which one is meant cannot be told; list each folder once",
                         path, lineno, shown_f, at[i]);
                rc = RL_EPARSE;
            } else if (same_id) {
                snprintf(err, errlen,
                         "%s, line %d: the id %s is given to %s too (line %d): two students would be graded as one "
                         "identity (one deployment); give each folder its own id",
                         path, lineno, shown_id, shown_f, at[i]);
                rc = RL_EPARSE;
            }
        }
        if (rc != RL_OK || repeat)
            continue;
        RL_GROW(seen, n, capseen, 64);
        RL_GROW(at, n, capat, 64);
        at[n] = lineno;
        seen[n++] = l;
    }
    free(seen);
    free(at);
    free(text);
    return rc;
}

int gc_roster_students(const char *class_dir, char ***names, size_t *n, char *err, size_t errlen)
{
    if (subfolders(class_dir, names, n) != RL_OK) {
        snprintf(err, errlen, "cannot read the class folder %s: %s", class_dir, strerror(errno));
        return RL_ESYS;
    }
    return RL_OK;
}

void gc_roster_free_names(char **names, size_t n)
{
    if (!names)
        return;
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

bool gc_roster_name_ok(const char *name)
{
    if (!name[0] || name[0] == '.' || strlen(name) >= GC_NAME_MAX)
        return false;
    for (const char *p = name; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr("._-@+", *p))
            return false;
    return true;
}

void gc_roster_name_shown(const char *name, char *out, size_t len)
{
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)name; *p && o + 5 < len; p++) {
        if (isalnum(*p) || strchr("._-@+", *p))
            out[o++] = (char)*p;
        else
            o += (size_t)snprintf(out + o, len - o, "\\x%02x", *p);
    }
    if (len)
        out[o < len ? o : len - 1] = '\0';
}

int gc_roster_refuse_folder(const char *path, const char *name, char *why, size_t whylen)
{
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode))
        return RL_OK; /* gone since it was listed: it has no folder, as MISSING says */
    char shown[GC_NAME_MAX * 4];
    gc_roster_name_shown(name, shown, sizeof shown);
    snprintf(why, whylen,
             "refused: the student folder %s is a symlink, not a folder: not followed (a link to a classmate's "
             "folder would grade their work as this student's); hand in the folder itself",
             shown);
    return RL_EINVAL;
}

void gc_roster_relabel(char *text, size_t len, const char *from, const char *to)
{
    size_t fl = strlen(from);
    if (!fl)
        return;
    char *out = rl_xmalloc(len);
    size_t o = 0;
    for (const char *p = text; *p && o + 1 < len;) {
        if (strncmp(p, from, fl) == 0) {
            o += (size_t)snprintf(out + o, len - o, "%s", to);
            p += fl;
        } else {
            out[o++] = *p++;
        }
    }
    out[o < len ? o : len - 1] = '\0';
    memcpy(text, out, len);
    free(out);
}
