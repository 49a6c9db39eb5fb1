/* memstats: the streamer's own memory figures for --stats and SIGUSR1.
 *
 * jemalloc (the streamer's allocator outside sanitizer builds) knows how
 * many bytes the program holds ("stats.allocated") and how much memory its
 * arenas keep resident ("stats.resident"); the kernel's RSS adds the code,
 * the stacks and whatever glibc still hands out. Comparing them tells an
 * instructor whether growth is live data (a queue) or freed-but-kept pages. */
#ifndef STREAMER_MEMSTATS_H
#define STREAMER_MEMSTATS_H

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

#endif
