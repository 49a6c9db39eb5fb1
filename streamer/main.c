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

int main(int argc, char **argv)
{
    rl_log_init("streamer");
    const char *listen = getenv("RELAYLAB_LISTEN");
    if (!listen || !*listen)
        listen = "127.0.0.1:0";
    int threads = 0;
    st_produce_config cfg = {false, false};
    int64_t grace_ms = RL_SERVER_GRACE_MS, drain_delay_ms = 0;
    const char *grace_env = getenv("RELAYLAB_GRACE_MS");
    if (grace_env && *grace_env && rl_server_parse_ms(grace_env, &grace_ms) != RL_OK) {
        fprintf(stderr, "streamer: RELAYLAB_GRACE_MS wants whole milliseconds from 0 to 3600000, not '%s'\n",
                grace_env);
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--listen") == 0 && i + 1 < argc) {
            listen = argv[++i];
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            char *end;
            errno = 0;
            long n = strtol(argv[++i], &end, 10);
            if (errno || *end || n < 1 || n > 64) {
                fprintf(stderr, "streamer: --threads wants a number from 1 to 64, not '%s'\n", argv[i]);
                return 2;
            }
            threads = (int)n;
        } else if ((strcmp(argv[i], "--grace-ms") == 0 || strcmp(argv[i], "--drain-delay-ms") == 0) && i + 1 < argc) {
            const char *a = argv[i++];
            if (rl_server_parse_ms(argv[i], a[2] == 'g' ? &grace_ms : &drain_delay_ms) != RL_OK) {
                fprintf(stderr, "streamer: %s wants whole milliseconds from 0 to 3600000, not '%s'\n", a, argv[i]);
                return 2;
            }
        } else if (strcmp(argv[i], "--unbounded") == 0) {
            cfg.unbounded = true;
        } else if (strcmp(argv[i], "--stats") == 0) {
            cfg.log_calls = true;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "streamer: unknown or incomplete option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }

    char err[256];
    if (rl_server_check_timing(grace_ms, drain_delay_ms, err, sizeof err) != RL_OK) {
        fprintf(stderr, "streamer: %s\n", err);
        return 2;
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
        .listen = listen,
        .threads = threads,
        .methods = methods,
        .nmethods = 1,
        .args = NULL,
        .grace_ms = grace_ms,
        .drain_delay_ms = drain_delay_ms,
    };
    rl_server *server = NULL;
    if (rl_server_start(&opt, &server, err, sizeof err) != 0) {
        fprintf(stderr, "streamer: %s\n", err);
        grpc_shutdown();
        return 1;
    }
    RL_INFO("producer: %s",
            cfg.unbounded ? "UNBOUNDED (thread + unbounded queue: the mistake)" : "paced by the flow-control window");
    if (rl_server_wait(server) != RL_OK)
        _exit(0); /* calls gRPC would not let go of: cleaning up would wait for them */
    rl_memstats_reporter_stop(reporter);
    rl_server_free(server);
    if (rl_server_teardown(grpc_shutdown, RL_SERVER_TEARDOWN_MS) != RL_OK)
        _exit(0);
    return 0;
}
