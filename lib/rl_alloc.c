/* rl_alloc: aborting allocation wrappers; see rl_alloc.h. */
#include "rl_alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef RL_HAVE_JEMALLOC
/* jemalloc's compiled-in options, read at its first allocation (the
 * MALLOC_CONF variable still overrides them). By default it returns freed
 * pages to the kernel over 10 s of decay, and only while the program keeps
 * allocating: an idle server kept what its last burst needed. Measured with
 * the reference relay (2000 concurrent Process calls per burst): RSS 13 MiB
 * idle, about 85 MiB after ten bursts, still 85 MiB six seconds later;
 * with a background thread purging after 1 s of decay (and no muzzy
 * stage), back to 21 MiB within 2 s, and the same after thirty bursts, so
 * what stayed was the allocator's, not growth (bench/results/relay.md). */
const char *malloc_conf = "background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0";
#endif

static void oom(size_t n, const char *file, int line)
{
    fprintf(stderr, "relaylab: out of memory allocating %zu bytes at %s:%d\n", n, file, line);
    abort();
}

void *rl_xmalloc_at(size_t n, const char *file, int line)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom(n, file, line);
    return p;
}

void *rl_xcalloc_at(size_t count, size_t n, const char *file, int line)
{
    void *p = calloc(count ? count : 1, n ? n : 1);
    if (!p)
        oom(count * n, file, line);
    return p;
}

void *rl_xrealloc_at(void *p, size_t n, const char *file, int line)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        oom(n, file, line);
    return q;
}

char *rl_xstrdup_at(const char *s, const char *file, int line)
{
    size_t n = strlen(s) + 1;
    char *d = rl_xmalloc_at(n, file, line);
    memcpy(d, s, n);
    return d;
}
