/* rl_marker: reading and writing `.relaylab`, recognising a folder that lost
 * it, and the identity rule's note; see rl_marker.h. */
#include "rl_marker.h"

#include "rl_err.h"
#include "rl_file.h"
#include "rl_text.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A README lab init wrote is a few KiB; the line sought is near its top. */
#define README_MAX_BYTES ((size_t)64 * 1024)
#define README_LINE      "every exercise this folder is for: "

void rl_printable(const char *in, char *out, size_t len)
{
    if (!len)
        return;
    if (!in)
        in = "";
    rl_text_printable(out, len, in, strlen(in), 0);
    /* Quoted between '"' in feedback: one inside would end the quote. */
    for (char *p = out; (p = strchr(p, '"'));)
        *p = '?';
}

/* Copies |val| into |dst| (|len|); false when it does not fit. */
static bool set_field(char *dst, size_t len, const char *val)
{
    size_t n = strlen(val);
    if (n >= len)
        return false;
    memcpy(dst, val, n + 1);
    return true;
}

/* Parses the marker |text| (modified) into |out|; |path| names it in |err|. */
static int parse_marker(char *text, const char *path, rl_marker *out, char *err, size_t errlen)
{
    bool fits = true;
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        line[strcspn(line, "\r")] = '\0';
        char *val = strchr(line, ' ');
        if (line[0] == '#' || !val)
            continue;
        *val++ = '\0';
        if (strcmp(line, "exercises") == 0)
            fits &= set_field(out->exercises, sizeof out->exercises, val);
        else if (strcmp(line, "submission") == 0)
            fits &= set_field(out->submission, sizeof out->submission, val);
        else if (strcmp(line, "student") == 0 || strcmp(line, "variant") == 0)
            fits &= set_field(out->student, sizeof out->student, val);
        else if (strcmp(line, "lang") == 0)
            fits &= set_field(out->lang, sizeof out->lang, val);
    }
    if (!fits || !out->exercises[0] || !out->submission[0]) {
        snprintf(err, errlen, "%s is malformed: %s", path,
                 !fits ? "a line is too long" : "it needs an `exercises` and a `submission` line");
        return RL_EPARSE;
    }
    return RL_OK;
}

/* The marker read (|rc|, |text|, |why|) into |out|, named |path| and its
 * folder |dir| in |err|. Frees |text|. */
static int take_marker(int rc, char *text, const char *why, const char *dir, const char *path, rl_marker *out,
                       char *err, size_t errlen)
{
    if (rc == RL_ENOTFOUND) {
        snprintf(err, errlen, "no .relaylab in %s", dir);
        return rc;
    }
    if (rc != RL_OK) {
        snprintf(err, errlen, "%s cannot be read: %s", path, why);
        return rc;
    }
    rc = parse_marker(text, path, out, err, errlen);
    free(text);
    return rc;
}

int rl_marker_read(const char *dir, rl_marker *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    char path[PATH_MAX + 16], why[256] = "";
    snprintf(path, sizeof path, "%s/.relaylab", dir);
    char *text = NULL;
    size_t len = 0;
    int rc = rl_file_read_untrusted(path, dir, RL_MARKER_MAX_BYTES, &text, &len, why, sizeof why);
    return take_marker(rc, text, why, dir, path, out, err, errlen);
}

int rl_marker_read_at(int dirfd, const char *dir, rl_marker *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    char path[PATH_MAX + 16], why[256] = "";
    snprintf(path, sizeof path, "%s/.relaylab", dir);
    char *text = NULL;
    size_t len = 0;
    int rc = rl_file_read_untrusted_at(dirfd, ".relaylab", RL_MARKER_MAX_BYTES, &text, &len, why, sizeof why);
    return take_marker(rc, text, why, dir, path, out, err, errlen);
}

int rl_marker_write(const char *dir, const rl_marker *m)
{
    char path[PATH_MAX + 16], text[1024];
    snprintf(path, sizeof path, "%s/.relaylab", dir);
    int n = snprintf(text, sizeof text,
                     "# written by `lab init`; `lab check` reads it. `student` is the identity the folder\n"
                     "# was made for (the config exercises' deployment): grading says so when it differs.\n"
                     "exercises %s\nlang %s\nsubmission %s\nstudent %s\n",
                     m->exercises, m->lang, m->submission, m->student);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0)
        return RL_ESYS;
    bool ok = n > 0 && (size_t)n < sizeof text && write(fd, text, (size_t)n) == n;
    return close(fd) == 0 && ok ? RL_OK : RL_ESYS;
}

/* True when DIR/NAME exists as a regular file (not followed if a link). */
static bool has_file(const char *dir, const char *name)
{
    char path[PATH_MAX + NAME_MAX + 2];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The exercises the README lab init wrote names, or "" (|out|, |len|). */
static void readme_exercises(const char *dir, char *out, size_t len)
{
    char path[PATH_MAX + 16], why[128];
    snprintf(path, sizeof path, "%s/README.md", dir);
    char *text = NULL;
    size_t n = 0;
    out[0] = '\0';
    if (rl_file_read_untrusted(path, dir, README_MAX_BYTES, &text, &n, why, sizeof why) != RL_OK)
        return;
    const char *p = strstr(text, README_LINE);
    if (p) {
        p += strlen(README_LINE);
        size_t k = strcspn(p, "\r\n");
        /* Exercise names only: lowercase words and spaces. */
        size_t ok = strspn(p, "abcdefghijklmnopqrstuvwxyz ");
        if (ok >= k && k > 0 && k < len)
            snprintf(out, len, "%.*s", (int)k, p);
    }
    free(text);
}

int rl_marker_infer(const char *dir, const char *config_exercises, rl_marker *out, char *why, size_t whylen)
{
    memset(out, 0, sizeof *out);
    out->inferred = true;
    if (has_file(dir, "run")) {
        char ex[sizeof out->exercises];
        readme_exercises(dir, ex, sizeof ex);
        while (ex[0] && ex[strlen(ex) - 1] == ' ')
            ex[strlen(ex) - 1] = '\0';
        if (!ex[0]) {
            snprintf(why, whylen,
                     "%s has a `run` script but no README.md from `lab init` naming its exercises, so which "
                     "exercise it is for cannot be told",
                     dir);
            return RL_EINVAL;
        }
        snprintf(out->exercises, sizeof out->exercises, "%s", ex);
        snprintf(out->submission, sizeof out->submission, "./run");
        out->lang[0] = '\0';
        if (has_file(dir, "Makefile") && (has_file(dir, "relay.go") || has_file(dir, "streamer.go")))
            snprintf(out->lang, sizeof out->lang, "go");
        else if (has_file(dir, "Makefile"))
            snprintf(out->lang, sizeof out->lang, "c");
        else if (has_file(dir, "package.json"))
            snprintf(out->lang, sizeof out->lang, "node");
        else
            snprintf(out->lang, sizeof out->lang, "python");
        snprintf(why, whylen, "its `run` script and the README `lab init` wrote (for %s)", out->exercises);
        return RL_OK;
    }
    /* A config folder: one EXERCISE.json of a config exercise. */
    char list[256], found[256] = "";
    int nfound = 0;
    snprintf(list, sizeof list, "%s", config_exercises ? config_exercises : "");
    char *save = NULL;
    for (char *w = strtok_r(list, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        char name[80];
        snprintf(name, sizeof name, "%s.json", w);
        if (has_file(dir, name)) {
            if (nfound++)
                snprintf(found + strlen(found), sizeof found - strlen(found), " and ");
            snprintf(found + strlen(found), sizeof found - strlen(found), "%s", name);
            snprintf(out->exercises, sizeof out->exercises, "%s", w);
            snprintf(out->submission, sizeof out->submission, "%s", name);
        }
    }
    if (nfound == 1) {
        snprintf(out->lang, sizeof out->lang, "json");
        snprintf(why, whylen, "its config file %s", found);
        return RL_OK;
    }
    if (nfound > 1) {
        snprintf(why, whylen, "%s holds %s: which one is the submission cannot be told", dir, found);
        return RL_EINVAL;
    }
    snprintf(why, whylen, "%s holds nothing of a starter", dir);
    return RL_ENOTFOUND;
}

bool rl_identity_differs(const char *graded_as, const char *made_for)
{
    return strcmp(graded_as ? graded_as : "", made_for ? made_for : "") != 0;
}

void rl_identity_note(const char *exercise, const char *graded_as, const char *made_for, char *buf, size_t len)
{
    char as[48], mf[48], ex[32];
    rl_printable(graded_as, as, sizeof as);
    rl_printable(made_for, mf, sizeof mf);
    rl_printable(exercise, ex, sizeof ex);
    char who[80], whose[96];
    if (mf[0])
        snprintf(who, sizeof who, "made for \"%s\"", mf);
    else
        snprintf(who, sizeof who, "made with no --student");
    if (as[0])
        snprintf(whose, sizeof whose, "as \"%s\", in that student's deployment", as);
    else
        snprintf(whose, sizeof whose, "with no identity, in the world's default deployment");
    snprintf(buf, len,
             "this folder was %s (its .relaylab) and is graded %s; the grading identity decides. "
             "Make your own with `lab init %s --student %s NEW-FOLDER` and solve it there",
             who, whose, ex, as[0] ? as : "YOUR-ID");
}
