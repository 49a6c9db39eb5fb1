/* tunnel: a tunnel server of the coverage lab's world (see tunnel.h). The
 * grader and `lab demo coverage` start N of them behind the L7 proxy
 * (lib/worlds/rl_tworld.h), each listening on its private unix socket alone:
 * the proxy's streams and the grader's control service both arrive there,
 * in a folder the agent's sandbox cannot see, so the agent has no way to
 * the servers but through the proxy (docs/coverage-world.md). */
#include "tunnel.h"

#include "rl_err.h"
#include "rl_log.h"
#include "rl_server.h"
#include "rl_server_flags.h"

#include <getopt.h>
#include <grpc/grpc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: tunnel --id NAME --control unix:PATH [--listen ADDR] [--grace-ms MS]\n"
               "\n"
               "A tunnel server of the coverage lab: serves relaylab.Tunnel/Open, names itself NAME in\n"
               "each stream's first message, hands calls to the newest idle stream or queues them.\n"
               "  --control unix:PATH  where it listens: the L7 proxy's streams and relaylab.TunnelControl\n"
               "                  (Dispatch, ObserveTunnel, Reset); the first stdout line is\n"
               "                  'tunnel listening on unix:PATH'\n"
               "  --listen ADDR   also listen on ADDR (no default, no environment): a port that refuses\n"
               "                  every stream and control call (PERMISSION_DENIED); the coverage world\n"
               "                  starts none; the first stdout line is then 'tunnel listening on HOST:PORT'\n"
               "  --grace-ms MS   after SIGTERM, how long open streams may stay (default 500)\n");
}

/* The tunnel server's exit statuses (what the coverage world sees). */
enum tn_exit {
    TN_EXIT_OK = 0,    /* served until SIGTERM and stopped (or --help) */
    TN_EXIT_START = 1, /* the server could not start (the address is taken or invalid) */
    TN_EXIT_USAGE = 2, /* a bad option */
};

int main(int argc, char **argv)
{
    rl_log_init("tunnel");
    /* No TCP listener unless --listen asks: never $RELAYLAB_LISTEN, which a
     * grader's environment may hold, since a port would let the agent go
     * around the proxy. */
    const char *control = NULL, *id = NULL, *listen = NULL;
    rl_server_flags flags;
    char err[512];
    /* Cannot fail: the tunnel reads no grace from the environment. */
    rl_server_flags_init(&flags, "tunnel", RL_FLAG_GRACE, 1, 1, 500, err, sizeof err);
    static const struct option longopts[] = {
        {"listen", required_argument, NULL, 'l'}, {"control", required_argument, NULL, 'c'},
        {"id", required_argument, NULL, 'i'},     {"grace-ms", required_argument, NULL, 'g'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
    };
    int opt;
    while ((opt = getopt_long(argc, argv, "l:c:i:g:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'g':
            if (rl_server_flags_take(&flags, "--grace-ms", optarg, err, sizeof err) != RL_OK) {
                fprintf(stderr, "%s\n", err);
                return TN_EXIT_USAGE;
            }
            break;
        case 'l': listen = optarg; break;
        case 'c': control = optarg; break;
        case 'i': id = optarg; break;
        case 'h': usage(stdout); return TN_EXIT_OK;
        default: usage(stderr); return TN_EXIT_USAGE;
        }
    }
    if (optind != argc || !id || !*id || !control || strncmp(control, "unix:", 5) != 0 || (listen && !*listen)) {
        usage(stderr);
        return TN_EXIT_USAGE;
    }
    tn_server srv;
    memset(&srv, 0, sizeof srv);
    srv.id = id;
    const rl_method methods[] = {
        {"/relaylab.Tunnel/Open", tn_stream_start, &srv, false},
        {"/relaylab.TunnelControl/Dispatch", tn_dispatch_start, &srv, true},
        {"/relaylab.TunnelControl/ObserveTunnel", tn_observe_start, &srv, true},
        {"/relaylab.TunnelControl/Reset", tn_reset_start, &srv, true},
    };
    /* Thousands of streams on the proxy's one connection: gRPC's default
     * limit is far above, but say so (docs/coverage-world.md). */
    grpc_arg a = {.type = GRPC_ARG_INTEGER, .key = (char *)GRPC_ARG_MAX_CONCURRENT_STREAMS, .value.integer = 100000};
    grpc_channel_args args = {1, &a};
    rl_server_signals_init();
    grpc_init();
    /* One loop: the state is the loop thread's alone. */
    rl_server_options so = {
        .name = "tunnel",
        .listen = listen,
        .threads = 1,
        .methods = methods,
        .nmethods = sizeof methods / sizeof *methods,
        .args = &args,
        .grace_ms = flags.grace_ms,
        .private_listen = control,
    };
    rl_server *server;
    if (rl_server_start(&so, &server, err, sizeof err) != 0) {
        fprintf(stderr, "tunnel: %s\n", err);
        grpc_shutdown();
        return TN_EXIT_START;
    }
    if (rl_server_wait(server) != RL_OK)
        _exit(TN_EXIT_OK);
    rl_server_free(server);
    if (rl_server_teardown(grpc_shutdown, RL_SERVER_TEARDOWN_MS) != RL_OK)
        _exit(TN_EXIT_OK);
    free(srv.streams);
    free(srv.calls);
    free(srv.queue);
    return TN_EXIT_OK;
}
