/* files: a starter folder's files, made readable by the grader's sandbox.
 * `lab init` copies the kit's templates into a fresh folder (never over
 * anything), `lab stubs` adds the proto and generated code; every file and
 * folder ends readable by others, because the sandbox runs a submission as
 * user nobody. Errors are RL_ codes with errno set; messages are the
 * caller's. */
#ifndef LAB_FILES_H
#define LAB_FILES_H

#include <stddef.h>
#include <sys/types.h>

/* The whole file |path| into |*out| (NUL-terminated, |*len| bytes without
 * the NUL; the caller frees it). Returns 0, RL_ENOTFOUND, or RL_ESYS. */
int lab_files_read(const char *path, char **out, size_t *len);

/* Writes |len| bytes to |path| with |mode| exactly (the umask is not
 * applied: the grader's sandbox reads the folder as nobody). Returns 0 or
 * RL_ESYS. */
int lab_files_write(const char *path, const char *data, size_t len, mode_t mode);

/* Copies |from| to |to|: 0755 when |from| is executable by its owner, else
 * 0644. Returns 0, RL_ENOTFOUND or RL_ESYS. */
int lab_files_copy(const char *from, const char *to);

/* The folder |path|, made if missing, 0755 either way. Returns 0 or
 * RL_ESYS. */
int lab_files_make_dir(const char *path);

/* `mkdir -p |dir|`, each new folder 0755. Returns 0, RL_ETOOBIG or
 * RL_ESYS. */
int lab_files_make_dirs(const char *dir);

/* 0 when |dir| is missing (then made, with its parents) or an empty folder;
 * RL_EINVAL when it holds something, which init never overwrites; RL_ESYS. */
int lab_files_fresh_dir(const char *dir);

/* What npm or a student's umask left unreadable under |dir| becomes
 * readable by others (and searchable, for folders and programs); symbolic
 * links are not followed. Returns 0 or RL_ESYS. */
int lab_files_make_readable(const char *dir);

#endif
