/* baseline: the reference downstream server the grader trusts. It serves
 * relaylab.Baseline (Lookup, Work, Fetch) and records, for every call, what
 * a downstream can observe: the deadline it arrived with, when it arrived and
 * ended, how far it got and how it ended. relaylab.Observer hands those
 * records to the grader; --record also writes them as JSON lines. */
#include "baseline.h"
#include "chancfg/rl_chancfg.h"
#include "fd_guard.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_log.h"
#include "rl_server_flags.h"
#include "timed.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <grpc/grpc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: baseline [--listen ADDR] [--threads N] [--record FILE] [--grace-ms MS] [--drain-delay-ms MS]\n"
            "\n"
            "The reference downstream server of relaylab.\n"
            "  --listen ADDR   where to listen (default $RELAYLAB_LISTEN, else 127.0.0.1:0,\n"
            "                  a port the OS picks); the first stdout line is\n"
            "                  'baseline listening on HOST:PORT'\n"
            "  --threads N     loop threads (default: one per core)\n"
            "  --record FILE   also write every ended call as a JSON line: seq, tag, method,\n"
            "                  deadline_ms (remaining at arrival, null for none), arrival_ns,\n"
            "                  end_ns (CLOCK_MONOTONIC), steps_done, status, status_name,\n"
            "                  cancelled, attempt, faulted, peer (the connection it came on),\n"
            "                  start_ns, wasted\n"
            "  --grace-ms MS   after SIGTERM, how long in-flight calls may finish before they are\n"
            "                  cancelled (default $RELAYLAB_GRACE_MS, else %d)\n"
            "  --drain-delay-ms MS  after SIGTERM, how long to keep admitting calls while the health\n"
            "                  service already says NOT_SERVING (default 0; below the grace)\n"
            "  --arg KEY=VALUE a server channel arg (integer if VALUE is one, else string);\n"
            "                  repeatable, e.g. --arg grpc.http2.max_ping_strikes=2\n"
            "  --config FILE   the server section of a channel config (channel_config/README.md);\n"
            "                  not together with --arg\n"
            "  --observer unix:PATH  serve relaylab.Observer only on this unix socket (the\n"
            "                  grader's private channel); elsewhere it answers PERMISSION_DENIED.\n"
            "                  Without it, Observer is served on --listen like every method\n"
            "SIGTERM: NOT_SERVING, admission closes, calls in flight finish within the grace, exit 0;\n"
            "a second SIGTERM or a SIGINT cancels what is left at once.\n",
            RL_SERVER_GRACE_MS);
}

#define MAX_ARGS 32

/* Adds "KEY=VALUE" to |args|. Returns 0, or -1 when it is malformed. */
static int add_arg(grpc_channel_args *args, grpc_arg *slots, char *kv)
{
    char *eq = strchr(kv, '=');
    if (!eq || eq == kv || args->num_args == MAX_ARGS)
        return -1;
    *eq = '\0';
    grpc_arg *a = &slots[args->num_args++];
    a->key = kv;
    char *end;
    long long v = strtoll(eq + 1, &end, 10);
    if (*(eq + 1) && !*end && v >= INT_MIN && v <= INT_MAX) {
        a->type = GRPC_ARG_INTEGER;
        a->value.integer = (int)v;
    } else {
        a->type = GRPC_ARG_STRING;
        a->value.string = eq + 1;
    }
    return 0;
}

/* The baseline's exit statuses (their values are what scripts and the
 * grader see). */
enum bl_exit {
    BL_EXIT_OK = 0,    /* served until SIGTERM and drained (or --help) */
    BL_EXIT_START = 1, /* the server could not start (the address is taken or invalid) */
    BL_EXIT_USAGE = 2, /* a bad option, environment variable, channel config or record file */
};

/* What the command line and the environment asked for. */
typedef struct bl_opts {
    rl_server_flags server; /* --listen, --threads (default 0: one loop per
                             * core), --grace-ms, --drain-delay-ms */
    const char *record;     /* NULL: no record file */
    const char *config;     /* NULL: none */
    const char *observer;   /* NULL: Observer on --listen */
    grpc_arg arg_slots[MAX_ARGS];
    grpc_channel_args args; /* the --arg ones, in arg_slots */
    bool done;              /* --help answered: nothing to run */
} bl_opts;

/* The shared flag a short option of the getopt table stands for. */
static const char *shared_flag(int opt)
{
    switch (opt) {
    case 'l': return "--listen";
    case 't': return "--threads";
    case 'g': return "--grace-ms";
    default: return "--drain-delay-ms";
    }
}

/* Reads the environment and the command line into |o|. Returns BL_EXIT_OK
 * (with o->done after --help) or BL_EXIT_USAGE, the message printed. */
static int parse(int argc, char **argv, bl_opts *o)
{
    memset(o, 0, sizeof *o);
    o->args.args = o->arg_slots;
    char err[256];
    if (rl_server_flags_init(&o->server, "baseline", RL_FLAG_SERVER, 0, 256, RL_SERVER_GRACE_MS, err, sizeof err) !=
        RL_OK) {
        fprintf(stderr, "%s\n", err);
        return BL_EXIT_USAGE;
    }
    static const struct option longopts[] = {
        {"listen", required_argument, NULL, 'l'},
        {"threads", required_argument, NULL, 't'},
        {"record", required_argument, NULL, 'r'},
        {"grace-ms", required_argument, NULL, 'g'},
        {"arg", required_argument, NULL, 'a'},
        {"config", required_argument, NULL, 'c'},
        {"observer", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {"drain-delay-ms", required_argument, NULL, 'd'},
        {NULL, 0, NULL, 0},
    };
    int opt;
    while ((opt = getopt_long(argc, argv, "l:t:r:g:a:c:o:hd:", longopts, NULL)) != -1) {
        switch (opt) {
        case 'l':
        case 't':
        case 'g':
        case 'd':
            if (rl_server_flags_take(&o->server, shared_flag(opt), optarg, err, sizeof err) != RL_OK) {
                fprintf(stderr, "%s\n", err);
                return BL_EXIT_USAGE;
            }
            break;
        case 'r': o->record = optarg; break;
        case 'a':
            if (add_arg(&o->args, o->arg_slots, optarg) != 0) {
                fprintf(stderr, "baseline: --arg wants KEY=VALUE (at most %d), not '%s'\n", MAX_ARGS, optarg);
                return BL_EXIT_USAGE;
            }
            break;
        case 'c': o->config = optarg; break;
        case 'o': o->observer = optarg; break;
        case 'h':
            usage(stdout);
            o->done = true;
            return BL_EXIT_OK;
        default: usage(stderr); return BL_EXIT_USAGE;
        }
    }
    if (optind != argc || (o->config && o->args.num_args)) {
        usage(stderr);
        return BL_EXIT_USAGE;
    }
    if (rl_server_flags_done(&o->server, err, sizeof err) != RL_OK) {
        fprintf(stderr, "%s\n", err);
        return BL_EXIT_USAGE;
    }
    return BL_EXIT_OK;
}

/* Serves until SIGTERM and drains. Returns BL_EXIT_OK, or BL_EXIT_USAGE or
 * BL_EXIT_START with the reason in |err|. Leaves the process with _exit(0)
 * when calls outlived the drain (cleaning up would wait for them), or when
 * gRPC's teardown outlived RL_SERVER_TEARDOWN_MS (rl_server_teardown). */
static int run(bl_opts *o, char *err, size_t errlen)
{
    grpc_channel_args *config_args = NULL;
    if (o->config && rl_chancfg_load_args(o->config, RL_CHANCFG_SERVER, &config_args, err, errlen) != 0)
        return BL_EXIT_USAGE;
    bl_store *store;
    if (bl_store_new(o->record, &store) != 0) {
        snprintf(err, errlen, "cannot write the record file %s: %s", o->record, strerror(errno));
        rl_chancfg_args_free(config_args);
        return BL_EXIT_USAGE;
    }
    bl_method lookup = {store, &bl_lookup_kind}, work = {store, &bl_work_kind}, plain = {store, NULL};
    const rl_method methods[] = {
        {"/relaylab.Baseline/Lookup", bl_timed_start, &lookup, false},
        {"/relaylab.Baseline/Work", bl_timed_start, &work, false},
        {"/relaylab.Baseline/Fetch", bl_fetch_start, &plain, false},
        {"/relaylab.Observer/Observe", bl_observe_start, &plain, true},
        {"/relaylab.Observer/Reset", bl_reset_start, &plain, true},
        {"/relaylab.Observer/SetFault", bl_set_fault_start, &plain, true},
        {"/relaylab.Observer/SetCapacity", bl_set_capacity_start, &plain, true},
        {"/relaylab.Observer/SetOutage", bl_set_outage_start, &plain, true},
        {"/relaylab.Observer/HideRunning", bl_hide_running_start, &plain, true},
    };
    /* Before anything listens: a flood of the public port must never take
     * the descriptors the observer needs (fd_guard.h). */
    if (bl_fd_guard_init() != 0)
        RL_WARN("cannot read RLIMIT_NOFILE: the observer's descriptors are not guarded");
    rl_server_signals_init(); /* before gRPC starts its threads */
    grpc_init();
    rl_server_options so = {
        .name = "baseline",
        .listen = o->server.listen,
        .threads = o->server.threads,
        .methods = methods,
        .nmethods = sizeof methods / sizeof *methods,
        .grace_ms = o->server.grace_ms,
        .drain_delay_ms = o->server.drain_delay_ms,
        .args = config_args        ? config_args
                : o->args.num_args ? &o->args
                                   : NULL,
        .private_listen = o->observer,
    };
    int rc = BL_EXIT_OK;
    rl_server *server;
    if (rl_server_start(&so, &server, err, errlen) != 0) {
        rc = BL_EXIT_START;
    } else {
        if (rl_server_wait(server) != RL_OK)
            _exit(BL_EXIT_OK); /* calls gRPC would not let go of: cleaning up would wait for them */
        rl_server_free(server);
    }
    bl_store_free(store);
    rl_chancfg_args_free(config_args);
    /* A baseline that never served has no connection for the teardown to
     * wait on, and its caller still has to say why it failed. */
    if (rc != BL_EXIT_OK)
        grpc_shutdown();
    else if (rl_server_teardown(grpc_shutdown, RL_SERVER_TEARDOWN_MS) != RL_OK)
        _exit(rc);
    return rc;
}

/* Says why the baseline stopped, when it failed. Returns |rc|. */
static int report(int rc, const char *err)
{
    if (rc != BL_EXIT_OK)
        fprintf(stderr, "baseline: %s\n", err);
    return rc;
}

int main(int argc, char **argv)
{
    rl_log_init("baseline");
    bl_opts o;
    int rc = parse(argc, argv, &o);
    if (rc != BL_EXIT_OK || o.done)
        return rc;
    char err[512] = "";
    return report(run(&o, err, sizeof err), err);
}
