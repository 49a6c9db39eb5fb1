/* roster: what a class is. The exercises and their scenarios come from the
 * grader itself (`grader list`), the points from its rubric, and the
 * students from the class folder: one subfolder a student, named by the
 * student's id, holding the folders `lab init` made (each names what it is
 * for in its `.relaylab` marker: exercises, submission, variant), or being
 * one itself. Nothing here runs a submission. */
#ifndef GC_ROSTER_H
#define GC_ROSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define GC_NAME_MAX      128
#define GC_MAX_SCENARIOS 16

typedef struct gc_exercise {
    char name[GC_NAME_MAX];
    bool config; /* graded from a file (--submission FILE), not a command */
    size_t nscenarios;
    char scenarios[GC_MAX_SCENARIOS][GC_NAME_MAX];
    double points[GC_MAX_SCENARIOS];       /* from the rubric; 0 when it has none */
    char visibility[GC_MAX_SCENARIOS][24]; /* the rubric's, or "" */
} gc_exercise;

/* Parses the text `grader list` prints: a line "NAME: SUMMARY (--submission
 * FILE)" or "(--submission 'COMMAND')" per exercise, then one indented line
 * "  ID  TITLE" per scenario. Fills |out| (room for |max|) and *n. Returns
 * 0, or RL_EPARSE when the text holds no exercise or a line does not fit
 * (|err| says which), RL_ETOOBIG when there are more than |max|. */
int gc_roster_parse_list(const char *text, gc_exercise *out, size_t max, size_t *n, char *err, size_t errlen);

/* Sets every exercise's points from the rubric JSON file |path| (an entry
 * is a number or {"points": N, ...}). Returns 0, or RL_EPARSE with |err|. */
int gc_roster_read_points(const char *path, gc_exercise *ex, size_t n, char *err, size_t errlen);

/* A folder `lab init` made, as its .relaylab marker describes it. */
typedef struct gc_starter {
    char dir[4096];            /* absolute path of the folder, symlinks resolved */
    char exercises[512];       /* space-separated */
    char submission[1024];     /* the marker's submission line */
    char variant[GC_NAME_MAX]; /* the identity it was made for (`student`); may be empty */
    char inferred[320];        /* no .relaylab: how it was recognised (rl_marker_infer), else "" */
    int fd;                    /* the folder held open since it was checked (O_PATH); owned:
                                * gc_roster_starters_fini closes it; -1 when none */
} gc_starter;

/* Subfolders of a student folder held open while it is walked. */
#define GC_MAX_STARTERS_HELD 64

/* A marker is a few short lines; a config a few KiB. Anything larger is not
 * what `lab init` made, and is refused before it is read. */
#define GC_MARKER_MAX ((size_t)64 * 1024)
#define GC_CONFIG_MAX ((size_t)1024 * 1024)

/* Reads the .relaylab of the folder held open as |dirfd| (shown as |dir|,
 * which |out|->dir gets; fd -1) into |out| (its `student` line, or
 * `variant` from older kits, into |variant|: rl_marker.h) as hostile input:
 * a regular file of at most GC_MARKER_MAX bytes resolved beneath that
 * folder (a symlink may not lead out of it), never a FIFO or a device.
 * Returns 0, RL_ENOTFOUND when there is none, RL_EPARSE when it lacks
 * exercises or submission, another RL_E* when it is refused; |err| says
 * why, but for RL_ENOTFOUND. */
int gc_roster_read_marker(int dirfd, const char *dir, gc_starter *out, char *err, size_t errlen);

/* True when |starter| lists |exercise|. */
bool gc_starter_has(const gc_starter *s, const char *exercise);

/* The starter folders of the student folder |dir| (a real folder, not a
 * symlink: see gc_roster_refuse_folder): the folder itself when it has a
 * marker, then every subfolder (by name, not hidden) with one. A subfolder
 * that is a symlink is followed only when it stays inside |dir|; one that
 * leads out, and a marker that is refused or malformed, is not a starter:
 * a line saying why, naming it as |label|/NAME, is appended to |notes|
 * ("; " between lines). When no folder has a marker (zip tools and
 * drag-and-drop drop hidden files), the folder and its subfolders
 * recognised by their files (rl_marker_infer; |config_exercises| the
 * config exercises' names, space-separated), each with |inferred| saying
 * how. Each starter holds its folder open (fd), as it was when checked:
 * the grader is handed that folder, never its name again (plan.c);
 * gc_roster_starters_fini closes them. Returns how many were found (at
 * most |max|). */
size_t gc_roster_starters(const char *dir, const char *label, const char *config_exercises, gc_starter *out, size_t max,
                          char *notes, size_t noteslen);

/* Closes the folders the first |n| starters of |st| hold. */
void gc_roster_starters_fini(gc_starter *st, size_t n);

/* The roster file |path| (CSV: FOLDER,ID a line; '#' comments, blank
 * lines, a header line "folder,id" and a UTF-8 byte order mark before the
 * first line are skipped): the identity of the student whose folder is
 * |folder|, into |id| (|idlen|). Returns 0, RL_ENOTFOUND (no line for
 * |folder|), or RL_EPARSE / RL_ESYS with |err| (a line without a comma, an
 * id that is not a roster name). */
int gc_roster_identity(const char *path, const char *folder, char *id, size_t idlen, char *err, size_t errlen);

/* Checks the whole roster |path| once, before any grading. Errors (|err|,
 * RL_EPARSE, naming the line): a line without a comma, an id that is not a
 * roster name, a folder listed twice with two ids, one id given to two
 * folders (both would be graded as one identity, one deployment).
 * Warnings on |warnings| (NULL: none), naming the line: a UTF-8 byte order
 * mark (spreadsheets' "CSV UTF-8"; ignored), a blank line (skipped), a line
 * repeated as it was (ignored). Returns 0, RL_EPARSE, or rl_file's refusal
 * (RL_ESYS when there is no such file). */
int gc_roster_check(const char *path, FILE *warnings, char *err, size_t errlen);
/* The student folders of |class_dir|: every entry not starting with '.'
 * that is a folder or a symlink to one, in name order, as names (malloc'd
 * array of malloc'd strings, free with gc_roster_free_names), whatever the
 * names hold: the caller skips what gc_roster_name_ok and
 * gc_roster_refuse_folder refuse. Returns 0, or RL_ESYS (|err|) when the
 * folder cannot be read. */
int gc_roster_students(const char *class_dir, char ***names, size_t *n, char *err, size_t errlen);

void gc_roster_free_names(char **names, size_t n);

/* True when |name| is safe as one path component of the output folder and
 * a CSV cell: letters, digits and "._-@+", not starting with '.'. */
bool gc_roster_name_ok(const char *name);

/* |name| with every byte gc_roster_name_ok refuses written as \xHH (a
 * space, an escape sequence, a newline), so that a row and a line can name
 * a folder whatever its name holds. */
void gc_roster_name_shown(const char *name, char *out, size_t len);

/* Why the student folder |path| (entry |name| of the class) is not graded,
 * written into |why|: it is a symlink (to a classmate's folder, or
 * anywhere: a hand-in is the folder itself, never a link to one). Returns
 * 0 when it is a real folder, RL_EINVAL when refused. */
/* Replaces every |from| in |text| (a NUL-terminated buffer of |len|) with
 * |to|: messages name a student's files relative to the class, not by the
 * instructor's absolute paths. */
void gc_roster_relabel(char *text, size_t len, const char *from, const char *to);

int gc_roster_refuse_folder(const char *path, const char *name, char *why, size_t whylen);

#endif
