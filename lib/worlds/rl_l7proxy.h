/* rl_l7proxy: the coverage lab's L7 balancer. It terminates HTTP/2 and
 * places each new stream (any method: an unregistered call) on one backend
 * chosen by a placement policy the owner sets, then pumps messages both ways
 * and forwards the backend's status. The placement is what an L7 balancer
 * does to an agent that opens streams to it: the agent never chooses the
 * server, it learns it from the server's first message.
 *
 * The proxy runs on a thread of its own (one rl_loop: every call's batches
 * and callbacks stay there, docs/DESIGN.md "Threads"); the functions below
 * are for the owner's thread, and the few figures they share with the loop
 * are under a mutex. The listener allows RL_L7PROXY_STREAMS_PER_CONNECTION
 * concurrent streams per connection (an agent may hold thousands on one)
 * and RL_L7PROXY_MEMORY_BYTES in all. */
#ifndef RL_L7PROXY_H
#define RL_L7PROXY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RL_L7PROXY_MAX_BACKENDS 8
/* The streams one connection may hold open through the proxy: above the
 * coverage world's limit (rl_tworld.h, 5000), so an agent meets the
 * proxy's refusal first, and far below gRPC's default, so a flood on one
 * connection waits in the client's memory, not the proxy's. */
#define RL_L7PROXY_STREAMS_PER_CONNECTION 6000
/* The memory gRPC may use for the proxy's listener, over every connection. */
#define RL_L7PROXY_MEMORY_BYTES (256u << 20)

/* Where new streams go. Every policy is deterministic in the stream's
 * sequence number, so a scenario's placement is the same on every run. */
typedef enum rl_placement_kind {
    RL_PLACE_UNIFORM, /* round robin over every backend */
    RL_PLACE_SKEWED,  /* |percent| % to |server|, the rest round robin over
                       * the others */
    RL_PLACE_AVOID,   /* none on |server|: round robin over the others (the
                       * unfillable placement) */
    RL_PLACE_ONLY,    /* all on |server| */
} rl_placement_kind;

typedef struct rl_placement {
    rl_placement_kind kind;
    int server;  /* SKEWED, AVOID: the backend's index */
    int percent; /* SKEWED: 0..100 */
} rl_placement;

/* The backend (0..n-1) for the |seq|-th stream (from 0) placed under |p|
 * among |n| backends, n >= 1. Pure. A SKEWED placement spreads its share
 * evenly: of any 100 consecutive streams, |percent| go to |server|. A
 * policy naming a server outside 0..n-1 is read as UNIFORM. */
int rl_placement_pick(const rl_placement *p, uint64_t seq, int n);

/* "uniform", "skewed 80% to server 1", "none on server 2", "all on
 * server 0" into |buf|. */
void rl_placement_describe(const rl_placement *p, char *buf, size_t len);

typedef struct rl_l7proxy rl_l7proxy;

/* What the proxy has placed so far. */
typedef struct rl_l7proxy_stats {
    int nbackends;
    uint64_t placed[RL_L7PROXY_MAX_BACKENDS]; /* streams ever placed on each */
    int open[RL_L7PROXY_MAX_BACKENDS];        /* streams open on each now */
    int peak[RL_L7PROXY_MAX_BACKENDS];        /* the most open on each at once */
    int newest_open;                          /* the backend of the newest stream still open, -1: none */
    uint64_t total;                           /* every stream placed */
    uint64_t refused;                         /* streams refused at the limit (rl_l7proxy_set_limit) */
    int peak_open;                            /* the most streams open at once on all backends */
} rl_l7proxy_stats;

/* Starts a proxy on 127.0.0.1 (a port the OS picks) in front of the
 * |n| backends |backends| ("HOST:PORT", copied), 1 <= n <=
 * RL_L7PROXY_MAX_BACKENDS, placing by |initial| (copied). grpc_init() must
 * have been called. Returns 0 and sets *out, or RL_EINVAL / RL_ESYS with a
 * message in |err|. */
int rl_l7proxy_start(const char *const *backends, int n, const rl_placement *initial, rl_l7proxy **out, char *err,
                     size_t errlen);

/* "127.0.0.1:PORT", valid until rl_l7proxy_free. */
const char *rl_l7proxy_addr(const rl_l7proxy *px);

/* Streams opened from now on are placed by |p| (copied). */
void rl_l7proxy_set_placement(rl_l7proxy *px, const rl_placement *p);

/* At most |max_open| streams open at once on all backends (0: no limit,
 * the default): a stream beyond it is refused RESOURCE_EXHAUSTED and
 * reaches no backend, so an agent that grows without bound cannot starve
 * the machine its grader runs on. */
void rl_l7proxy_set_limit(rl_l7proxy *px, int max_open);

/* Copies the figures into |out|. */
void rl_l7proxy_get_stats(rl_l7proxy *px, rl_l7proxy_stats *out);

/* Cancels every stream, stops the thread and frees everything. Accepts
 * NULL. */
void rl_l7proxy_free(rl_l7proxy *px);

#endif
