/* rl_server: a multithreaded gRPC server with one rl_loop per thread.
 *
 * Each thread owns a completion queue on which it accepts calls, so a call's
 * whole life (and any client calls its handler starts on the same loop) stays
 * on one thread. Calls are dispatched by method path to a handler that takes
 * ownership of the grpc_call. Every server also answers the standard health
 * service (rl_health).
 *
 * Shutdown (rl_server_wait) follows the rule the lab teaches: at SIGTERM the
 * health status turns NOT_SERVING; after drain_delay_ms (0 by default)
 * admission closes: the listeners close, connected clients get a GOAWAY, and
 * a call the server has not started is refused UNAVAILABLE; calls in flight
 * finish, and whatever is left at the grace (counted from the signal) is
 * cancelled, which cancels the downstream calls handlers made as its
 * children (GRPC_PROPAGATE_CANCELLATION). A second SIGTERM, or a SIGINT,
 * cancels at once. Nothing here queues calls: a handler starts the moment
 * its call is accepted, so refused and in-flight is all there is.
 *
 * Dependencies (lib/ has no include cycle): rl_server uses rl_health (the
 * health service it serves), which uses rl_unary (Check is a unary call),
 * which uses rl_handler (what a server hands a handler, and the count of
 * calls handed out that the drain waits for); rl_server uses rl_handler too,
 * and re-exports it, so a handler includes rl_server.h or rl_handler.h. */
#ifndef RL_SERVER_H
#define RL_SERVER_H

#include "rl_handler.h"
#include "rl_loop.h"

#include <grpc/grpc.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct rl_server rl_server;

/* The default grace: well under Kubernetes' default kill timeout
 * (terminationGracePeriodSeconds, 30 s), leaving room for a drain delay. */
#define RL_SERVER_GRACE_MS 10000
/* How long the loops may take to stop once the drain is over (calls that
 * are not children of a server call, such as a mistaken relay's, may still
 * be running): past it rl_server_wait gives up on them. */
#define RL_SERVER_STOP_MS 1000

/* The shutdown as rl_server_wait will carry it out, decided at the signal:
 * the rule's values (from rl_server_options), which a shutdown hook may
 * change (rl_shutdown_hooks.at_signal). A SIGINT then sets grace_ms to 0
 * whatever the hook said. */
typedef struct rl_shutdown_plan {
    int64_t grace_ms;       /* from the signal to cancelling what is left; <0: never */
    int64_t drain_delay_ms; /* from the signal to closing admission */
    bool interruptible;     /* a second SIGTERM or a SIGINT cancels at once */
    int64_t stop_ms;        /* after the drain, how long the loops may take to
                             * stop (RL_SERVER_STOP_MS); <0: no bound */
    const char *note;       /* what the "received" log line says comes next;
                             * NULL: rl_server_wait words it from the plan */
} rl_shutdown_plan;

/* Shutdown hooks: the one point where a server departs from the rule at
 * SIGTERM. Only the lab's mistaken relay installs them (relay/mistake.c, the
 * --mistake shutdown modes); with none, rl_server_wait drains by the rule.
 * Every hook runs on the thread in rl_server_wait (the main thread, which
 * alone takes SIGTERM and SIGINT), in this order; a NULL member does nothing:
 *   before_signal  once, before the wait for the signal; it may never return
 *                  (a hook that gives SIGTERM its default action and waits
 *                  for it to end the process);
 *   at_signal      once, at the first SIGTERM or SIGINT (|sig|), after health
 *                  turned NOT_SERVING and before anything else: it may change
 *                  |plan|;
 *   admitting      in place of the drain delay: called every poll (2 ms)
 *                  while admission stays open, until it returns false, the
 *                  grace is over or a second signal cuts the drain (then
 *                  admission closes as by the rule).
 * |user| is passed to each. Hooks must not block: the drain's clocks run on
 * the same thread. */
typedef struct rl_shutdown_hooks {
    void (*before_signal)(void *user);
    void (*at_signal)(void *user, int sig, rl_shutdown_plan *plan);
    bool (*admitting)(void *user);
    void *user;
} rl_shutdown_hooks;

typedef struct rl_server_options {
    const char *name;         /* shown in the "listening on" line */
    const char *listen;       /* "127.0.0.1:0" picks a free port; NULL:
                               * none, private_listen alone */
    int threads;              /* loops; 0 means one per core */
    const rl_method *methods; /* borrowed; must outlive the server */
    size_t nmethods;
    const grpc_channel_args *args; /* server channel args, may be NULL */
    int64_t grace_ms;              /* from SIGTERM to cancelling what is left;
                                    * <0: RL_SERVER_GRACE_MS */
    int64_t drain_delay_ms;        /* from SIGTERM to closing admission, while
                                    * health says NOT_SERVING; < grace_ms */
    /* NULL: the rule. Borrowed; must outlive rl_server_wait. */
    const rl_shutdown_hooks *shutdown_hooks;
    /* A second listener, "unix:PATH", for callers the server trusts (the
     * grader): the methods marked private_only answer only there. The
     * folder's permissions decide who may connect. NULL: none. */
    const char *private_listen;
    /* Called once from rl_server_wait's thread when admission closes (after
     * the drain delay), before gRPC refuses new calls: a server that queues
     * calls of its own fails the ones not yet started, so that their
     * clients retry elsewhere instead of waiting out the drain. NULL: none. */
    void (*on_close_admission)(void *user);
    void *close_user;
} rl_server_options;

/* Blocks SIGTERM and SIGINT in the calling thread, so that every thread
 * started after it inherits the mask and only rl_server_wait takes them (a
 * thread that does not block them would get a second signal while the drain
 * is on and die of it). Call it first in main, before grpc_init(), which
 * starts gRPC's own threads. */
void rl_server_signals_init(void);

/* A pending SIGTERM or SIGINT (blocked by rl_server_signals_init), taken
 * without waiting; 0 when none. For a program that watches for the signal
 * in a loop of its own (rl_server_wait takes it for a server). */
int rl_server_take_signal(void);

/* Every listener is bound with GRPC_ARG_ALLOW_REUSEPORT 0, whatever
 * |args| says: with gRPC's default (on) another process could bind the same
 * port and be handed part of the connections meant for this server. */
/* Binds, starts the loops and prints "NAME listening on HOST:PORT" on stdout
 * (flushed), the readiness line that tests and the grader wait for ("NAME
 * listening on unix:PATH" for a server with the private listener alone). Calls
 * rl_server_signals_init (too late for threads that exist already) and
 * ignores SIGPIPE. Health turns SERVING. grpc_init() must have been called. Returns 0 and sets *out, or
 * RL_EINVAL with a message in |err| when the address cannot be bound or
 * drain_delay_ms is not below the grace. */
int rl_server_start(const rl_server_options *opt, rl_server **out, char *err, size_t errlen);

/* Blocks until SIGTERM or SIGINT, then shuts down by the rule (see the top
 * of this file), or as the shutdown hooks change it, and stops every loop.
 * Returns 0, or RL_ETIMEOUT when the loops did not stop within the plan's
 * stop_ms of the drain's end (calls gRPC would not let go of): the caller
 * must then not free the server or shut gRPC down, which would wait for
 * them, but leave with _exit. */
int rl_server_wait(rl_server *s);

/* Checks that |drain_delay_ms| is 0 or below |grace_ms| (<0: the default
 * grace). Returns 0, or RL_EINVAL with a message in |err|. */
int rl_server_check_timing(int64_t grace_ms, int64_t drain_delay_ms, char *err, size_t errlen);

/* Frees the server; call after rl_server_wait. Accepts NULL. */
void rl_server_free(rl_server *s);

/* How long a stopped server lets gRPC's own teardown take. */
#define RL_SERVER_TEARDOWN_MS 1000

/* Runs |teardown| (grpc_shutdown for a server, once rl_server_wait returned
 * RL_OK and the server is freed) on a thread of its own and waits at most
 * |max_ms| for it. gRPC 1.51's grpc_shutdown joins its executor threads, and
 * one of them can sit in a poll of up to 10 s after a write had to wait for
 * a slow reader (docs/grpc-facts.md, "Server calls"): a server that stopped
 * serving in milliseconds would otherwise exit 10 s later. Returns RL_OK
 * when |teardown| returned; RL_ETIMEOUT when it had not (logged), and the
 * caller then leaves with _exit: nothing is left to serve, and the thread
 * still inside gRPC must not meet exit()'s destructors. */
int rl_server_teardown(void (*teardown)(void), int64_t max_ms);

#endif
