/* upload: what a student handed in, told back to them when it is not what
 * grading expects. Gradescope's upload (or a student's class folder) that
 * holds no folder `lab init` made, and none recognised by its files, gets
 * one clear entry instead of a MISSING line per scenario: what was uploaded
 * (a capped listing), what was expected, and the hidden `.relaylab` named,
 * which zip tools and drag-and-drop often leave out. Nothing is followed
 * or opened: names and types only (lstat), made printable. */
#ifndef GC_UPLOAD_H
#define GC_UPLOAD_H

#include <stddef.h>

/* At most this many entries and this depth in a listing. */
#define GC_UPLOAD_MAX_ENTRIES 40
#define GC_UPLOAD_MAX_DEPTH   3

/* A listing of |dir| into |buf| (|len| bytes, always terminated): one
 * entry a line, "  deadline/", "    relay.py", "    link@" (a symbolic
 * link, not followed), sorted, names with unprintable bytes as '?', at most
 * GC_UPLOAD_MAX_ENTRIES entries and GC_UPLOAD_MAX_DEPTH levels, then "  ...
 * (N more)" for what was left out; "  (empty)" for an empty folder. */
void gc_upload_tree(const char *dir, char *buf, size_t len);

/* The one folder an upload was wrapped in (a zip of the folder that holds
 * the starter folders): when |dir| holds a single folder (not a link) and
 * nothing else but hidden entries and macOS's __MACOSX, its path into |out|
 * (|len|) and 0; else RL_ENOTFOUND. */
int gc_upload_wrapper(const char *dir, char *out, size_t len);

/* The whole message for an upload with no starter folder: what was
 * uploaded (|dir|'s listing), what was expected for |exercises| (comma- or
 * space-separated names), and how to hand in. Into |buf| (|len|). */
void gc_upload_unexpected(const char *dir, const char *exercises, char *buf, size_t len);

#endif
