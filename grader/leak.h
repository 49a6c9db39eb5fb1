/* leak: what ended calls leave behind in a submission. A server that starts
 * something per call (a thread, a file, a queue) and is never told that a
 * cancelled call ended keeps it forever: one per call, without bound. The
 * flow and cancel exercises run a batch of cancelled calls and compare the
 * submission's process group before and after with these judges, kept
 * apart from the scenarios so tests/unit/grader/test_leak.c checks the arithmetic
 * without processes. */
#ifndef GR_LEAK_H
#define GR_LEAK_H

#include "exercise.h"
#include "rl_proc.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Cancelled calls in the measured batch. The batch follows a warm-up batch
 * of the same calls, so pools a runtime grows lazily (grpcio's executor up
 * to max_workers, Node's libuv pool) are at their working size before the
 * "before" sample. */
#define GR_LEAK_CALLS        30
#define GR_LEAK_WARMUP_CALLS 6
/* A count (threads, descriptors) may grow by a third of the calls: a pool
 * that was still growing, or a connection a runtime opens lazily, adds a
 * few; a leak of one per call adds all 30. Three times apart. */
#define GR_LEAK_COUNT_DIVISOR 3
/* RSS over the batch. Allocators and garbage collectors keep freed memory
 * (a correct grpc-js producer holds 22 MiB of V8 garbage under a slow
 * reader, bench/results/streamer.md), so memory alone only catches a leak
 * of more than ~2 MiB per call; threads and descriptors catch the rest. */
#define GR_LEAK_RSS_MIB 64
/* ... counted from the most the group held between the warm-up's calls, not
 * from its steady figure: a producer that floods memory until the cancel
 * lands keeps a varying share of it in its allocator (a Python one kept 45
 * MiB after the warm-up and 115 MiB after the batch, not falling, judged
 * by the ASan grader, which cancels later), while a leak grows past any
 * one call's high-water mark by its per-call size times the batch. */
/* A producer whose cancelled calls go on making chunks grows without bound
 * and would die of the grader's data limit (1 GiB) at a moment that
 * depends on the machine's speed; past this growth the scenario stops and
 * judges, so such a producer fails the same way everywhere. */
#define GR_LEAK_GIVE_UP_MIB 512
/* How long a server may take to release what its cancelled calls held
 * (grpcio frees a handler's thread a few ms after the cancel; a relay that
 * ignores the cancel holds it until its downstream call ends). */
#define GR_LEAK_SETTLE_MS 3000
/* An RSS over the bound that still falls (a new low by GR_LEAK_FALL_STEP
 * within the last second) is a runtime still freeing, not a leak: a
 * starved producer was judged with 81-148 MiB it was giving back
 * (bench/results/verdict-matrix.md). The settle waits for it up to this
 * much longer; a leak stays up and is judged after a second. */
#define GR_LEAK_FALLING_MS 12000
#define GR_LEAK_FALL_STEP  (UINT64_C(1) << 20)

/* A leak grows at every call; what a flooding producer's allocator keeps
 * grows only at the few calls that set a new high (a bigger flood before
 * its cancel landed: the allocator reuses what it kept for any smaller
 * one). So memory counts as a leak only when it also grew outside the
 * GR_LEAK_HIGH_STEPS calls that raised the group's high-water mark the
 * most: by the budget's share of the other calls. A Python producer that
 * floods until the cancel lands kept 148.8 MiB after the batch, in 1 of
 * 5 `make test` runs (three pytest groups at once delay its cancels):
 * bench/results/soak.md. */
#define GR_LEAK_HIGH_STEPS 3

typedef struct gr_leak_check {
    int calls; /* cancelled calls between the samples */
    int threads_before, threads_after;
    int fds_before, fds_after; /* -1: could not be read (not judged) */
    uint64_t rss_before, rss_after;
    uint64_t rss_high_steps; /* growth at the calls that set a new high */
    bool threads_grew, fds_grew, rss_grew;
    bool rss_kept_by_highs; /* over the budget, but only at a few highs */
    bool pass;
} gr_leak_check;

/* The growth of the high-water mark over |before| at the
 * GR_LEAK_HIGH_STEPS calls that raised it most, from |rss|, the group's
 * RSS sampled after each of |n| calls. */
uint64_t gr_leak_high_steps(uint64_t before, const uint64_t *rss, int n);

/* Judges |after| against |before| over |calls| cancelled calls;
 * |high_steps| is gr_leak_high_steps over the batch (0: every byte of
 * growth counts). */
void gr_leak_judge(const rl_proc_sample *before, const rl_proc_sample *after, int calls, uint64_t high_steps,
                   gr_leak_check *out);

/* One line naming what grew and by how much per call, or the figures that
 * came back. |calls_what| is e.g. "cancelled Produce calls". Returns the
 * snprintf length. */
int gr_leak_feedback(const gr_leak_check *c, const char *calls_what, char *buf, size_t len);

/* What a batch measured after each call, for its picture: the group's
 * RSS, threads and descriptors after each of the |n| calls made (warm-up
 * first), its RSS at the start, and the "before" the judge counts from
 * (0 until the warm-up ended). */
typedef struct gr_leak_trace {
    uint64_t rss[GR_LEAK_WARMUP_CALLS + GR_LEAK_CALLS];
    int threads[GR_LEAK_WARMUP_CALLS + GR_LEAK_CALLS], fds[GR_LEAK_WARMUP_CALLS + GR_LEAK_CALLS];
    int n;
    uint64_t start, before;
} gr_leak_trace;

/* The picture of a batch (figure.h): after each call (x: the call's
 * number), the quantity that tells the verdict against the bound the judge
 * used, the start of the judged batch marked. That is the RSS (bound: the
 * "before" + GR_LEAK_RSS_MIB), unless |lc| (the judgement) failed on
 * threads or descriptors alone: then that count (bound: its "before" plus
 * the tolerance). With |lc| the value after the settle is a second line
 * and the caption says what came back or what grew; without it the group
 * ran away and the give-up line is drawn instead. |calls_what| as in
 * gr_leak_feedback. Pure: tests/unit/grader/test_leak.c draws it. */
void gr_leak_figure(gr_figure *f, const char *calls_what, const gr_leak_trace *tr, const gr_leak_check *lc);

/* True when |now| is more than GR_LEAK_GIVE_UP_MIB over |start|. */
bool gr_leak_runaway(const rl_proc_sample *start, const rl_proc_sample *now);

/* "while N cancelled calls ran, RSS grew ..." for a runaway group. */
int gr_leak_runaway_feedback(const rl_proc_sample *start, const rl_proc_sample *now, int calls, const char *calls_what,
                             char *buf, size_t len);

/* Samples group |pgid| every 50 ms until the threads and descriptors are
 * back within the tolerance of |before| for |calls| calls, or |until_ns|,
 * or the group ran away from |start| (gr_leak_runaway); while the RSS is
 * over its bound and falling, it waits on (up to GR_LEAK_FALLING_MS past
 * |until_ns|). The last sample is in |after|. A server frees what a cancelled call held a moment after the
 * client saw its status, so the judge waits for that condition instead of
 * sampling once. Returns 0 or RL_ENOTFOUND (the group is gone). */
int gr_leak_settle(pid_t pgid, const rl_proc_sample *start, const rl_proc_sample *before, int calls, int64_t until_ns,
                   rl_proc_sample *after);

/* Makes call number |i| (0-based over warm-up and batch) and ends it by a
 * cancel, waiting for its status. |start| is the group before the first
 * call: a call that waits on the submission checks gr_leak_runaway
 * against it meanwhile, so a producer that makes a whole response before
 * sending any of it fails at the same point on any machine instead of
 * dying of the data limit at a moment that depends on its speed. Returns
 * 0, or GR_DECIDED with the verdict in |out| (the call could not
 * be made, or the group ran away: FAIL, TIMEOUT, CRASH, ERROR). */
typedef int (*gr_leak_call_fn)(gr_ctx *ctx, int i, const rl_proc_sample *start, gr_scenario_result *out);

/* The no-leak scenario both exercises run: GR_LEAK_WARMUP_CALLS calls,
 * a sample once the group is steady, GR_LEAK_CALLS more, then the judge
 * after gr_leak_settle. A group that runs away (gr_leak_runaway) fails at
 * once. |calls_what| names the calls in the feedback ("cancelled Produce
 * calls"). Returns 0 with |out| filled. */
int gr_leak_scenario(gr_ctx *ctx, gr_leak_call_fn call, const char *calls_what, gr_scenario_result *out);

#endif
