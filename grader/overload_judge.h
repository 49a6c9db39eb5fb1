/* overload_judge: the overload exercise's rules, apart from its scenarios
 * (ex_overload.c) so that they are unit-tested without a process
 * (tests/unit/grader/test_overload_judge.c): the tolerances with the
 * measurements they come from (bench/results/overload.md), what the
 * baseline's records and the client's statuses say, gRPC's reconnect
 * bound, and each scenario's verdict as a pure function of what it
 * measured (facts in, a verdict and its feedback out). Times are ms unless
 * named _ns. Nothing is owned unless said: every pointer in a facts struct
 * is read during the call only. */
#ifndef GR_OVERLOAD_JUDGE_H
#define GR_OVERLOAD_JUDGE_H

#include "relaylab.pb-c.h"
#include "rl_load.h"
#include "verdict.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A call fails fast within this: a relay that fails fast answers in 1-2 ms
 * (measured: at most 136 ms, the reconnect attempt in progress); one that
 * waits for the backend takes the whole deadline. It sits far from both,
 * for a loaded machine and a Python relay. */
#define GR_OVERLOAD_FAST_MS 1000
/* A call reaching the baseline this long after its caller's deadline was
 * forwarded after it (a deadline arrives up to ~9 ms off: grpc-facts). */
#define GR_OVERLOAD_LATE_TOL_MS 20
/* A downstream call still open this long after its caller's deadline
 * outlives the caller: neither deadline nor cancel reached it. */
#define GR_OVERLOAD_LINGER_MS 500

/* gRPC's reconnect backoff (connection-backoff.md; the defaults of the C
 * core 1.51, grpcio and grpc-js alike, and the grader cannot change a
 * submission's channel): first retry after 1 s, then x1.6 each time, each
 * +-20 %. */
#define GR_OVERLOAD_BACKOFF_INITIAL_MS 1000.0
#define GR_OVERLOAD_BACKOFF_MULTIPLIER 1.6
#define GR_OVERLOAD_BACKOFF_JITTER     0.2
#define GR_OVERLOAD_BACKOFF_MAX_MS     120000.0
/* Past the backoff: the connect, the first call through, a loaded machine. */
#define GR_OVERLOAD_RECOVER_SLACK_MS 1000

/* Goodput in the second half of the overload (the first holds the start-up
 * that any queue serves): at least this share of the capacity. The
 * reference relay keeps 9.6-10.4/s quiet and at least 5.2/s with every
 * core busy twice over; the unbounded queue falls to 0. */
#define GR_OVERLOAD_GOODPUT_SHARE 0.3
/* Accepted calls that missed their deadline, calls the baseline worked on
 * for nobody, and downstream calls still open after their caller's
 * deadline, each at most this many of the 500: none for the reference
 * relay on a quiet machine; with every core busy twice over (our hogs and
 * another's), up to 16 calls missed and 8 ran late at the baseline, when
 * the backend's 800 ms of Work and the relay's answer were delayed by the
 * machine. Every mistake here misses 480 or more. */
#define GR_OVERLOAD_LATE_TOL  25
#define GR_OVERLOAD_WASTE_TOL 25
/* The relay's peak RSS (its process group, or its sandbox's processes):
 * measured peaks under this load, the C reference 17-20 MiB, grpcio
 * relays about 40 MiB, grpc-js about 60 MiB; the budget is several times
 * the largest, and a relay that keeps a thread or a buffer for every
 * call it holds goes past it. */
#define GR_OVERLOAD_RSS_BUDGET_MIB 256.0

/* ---- a stalled grader ----
 *
 * The grader's own client ends a call at its deadline with its own timer,
 * in this process: a call it saw end DEADLINE_EXCEEDED long after its
 * deadline means the grader got no CPU for that long, and neither, on the
 * same cores, did the submission. The starved grader measured in the
 * overload scenario saw 2 s deadlines end at 3.4 s (1.4 s late); past
 * GR_OVERLOAD_STALL_MS a verdict that rests on timing is "grade again"
 * (ERROR), never FAIL. */
#define GR_OVERLOAD_STALL_MS 2000

/* ---- a starved chain ----
 *
 * The grader's client can be on time while the relay and the baseline are
 * not: the scheduler shares the cores by thread, and a machine busy with
 * other work starves a chain of processes as a whole. Their schedstat
 * wait (rl_proc_group_sched: runnable, not run) over the load says how
 * long. Measured over the 5 s load and its 2 s deadlines (2026-12-05,
 * bench/results/overload.md): quiet, 112-297 ms for the C, Python and Node
 * reference relays, up to 924 ms for a Python relay of 20 threads queueing
 * calls; with 24 busy loops on the 2 cores, 2183-7294 ms, when the Node
 * reference left 16-32 calls to wait their deadline (the wrong FAIL at 32).
 * A chain that waited at least one deadline's length for a CPU may have let
 * a call wait its deadline for want of one. Then a timing FAIL that touched
 * a minority of the calls is "grade again" (ERROR); one that touched at
 * least half stands: every mistake known holds 480 or more of the 500, and
 * no starvation measured came near half. A goodput collapse stands too: it
 * is what a relay that refuses what it could serve shows, starved or not. */
#define GR_OVERLOAD_STARVED_SHARE 0.5

/* The most any of the |n| |calls| that ended DEADLINE_EXCEEDED ended after
 * its deadline, in ms (0 when none was late). */
int64_t gr_overload_client_lag_ms(const rl_load_call *calls, size_t n);

/* The longest a reconnect attempt can take to come after the backend is
 * back, when it was down for |outage_ms|, by the backoff above. */
int64_t gr_overload_backoff_bound_ms(int64_t outage_ms);

/* What the baseline saw of a load: calls forwarded after their caller's
 * deadline, calls still open long after it, and wasted work. */
typedef struct gr_overload_seen {
    int reached; /* records of the load's calls (or of unknown tags) */
    int late;    /* arrived after the caller's deadline, or with no time left */
    int64_t late_max_ms;
    int linger; /* open GR_OVERLOAD_LINGER_MS after the caller's deadline */
    int wasted; /* the baseline's own count (CallRecord.wasted) */
} gr_overload_seen;

/* Reads the baseline's records |obs| (NULL: none) of the |n| |calls| tagged
 * "|prefix|.I" into |s|; a record still open counts as open until |now_ns|.
 * The grader's own warm-up (".warm") is not the load's. */
void gr_overload_look(const char *prefix, const rl_load_call *calls, size_t n, const Relaylab__ObserveReply *obs,
                      int64_t now_ns, gr_overload_seen *s);

/* ---- refused: the backend's port closed ---- */

/* What the calls saw while the backend's port was closed. Zero it, then
 * gr_overload_refused_add each call. */
typedef struct gr_overload_refused_facts {
    int made;           /* calls made */
    int slow;           /* took over GR_OVERLOAD_FAST_MS */
    int wrong;          /* fast, but not UNAVAILABLE */
    int64_t worst_ms;   /* the longest */
    char slow_st[200];  /* the first slow one's status */
    char wrong_st[200]; /* the first wrong one's status */
} gr_overload_refused_facts;

/* Adds a call that ended with gRPC |status| (|status_text| its words)
 * |ms| after its start. */
void gr_overload_refused_add(gr_overload_refused_facts *f, int64_t ms, int status, const char *status_text);

/* refused: FAIL for any slow call (the relay waits for the backend), then
 * for a fast failure other than UNAVAILABLE; else PASS (|calls| the calls
 * the scenario makes, all of them made). Feedback into |buf|. */
gr_verdict gr_overload_judge_refused(const gr_overload_refused_facts *f, int calls, char *buf, size_t len);

/* ---- blackhole: the backend accepts and never answers ---- */

typedef struct gr_overload_blackhole_facts {
    size_t n;     /* calls */
    int ok;       /* answered OK (a cache?) */
    int fast;     /* failed within GR_OVERLOAD_FAST_MS / 4 */
    int unended;  /* no status */
    int grace_ms; /* how long after its deadline a call may have no status */
    gr_overload_seen seen;
} gr_overload_blackhole_facts;

/* Counts the |n| |calls| into |f|'s n, ok, fast and unended. */
void gr_overload_blackhole_count(const rl_load_call *calls, size_t n, gr_overload_blackhole_facts *f);

/* blackhole: FAIL for a call with no status, one forwarded after its
 * caller's deadline, or one left open downstream; else PASS. Feedback
 * into |buf|. */
gr_verdict gr_overload_judge_blackhole(const gr_overload_blackhole_facts *f, char *buf, size_t len);

/* ---- recovers: the backend back after an outage ---- */

typedef struct gr_overload_recovers_facts {
    int64_t outage_ms;   /* the backend was down this long */
    int64_t bound_ms;    /* gr_overload_backoff_bound_ms + GR_OVERLOAD_RECOVER_SLACK_MS */
    bool recovered;      /* a call succeeded within |bound_ms| of the return */
    int64_t ok_after_ms; /* (recovered) the return to that call's end */
    const char *last;    /* (not recovered) the last call's status */
} gr_overload_recovers_facts;

/* recovers: PASS when a call succeeded within the bound, else FAIL.
 * Feedback into |buf|. */
gr_verdict gr_overload_judge_recovers(const gr_overload_recovers_facts *f, char *buf, size_t len);

/* ---- overload: ten times the capacity ---- */

/* What the overload's calls ended with. */
typedef struct gr_overload_outcomes {
    int ok, ok_late_half, waited, fast, wrong, unended;
    int64_t waited_max, fast_max; /* ms, of the calls that waited and of the refused */
    int wrong_code;               /* the last refusal with a status other than the two */
    int64_t *lat;                 /* owned: the OK calls' latencies, ms, sorted; free() it */
    size_t nlat;
} gr_overload_outcomes;

/* Sorts every one of the |n| |calls| into |c| by its status; |half_ns| is
 * when the second half of the load began (its OK calls are the goodput). */
void gr_overload_outcomes_count(const rl_load_call *calls, size_t n, int64_t half_ns, gr_overload_outcomes *c);

/* The message most of the refusals in |calls| carried (RESOURCE_EXHAUSTED
 * or UNAVAILABLE, "" when none had one; a pointer into |calls|), and how
 * many carried it. */
const char *gr_overload_common_refusal(const rl_load_call *calls, size_t n, int *count);

typedef struct gr_overload_load_facts {
    /* the world */
    double rate, capacity_per_s;
    int duration_ms, deadline_ms, grace_ms;
    /* what was measured */
    const rl_load_call *calls; /* the |n| calls (their refusals' words, the client's lag) */
    size_t n;
    const gr_overload_outcomes *c;
    const gr_overload_seen *s;
    double goodput;        /* calls/s answered OK in the second half */
    double peak_mib;       /* the relay's peak RSS */
    int64_t chain_wait_ms; /* the relay's and the baseline's wait for a CPU during the load; -1 unknown */
} gr_overload_load_facts;

/* overload: FAIL for calls with no status, forwarded past their deadline
 * or without the time to be served, left open downstream, held to their
 * deadline, a goodput collapse, a wrong refusal status, or the RSS budget
 * passed, every reason found named; ERROR instead when the reasons rest
 * on timing alone and either the grader's own client lagged past
 * GR_OVERLOAD_STALL_MS or the chain was starved (see above), the goodput
 * held and each count of calls behind them is under
 * GR_OVERLOAD_STARVED_SHARE of the load; else PASS. The feedback, every verdict's, ends
 * with what the load met. Into |buf|. */
gr_verdict gr_overload_judge_load(const gr_overload_load_facts *f, char *buf, size_t len);

#endif
