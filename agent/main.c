/* agent: the coverage lab's reference tunnel agent.
 *
 * Dials the tunnel ($RELAYLAB_TUNNEL or --tunnel: the L7 proxy in front of
 * the tunnel servers), holds Tunnel.Open streams sized per server by the
 * table of lab/exercises/coverage.md, answers the calls the servers hand
 * it, and logs its figures per server on stderr. --mistake NAME replaces one
 * sizing rule by a classic mistake, for demonstrations and for testing the
 * grader (agent/coverage.c holds the table). */
#include "agent.h"
#include "coverage.h"
#include "rl_log.h"
#include "rl_server.h"

#include <grpc/grpc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: agent [--tunnel ADDR] [--mistake NAME]\n"
            "  --tunnel ADDR   the tunnel to dial (default $RELAYLAB_TUNNEL)\n"
            "  --mistake NAME  size streams with a classic mistake ('--mistake list' lists them)\n"
            "Logs 'agent: server S streams N busy B state STATE' on stderr when its figures change.\n"
            "SIGTERM: closes its streams (answering the calls in hand within %d ms) and exits 0.\n"
            "Exit status: 0 after SIGTERM (or --help, --mistake list); 2 for a bad option, an unknown\n"
            "mistake or no tunnel.\n",
            AG_STOP_GRACE_MS);
}

int main(int argc, char **argv)
{
    rl_log_init("agent");
    ag_options opt = {getenv("RELAYLAB_TUNNEL"), ag_cov_rules_default()};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--tunnel") == 0 && i + 1 < argc) {
            opt.tunnel = argv[++i];
        } else if (strcmp(argv[i], "--mistake") == 0 && i + 1 < argc) {
            const char *name = argv[++i];
            if (strcmp(name, "list") == 0) {
                ag_cov_rules_print_list(stdout);
                return AG_EXIT_OK;
            }
            opt.rules = ag_cov_rules_find(name);
            if (!opt.rules) {
                fprintf(stderr, "agent: no mistake called '%s'; these are known:\n", name);
                ag_cov_rules_print_list(stderr);
                return AG_EXIT_USAGE;
            }
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return AG_EXIT_OK;
        } else {
            fprintf(stderr, "agent: unknown argument '%s'\n", argv[i]);
            usage(stderr);
            return AG_EXIT_USAGE;
        }
    }
    if (!opt.tunnel || !*opt.tunnel) {
        fprintf(stderr, "agent: no tunnel to dial: set RELAYLAB_TUNNEL=host:port or pass --tunnel ADDR\n");
        return AG_EXIT_USAGE;
    }
    /* Before gRPC starts its threads, so that only the loop takes them. */
    rl_server_signals_init();
    signal(SIGPIPE, SIG_IGN);
    grpc_init();
    gpr_set_log_function(rl_log_grpc);
    int rc = ag_agent_run(&opt);
    grpc_shutdown();
    return rc;
}
