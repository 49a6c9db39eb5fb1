/* rl_flow: the flow-control lab's measurement, shared by the grader's flow
 * exercise, `lab compare-memory` and bin/bench-streamer.
 *
 * An rl_memwatch samples the RSS and CPU time of a whole process group from
 * /proc (a runtime may fork helpers; the group is what the machine pays).
 * rl_flow_stall opens a Produce stream, reads a few chunks, then stops
 * reading (or reads one chunk every few ms) while sampling, until the RSS
 * has been flat for a while or a bound is reached: a producer that respects
 * flow control stops after one window and its RSS goes flat within a
 * second; one that queues everything grows by count * size first.
 *
 * Threads: these functions block their caller and use no loop: any thread,
 * one thread at a time per rl_memwatch and rl_stream. */
#ifndef RL_FLOW_H
#define RL_FLOW_H

#include "rl_proc.h"
#include "rl_stream.h"

#include <grpc/grpc.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define RL_MIB (1024.0 * 1024.0)
/* Samples rl_memwatch keeps for rl_memwatch_rise: 6 s at the usual 50 ms. */
#define RL_MEMWATCH_RECENT 128

typedef struct rl_memwatch_point {
    int64_t t_ns;   /* since the watch started */
    uint64_t rss;   /* group RSS, bytes */
    int64_t cpu_ns; /* group user+system CPU time so far */
} rl_memwatch_point;

typedef struct rl_memwatch {
    pid_t pgid;
    int64_t t0_ns;     /* CLOCK_MONOTONIC at start */
    uint64_t base_rss; /* first sample */
    uint64_t peak_rss, last_rss;
    int64_t base_cpu_ns, last_cpu_ns;
    rl_memwatch_point *points; /* every sample, owned; NULL unless keep_series */
    size_t npoints, cappoints;
    bool keep_series;
    /* The current flat run: samples since |flat_since_ns| stayed within
     * [flat_lo, flat_hi]. */
    int64_t flat_since_ns;
    uint64_t flat_lo, flat_hi, flat_tol;
    /* The peak at the latest samples (a ring, |recent_n| used, newest at
     * |recent_head - 1|): how fast the peak is rising now. */
    struct {
        int64_t t_ns;
        uint64_t peak;
    } recent[RL_MEMWATCH_RECENT];
    size_t recent_head, recent_n;
} rl_memwatch;

/* Starts watching group |pgid| and takes the first sample (the baseline).
 * RSS moving by less than |flat_tol| bytes counts as flat. Returns 0, or
 * RL_ENOTFOUND when the group has no process. */
int rl_memwatch_start(rl_memwatch *w, pid_t pgid, uint64_t flat_tol, bool keep_series);

/* Takes one sample. Returns 0 or RL_ENOTFOUND (the group is gone). */
int rl_memwatch_sample(rl_memwatch *w);

/* Growth of the peak over the baseline, in bytes (0 if it shrank). */
uint64_t rl_memwatch_growth(const rl_memwatch *w);

/* How long the RSS has been flat, in ns. */
int64_t rl_memwatch_flat_ns(const rl_memwatch *w);

/* How much the peak rose over the last |over_ns| (from the newest sample
 * at least that old, or the oldest one kept), in bytes. */
uint64_t rl_memwatch_rise(const rl_memwatch *w, int64_t over_ns);

/* Frees the series. Accepts a zeroed struct. */
void rl_memwatch_fini(rl_memwatch *w);

typedef struct rl_flow_stall_opts {
    uint32_t count, size;                /* the request: 3000 x 65536 in the lab */
    uint32_t read_first;                 /* chunks read before the stall (>= 1) */
    int64_t read_every_ms;               /* 0: stop reading; > 0: a slow reader taking one
                                          * chunk per period during the watch */
    int64_t period_ms;                   /* sampling period */
    int64_t min_ms;                      /* never judge before this long */
    int64_t flat_ms;                     /* stop once flat this long (after min_ms) */
    int64_t max_ms;                      /* stop at this bound, unless undecided (below) */
    uint64_t undecided_lo, undecided_hi; /* at max_ms, an RSS still moving
                                          * whose growth is in (lo, hi] is undecided: a
                                          * starved producer may be slow to show what it
                                          * does, so the watch goes on while it stays so,
                                          * up to |undecided_max_ms|; hi 0: never */
    int64_t undecided_max_ms;
    uint64_t rising_per_s;    /* with undecided_hi set: a peak that rose more
                               * than this in the last second is undecided too,
                               * whatever its growth: a starved producer that
                               * does not wait for the window is still growing
                               * when the watch would end (0: no such rule) */
    int64_t trend_ms;         /* with undecided_hi set: a peak that rose more */
    uint64_t trend_min;       /* than |trend_min| over the last |trend_ms| is
                               * not settled, however flat its last flat_ms,
                               * and at max_ms is undecided too: a starved
                               * producer's rate swings, so its last second
                               * may be slow while the trend still climbs
                               * (0: no such rule) */
    int starved_pct;          /* with undecided_hi set: a watch whose group
                               * waited for a CPU more than this share (%) of
                               * the last flat_ms is not settled, however flat,
                               * and at max_ms is undecided too: a producer
                               * waiting for a CPU makes nothing, so its flat
                               * second says nothing (a timer-paced unbounded
                               * one "settled" at 1.7 MiB on a loaded machine;
                               * bench/results/soak.md). One paced by the
                               * window sleeps, it does not wait (0: no such
                               * rule) */
    uint64_t give_up_growth;  /* stop at once past this growth (protects the
                               * machine); 0: no such stop */
    int64_t first_timeout_ms; /* bound for the first chunk to arrive */
} rl_flow_stall_opts;

/* Fills |o| with the lab's defaults: 3000 x 64 KiB, read 1, sample every
 * 50 ms, judge after 1.5 s once flat for 1 s, at most 8 s, give up past 1 GiB. */
void rl_flow_stall_defaults(rl_flow_stall_opts *o);

typedef struct rl_flow_stall_result {
    int64_t first_chunk_ms; /* from open to the first chunk */
    int64_t watched_ms;     /* how long the stall was watched */
    bool settled;           /* stopped because the RSS was flat */
    bool gave_up;           /* stopped at give_up_growth */
    bool rising;            /* stopped undecided: RL_FLOW_RISING */
    int wait_pct;           /* at the end: share (%) of the last flat_ms the
                             * group waited for a CPU; -1 unknown */
    uint64_t read;          /* chunks read so far (s->received) */
} rl_flow_stall_result;

/* What a watch does next, from where it stands: go on, or stop for one of
 * four reasons. Pure, for the tests. */
typedef enum rl_flow_step {
    RL_FLOW_GO_ON,
    RL_FLOW_SETTLED, /* flat for flat_ms after min_ms, not climbing over
                      * trend_ms, and not starved */
    RL_FLOW_GAVE_UP, /* past give_up_growth */
    RL_FLOW_ENDED,   /* max_ms reached and decided, or undecided_max_ms
                      * reached high in the band */
    RL_FLOW_RISING,  /* undecided_max_ms reached, the RSS within the
                      * band's top and still rising, or starved */
} rl_flow_step;

/* Decides the next step of a watch |watched_ns| in, whose RSS peak grew
 * |growth| bytes, has been flat |flat_ns|, rose |rise_1s| in the last
 * second and |rise_trend| over the last |o->trend_ms|, and whose group
 * waited for a CPU |wait_pct| % of the last |o->flat_ms| (< 0: unknown, no
 * starved rule), by the rules in |o|. */
rl_flow_step rl_flow_stall_step(const rl_flow_stall_opts *o, int64_t watched_ns, uint64_t growth, int64_t flat_ns,
                                uint64_t rise_1s, uint64_t rise_trend, int wait_pct);

/* Opens Produce(|tag|, count, size) on |ch| into |s| (caller memory, finish
 * with rl_stream_fini), reads |read_first| chunks, then watches the group
 * with |w| (already started: its baseline is taken before the call) while
 * not reading, or reading slowly. The stream is left open so the caller can
 * read the rest or cancel. Returns 0, RL_ETIMEOUT (first chunks did not come
 * in time), RL_EINVAL (a chunk was wrong: s->error), RL_EGRPC (the call
 * ended or failed early; the status is in |s|) or RL_ENOTFOUND (the process
 * group vanished); |err| says what happened in each case. */
int rl_flow_stall(grpc_channel *ch, const char *tag, const rl_flow_stall_opts *o, rl_memwatch *w, rl_stream *s,
                  rl_flow_stall_result *out, char *err, size_t errlen);

/* Reads the rest of |s| to its end, checking every chunk, until |until_ns|.
 * Returns 0 when all |s->count| chunks arrived and the status is OK;
 * otherwise RL_EINVAL / RL_ETIMEOUT / RL_EGRPC with the reason in |err|. */
int rl_flow_read_rest(rl_stream *s, int64_t until_ns, char *err, size_t errlen);

/* ---- a producer to measure, for the lab and the bench ---- */

typedef struct rl_flow_server {
    rl_proc proc;   /* the producer's process group */
    char addr[128]; /* "127.0.0.1:PORT" from its readiness line */
} rl_flow_server;

/* Starts |argv| (argv[0] looked up in PATH; a command line goes to
 * rl_flow_server_start_command below) with RELAYLAB_LISTEN=127.0.0.1:0 and
 * waits up to |ready_ms| for its "listening on HOST:PORT" line
 * (rl_proc_start_server). Returns 0, or
 * RL_ESYS / RL_ECHILD / RL_ETIMEOUT / RL_EINVAL with the reason and the tail
 * of its output in |err|. Stop it with rl_flow_server_stop even on failure.
 * Connect to it with rl_channel_isolated (rl_channel.h). */
int rl_flow_server_start(rl_flow_server *fs, const char *const *argv, int64_t ready_ms, char *err, size_t errlen);

/* The same for a command line (a student's producer), started as the
 * grader starts a submission (rl_proc_spawn_command); |err| names it by
 * |line|. */
int rl_flow_server_start_command(rl_flow_server *fs, const char *line, int64_t ready_ms, char *err, size_t errlen);

/* SIGTERM, a short grace, SIGKILL; releases the capture. */
void rl_flow_server_stop(rl_flow_server *fs);

#endif
