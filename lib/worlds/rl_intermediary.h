/* rl_intermediary: a TCP relay between the grader's clients and one or more
 * upstreams on loopback, standing for the boxes of a network path: a NAT or
 * L4 load balancer with an idle timeout (the keepalive lab: one upstream,
 * |idle_drop_ms|), or an L4 balancer spreading connections over N backends
 * with a selection policy chosen per exercise (round robin, least
 * connections, or the exercise's own). It forwards bytes both ways. With an
 * idle timeout, once a connection has been idle (no byte either way) for
 * longer than that it silently stops forwarding it: bytes from either side
 * are read and dropped, nothing is closed or reset, just as when a NAT has
 * forgotten the mapping. Upstreams can be added and removed while it runs
 * (the balance lab adds a backend mid-run): a removed one takes no new
 * connection, and the ones it holds go on until either side closes them,
 * as an L4 balancer draining a backend does. Per upstream it counts
 * connections and bytes. One thread serves every connection. */
#ifndef RL_INTERMEDIARY_H
#define RL_INTERMEDIARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RL_INTERMEDIARY_MAX_UPSTREAMS 8

typedef struct rl_intermediary rl_intermediary;

/* One upstream as a policy sees it when it picks, and as the stats show it. */
typedef struct rl_intermediary_upstream {
    int port;           /* on 127.0.0.1 */
    int active;         /* connections to it open now */
    int opened;         /* connections to it opened so far */
    bool removed;       /* takes no new connection (rl_intermediary_remove_upstream) */
    int64_t bytes_up;   /* forwarded from clients to it */
    int64_t bytes_down; /* forwarded from it to clients */
} rl_intermediary_upstream;

/* A selection policy: which upstream takes a new connection. Its callbacks
 * run on the intermediary's thread, one at a time, so a policy needs no
 * lock; the intermediary keeps the connection counts itself. */
typedef struct rl_intermediary_policy {
    const char *name;
    /* Makes the policy's state for |n| upstreams in *state (may leave it
     * NULL). Upstreams added later get the next indexes, and pick gets the
     * count of the moment. Returns 0 or a negative RL_E* code. NULL: no
     * state. */
    int (*init)(void **state, size_t n);
    /* The index of the upstream for a new connection, one whose |tried| is
     * false, or -1 to refuse the connection. |tried[i]| is true once a
     * connect to upstream i failed for this connection: pick is then
     * called again, so a dead backend is skipped. */
    int (*pick)(void *state, const rl_intermediary_upstream *ups, const bool *tried, size_t n);
    /* A connection to upstream |i| closed (its count is already down).
     * NULL: nothing to do. */
    void (*on_close)(void *state, size_t i);
    /* Frees the state. NULL: nothing to free. */
    void (*destroy)(void *state);
} rl_intermediary_policy;

/* Each new connection to the next upstream in turn. */
extern const rl_intermediary_policy rl_intermediary_round_robin;
/* Each new connection to the upstream with the fewest open connections;
 * ties go in turn, so equal loads spread as round robin does. */
extern const rl_intermediary_policy rl_intermediary_least_connections;

typedef struct rl_intermediary_options {
    const int *upstream_ports;            /* |nupstreams| ports on 127.0.0.1 */
    size_t nupstreams;                    /* 1..RL_INTERMEDIARY_MAX_UPSTREAMS */
    const rl_intermediary_policy *policy; /* NULL: round robin */
    int64_t idle_drop_ms;                 /* > 0: go silent on a connection idle that
                                           * long (the NAT); 0: never */
    /* Called on the intermediary's thread for every connection it forwards,
     * once the upstream accepted it: which upstream, and when (rl_now_ns).
     * NULL: none. Must not call back into the intermediary. */
    void (*on_open)(void *user, size_t upstream, int64_t ns);
    void *user;
    /* The clock idle time is counted on, in ns, called on the
     * intermediary's thread: at the top of each turn of its loop (where it
     * decides which connections are idle, and its poll timeout) and when a
     * connection opens or forwards bytes. NULL: rl_now_ns (CLOCK_MONOTONIC).
     * A test gives its own to make the loop late on purpose: bytes waiting
     * on a connection while the clock says its timeout passed. The stats'
     * longest_turn_ms and on_open's instant stay on CLOCK_MONOTONIC. */
    int64_t (*clock)(void *clock_user);
    void *clock_user;
} rl_intermediary_options;

typedef struct rl_intermediary_stats {
    int connections;         /* accepted so far */
    int dropped;             /* connections it went silent on */
    int refused;             /* accepted and closed at once: no upstream
                              * took them, or too many were open */
    int64_t longest_idle_ms; /* longest idle gap seen on a live connection */
    int64_t longest_turn_ms; /* longest pass of its loop after a poll: accepting,
                              * connecting upstream and forwarding. The sockets
                              * block, so a slow connect or a full peer holds
                              * every connection up this long */
    size_t nupstreams;       /* added so far, removed ones included */
    rl_intermediary_upstream upstreams[RL_INTERMEDIARY_MAX_UPSTREAMS];
} rl_intermediary_stats;

/* Listens on 127.0.0.1:0 and forwards each connection to the upstream
 * |opt->policy| picks. |opt| is copied. Returns 0 and sets *out, or
 * RL_EINVAL (no upstream, too many) / RL_ESYS / the policy's init error,
 * with the reason in |err|. */
int rl_intermediary_start(const rl_intermediary_options *opt, rl_intermediary **out, char *err, size_t errlen);

/* Adds upstream 127.0.0.1:|port| while the intermediary runs; the next
 * connection the policy gives it goes there (round robin: in its turn). Sets
 * *index (may be NULL) to its index. Returns 0, or RL_EINVAL when it already
 * has RL_INTERMEDIARY_MAX_UPSTREAMS (removed ones count: indexes stay). */
int rl_intermediary_add_upstream(rl_intermediary *im, int port, size_t *index);

/* Takes upstream |i| out of the selection: no new connection goes to it;
 * the connections it holds stay until either side closes them. Returns 0,
 * or RL_EINVAL when there is no such upstream or it is already removed, or
 * it is the last one not removed (the intermediary would refuse every
 * connection). */
int rl_intermediary_remove_upstream(rl_intermediary *im, size_t i);

/* The port it listens on. */
int rl_intermediary_port(const rl_intermediary *im);

/* A consistent copy of its counters. */
void rl_intermediary_stats_get(rl_intermediary *im, rl_intermediary_stats *out);

/* Stops the thread and closes every socket. Accepts NULL. */
void rl_intermediary_stop(rl_intermediary *im);

#endif
