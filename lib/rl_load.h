/* rl_load: an open-loop load of Relay.Process calls, for the overload
 * exercise and its demo. Calls are started at a fixed rate whatever became
 * of the earlier ones (an open
 * loop: clients that do not slow down because the server does, which is
 * what overload is), each with its own deadline and tag "PREFIX.I", and
 * every call's start, end and status are kept. One completion queue serves
 * every call, polled by the calling thread, so an end is stamped when gRPC
 * delivers it, not when a later wait gets round to it.
 *
 * Threads: a run blocks the calling thread; any thread may run one. */
#ifndef RL_LOAD_H
#define RL_LOAD_H

#include <grpc/grpc.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A status message is kept up to this many bytes (with its NUL): enough
 * to quote what a refusal said, e.g. a starter's TODO. */
#define RL_LOAD_DETAILS_MAX 160

typedef struct rl_load_call {
    int64_t start_ns, end_ns; /* end_ns 0: no status arrived */
    int64_t deadline_ns;
    grpc_status_code status;
    char details[RL_LOAD_DETAILS_MAX]; /* the status message, cut short; "" when none */
} rl_load_call;

typedef struct rl_load_options {
    const char *prefix;      /* tags are "PREFIX.I", I from 0 */
    double rate;             /* calls a second */
    int64_t duration_ms;     /* how long calls are started */
    int64_t deadline_ms;     /* each call's deadline, from its start */
    uint32_t steps, step_ms; /* the Work each Process asks for */
    /* Called about every |tick_ms| while the load runs (NULL: none), e.g.
     * to sample the submission's memory. */
    void (*tick)(void *user);
    void *user;
    int64_t tick_ms;
    const bool *stop; /* stops starting calls when it turns true (may be NULL) */
} rl_load_options;

/* Runs the load on |ch| and waits for every call's status until its
 * deadline plus |grace_ms|, cancelling what is left then. *calls (free
 * with free()) gets one entry per call started, *ncalls their number.
 * Returns 0, or RL_EGRPC when gRPC refused to start a call (the calls
 * started until then are in *calls). */
int rl_load_run(grpc_channel *ch, const rl_load_options *opt, int64_t grace_ms, rl_load_call **calls, size_t *ncalls);

/* Parses "PREFIX.I" back into I; -1 when |tag| is not one of the load's. */
long rl_load_index(const char *prefix, const char *tag);

#endif
