/* streamer: the flow-control lab's reference server-streaming producer.
 *
 * Serves relaylab.Streamer/Produce. By default each call makes its next
 * chunk only when the previous send completed (produce.h), so a stalled
 * reader costs one flow-control window. --unbounded switches to the classic
 * mistake (a producer thread and an unbounded queue) for demonstrations.
 * Memory figures go to stderr on SIGUSR1, and with --stats every second and
 * at every call's end. */
#include "produce.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_log.h"
#include "rl_memstats.h"
#include "rl_server.h"
#include "rl_server_flags.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: streamer [--listen ADDR] [--threads N] [--unbounded] [--stats] [--grace-ms MS]\n"
            "                [--drain-delay-ms MS]\n"
            "  --listen ADDR  address to serve on (default $RELAYLAB_LISTEN, else 127.0.0.1:0)\n"
            "  --threads N    completion-queue threads (default: one per core)\n"
            "  --unbounded    the classic mistake: a thread per call fills an unbounded queue\n"
            "  --stats        log memory figures every second and at every call's end\n"
            "  --grace-ms MS  after SIGTERM, how long streams in flight may finish before they are\n"
            "                 cancelled (default $RELAYLAB_GRACE_MS, else %d)\n"
            "  --drain-delay-ms MS  after SIGTERM, how long to keep admitting calls while the health\n"
            "                 service already says NOT_SERVING (default 0; below the grace)\n"
            "SIGUSR1 logs one line of memory figures. SIGTERM: NOT_SERVING, admission closes, streams in\n"
            "flight finish within the grace, exit 0; a second SIGTERM or a SIGINT cancels at once.\n",
            RL_SERVER_GRACE_MS);
}

/* The producer's counters for the reporter's line. */
static void produce_figures(char *buf, size_t len)
{
    st_produce_stats p;
    st_produce_stats_get(&p);
    snprintf(buf, len, "active=%llu calls=%llu sent=%llu queued=%llu", (unsigned long long)p.active,
             (unsigned long long)p.calls, (unsigned long long)p.sent, (unsigned long long)p.queued_bytes);
}

/* The streamer's exit statuses (their values are what scripts and tests see). */
enum st_exit {
    ST_EXIT_OK = 0,    /* served until SIGTERM and drained (or --help) */
    ST_EXIT_START = 1, /* the server could not start (the address is taken or invalid) */
    ST_EXIT_USAGE = 2, /* a bad option or environment variable */
};

int main(int argc, char **argv)
{
    rl_log_init("streamer");
    st_produce_config cfg = {false, false};
    rl_server_flags flags;
    char err[256];
    int rc = rl_server_flags_init(&flags, "streamer", RL_FLAG_SERVER, 0, 64, RL_SERVER_GRACE_MS, err, sizeof err);
    for (int i = 1; i < argc && rc == RL_OK; i++) {
        if (strcmp(argv[i], "--unbounded") == 0) {
            cfg.unbounded = true;
        } else if (strcmp(argv[i], "--stats") == 0) {
            cfg.log_calls = true;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return ST_EXIT_OK;
        } else if (i + 1 >= argc ||
                   (rc = rl_server_flags_take(&flags, argv[i], argv[i + 1], err, sizeof err)) == RL_ENOTFOUND) {
            fprintf(stderr, "streamer: unknown or incomplete option '%s'\n", argv[i]);
            usage(stderr);
            return ST_EXIT_USAGE;
        } else {
            i++;
        }
    }
    if (rc != RL_OK || rl_server_flags_done(&flags, err, sizeof err) != RL_OK) {
        fprintf(stderr, "%s\n", err);
        return ST_EXIT_USAGE;
    }

    /* Before any other thread exists, so every gRPC thread inherits the
     * blocked SIGUSR1 and only the reporter takes it. */
    rl_memstats_reporter *reporter = NULL;
    if (rl_memstats_reporter_start(cfg.log_calls, produce_figures, &reporter) != RL_OK)
        RL_WARN("no memory figures on SIGUSR1: cannot start the reporter's thread");

    rl_server_signals_init(); /* before gRPC starts its threads */
    grpc_init();
    const rl_method methods[] = {{"/relaylab.Streamer/Produce", st_produce_start, &cfg, false}};
    rl_server_options opt = {
        .name = "streamer",
        .listen = flags.listen,
        .threads = flags.threads,
        .methods = methods,
        .nmethods = 1,
        .args = NULL,
        .grace_ms = flags.grace_ms,
        .drain_delay_ms = flags.drain_delay_ms,
    };
    rl_server *server = NULL;
    if (rl_server_start(&opt, &server, err, sizeof err) != 0) {
        fprintf(stderr, "streamer: %s\n", err);
        grpc_shutdown();
        return ST_EXIT_START;
    }
    RL_INFO("producer: %s",
            cfg.unbounded ? "UNBOUNDED (thread + unbounded queue: the mistake)" : "paced by the flow-control window");
    if (rl_server_wait(server) != RL_OK)
        _exit(ST_EXIT_OK); /* calls gRPC would not let go of: cleaning up would wait for them */
    rl_memstats_reporter_stop(reporter);
    rl_server_free(server);
    if (rl_server_teardown(grpc_shutdown, RL_SERVER_TEARDOWN_MS) != RL_OK)
        _exit(ST_EXIT_OK);
    return ST_EXIT_OK;
}
