/* rl_alloc: aborting allocation wrappers; see rl_alloc.h. */
#include "rl_alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
