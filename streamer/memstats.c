/* memstats: jemalloc counters and /proc RSS; see memstats.h. */
#include "memstats.h"

#include "rl_err.h"

#include <stdio.h>
#include <unistd.h>

#ifdef RL_HAVE_JEMALLOC
#include <jemalloc/jemalloc.h>

static int64_t jemalloc_stat(const char *name)
{
    size_t value = 0, len = sizeof value;
    if (mallctl(name, &value, &len, NULL, 0) != 0)
        return -1;
    return (int64_t)value;
}
#endif

int rl_memstats_read(rl_memstats *out)
{
    out->allocated = out->resident = -1;
#ifdef RL_HAVE_JEMALLOC
    uint64_t epoch = 1;
    size_t len = sizeof epoch;
    if (mallctl("epoch", &epoch, &len, &epoch, len) == 0) {
        out->allocated = jemalloc_stat("stats.allocated");
        out->resident = jemalloc_stat("stats.resident");
    }
#endif
    out->rss = -1;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return RL_ESYS;
    long long size = 0, resident = 0;
    int n = fscanf(f, "%lld %lld", &size, &resident);
    fclose(f);
    if (n != 2)
        return RL_ESYS;
    out->rss = (int64_t)resident * sysconf(_SC_PAGESIZE);
    return RL_OK;
}
