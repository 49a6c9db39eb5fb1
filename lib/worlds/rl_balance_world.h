/* rl_balance_world: one run of the connection-age lab's world, shared by the
 * grader's balance exercise and `lab demo balance`.
 *
 * Client channels make calls at a steady rate, each its own, through an L4
 * balancer (the intermediary, round robin per connection) to the first
 * backends; at a fixed instant a further backend joins the balancer. Each
 * client also keeps one long call in flight, so a GOAWAY always finds one
 * running. Or, with |direct|, every channel balances calls itself over all
 * backends from the start (a static address list; the client's service
 * config picks the policy). The run returns what the backends recorded,
 * counted per backend per window (calls that arrived, connections that
 * carried them), every connection's first and last call, and what the
 * clients saw (calls that failed). The backends are started by the caller
 * (with the server args under test); this module only talks to them.
 *
 * Gives gRPC's own time to nothing: every wait is bounded by the run's end
 * plus the calls' deadlines. Not for concurrent use (one run at a time). */
#ifndef RL_BALANCE_WORLD_H
#define RL_BALANCE_WORLD_H

#include "rl_intermediary.h"

#include <grpc/grpc.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RL_BW_MAX_BACKENDS 4
#define RL_BW_MAX_CLIENTS  16
#define RL_BW_MAX_WINDOWS  64
#define RL_BW_MAX_CONNS    4096
/* A short call (it answers at once) that took longer waited for something:
 * a reconnect, with pick_first. */
#define RL_BW_SLOW_MS 20

typedef struct rl_bw_options {
    const int *ports;                     /* backends on 127.0.0.1, |nbackends| of them */
    grpc_channel *const *observers;       /* each backend's Observer channel */
    size_t nbackends;                     /* 1..RL_BW_MAX_BACKENDS */
    size_t initial;                       /* backends in the balancer from the start;
                                           * the others join at |add_at_ms| */
    int64_t add_at_ms;                    /* after the start of the calls */
    int64_t run_ms;                       /* how long calls are started */
    int64_t window_ms;                    /* width of a counting window */
    int nclients;                         /* 1..RL_BW_MAX_CLIENTS channels */
    const int *rate;                      /* calls per second of each client */
    int64_t deadline_ms;                  /* of the short calls (they answer at once) */
    int64_t long_ms;                      /* > 0: each client keeps a call of this
                                           * length in flight (Lookup delay_ms) */
    int64_t long_deadline_ms;             /* its deadline */
    int64_t grace_ms;                     /* the servers' max_connection_age_grace_ms
                                           * (lab ms), -1 for none: a short call that
                                           * fails UNAVAILABLE sooner was not cut by it */
    const grpc_channel_args *client_args; /* each channel's args (may be NULL) */
    bool direct;                          /* channels target every backend themselves
                                           * (ipv4:A,B,C), no balancer */
    const char *tag;                      /* prefix of every call's tag */
} rl_bw_options;

/* One connection, as the backend saw it: its peer and the calls it carried. */
typedef struct rl_bw_conn {
    char peer[64];
    int backend;
    int64_t first_ns, last_ns; /* first and last call's arrival */
    int calls;
} rl_bw_conn;

typedef struct rl_bw_result {
    int64_t start_ns, add_ns, end_ns; /* the calls' start, the join, the last start */
    size_t nbackends, nwindows;
    int64_t window_ms;
    int calls[RL_BW_MAX_WINDOWS][RL_BW_MAX_BACKENDS];        /* arrivals per window */
    int conns[RL_BW_MAX_WINDOWS][RL_BW_MAX_BACKENDS];        /* connections with an arrival in it */
    int client_calls[RL_BW_MAX_BACKENDS][RL_BW_MAX_CLIENTS]; /* arrivals per backend per client */
    rl_bw_conn conn[RL_BW_MAX_CONNS];                        /* in order of first arrival */
    size_t nconn;
    int sent, failed, failed_long, long_sent;
    int raced; /* short calls that failed UNAVAILABLE sooner than
                * the grace: gRPC 1.51's race of a new call with a
                * GOAWAY (not in |failed|) */
    char first_race[200];
    int64_t lag_ms;                   /* how late the run's own thread was: the most a
                                       * call started after its instant, or a status came
                                       * after its deadline. A stalled machine shows here */
    int64_t short_max_us;             /* the slowest short call that succeeded, start to status */
    int short_slow;                   /* short calls that took over RL_BW_SLOW_MS */
    int short_timed_out;              /* short calls that failed DEADLINE_EXCEEDED at
                                       * their deadline (a methodConfig timeout's
                                       * earlier expiry is not counted here) */
    char first_failure[320];          /* "UNAVAILABLE (details) on a long call of client 2 started ..." */
    int recorded;                     /* records the backends returned for the run */
    int64_t open_ns[RL_BW_MAX_CONNS]; /* when the balancer forwarded each
                                       * connection, in order (not when direct) */
    int open_backend[RL_BW_MAX_CONNS];
    size_t nopen;
    rl_intermediary_stats lb; /* the balancer's counters (zero when direct) */
} rl_bw_result;

/* Runs the world. Returns 0 with |out| filled, or RL_EINVAL (bad options) /
 * RL_ESYS (the balancer could not start) / RL_EGRPC / RL_ETIMEOUT (a backend's
 * Observer did not answer) with one line in |err|. */
int rl_bw_run(const rl_bw_options *opt, rl_bw_result *out, char *err, size_t errlen);

/* The share of the calls in windows [from, to) that backend |b| got, 0..1
 * (0 when there were none). */
double rl_bw_share(const rl_bw_result *r, size_t b, size_t from, size_t to);

/* The window that holds instant |ns| (clamped to the last). */
size_t rl_bw_window_at(const rl_bw_result *r, int64_t ns);

/* When backend |b| took its share: the first span of |span| windows, from
 * the first window wholly after the join (r->add_ns), in which its share is
 * at least |fair_min|. Returns the ms from the join to that span's end and
 * sets *share_after to its share from the span's start to the run's end;
 * -1 (and *share_after 0) when no span reached it. */
int64_t rl_bw_fill_ms(const rl_bw_result *r, size_t b, size_t span, double fair_min, double *share_after);

/* Reconnect bunching, over r->open_ns after the first |skip| opens (each
 * client's first connection). *most: the most opens within any |window_ns|,
 * *most_at_ns the instant its first came; returns how many disjoint spans
 * of |window_ns| held |need| or more (counted from each such span's first
 * open, the next search starting after the span). */
int rl_bw_bunches(const rl_bw_result *r, size_t skip, int64_t window_ns, int need, int *most, int64_t *most_at_ns);

#endif
