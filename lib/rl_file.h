/* rl_file: reading a file a submission handed in. The grader and the kit's
 * tools run as root over folders a student filled, so every path there is
 * hostile: a symbolic link to /etc/shadow, a FIFO that never gives an end of
 * file, a device, a file of gigabytes. rl_file_read_untrusted opens such a
 * file the way the student could: a regular file only, inside the
 * submission's folder after every link is followed, owned by the folder's
 * owner or readable by anyone, and no bigger than a cap. It never blocks and
 * its messages never quote the file, so a refusal leaks nothing of a file
 * the student could not read. */
#ifndef RL_FILE_H
#define RL_FILE_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* Reads the whole of the file at |path| into |*out| (NUL-terminated; the
 * caller frees it with free()) with its length, not counting the NUL, in
 * |*len|. |root| is the submission's folder: the file, once every symbolic
 * link in |path| is followed, must lie inside it; NULL means the folder
 * that holds |path| itself (a link leading anywhere else is refused). The
 * file must be a regular file (no FIFO, socket, device or folder) of at
 * most |max| bytes. When the caller is root, the file must also be one the
 * submission's user could read: owned by whoever owns |root|, or readable
 * by others (the sandbox runs the submission as nobody).
 *
 * The file is opened with O_NONBLOCK and O_NOCTTY and checked with fstat
 * before any read, so a FIFO or a terminal is refused at once; its real
 * path is checked again through the open descriptor, so swapping a folder
 * for a link between the check and the open does not help.
 *
 * Returns 0; RL_ENOTFOUND (no such file); RL_EINVAL (not a regular file, a
 * link leading out of |root|, not readable by the submission's user);
 * RL_ETOOBIG (above |max|); RL_ESYS (another system error). On failure
 * |*out| is NULL and |err| (|errlen| bytes, may be 0) holds one line of why,
 * without the path (the caller names it) and without a word of the file's
 * content or of where a link leads. */
int rl_file_read_untrusted(const char *path, const char *root, size_t max, char **out, size_t *len, char *err,
                           size_t errlen);

/* Opens the folder |path| once, as the handle everything about a
 * submission is then built from (O_PATH | O_DIRECTORY | O_NOFOLLOW,
 * close-on-exec): a path can be swapped between two uses, a handle cannot.
 * |path| itself may not be a symbolic link (a link at its last component is
 * refused; its parents are followed). Writes the folder's real path at the
 * moment it was opened into |real| (|reallen|; NULL: not wanted). Returns 0
 * with |*fd| (the caller closes it); RL_ENOTFOUND; RL_EINVAL (a link, or
 * not a folder; errno ELOOP or ENOTDIR); RL_ESYS. */
int rl_file_open_dir(const char *path, int *fd, char *real, size_t reallen);

/* openat2(|dirfd|, |rel|, |flags| | O_CLOEXEC) with every component, links
 * included, kept beneath |dirfd| (RESOLVE_BENEATH, no /proc magic links).
 * Returns the descriptor, or -1 with errno (EXDEV: it would lead out). */
int rl_file_open_beneath(int dirfd, const char *rel, int flags);

/* rl_file_read_untrusted for the file |rel| of the folder held open as
 * |dirfd| (rl_file_open_dir): resolved beneath that folder, whatever its
 * path names by now, with the same rules, returns and messages. A link is
 * followed only while it stays inside; an absolute one is refused. */
int rl_file_read_untrusted_at(int dirfd, const char *rel, size_t max, char **out, size_t *len, char *err,
                              size_t errlen);

/* Writing a file whole, where a hostile hand may have planted links: the
 * grader writes results as root into folders a submission or a student
 * may have reached. rl_file_tmp_open creates a fresh file beside |path|
 * (mkstemp in |path|'s folder, so O_EXCL: a link at any name there is never
 * followed), with |mode|, and writes its name into |tmp| (|tmplen| bytes).
 * Returns the stream, or NULL with errno set (ENAMETOOLONG when |tmp| is
 * short). rl_file_tmp_commit flushes and closes |f|, then renames |tmp| over
 * |path| (a link at |path| is replaced, not followed); on any failure it
 * removes |tmp|. Returns 0, or RL_ESYS with errno set. */
FILE *rl_file_tmp_open(const char *path, mode_t mode, char *tmp, size_t tmplen);
int rl_file_tmp_commit(FILE *f, const char *tmp, const char *path);

#endif
