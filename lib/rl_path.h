/* rl_path: finding relaylab's own files from a running program. Programs
 * live in bin/ (or build/address/bin/ for sanitizer builds) and find their
 * siblings (bin/baseline) and the repository's data files
 * (lab/exercises/, grader/rubric.json) relative to their own executable, so
 * they work from any current directory. Also: whether a path handed in
 * stays inside the folder it was handed in with (rl_path_within). */
#ifndef RL_PATH_H
#define RL_PATH_H

#include <stddef.h>

/* Writes the folder holding the running executable into |out|. Returns 0,
 * RL_ESYS when /proc/self/exe cannot be read, RL_ETOOBIG if |len| is short. */
int rl_path_exe_dir(char *out, size_t len);

/* Writes "<exe dir>/<name>" (a sibling program) into |out|. Same returns. */
int rl_path_sibling(const char *name, char *out, size_t len);

/* Looks for |rel| (e.g. "lab/exercises") in the executable's folder and in
 * each folder above it, up to four levels; $RELAYLAB_HOME/<rel> wins when
 * set. Returns 0 with the path in |out|, or RL_ENOTFOUND. */
int rl_path_find_data(const char *rel, char *out, size_t len);

/* Whether |path| (symlinks followed) is |root| or under it (|root|'s
 * symlinks followed too): a student's folder may hold symlinks, but none
 * that leads out of it (`erin/deadline -> ../bob/deadline`). Writes the
 * resolved path into |real| (|len|) when |real| is not NULL. Returns 0
 * inside, RL_EINVAL outside, RL_ENOTFOUND when |path| or |root| does not
 * resolve (dangling), RL_ESYS on another error (errno). */
int rl_path_within(const char *root, const char *path, char *real, size_t len);

/* Whether every word of the shell command |cmd| that names an existing
 * file of |root| stays inside |root| (rl_path_within): the words are split
 * as the grader splits them (blanks and shell punctuation); a relative word
 * is |cwd|/WORD, an absolute one counts only when it lies under |root|
 * (python3 or /usr/bin/node are not the student's); "." and ".." (cd ..) are
 * not files. Returns 0, or
 * RL_EINVAL with the first word that leads out in |bad| (|badlen|). */
int rl_path_command_within(const char *root, const char *cwd, const char *cmd, char *bad, size_t badlen);

#endif
