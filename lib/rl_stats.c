/* rl_stats: sorting int64 samples and reading percentiles; see rl_stats.h. */
#include "rl_stats.h"

#include <stdlib.h>

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

void rl_stats_sort_i64(int64_t *v, size_t n)
{
    if (n)
        qsort(v, n, sizeof *v, cmp_i64);
}

int64_t rl_stats_pct_i64(const int64_t *sorted, size_t n, unsigned pct)
{
    if (!n)
        return 0;
    size_t i = n * pct / 100;
    return sorted[i < n ? i : n - 1];
}
