/* tunnel: a tunnel server of the coverage lab's world (see tunnel.h). The
 * grader and `lab demo coverage` start N of them behind the L7 proxy
 * (lib/worlds/rl_tworld.h); the agent under test only ever reaches Tunnel/Open
 * through the proxy, and the control service answers on the private unix
 * socket alone (docs/sandbox.md). */
#include "tunnel.h"

#include "rl_err.h"
#include "rl_log.h"

#include <getopt.h>
#include <grpc/grpc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: tunnel --id NAME [--listen ADDR] [--control unix:PATH] [--grace-ms MS]\n"
               "\n"
               "A tunnel server of the coverage lab: serves relaylab.Tunnel/Open, names itself NAME in\n"
               "each stream's first message, hands calls to the newest idle stream or queues them.\n"
               "  --listen ADDR   where to listen (default $RELAYLAB_LISTEN, else 127.0.0.1:0); the\n"
               "                  first stdout line is 'tunnel listening on HOST:PORT'\n"
               "  --control unix:PATH  serve relaylab.TunnelControl (Dispatch, ObserveTunnel, Reset)\n"
               "                  only on this unix socket; elsewhere it answers PERMISSION_DENIED\n"
               "  --grace-ms MS   after SIGTERM, how long open streams may stay (default 500)\n");
}

int main(int argc, char **argv)
{
    rl_log_init("tunnel");
    const char *listen = getenv("RELAYLAB_LISTEN");
    const char *control = NULL, *id = NULL;
    int64_t grace_ms = 500;
    static const struct option longopts[] = {
        {"listen", required_argument, NULL, 'l'}, {"control", required_argument, NULL, 'c'},
        {"id", required_argument, NULL, 'i'},     {"grace-ms", required_argument, NULL, 'g'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
    };
    int opt;
    while ((opt = getopt_long(argc, argv, "l:c:i:g:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'l': listen = optarg; break;
        case 'c': control = optarg; break;
        case 'i': id = optarg; break;
        case 'g':
            if (rl_server_parse_ms(optarg, &grace_ms) != RL_OK) {
                fprintf(stderr, "tunnel: --grace-ms wants whole milliseconds from 0 to 3600000, not '%s'\n", optarg);
                return 2;
            }
            break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind != argc || !id || !*id) {
        usage(stderr);
        return 2;
    }
    if (!listen || !*listen)
        listen = "127.0.0.1:0";
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
        .grace_ms = grace_ms,
        .private_listen = control,
    };
    rl_server *server;
    char err[512];
    if (rl_server_start(&so, &server, err, sizeof err) != 0) {
        fprintf(stderr, "tunnel: %s\n", err);
        grpc_shutdown();
        return 1;
    }
    if (rl_server_wait(server) != RL_OK)
        _exit(0);
    rl_server_free(server);
    if (rl_server_teardown(grpc_shutdown, RL_SERVER_TEARDOWN_MS) != RL_OK)
        _exit(0);
    free(srv.streams);
    free(srv.calls);
    free(srv.queue);
    return 0;
}
