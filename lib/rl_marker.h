/* rl_marker: a starter folder's `.relaylab` file and the one identity rule.
 * `lab init` writes the marker (the exercises a folder is for, its language,
 * its submission, and the student it was made for); `lab check`, the grader,
 * grade-class and Gradescope's run_autograder read it here, as untrusted
 * input (rl_file: a regular file of the folder, size-capped, never
 * blocking). The identity is the variant of the config exercises: the seed
 * that picks a student's deployment (README.md, "One identity"). Every path
 * grades in the identity of whoever grades (lab check: the marker's own;
 * grade-class: the roster; Gradescope: the submitter; CI: its setting), and a
 * folder made for someone else says so first (rl_identity_note). */
#ifndef RL_MARKER_H
#define RL_MARKER_H

#include <stdbool.h>
#include <stddef.h>

/* A .relaylab file is a few short lines; anything bigger is not one. */
#define RL_MARKER_MAX_BYTES 4096
#define RL_IDENTITY_MAX     128

typedef struct rl_marker {
    char exercises[256];           /* space-separated */
    char lang[32];                 /* python, node, c, go, json (config), or "" */
    char submission[256];          /* "./run", or the config's file name */
    char student[RL_IDENTITY_MAX]; /* the identity it was made for; "" when none was given */
    bool inferred;                 /* no .relaylab: recognised by its files (rl_marker_infer) */
} rl_marker;

/* Reads DIR/.relaylab into |out| with rl_file_read_untrusted (|dir| is the
 * root: a link leading out of it is refused). The student's line is
 * `student ID`; `variant ID`, what older kits wrote, is read the same.
 * Returns 0; RL_ENOTFOUND when there is none; RL_EPARSE when it lacks its
 * exercises or submission, or a value does not fit; or rl_file's refusal
 * (RL_EINVAL, RL_ETOOBIG, RL_ESYS). |err| says why, naming the file. */
int rl_marker_read(const char *dir, rl_marker *out, char *err, size_t errlen);

/* rl_marker_read of the folder held open as |dirfd| (rl_file_open_dir),
 * read beneath it whatever its path names by now; |dir| only names it in
 * |err|. Same returns. */
int rl_marker_read_at(int dirfd, const char *dir, rl_marker *out, char *err, size_t errlen);

/* Writes DIR/.relaylab for |m| (mode 0644). Returns 0 or RL_ESYS. */
int rl_marker_write(const char *dir, const rl_marker *m);

/* Recognises a starter folder whose .relaylab was lost (zip tools and
 * drag-and-drop drop hidden files) by what `lab init` put in it, when that
 * is unambiguous: a `run` script and the README.md whose "every exercise
 * this folder is for:" line names the exercises (a command starter), or,
 * with no `run`, exactly one config file named after a config exercise of
 * |config_exercises| (space-separated, e.g. "keepalive retry balance").
 * Only names and that one README line are read (rl_file, capped). Fills
 * |out| with inferred set and no student. Returns 0, RL_ENOTFOUND (nothing
 * of a starter) or RL_EINVAL (ambiguous: |why| says between what). */
int rl_marker_infer(const char *dir, const char *config_exercises, rl_marker *out, char *why, size_t whylen);

/* True when a folder made for |made_for| ("" or NULL: none recorded) is
 * graded as someone else: |graded_as| differs ("" or NULL: the world's
 * default, no identity). */
bool rl_identity_differs(const char *graded_as, const char *made_for);

/* The sentence that comes first in the feedback of a folder made for
 * another identity: who it was made for, who it is graded as and where,
 * and the command that makes a folder right (`lab init EXERCISE --student
 * ID NEW-FOLDER`). Names are quoted with unprintable bytes replaced. */
void rl_identity_note(const char *exercise, const char *graded_as, const char *made_for, char *buf, size_t len);

/* Copies |in| (NULL: "") into |out| (|len| bytes) made printable by
 * rl_text_printable (one line: ESC shows as \x1b), with '"' as '?', so a
 * name a student chose can be quoted in feedback or a terminal. */
void rl_printable(const char *in, char *out, size_t len);

#endif
