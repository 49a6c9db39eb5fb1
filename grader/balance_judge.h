/* balance_judge: the balance exercise's rules, apart from its scenarios
 * (ex_balance.c) so that they are unit-tested without a run
 * (tests/unit/grader/test_balance_judge.c): the world's numbers the rules
 * are stated in, what a live run measured (gr_bal_live, the facts every
 * live scenario judges), and each scenario's verdict as a pure function of
 * them (facts in, a verdict and its feedback out). Nothing is owned. */
#ifndef GR_BALANCE_JUDGE_H
#define GR_BALANCE_JUDGE_H

#include "verdict.h"
#include "worlds/rl_balance_world.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Time runs GR_BAL_LAB_SCALE times faster than the world's (every duration
 * of the config and the world is divided by it), so a run that stands for
 * three minutes takes six seconds. Only the machine's own latencies are not
 * scaled: every deadline gets GR_BAL_SLACK_MS more, so that a loaded
 * machine's scheduling is never read as the config's fault. */
#define GR_BAL_LAB_SCALE     30     /* world ms per lab ms */
#define GR_BAL_WORLD_ADD_MS  30000  /* the third backend joins this long after the clients connected */
#define GR_BAL_WORLD_FILL_MS 120000 /* ...and must take its share within this */
#define GR_BAL_WORLD_MIN_LIFE_MS                                                                                       \
    10000                          /* a connection living shorter on average churns: each reconnect is a               \
                                    * TCP and TLS handshake and, for pick_first, a call that waits for it */
#define GR_BAL_WORLD_STORM_MS 1500 /* every client reconnecting within this is a storm */
#define GR_BAL_NCLIENTS       6
#define GR_BAL_SLACK_MS       2000 /* added to every lab deadline, unscaled */
/* A run whose own thread was this late (a call started after its instant,
 * a status delivered after its deadline) saw the machine stall, not the
 * config: calls time out because nobody ran. It is made again, up to
 * ATTEMPTS times in all (ex_balance.c); the lag of a run on two cores with
 * every core busy stays far below it (bench/results/balance.md). */
#define GR_BAL_STALL_MS 300
/* The joining backend's fair share is a third. Six connections over three
 * backends move in sixths: holding one connection gives 17 %, two 33 %.
 * "Its share" is therefore at least 25 % of the calls over two windows (1 s,
 * half an age of the reference config): two of six connections, with room
 * for a reconnect in flight; one connection never reaches it. */
#define GR_BAL_FAIR_MIN 0.25

/* What one live run measured, as the scenarios judge it (and draw it). */
typedef struct gr_bal_live {
    int64_t age_ms, grace_ms; /* the config's own (INT_MAX: infinite) */
    char age[32], grace[32];  /* the same in words: "600 ms", "infinite" */
    char note[200];           /* " (world relay-fleet; the run's time is ...)",
                               * closing every scenario's feedback */
    int64_t longest_ms;       /* the world's longest call */
    bool has_lb;              /* the client service config names a policy */
    char lb[48];
    /* fills */
    int64_t fill_ms;    /* lab ms from the join to the end of the first 1 s
                         * span with GR_BAL_FAIR_MIN; -1: never */
    double share_after; /* the joining backend's share from then to the end */
    double share_tail;  /* ... over the last second */
    int tail_rate[RL_BW_MAX_BACKENDS];
    int tail_conns[RL_BW_MAX_BACKENDS];
    double share_x[RL_BW_MAX_WINDOWS]; /* world s: the middle of each window */
    double share_y[RL_BW_MAX_WINDOWS]; /* the joining backend's share, % */
    size_t nshare;
    /* no-failures */
    int sent, failed, failed_long, long_sent, raced;
    char first_race[200];
    char first_failure[320];
    /* churn and storm */
    int attempts;          /* runs made: more than 1 after a stall */
    int64_t lag_ms;        /* the judged run's (rl_bw_result.lag_ms) */
    int64_t lb_turn_ms;    /* and its balancer's longest turn */
    int reconnects;        /* connections beyond each client's first */
    double per_client_min; /* reconnects per client per world minute */
    int storm;             /* most reconnects within GR_BAL_WORLD_STORM_MS (scaled) */
    int64_t storm_at_ms;   /* world ms from the start where it began */
    int storms;            /* disjoint spans with a reconnect of every
                            * client: the rounds that were storms */
    /* For the --html pictures of churn and no-storm (world s): the
     * reconnect rate so far at each window's end, and the reconnects
     * within the storm span of each one (balance_figure.h). */
    double rate_x[RL_BW_MAX_WINDOWS], rate_y[RL_BW_MAX_WINDOWS];
    size_t nrate;
    double bunch_x[RL_BW_MAX_CONNS], bunch_y[RL_BW_MAX_CONNS];
    size_t nbunch;
    bool open_log_full; /* more connections than the log holds */
} gr_bal_live;

/* A short call answers at once, and no config of this world can hold one
 * back for seconds: one that ran out of its GR_BAL_SLACK_MS
 * (|short_timed_out| of them) means a process of the run (the grader, its
 * balancer thread, a baseline) did not run for that long. Like a late
 * thread (the run's own |lag_ms|, or the balancer's |lb_turn_ms|: its
 * sockets block), it is the machine's doing, not the config's. */
bool gr_bal_stalled(int64_t lag_ms, int64_t lb_turn_ms, int short_timed_out);

/* The ERROR's words when each of |attempts| runs stalled: |lags| the runs'
 * lags, the last one's balancer turn and short calls timed out. Into
 * |buf|. */
void gr_bal_stall_feedback(int attempts, const int64_t *lags, int64_t lb_turn_ms, int short_timed_out, char *buf,
                           size_t len);

/* Whether a run measured anything of the config's connections: FAIL, with
 * the reason in |buf|, when the clients made no call or every call failed
 * (no connection carried a call: "no reconnects" and "no storm" would be
 * points for a config gRPC refused outright, issue 21); else PASS with
 * |buf| untouched. fills, churn and no-storm ask it first. */
gr_verdict gr_bal_judge_answered(const gr_bal_live *l, char *buf, size_t len);

/* fills: PASS when the joining backend took GR_BAL_FAIR_MIN within the
 * bound and kept it; else FAIL naming why (no age, an age too long, a
 * policy the calls did not follow, or none of those). */
gr_verdict gr_bal_judge_fills(const gr_bal_live *l, char *buf, size_t len);

/* no-failures: FAIL when nothing reconnected (nothing was put to the
 * test), or when calls failed (naming a grace shorter than the longest
 * call); else PASS, noting the calls lost to gRPC's own GOAWAY race. */
gr_verdict gr_bal_judge_no_failures(const gr_bal_live *l, char *buf, size_t len);

/* The most reconnects per client per world minute churn allows: one a
 * GR_BAL_WORLD_MIN_LIFE_MS. */
double gr_bal_churn_limit(void);

/* churn: PASS at gr_bal_churn_limit() or under, else FAIL. */
gr_verdict gr_bal_judge_churn(const gr_bal_live *l, char *buf, size_t len);

/* no-storm: FAIL when nothing reconnected, or when every client
 * reconnected together in two rounds or more (one is a coincidence: gRPC
 * 1.51 draws its jitter from rand(), never seeded); else PASS. */
gr_verdict gr_bal_judge_no_storm(const gr_bal_live *l, char *buf, size_t len);

#endif
