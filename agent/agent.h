/* agent: the coverage lab's reference agent, its streams and its tick.
 *
 * One channel to the tunnel (the L7 proxy), one rl_loop on the main thread,
 * a list of Tunnel streams (stream.h) and the servers they landed on. Once a
 * tick (RL_COV_TICK_MS) it hands the per-server figures to the sizing
 * module (coverage.h), closes the idle streams it marked and opens what it
 * asked for; it logs its figures when they changed, one line per server:
 * "agent: server S streams N busy B state STATE" on stderr. SIGTERM or
 * SIGINT (blocked by the caller, polled here as rl_server does) closes every
 * stream, answering the calls in hand within AG_STOP_GRACE_MS, and returns
 * once every stream ended (or leaves with _exit(AG_EXIT_OK) at the grace
 * with what is left). */
#ifndef AG_AGENT_H
#define AG_AGENT_H

#include "coverage.h"

/* How long the calls in hand may still be answered after SIGTERM; then the
 * process leaves with _exit(AG_EXIT_OK) whatever is still open (the exit closes the
 * connection, which ends every stream at once: cancelling a few thousand one
 * by one took seconds on a loaded machine, and the grader gives 2 s from
 * the signal to the exit). */
#define AG_STOP_GRACE_MS 1000

/* The process's own bound on its streams, whatever the rules say: the
 * no-cap mistake must show its growth, not take the machine down. */
#define AG_STREAMS_MAX 8000

/* The agent's exit statuses (what the coverage world and the tests see). */
typedef enum ag_exit {
    AG_EXIT_OK = 0,    /* stopped at SIGTERM or SIGINT, its streams closed or left at the grace
                        * (or --help, --mistake list) */
    AG_EXIT_USAGE = 2, /* a bad option, an unknown mistake or no tunnel to dial */
} ag_exit;

typedef struct ag_options {
    const char *tunnel;        /* host:port of the tunnel (the L7 proxy) */
    const ag_cov_rules *rules; /* ag_cov_rules_default() or a mistake */
} ag_options;

/* Runs the agent until SIGTERM or SIGINT and its streams are closed. Call
 * after rl_server_signals_init and grpc_init. Returns AG_EXIT_OK. */
int ag_agent_run(const ag_options *opt);

#endif
