/* rl_memstats: a server's own memory figures, and a thread that logs them
 * on SIGUSR1 (and every second when asked).
 *
 * jemalloc (the streamer's allocator outside sanitizer builds) knows how
 * many bytes the program holds ("stats.allocated") and how much memory its
 * arenas keep resident ("stats.resident"); the kernel's RSS adds the code,
 * the stacks and whatever glibc still hands out. Comparing them tells an
 * instructor whether growth is live data (a queue) or freed-but-kept pages. */
#ifndef RL_MEMSTATS_H
#define RL_MEMSTATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct rl_memstats {
    int64_t allocated; /* bytes in live allocations; -1 without jemalloc */
    int64_t resident;  /* bytes jemalloc keeps resident; -1 without jemalloc */
    int64_t rss;       /* the kernel's resident set size; -1 if unreadable */
} rl_memstats;

/* Fills |out| with fresh figures (it refreshes jemalloc's "epoch" first, or
 * the counters would be those of the last refresh). Returns 0, or RL_ESYS
 * when /proc/self/statm could not be read (rss is then -1). */
int rl_memstats_read(rl_memstats *out);

/* Writes a server's own figures for the log line (e.g. "active=3 sent=9"):
 * called on the reporter's thread, so it must be thread-safe. */
typedef void (*rl_memstats_extra)(char *buf, size_t len);

typedef struct rl_memstats_reporter rl_memstats_reporter;

/* Blocks SIGUSR1 in the calling thread (call it before any other thread
 * exists, so every later thread inherits the mask and only the reporter
 * takes the signal), then starts the reporter's thread: one line
 * "stats (WHY) EXTRA allocated=N resident=N rss=N" through rl_log on every
 * SIGUSR1, and every second when |periodic|. |extra| may be NULL. Sets
 * *out, owned by the caller until rl_memstats_reporter_stop. Returns 0 or
 * RL_ESYS. */
int rl_memstats_reporter_start(bool periodic, rl_memstats_extra extra, rl_memstats_reporter **out);

/* Stops the thread within 100 ms and frees |r|. Accepts NULL. */
void rl_memstats_reporter_stop(rl_memstats_reporter *r);

#endif
