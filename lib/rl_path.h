/* rl_path: finding relaylab's own files from a running program. Programs
 * live in bin/ (or build/address/bin/ for sanitizer builds) and find their
 * siblings (bin/baseline) and the repository's data files
 * (lab/exercises/, grader/rubric.json) relative to their own executable, so
 * they work from any current directory. */
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

#endif
