/* rl_stats: order statistics of int64 samples (latencies, mostly): sorting
 * them and reading percentiles, for the figures the grader, the demos and
 * the benches report. One definition of "p99" for all of them: the sample
 * at index n * pct / 100 of the sorted samples, no interpolation.
 *
 * Threads: no state; any thread. */
#ifndef RL_STATS_H
#define RL_STATS_H

#include <stddef.h>
#include <stdint.h>

/* Sorts |v| (|n| samples) in ascending order, in place. */
void rl_stats_sort_i64(int64_t *v, size_t n);

/* The |pct|-th percentile (0 to 100) of |sorted|, |n| samples in ascending
 * order: sorted[n * pct / 100], the last sample for 100; 0 when |n| is 0. */
int64_t rl_stats_pct_i64(const int64_t *sorted, size_t n, unsigned pct);

#endif
