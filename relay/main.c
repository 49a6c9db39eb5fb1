/* relay: the reference relay (bin/relay), the lab's model solution and its
 * performance anchor. It serves relaylab.Relay/Process by calling the baseline's
 * Lookup and then Work, passing on only the time left and any cancellation.
 * --mistake NAME turns it into one of the classic broken relays (see mistake.c). */
#include "mistake.h"
#include "process.h"
#include "chancfg/rl_chancfg.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_log.h"
#include "rl_memstats.h"
#include "rl_server.h"
#include "rl_server_flags.h"

#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: relay [--listen ADDR] [--baseline ADDR] [--threads N] [--mistake NAME] [--config FILE]\n"
            "             [--grace-ms MS] [--drain-delay-ms MS] [--max-inflight N] [--max-queue N]\n"
            "  --listen ADDR    where to serve Relay.Process (default $RELAYLAB_LISTEN, else 127.0.0.1:0)\n"
            "  --baseline ADDR  the baseline to call (default $RELAYLAB_BASELINE; required)\n"
            "  --threads N      server loops (default 1: a relay does no work of its own, and a second\n"
            "                   loop adds hand-overs between threads, not calls/s; run more relays instead)\n"
            "  --mistake NAME   behave like a classic broken relay; `--mistake list` shows them\n"
            "  --config FILE    a channel config (channel_config/README.md): its server section for\n"
            "                   the listener, its client section for the channel to the baseline\n"
            "  --grace-ms MS    after SIGTERM, how long calls in flight may finish before they and\n"
            "                   their downstream calls are cancelled (default $RELAYLAB_GRACE_MS, else %d)\n"
            "  --drain-delay-ms MS  after SIGTERM, how long to keep admitting calls while the health\n"
            "                   service already says NOT_SERVING (default 0; below the grace)\n"
            "  --max-inflight N a fixed limit on the calls with a downstream call in flight at once, across\n"
            "                   the loops (default: a limit that follows the baseline's latency, from %d\n"
            "                   up, relay/limit.h; the mistakes keep a fixed %d)\n"
            "  --max-queue N    calls waiting for one of those; beyond it, or when a call's remaining\n"
            "                   deadline cannot cover the expected wait, it is refused RESOURCE_EXHAUSTED\n"
            "                   at once (default %d)\n"
            "SIGUSR1 logs one line of memory figures.\n"
            "SIGTERM: NOT_SERVING, admission closes (calls queued for a slot fail UNAVAILABLE), calls in\n"
            "flight finish within the grace, exit 0;\n"
            "a second SIGTERM or a SIGINT cancels what is left at once.\n",
            RL_SERVER_GRACE_MS, RELAY_MAX_INFLIGHT, RELAY_MAX_INFLIGHT, RELAY_MAX_QUEUE);
}

/* Admission closes at SIGTERM (after the drain delay): the calls queued
 * for a slot fail UNAVAILABLE, their clients free to retry elsewhere. */
static void close_gate(void *gate)
{
    relay_gate_close(gate);
}

/* The relay's exit statuses (their values are what scripts and tests see). */
enum relay_exit {
    RELAY_EXIT_OK = 0,    /* served until SIGTERM and drained (or --help, --mistake list) */
    RELAY_EXIT_START = 1, /* the server could not start (the address is taken or invalid) */
    RELAY_EXIT_USAGE = 2, /* a bad option, environment variable or channel config */
};

/* One loop by default. The relay's own code is a few per cent of its CPU;
 * the rest is gRPC's reading, writing and completing calls on three of them
 * per Process. With a loop per core, gRPC polls the connections from
 * whichever loop is free and hands completions to the other loop's thread,
 * about 0.8 context switches per call against 0.15-0.3 with one loop: on 2
 * cores, 9-34 % more CPU per call for no more calls/s (bench/results/relay.md,
 * "one loop or a loop per core" and "the one-loop default"). A relay that
 * needs more than a core is scaled out, behind the balancer, like any
 * stateless service. */
#define RELAY_THREADS 1

/* What the command line and the environment asked for. */
typedef struct relay_opts {
    rl_server_flags server; /* --listen, --threads (RELAY_THREADS), --grace-ms, --drain-delay-ms */
    const char *baseline;
    const relay_mistake *mistake;
    long max_inflight, max_queue;
    bool fixed_limit;   /* --max-inflight given */
    const char *config; /* NULL: none */
    bool done;          /* --help or --mistake list answered: nothing to run */
} relay_opts;

/* Parses one option |a| with its value |v| into |o|. Returns RELAY_EXIT_OK
 * or RELAY_EXIT_USAGE (the message printed). */
static int parse_option(const char *a, const char *v, relay_opts *o)
{
    char err[256];
    int taken = rl_server_flags_take(&o->server, a, v, err, sizeof err);
    if (taken != RL_ENOTFOUND) {
        if (taken != RL_OK)
            fprintf(stderr, "%s\n", err);
        return taken == RL_OK ? RELAY_EXIT_OK : RELAY_EXIT_USAGE;
    }
    if (strcmp(a, "--baseline") == 0) {
        o->baseline = v;
    } else if (strcmp(a, "--max-inflight") == 0 || strcmp(a, "--max-queue") == 0) {
        char *end;
        long n = strtol(v, &end, 10);
        bool inflight = a[6] == 'i';
        if (*end || n < (inflight ? 1 : 0) || n > 1000000) {
            fprintf(stderr, "relay: %s wants a number from %d to 1000000, not '%s'\n", a, inflight ? 1 : 0, v);
            return RELAY_EXIT_USAGE;
        }
        *(inflight ? &o->max_inflight : &o->max_queue) = n;
        o->fixed_limit |= inflight;
    } else if (strcmp(a, "--config") == 0) {
        o->config = v;
    } else if (strcmp(a, "--mistake") == 0) {
        if (strcmp(v, "list") == 0) {
            printf("relay modes (--mistake NAME):\n");
            relay_mistake_print_list(stdout);
            o->done = true;
            return RELAY_EXIT_OK;
        }
        o->mistake = relay_mistake_find(v);
        if (!o->mistake) {
            fprintf(stderr, "relay: unknown mistake '%s'; the modes are:\n", v);
            relay_mistake_print_list(stderr);
            return RELAY_EXIT_USAGE;
        }
    } else {
        fprintf(stderr, "relay: unknown option %s\n", a);
        usage(stderr);
        return RELAY_EXIT_USAGE;
    }
    return RELAY_EXIT_OK;
}

/* Reads the environment and the command line into |o|. Returns
 * RELAY_EXIT_OK (with o->done when there is nothing to run) or
 * RELAY_EXIT_USAGE, the message printed. */
static int parse(int argc, char **argv, relay_opts *o)
{
    *o = (relay_opts){
        .baseline = getenv("RELAYLAB_BASELINE"),
        .mistake = relay_mistake_default(),
        .max_inflight = RELAY_MAX_INFLIGHT,
        .max_queue = RELAY_MAX_QUEUE,
    };
    char err[256];
    if (rl_server_flags_init(&o->server, "relay", RL_FLAG_SERVER, RELAY_THREADS, 256, RL_SERVER_GRACE_MS, err,
                             sizeof err) != RL_OK) {
        fprintf(stderr, "%s\n", err);
        return RELAY_EXIT_USAGE;
    }
    for (int i = 1; i < argc && !o->done; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            o->done = true;
            return RELAY_EXIT_OK;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "relay: %s needs a value (or is unknown)\n", a);
            usage(stderr);
            return RELAY_EXIT_USAGE;
        }
        int rc = parse_option(a, argv[++i], o);
        if (rc != RELAY_EXIT_OK)
            return rc;
    }
    if (o->done)
        return RELAY_EXIT_OK;
    if (rl_server_flags_done(&o->server, err, sizeof err) != RL_OK) {
        fprintf(stderr, "%s\n", err);
        return RELAY_EXIT_USAGE;
    }
    if (!o->baseline || !*o->baseline) {
        fprintf(stderr, "relay: no baseline to call: pass --baseline HOST:PORT or set RELAYLAB_BASELINE "
                        "(the address bin/baseline printed in its 'listening on' line)\n");
        return RELAY_EXIT_USAGE;
    }
    return RELAY_EXIT_OK;
}

/* Serves until SIGTERM and drains. Returns RELAY_EXIT_OK, or
 * RELAY_EXIT_USAGE or RELAY_EXIT_START with the reason in |err|. Leaves
 * the process with _exit(0) when calls outlived the drain (cleaning up
 * would wait for them), or when gRPC's teardown outlived
 * RL_SERVER_TEARDOWN_MS (rl_server_teardown). */
static int run(const relay_opts *o, char *err, size_t errlen)
{
    grpc_channel_args *server_args = NULL, *client_args = NULL;
    if (o->config && (rl_chancfg_load_args(o->config, RL_CHANCFG_SERVER, &server_args, err, errlen) != RL_OK ||
                      rl_chancfg_load_args(o->config, RL_CHANCFG_CLIENT, &client_args, err, errlen) != RL_OK)) {
        rl_chancfg_args_free(server_args);
        return RELAY_EXIT_USAGE;
    }

    rl_server_signals_init(); /* before gRPC starts its threads */
    /* SIGUSR1 logs the relay's memory figures (how a burst's memory comes
     * back is measured with them: bench/results/relay.md). */
    rl_memstats_reporter *reporter = NULL;
    if (rl_memstats_reporter_start(false, NULL, &reporter) != RL_OK)
        RL_WARN("no memory figures on SIGUSR1: cannot start the reporter's thread");
    grpc_init();
    /* One channel shared by every loop: one HTTP/2 connection to the baseline.
     * Measured with bench-relay (2 cores, 64 in flight) against one channel per
     * loop on separate connections: see bench/results/relay.md. */
    grpc_channel_credentials *creds = grpc_insecure_credentials_create();
    grpc_channel *channel = grpc_channel_create(o->baseline, creds, client_args);
    grpc_channel_credentials_release(creds);

    relay_gate gate;
    /* The adaptive limit is the reference's; a mistake reproduces a relay
     * with the lab's fixed gate, and --max-inflight asks for one. */
    relay_gate_init(&gate, (unsigned)o->max_inflight, (unsigned)o->max_queue, o->mistake->unbounded_queue,
                    !o->fixed_limit && o->mistake == relay_mistake_default());
    relay_ctx ctx;
    relay_ctx_init(&ctx, channel, o->mistake, &gate);
    const rl_method methods[] = {{RELAY_PROCESS_PATH, relay_process_start, &ctx, false}};
    rl_server_options opt = {
        .name = "relay",
        .listen = o->server.listen,
        .threads = o->server.threads,
        .methods = methods,
        .nmethods = sizeof methods / sizeof methods[0],
        .args = server_args,
        .grace_ms = o->server.grace_ms,
        .drain_delay_ms = o->server.drain_delay_ms,
        .shutdown_hooks = o->mistake->shutdown,
        .on_close_admission = close_gate,
        .close_user = &gate,
    };
    if (o->mistake != relay_mistake_default())
        RL_WARN("running with the '%s' mistake: %s", o->mistake->name, o->mistake->description);

    int rc = RELAY_EXIT_OK;
    rl_server *server = NULL;
    if (rl_server_start(&opt, &server, err, errlen) != RL_OK) {
        rc = RELAY_EXIT_START;
    } else {
        if (rl_server_wait(server) != RL_OK)
            _exit(RELAY_EXIT_OK); /* calls gRPC would not let go of: cleaning up would wait for them */
        rl_memstats_reporter_stop(reporter);
        reporter = NULL;
        rl_server_free(server);
    }
    grpc_channel_destroy(channel);
    rl_chancfg_args_free(server_args);
    rl_chancfg_args_free(client_args);
    /* A relay that never served has no connection for the teardown to wait
     * on, and its caller still has to say why it failed. */
    if (rc != RELAY_EXIT_OK)
        grpc_shutdown();
    else if (rl_server_teardown(grpc_shutdown, RL_SERVER_TEARDOWN_MS) != RL_OK)
        _exit(rc);
    rl_memstats_reporter_stop(reporter);
    relay_gate_fini(&gate);
    return rc;
}

/* Says why the relay stopped, when it failed. Returns |rc|. */
static int report(int rc, const char *err)
{
    if (rc != RELAY_EXIT_OK)
        fprintf(stderr, "relay: %s\n", err);
    return rc;
}

int main(int argc, char **argv)
{
    rl_log_init("relay");
    relay_opts o;
    int rc = parse(argc, argv, &o);
    if (rc != RELAY_EXIT_OK || o.done)
        return rc;
    char err[512] = "";
    return report(run(&o, err, sizeof err), err);
}
