/* bench-relay: what the reference relay costs. Starts bin/baseline and
 * bin/relay (found next to this executable) on loopback, drives N concurrent
 * Process calls (steps=0, lookup_delay_ms=0) through the relay for S seconds,
 * then the same Lookup+Work pairs against the baseline directly, and prints
 * ops/s and p50/p99 latency for both and their ratio. One rl_loop drives every
 * call: each of the N slots is a struct that starts its next op when the last
 * one ends (a closed loop), so the client is one thread, not N. */
#include "relaylab.pb-c.h"
#include "rl_alloc.h"
#include "rl_client.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_log.h"
#include "rl_loop.h"
#include "rl_path.h"
#include "rl_proc.h"

#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Per-call deadline: generous, so it never fires in a healthy run, but it
 * still travels through the relay like a real client's would. */
#define CALL_TIMEOUT_MS 10000

typedef struct bench bench;

/* One of the N concurrent slots. |stage| says which call |c| is. */
typedef struct slot {
    rl_client c;
    bench *b;
    int64_t start_ns;     /* when the current op (Process, or Lookup+Work) began */
    bool counted;         /* the op started after the warm-up */
    enum { OP_PROCESS, OP_LOOKUP, OP_WORK } stage;
    bool busy;            /* |c| is in flight */
} slot;

struct bench {
    rl_loop loop;
    grpc_channel *channel;
    void *method;             /* Process, or Lookup for the direct path */
    void *work_method;        /* direct path only */
    bool direct;
    bool measuring;           /* the warm-up is over */
    int64_t measure_from_ns;  /* when it ended (or is due to end) */
    int64_t measure_ns;       /* how long to measure after the warm-up */
    int64_t stop_ns;          /* no op starts after this */
    uint64_t started, max_calls, warm_calls;
    int64_t *lat;             /* latencies of counted ops, ns */
    size_t nlat, caplat;
    int64_t last_end_ns;      /* end of the last counted op */
    uint64_t errors;
    char first_error[256];
    unsigned busy;            /* slots with a call in flight */
};

typedef struct result {
    size_t ops;
    double ops_per_s, p50_ms, p99_ms;
    uint64_t errors;
} result;

static void op_done(rl_client *c);

static void start_call(slot *s, void *method, const ProtobufCMessage *msg)
{
    bench *b = s->b;
    grpc_call *call = grpc_channel_create_registered_call(b->channel, NULL, GRPC_PROPAGATE_DEFAULTS, b->loop.cq,
                                                          method, rl_deadline_after_ms(CALL_TIMEOUT_MS), NULL);
    if (rl_client_start(&s->c, call, msg, op_done) != RL_OK) {
        b->errors++;
        return;
    }
    s->busy = true;
    b->busy++;
}

static void start_op(slot *s)
{
    bench *b = s->b;
    int64_t now = rl_now_ns();
    /* The warm-up ends after its time or a tenth of the op budget, so a
     * small --calls still leaves ops to measure. */
    if (!b->measuring && (now >= b->measure_from_ns || b->started >= b->warm_calls)) {
        b->measuring = true;
        b->measure_from_ns = now;
        b->stop_ns = now + b->measure_ns;
    }
    if (now >= b->stop_ns || b->started >= b->max_calls)
        return;
    b->started++;
    s->start_ns = now;
    s->counted = b->measuring;
    if (b->direct) {
        Relaylab__LookupRequest req = RELAYLAB__LOOKUP_REQUEST__INIT;
        req.tag = (char *)"bench";
        s->stage = OP_LOOKUP;
        start_call(s, b->method, &req.base);
    } else {
        Relaylab__ProcessRequest req = RELAYLAB__PROCESS_REQUEST__INIT;
        req.tag = (char *)"bench";
        s->stage = OP_PROCESS;
        start_call(s, b->method, &req.base);
    }
}

static void note_error(bench *b, const rl_client *c)
{
    if (b->errors++ == 0) {
        char *d = grpc_slice_to_c_string(c->details);
        snprintf(b->first_error, sizeof b->first_error, "status %d: %s", (int)c->status, d);
        gpr_free(d);
    }
}

static void op_done(rl_client *c)
{
    slot *s = RL_CONTAINER_OF(c, slot, c);
    bench *b = s->b;
    s->busy = false;
    b->busy--;
    bool ok = c->status == GRPC_STATUS_OK;
    if (!ok)
        note_error(b, c);
    rl_client_fini(c);
    if (ok && s->stage == OP_LOOKUP) {
        Relaylab__WorkRequest req = RELAYLAB__WORK_REQUEST__INIT;
        req.tag = (char *)"bench";
        s->stage = OP_WORK;
        start_call(s, b->work_method, &req.base);
        return;
    }
    int64_t now = rl_now_ns();
    if (ok && s->counted) {
        if (b->nlat == b->caplat) {
            b->caplat = b->caplat ? 2 * b->caplat : 4096;
            b->lat = rl_xrealloc(b->lat, b->caplat * sizeof *b->lat);
        }
        b->lat[b->nlat++] = now - s->start_ns;
        b->last_end_ns = now;
    }
    start_op(s);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Runs one path to the end and fills |out|. Returns 0, or RL_ETIMEOUT when
 * calls were still in flight long after the stop (they are cancelled). */
static int run_path(bench *b, unsigned concurrency, double seconds, result *out)
{
    int64_t now = rl_now_ns();
    /* A short warm-up: connection set-up and first-call costs stay out of the figures. */
    int64_t warm_ns = (int64_t)(seconds * 1e9) / 10;
    if (warm_ns > 500 * RL_NS_PER_MS)
        warm_ns = 500 * RL_NS_PER_MS;
    b->measure_from_ns = now + warm_ns;
    b->measure_ns = (int64_t)(seconds * 1e9);
    b->stop_ns = INT64_MAX;
    b->warm_calls = b->max_calls / 10;
    slot *slots = rl_xcalloc(concurrency, sizeof *slots);
    for (unsigned i = 0; i < concurrency; i++) {
        slots[i].b = b;
        start_op(&slots[i]);
    }
    int rc = RL_OK;
    int64_t hard_stop = now + warm_ns + b->measure_ns + (CALL_TIMEOUT_MS + 2000) * RL_NS_PER_MS;
    bool cancelled = false;
    while (b->busy > 0) {
        rl_loop_run_until(&b->loop, rl_now_ns() + 50 * RL_NS_PER_MS);
        if (!cancelled && rl_now_ns() > hard_stop) {
            for (unsigned i = 0; i < concurrency; i++)
                if (slots[i].busy)
                    rl_client_cancel(&slots[i].c);
            cancelled = true;
            rc = RL_ETIMEOUT;
        }
    }
    free(slots);

    memset(out, 0, sizeof *out);
    out->ops = b->nlat;
    out->errors = b->errors;
    if (b->nlat) {
        qsort(b->lat, b->nlat, sizeof *b->lat, cmp_i64);
        double window = (double)(b->last_end_ns - b->measure_from_ns) / 1e9; /* last counted end */
        out->ops_per_s = window > 0 ? (double)b->nlat / window : 0;
        out->p50_ms = (double)b->lat[b->nlat / 2] / 1e6;
        size_t i99 = b->nlat * 99 / 100;
        out->p99_ms = (double)b->lat[i99 < b->nlat ? i99 : b->nlat - 1] / 1e6;
    }
    return rc;
}

static int bench_path(const char *target, bool direct, unsigned concurrency, double seconds, uint64_t max_calls,
                      result *out)
{
    bench b;
    memset(&b, 0, sizeof b);
    rl_loop_init(&b.loop);
    grpc_channel_credentials *creds = grpc_insecure_credentials_create();
    b.channel = grpc_channel_create(target, creds, NULL);
    grpc_channel_credentials_release(creds);
    b.direct = direct;
    b.max_calls = max_calls;
    b.method = grpc_channel_register_call(
        b.channel, direct ? "/relaylab.Baseline/Lookup" : "/relaylab.Relay/Process", NULL, NULL);
    b.work_method = grpc_channel_register_call(b.channel, "/relaylab.Baseline/Work", NULL, NULL);

    int rc = run_path(&b, concurrency, seconds, out);
    if (b.errors)
        fprintf(stderr, "bench-relay: %s path: %llu failed calls, the first: %s\n", direct ? "direct" : "relay",
                (unsigned long long)b.errors, b.first_error);

    grpc_channel_destroy(b.channel);
    grpc_completion_queue_shutdown(b.loop.cq);
    rl_loop_run(&b.loop);
    rl_loop_fini(&b.loop);
    free(b.lat);
    return rc;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: bench-relay [--concurrency N] [--seconds S] [--calls MAX]\n"
               "  --concurrency N  calls in flight (default 64)\n"
               "  --seconds S      measured time per path, after a short warm-up (default 5)\n"
               "  --calls MAX      at most this many ops per path (default 1000000)\n");
}

static int parse_num(const char *opt, const char *v, double lo, double hi, double *out)
{
    char *end;
    double x = strtod(v, &end);
    if (*end || end == v || x < lo || x > hi) {
        fprintf(stderr, "bench-relay: %s wants a number from %g to %g, not '%s'\n", opt, lo, hi, v);
        return RL_EINVAL;
    }
    *out = x;
    return RL_OK;
}

int main(int argc, char **argv)
{
    rl_log_init("bench-relay");
    double concurrency = 64, seconds = 5, max_calls = 1000000;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        }
        if (i + 1 >= argc) {
            usage(stderr);
            return 2;
        }
        const char *v = argv[++i];
        int rc;
        if (strcmp(argv[i - 1], "--concurrency") == 0)
            rc = parse_num("--concurrency", v, 1, 10000, &concurrency);
        else if (strcmp(argv[i - 1], "--seconds") == 0)
            rc = parse_num("--seconds", v, 0.1, 3600, &seconds);
        else if (strcmp(argv[i - 1], "--calls") == 0)
            rc = parse_num("--calls", v, 1, 1e9, &max_calls);
        else {
            usage(stderr);
            return 2;
        }
        if (rc != RL_OK)
            return 2;
    }

    char baseline_path[PATH_MAX], relay_path[PATH_MAX];
    if (rl_path_sibling("baseline", baseline_path, sizeof baseline_path) != RL_OK ||
        rl_path_sibling("relay", relay_path, sizeof relay_path) != RL_OK) {
        fprintf(stderr, "bench-relay: cannot find my own folder through /proc/self/exe\n");
        return 1;
    }

    /* The servers' INFO lines (drain on SIGTERM) would only clutter the
     * table; RELAYLAB_LOG overrides. Their output is captured, and shown
     * when one fails to start or does not end cleanly. */
    setenv("RELAYLAB_LOG", "warn", 0);
    /* Both servers start before grpc_init: forking after gRPC has started
     * its threads is not safe. */
    int status = 1;
    char err[512];
    rl_proc baseline = {0}, relay = {0};
    char baseline_addr[128], relay_addr[128];
    const char *baseline_argv[] = {baseline_path, "--listen", "127.0.0.1:0", NULL};
    rl_proc_options bo = {.argv = baseline_argv, .kill_with_parent = true};
    if (rl_proc_start_server(&baseline, &bo, 10000, baseline_addr, sizeof baseline_addr, err, sizeof err) != RL_OK) {
        fprintf(stderr, "bench-relay: %s (build it with `make`)\n", err);
        rl_proc_fini(&baseline);
        return 1;
    }
    const char *relay_argv[] = {relay_path, "--listen", "127.0.0.1:0", "--baseline", baseline_addr, NULL};
    rl_proc_options ro = {.argv = relay_argv, .kill_with_parent = true};
    if (rl_proc_start_server(&relay, &ro, 10000, relay_addr, sizeof relay_addr, err, sizeof err) != RL_OK) {
        fprintf(stderr, "bench-relay: %s (build it with `make`)\n", err);
        rl_proc_fini(&relay);
        rl_proc_stop(&baseline, 3000);
        rl_proc_fini(&baseline);
        return 1;
    }

    grpc_init();
    unsigned conc = (unsigned)concurrency;
    printf("bench-relay: %u concurrent ops, %.1f s per path (after a warm-up), at most %.0f ops per path\n", conc,
           seconds, max_calls);
    printf("relay op: Process(steps=0, lookup_delay_ms=0); direct op: Lookup then Work on the baseline\n");
    result rr, rd;
    int rc1 = bench_path(relay_addr, false, conc, seconds, (uint64_t)max_calls, &rr);
    int rc2 = bench_path(baseline_addr, true, conc, seconds, (uint64_t)max_calls, &rd);
    grpc_shutdown();

    printf("%-8s %10s %10s %10s %10s %8s\n", "path", "ops", "ops/s", "p50 ms", "p99 ms", "errors");
    printf("%-8s %10zu %10.0f %10.3f %10.3f %8llu\n", "relay", rr.ops, rr.ops_per_s, rr.p50_ms, rr.p99_ms,
           (unsigned long long)rr.errors);
    printf("%-8s %10zu %10.0f %10.3f %10.3f %8llu\n", "direct", rd.ops, rd.ops_per_s, rd.p50_ms, rd.p99_ms,
           (unsigned long long)rd.errors);
    if (rd.ops_per_s > 0 && rd.p50_ms > 0 && rd.p99_ms > 0)
        printf("relay/direct: ops/s %.2f, p50 %.2f, p99 %.2f\n", rr.ops_per_s / rd.ops_per_s, rr.p50_ms / rd.p50_ms,
               rr.p99_ms / rd.p99_ms);
    if (rc1 == RL_OK && rc2 == RL_OK && rr.ops > 0 && rd.ops > 0)
        status = 0;
    else
        fprintf(stderr, "bench-relay: a path did not complete cleanly (see above)\n");

    /* A server drains and exits 0 on SIGTERM (docs/DESIGN.md): anything
     * else is worth a note. One SIGTERM to the leader, as a deployment would
     * send: rl_proc_stop sends a second one (to the group and to the pid),
     * which a relaylab server takes as "cut the drain short". */
    rl_proc *servers[] = {&relay, &baseline};
    const char *names[] = {"relay", "baseline"};
    for (size_t i = 0; i < 2; i++) {
        kill(servers[i]->pid, SIGTERM);
        rl_proc_wait_exit(servers[i], 5000);
        rl_proc_stop(servers[i], 0);
        if (servers[i]->exit_code != 0) {
            char how[64], tail[400];
            rl_proc_describe(servers[i], how, sizeof how);
            rl_proc_output_tail(servers[i], tail, sizeof tail);
            fprintf(stderr, "bench-relay: note: the %s %s after SIGTERM; its output ends:\n%s\n", names[i], how,
                    tail);
        }
        rl_proc_fini(servers[i]);
    }
    return status;
}
