/* coverage_judge: the coverage exercise's arithmetic on what the tunnel
 * servers recorded (their ObserveTunnel replies), apart from the scenarios
 * so that it is tested on its own: streams and busy streams on a server at
 * an instant, the peak of all streams, queue waits, and the streams an agent
 * closed in a window. Pure functions; instants are CLOCK_MONOTONIC ns. */
#ifndef GR_COVERAGE_JUDGE_H
#define GR_COVERAGE_JUDGE_H

#include "relaylab.pb-c.h"
#include "verdict.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef Relaylab__ObserveTunnelReply gr_cov_server;

/* Streams of |s| open at |t| (opened at or before, not closed by then). */
int gr_cov_streams_at(const gr_cov_server *s, int64_t t);

/* Streams of |s| carrying a call at |t| (handed at or before, not answered
 * or lost by then): the server's calls in flight. */
int gr_cov_busy_at(const gr_cov_server *s, int64_t t);

/* The most streams open on all |n| servers together at any instant of
 * [t0, t1], and when (*at, may be NULL). */
int gr_cov_peak_total(const gr_cov_server *const *servers, size_t n, int64_t t0, int64_t t1, int64_t *at);

/* The most streams open on |s| at any instant of [t0, t1]. */
int gr_cov_peak(const gr_cov_server *s, int64_t t0, int64_t t1);

/* The queue waits of |s|'s calls dispatched in [t0, t1]: a call's wait is
 * handed - dispatched, or now - dispatched while still queued. */
typedef struct gr_cov_waits {
    size_t calls;      /* dispatched in the window */
    size_t queued;     /* still waiting at |now| */
    size_t unanswered; /* handed but not answered at |now| (lost ones too) */
    size_t lost;       /* their stream ended before the answer */
    int64_t max_ns;    /* the longest wait */
    int64_t max_at_ns; /* when that call was dispatched */
    int64_t p50_ns;
} gr_cov_waits;
void gr_cov_wait_stats(const gr_cov_server *s, int64_t t0, int64_t t1, int64_t now, gr_cov_waits *out);

/* Streams of |s| closed in [t0, t1], by a half-close or a cancel: while a
 * scenario watches, only the agent ends streams (the world cancels them
 * after the last observation). */
int gr_cov_closed_in(const gr_cov_server *s, int64_t t0, int64_t t1);

/* Streams of |s| closed in [t0, t1] younger than |age_ns| after
 * carrying a call: a stream used once and dropped (churn). */
int gr_cov_young_closes(const gr_cov_server *s, int64_t t0, int64_t t1, int64_t age_ns);

/* The first instant in [t0, t1] from which |s| holds no open stream until
 * t1 (an evacuation), or 0 when it holds one at t1 or never emptied. */
int64_t gr_cov_emptied_at(const gr_cov_server *s, int64_t t0, int64_t t1);

/* Ticks the growing rule needs to cover |demand| calls in flight on a
 * server holding |have| streams when a |share| (0 < share <= 1) of new
 * streams land there: growing opens RL_COV_GROW_MIN, then doubles each
 * tick, so after T ticks GROW_MIN * (2^T - 1) were opened and share of them
 * landed. The smallest T with have + share * opened >= demand + reserve;
 * 0 when already covered, -1 when no T up to 30 does (share 0). */
int gr_cov_ticks_to_cover(int demand, int have, double share);

/* Streams the growing rule opens in |ticks| ticks: GROW_MIN * (2^ticks - 1). */
int64_t gr_cov_opened_in(int ticks);

/* The earliest opened_ns of |s|'s streams, 0 when it has none. */
int64_t gr_cov_first_open(const gr_cov_server *s);

/* The latest answered_ns of |s|'s calls, 0 when none was answered. */
int64_t gr_cov_last_answer(const gr_cov_server *s);

/* Idle streams (open, not busy) at |t| on the |n| servers other than |b|. */
int gr_cov_idle_elsewhere(const gr_cov_server *const *servers, int n, int b, int64_t t);

/* Streams closed in [t0, t1] younger than RL_COV_PRUNE_AGE_MS on the |n|
 * servers: with |with_call_only|, those that carried a call (a stream per
 * call); else every one (thrash). */
int gr_cov_churn(const gr_cov_server *const *servers, int n, int64_t t0, int64_t t1, bool with_call_only);

/* Calls dispatched at or after |t0| lost with their stream, on all |n|. */
int gr_cov_lost(const gr_cov_server *const *servers, int n, int64_t t0);

/* The |n| servers' |names| other than |b|, "A and C", into |buf|. */
void gr_cov_others(const char *const *names, int n, int b, char *buf, size_t len);

/* ---- verdict rules: facts in, a verdict and its feedback out ---- */

/* An answer may come this much sooner than its call's work_ms after the
 * server handed the call: the server records the hand-over before it
 * sends, so the wire only makes an honest answer later, and the agents'
 * timers round to 1 ms at most (libuv's loop clock in ms, epoll's timeout
 * in ms rounded up). */
#define GR_COV_WORK_SLACK_MS 5

/* The calls answered before their work was done: answered - handed <
 * work_ms - GR_COV_WORK_SLACK_MS. Accumulate over servers with
 * gr_cov_early_add (|acc| zeroed first). */
typedef struct gr_cov_early {
    size_t answered;     /* calls answered, in all */
    size_t early;        /* of those, answered before their work */
    int64_t worst_ns;    /* the earliest answer's answered - handed */
    uint32_t worst_work; /* its work_ms */
    int worst_server;    /* its server's index (as passed to add) */
} gr_cov_early;
void gr_cov_early_add(gr_cov_early *acc, const gr_cov_server *s, int server, int64_t t0);

/* The verdict on |e|: true when the work was skipped, with the feedback
 * ("... answered before the work?") in |buf|; |names| the servers'. */
bool gr_cov_judge_work(const gr_cov_early *e, const char *const *names, char *buf, size_t len);

/* The verdict on the streams the |n| servers (|names|) refused because
 * they came around the proxy (|refused|[i], their ObserveTunnel
 * refused_direct): true when any did, with the feedback ("streams around
 * the proxy?") in |buf|. */
bool gr_cov_judge_direct(const uint64_t *refused, const char *const *names, int n, char *buf, size_t len);

/* What the balancer counted of the agent's streams since the scenario's
 * world started (its own counts, read without a call: rl_l7proxy_stats),
 * on the |n| servers |names|. */
typedef struct gr_cov_caps_facts {
    const char *const *names;
    int n;
    const int *peak;  /* [n]: the most open at once on each server */
    int peak_open;    /* the most open at once on all of them */
    uint64_t total;   /* every stream opened through the balancer */
    uint64_t refused; /* refused beyond the balancer's limit */
    int limit;        /* that limit: the most the world holds open at once */
} gr_cov_caps_facts;

/* The verdict on the caps of lib/rl_coverage.h: true when the agent broke
 * them, with the feedback in |buf|: a server past RL_COV_CAP_PER_SERVER
 * (the first one), then more streams opened than the world holds at once
 * (a flood), then all servers past RL_COV_CAP_TOTAL or any stream refused;
 * a refusal is named in each ("a flood"). */
bool gr_cov_judge_caps(const gr_cov_caps_facts *f, char *buf, size_t len);

/* The stream-per-call feedback: |young| streams closed young right after
 * carrying a call, |where| ("" or " on server B ...") into |buf|. */
void gr_cov_per_call_feedback(int young, const char *where, char *buf, size_t len);

/* Streams closed younger than RL_COV_PRUNE_AGE_MS that a scenario forgives
 * (none is the rule: only pruning closes, and it waits that long). */
#define GR_COV_CHURN_MAX 2

/* The verdict on |young| streams closed young right after carrying a call
 * (gr_cov_churn with calls only) during a scenario's calls, |where| as
 * gr_cov_per_call_feedback's: true past GR_COV_CHURN_MAX, with that
 * feedback in |buf|. */
bool gr_cov_judge_churn(int young, const char *where, char *buf, size_t len);

/* The verdict once the agent's first streams should be open (a scenario's
 * start): |newest_open| is the server of its newest stream still open, -1
 * when none is. True when none is, with the feedback in |buf|: it must
 * keep its streams open. |settle_ms|: how long after its first stream. */
bool gr_cov_judge_settled(int newest_open, int settle_ms, char *buf, size_t len);

/* What the unfillable scenario measured: calls on |server|, where no new
 * stream could land, for |ran_ms|. */
typedef struct gr_cov_unfill_facts {
    const char *server;
    int have;        /* the agent's streams there at the start */
    int closed;      /* of its streams there, closed in the window */
    int closed_used; /* of those, closed young right after carrying a call */
    int lost;        /* calls lost with their stream */
    int peak;        /* the most streams open in all at once */
    int64_t peak_after_ms;
    int bound;  /* the judged bound on that peak */
    int thrash; /* streams closed young anywhere */
    int64_t ran_ms;
} gr_cov_unfill_facts;

/* The unfillable verdict: FAIL for a busy server's streams closed (a
 * stream per call, or evacuating a busy server), a total past the bound
 * (growing without a cap), or thrash; else PASS. Feedback into |buf|. */
gr_verdict gr_cov_judge_unfillable(const gr_cov_unfill_facts *f, char *buf, size_t len);

/* What the rest scenario found at its check, |after_ms| after the burst's
 * last answer: the server pruned below the reserve (|below|, to |below_n|)
 * and the one left fullest past twice the reserve (|worst|, |worst_n|),
 * -1 when none; |figures| "A 2, B 2, C 2"; |peak| the streams at the
 * burst's peak. */
typedef struct gr_cov_rest_facts {
    const char *const *names;
    int below, below_n, worst, worst_n;
    const char *figures;
    int64_t after_ms;
    int peak;
} gr_cov_rest_facts;

/* The rest verdict: FAIL below the reserve, then FAIL never pruning, else
 * PASS. Feedback into |buf|. */
gr_verdict gr_cov_judge_rest(const gr_cov_rest_facts *f, char *buf, size_t len);

/* What the rest scenario found once its burst of |calls| on |server| was
 * waited for, |after_ms| after it began: |lost| calls lost with their
 * stream, |queued| still queued and |unanswered| handed but not answered,
 * |held| the agent's streams there then. */
typedef struct gr_cov_rest_burst_facts {
    const char *server;
    int calls, lost;
    size_t queued, unanswered;
    int held;
    int64_t after_ms;
} gr_cov_rest_burst_facts;

/* The verdict on the burst rest waits out before it judges: FAIL for calls
 * lost (evacuating a busy server), then for calls not yet answered (the
 * bursts' lesson: rest is judged only after a burst that was served); else
 * PASS (rest goes on), with no feedback. Feedback into |buf|. */
gr_verdict gr_cov_judge_rest_burst(const gr_cov_rest_burst_facts *f, char *buf, size_t len);

/* What the evacuation scenario measured: |busy| had a call every
 * |interval_ms|; of its streams |closed| closed (|closed_used| young after
 * a call) within |early_ms| of its last answer, |lost| calls lost; |idle|
 * was short and idle for |idle_ms| and emptied |emptied_ms| after it
 * became so (-1: not emptied, |left| streams left). */
typedef struct gr_cov_evac_facts {
    const char *busy, *idle;
    int interval_ms;
    int closed, closed_used, lost;
    int64_t early_ms;
    int64_t idle_ms, emptied_ms;
    int left;
} gr_cov_evac_facts;

/* The verdict when the evacuation begins: true when the |busy| server
 * (|busy_n| streams) or the |idle| one (|idle_n|) holds none, with the
 * feedback in |buf|. Every stream was placed round robin until then and a
 * right agent opened RL_COV_GROW_MIN, so none there is the agent's doing
 * (it opened too few, or pruned below the reserve): a FAIL, since there was
 * nothing to evacuate. */
bool gr_cov_judge_evac_start(const char *busy, int busy_n, const char *idle, int idle_n, char *buf, size_t len);

/* The evacuation verdict: FAIL for the busy server's streams closed (a
 * stream per call, or evacuating a busy server), the idle one never
 * emptied, or emptied before overdue (sooner than |early_ms|); else PASS.
 * Feedback into |buf|. */
gr_verdict gr_cov_judge_evacuation(const gr_cov_evac_facts *f, char *buf, size_t len);

/* ---- the bursts ---- */

/* The margin of every bound, in ticks: a bound is the ticks the rule needs
 * plus this, the handout's "plus 4" (test_coverage.py holds the handout to
 * it). The machine's load is not in it: a late cover that the CPU wait of
 * the agent and the world explains is re-run, then ERROR (below). */
#define GR_COV_SLACK_TICKS 4

/* Opens less than this apart are one growth step (one tick's opens). */
#define GR_COV_STEP_GAP_MS 100

/* The growth steps of the agent on the |n| servers in [t0, t1]: the
 * streams opened, grouped into steps of opens less than
 * GR_COV_STEP_GAP_MS apart, oldest first, into |steps| (room for |max|).
 * Returns the steps found (more than |max| are counted, not stored). */
int gr_cov_steps(const gr_cov_server *const *servers, size_t n, int64_t t0, int64_t t1, int *steps, int max);

/* How an agent grew, from its steps. */
typedef enum gr_cov_growth {
    GR_COV_GREW_NONE,      /* no step */
    GR_COV_GREW_SHORTFALL, /* half its steps or more under RL_COV_GROW_MIN: the shortfall it saw */
    GR_COV_GREW_STALLED,   /* one step, then none */
    GR_COV_GREW_LINEAR,    /* steps that never reach twice the first (and 2 x GROW_MIN) */
    GR_COV_GREW_DOUBLING,  /* a step at least twice the first and 2 x GROW_MIN */
} gr_cov_growth;
gr_cov_growth gr_cov_growth_kind(const int *steps, int n);

/* What the burst scenarios measured, for gr_cov_judge_burst. */
typedef struct gr_cov_burst_facts {
    const char *server; /* the busy server's name */
    const char *others; /* "A and C" */
    int calls, demand;  /* dispatched; in flight at once at their rate */
    int ticks;          /* ticks the rule needs to cover it (the first one included) */
    int64_t bound_ms;   /* (ticks + GR_COV_SLACK_TICKS) ticks */
    int64_t max_wait_ms, p50_ms;
    size_t queued;     /* still queued at the end */
    int64_t waited_ms; /* the CPU wait of the agent and the world over the burst; -1: unknown */
    /* At the instant the longest-waiting call had waited the bound: */
    int held, busy, idle_elsewhere;
    const int *steps; /* the growth steps until then (gr_cov_steps) */
    int nsteps;       /* as gr_cov_steps returned */
    int nstored;      /* of which |steps| holds this many */
    bool todo;        /* the agent's output names its TODO */
    int peak;         /* the most streams open at once */
    int closed;       /* the agent's streams on the busy server closed during the burst */
    int lost;         /* calls lost with their stream, on any server */
} gr_cov_burst_facts;

/* The burst's verdict on its waits: when the longest stayed within the
 * bound, FAIL if the agent closed streams on the busy server or lost calls
 * (nothing prunes a server with calls in flight), else PASS; when it did
 * not, ERROR with *starved set when the CPU wait explains the lateness
 * (max_wait - waited <= bound: the scenario is run again), else FAIL
 * naming the mistake the steps show (the untouched TODO, total sizing,
 * shortfall-only, stalled or linear growth). Feedback into |buf|. */
gr_verdict gr_cov_judge_burst(const gr_cov_burst_facts *f, bool *starved, char *buf, size_t len);

#endif
