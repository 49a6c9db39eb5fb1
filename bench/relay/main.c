/* bench-relay: what a relay costs, the reference beside its peers. Starts
 * bin/baseline and bin/relay (found next to this executable) on loopback, and
 * every --relay CMD the way the grader starts a submission (a shell command
 * with RELAYLAB_LISTEN and RELAYLAB_BASELINE set); drives N concurrent Process
 * calls (steps=0, lookup_delay_ms=0) through each relay in turn for S
 * seconds, then the same Lookup+Work pairs against the baseline directly, and
 * prints one table: ops/s, p50/p99 latency, and the CPU time the relay's
 * process group and the baseline spent per call (/proc). One rl_loop drives
 * every call: each of the N slots is a struct that starts its next op when
 * the last one ends (a closed loop), so the client is one thread, not N. */
#include "relaylab.pb-c.h"
#include "rl_alloc.h"
#include "rl_client.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_log.h"
#include "rl_loop.h"
#include "rl_path.h"
#include "rl_proc.h"
#include "rl_proc_spawn.h"
#include "rl_stats.h"
#include "rl_tcp.h"

#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* How long a --relay command may take to listen (an interpreter's start on a
 * loaded machine takes seconds). */
#define PEER_READY_MS 30000
#define MAX_RELAYS    16

/* Per-call deadline: generous, so it never fires in a healthy run, but it
 * still travels through the relay like a real client's would. */
#define CALL_TIMEOUT_MS 10000

typedef struct bench bench;

/* One of the N concurrent slots. |stage| says which call |c| is. */
typedef struct slot {
    rl_client c;
    bench *b;
    int64_t start_ns; /* when the current op (Process, or Lookup+Work) began */
    bool counted;     /* the op started after the warm-up */
    enum { OP_PROCESS, OP_LOOKUP, OP_WORK } stage;
    bool busy; /* |c| is in flight */
} slot;

struct bench {
    rl_loop loop;
    grpc_channel *channel;
    void *method;      /* Process, or Lookup for the direct path */
    void *work_method; /* direct path only */
    bool direct;
    bool measuring;          /* the warm-up is over */
    int64_t measure_from_ns; /* when it ended (or is due to end) */
    int64_t measure_ns;      /* how long to measure after the warm-up */
    int64_t stop_ns;         /* no op starts after this */
    uint64_t started, max_calls, warm_calls;
    int64_t *lat; /* latencies of counted ops, ns */
    size_t nlat, caplat;
    int64_t last_end_ns; /* end of the last counted op */
    uint64_t errors;
    char first_error[256];
    unsigned busy;     /* slots with a call in flight */
    pid_t server_pgid; /* the relay's process group (0 on the direct path) */
    pid_t baseline_pgid;
    int64_t server_cpu0_ns, baseline_cpu0_ns; /* CPU at the warm-up's end; -1: unknown */
};

typedef struct result {
    size_t ops;
    double ops_per_s, p50_ms, p99_ms;
    uint64_t errors;
    char first_error[256];
    double server_us_per_op;   /* the relay's CPU per counted op; < 0 unknown */
    double server_cpu_share;   /* its CPU time over the measured wall time (1 = one core) */
    double baseline_us_per_op; /* the baseline's CPU per counted op; < 0 unknown */
} result;

/* CPU time so far of every process in group |pgid|, or -1. */
static int64_t group_cpu_ns(pid_t pgid)
{
    rl_proc_sample smp;
    if (pgid <= 0 || rl_proc_group_sample(pgid, &smp) != RL_OK)
        return -1;
    return smp.cpu_ns;
}

static void op_done(rl_client *c);

static void start_call(slot *s, void *method, const ProtobufCMessage *msg)
{
    bench *b = s->b;
    grpc_call *call = grpc_channel_create_registered_call(b->channel, NULL, GRPC_PROPAGATE_DEFAULTS, b->loop.cq, method,
                                                          rl_deadline_after_ms(CALL_TIMEOUT_MS), NULL);
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
        b->server_cpu0_ns = group_cpu_ns(b->server_pgid);
        b->baseline_cpu0_ns = group_cpu_ns(b->baseline_pgid);
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
        char *d = grpc_slice_to_c_string(c->batch.details);
        snprintf(b->first_error, sizeof b->first_error, "status %d: %s", (int)c->batch.status, d);
        gpr_free(d);
    }
}

static void op_done(rl_client *c)
{
    slot *s = RL_CONTAINER_OF(c, slot, c);
    bench *b = s->b;
    s->busy = false;
    b->busy--;
    bool ok = c->batch.status == GRPC_STATUS_OK;
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
        RL_GROW(b->lat, b->nlat, b->caplat, 4096);
        b->lat[b->nlat++] = now - s->start_ns;
        b->last_end_ns = now;
    }
    start_op(s);
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
    /* Every op counted has ended: the CPU between the two samples is theirs
     * (plus the tail of the few warm-up ops still running at the first). */
    int64_t end_ns = rl_now_ns();
    int64_t server_cpu = group_cpu_ns(b->server_pgid), baseline_cpu = group_cpu_ns(b->baseline_pgid);

    memset(out, 0, sizeof *out);
    out->ops = b->nlat;
    out->errors = b->errors;
    out->server_us_per_op = out->baseline_us_per_op = out->server_cpu_share = -1;
    if (b->nlat) {
        rl_stats_sort_i64(b->lat, b->nlat);
        double window = (double)(b->last_end_ns - b->measure_from_ns) / 1e9; /* last counted end */
        out->ops_per_s = window > 0 ? (double)b->nlat / window : 0;
        out->p50_ms = (double)rl_stats_pct_i64(b->lat, b->nlat, 50) / 1e6;
        out->p99_ms = (double)rl_stats_pct_i64(b->lat, b->nlat, 99) / 1e6;
        if (b->measuring && server_cpu >= 0 && b->server_cpu0_ns >= 0) {
            out->server_us_per_op = (double)(server_cpu - b->server_cpu0_ns) / 1e3 / (double)b->nlat;
            out->server_cpu_share = (double)(server_cpu - b->server_cpu0_ns) / (double)(end_ns - b->measure_from_ns);
        }
        if (b->measuring && baseline_cpu >= 0 && b->baseline_cpu0_ns >= 0)
            out->baseline_us_per_op = (double)(baseline_cpu - b->baseline_cpu0_ns) / 1e3 / (double)b->nlat;
    }
    return rc;
}

static int bench_path(const char *target, bool direct, unsigned concurrency, double seconds, uint64_t max_calls,
                      pid_t server_pgid, pid_t baseline_pgid, result *out)
{
    bench b;
    memset(&b, 0, sizeof b);
    rl_loop_init(&b.loop);
    grpc_channel_credentials *creds = grpc_insecure_credentials_create();
    b.channel = grpc_channel_create(target, creds, NULL);
    grpc_channel_credentials_release(creds);
    b.direct = direct;
    b.max_calls = max_calls;
    b.server_pgid = server_pgid;
    b.baseline_pgid = baseline_pgid;
    b.method = grpc_channel_register_call(b.channel, direct ? "/relaylab.Baseline/Lookup" : "/relaylab.Relay/Process",
                                          NULL, NULL);
    b.work_method = grpc_channel_register_call(b.channel, "/relaylab.Baseline/Work", NULL, NULL);

    int rc = run_path(&b, concurrency, seconds, out);
    snprintf(out->first_error, sizeof out->first_error, "%s", b.first_error);

    grpc_channel_destroy(b.channel);
    grpc_completion_queue_shutdown(b.loop.cq);
    rl_loop_run(&b.loop);
    rl_loop_fini(&b.loop);
    free(b.lat);
    return rc;
}

/* ---- the relays measured ---- */

/* One row of the table: the reference relay or a --relay command. */
typedef struct peer {
    const char *cmd; /* the --relay command; NULL for the reference */
    rl_proc proc;    /* zeroed until started */
    char addr[64];   /* where it listens, once started */
    bool started;    /* it listened; |why| says why not otherwise */
    char why[400];
    int rc; /* run_path's return */
    result res;
} peer;

/* A port the OS considers free now (it may be taken again before the relay
 * binds it: then that relay shows as not started). Returns 0 on failure. */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    struct sockaddr_in sa = {.sin_family = AF_INET};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sa;
    int port = 0;
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 && getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
        port = ntohs(sa.sin_port);
    close(fd);
    return port;
}

/* |s| made fit for one table cell: newlines become " / ", '|' becomes '/',
 * runs of blanks shrink; at most |len| - 1 bytes. */
static void cell_text(const char *s, char *out, size_t len)
{
    size_t o = 0;
    bool blank = true; /* drops leading blanks */
    for (; *s && o + 4 < len; s++) {
        char ch = *s == '|' ? '/' : *s;
        if (ch == '\n' || ch == '\r' || ch == '\t' || ch == ' ') {
            if (!blank && o + 4 < len) {
                if (ch == '\n') {
                    memcpy(out + o, " / ", 3);
                    o += 3;
                } else {
                    out[o++] = ' ';
                }
            }
            blank = true;
            continue;
        }
        blank = false;
        out[o++] = ch;
    }
    while (o > 0 && (out[o - 1] == ' ' || out[o - 1] == '/'))
        o--;
    out[o] = '\0';
}

/* Starts |p->cmd| as the grader starts a submission (rl_proc_spawn_command:
 * a simple command is exec'd by the shell, so the relay leads its process
 * group) in our environment plus RELAYLAB_LISTEN and RELAYLAB_BASELINE, then
 * waits until its port accepts TCP connections, it exits, or PEER_READY_MS
 * pass. Sets p->started, or p->why. */
static void start_peer(peer *p, const char *baseline_addr)
{
    int port = free_port();
    if (!port) {
        snprintf(p->why, sizeof p->why, "no free port: %s", strerror(errno));
        return;
    }
    snprintf(p->addr, sizeof p->addr, "127.0.0.1:%d", port);
    char env_listen[96], env_baseline[160];
    snprintf(env_listen, sizeof env_listen, "RELAYLAB_LISTEN=%s", p->addr);
    snprintf(env_baseline, sizeof env_baseline, "RELAYLAB_BASELINE=%s", baseline_addr);
    const char *env[] = {env_listen, env_baseline, NULL};
    rl_proc_command c = {.line = p->cmd, .opt = {.setenv = env, .kill_with_parent = true}};
    if (rl_proc_spawn_command(&p->proc, &c) != RL_OK) {
        snprintf(p->why, sizeof p->why, "cannot start it: %s", strerror(errno));
        return;
    }
    int64_t until = rl_now_ns() + PEER_READY_MS * RL_NS_PER_MS;
    while (rl_proc_alive(&p->proc) && rl_now_ns() < until) {
        rl_tcp_answer ans;
        if (rl_tcp_probe(port, 100, &ans) == RL_OK && ans == RL_TCP_ACCEPTED) {
            p->started = true;
            return;
        }
        rl_sleep_ms(20, NULL);
    }
    char how[96], tail[300], clean[240];
    if (rl_proc_alive(&p->proc))
        snprintf(how, sizeof how, "did not listen on %s within %d s", p->addr, PEER_READY_MS / 1000);
    else {
        /* Reaped and read to its end of file: the last words a process
         * wrote as it exited may still be in the pipe. */
        rl_proc_stop(&p->proc, 0);
        char d[64];
        rl_proc_describe(&p->proc, d, sizeof d);
        snprintf(how, sizeof how, "%s before it listened on %s", d, p->addr);
    }
    rl_proc_output_tail(&p->proc, tail, sizeof tail);
    cell_text(tail, clean, sizeof clean);
    snprintf(p->why, sizeof p->why, "did not start: it %s%s%s", how, clean[0] ? "; last output: " : "", clean);
}

/* The row's name: "reference (bin/relay)" or the command, shortened. */
static void peer_name(const peer *p, char *out, size_t len)
{
    if (!p->cmd) {
        snprintf(out, len, "reference (bin/relay)");
        return;
    }
    char c[256];
    cell_text(p->cmd, c, sizeof c);
    if (strlen(c) > 56)
        snprintf(out, len, "`...%s`", c + strlen(c) - 53);
    else
        snprintf(out, len, "`%s`", c);
}

/* One CPU cell with |decimals| decimals; "-" when unknown (< 0). */
static void print_cpu(double v, int decimals)
{
    if (v < 0)
        printf(" - |");
    else
        printf(" %.*f |", decimals, v);
}

static void print_row(const char *name, const result *r)
{
    printf("| %s | %zu | %.0f | %.3f | %.3f | %llu |", name, r->ops, r->ops_per_s, r->p50_ms, r->p99_ms,
           (unsigned long long)r->errors);
    print_cpu(r->server_us_per_op, 1);
    print_cpu(r->server_cpu_share, 2);
    print_cpu(r->baseline_us_per_op, 1);
    printf("\n");
}

/* Stops the reference relay (or the baseline) as a deployment would: one
 * SIGTERM to the leader (rl_proc_stop's second one would cut the drain
 * short), and notes anything but a clean exit 0 (docs/DESIGN.md). */
static void stop_server(rl_proc *p, const char *name)
{
    kill(p->pid, SIGTERM);
    rl_proc_wait_exit(p, 5000);
    rl_proc_stop(p, 0);
    if (p->exit_code != 0) {
        char how[64], tail[400];
        rl_proc_describe(p, how, sizeof how);
        rl_proc_output_tail(p, tail, sizeof tail);
        fprintf(stderr, "bench-relay: note: the %s %s after SIGTERM; its output ends:\n%s\n", name, how, tail);
    }
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bench-relay [--concurrency N] [--seconds S] [--calls MAX] [--relay CMD]...\n"
            "  --concurrency N  calls in flight (default 64)\n"
            "  --seconds S      measured time per path, after a short warm-up (default 5)\n"
            "  --calls MAX      at most this many ops per path (default 1000000)\n"
            "  --relay CMD      also measure this relay: a shell command that listens on\n"
            "                   $RELAYLAB_LISTEN and calls the baseline at $RELAYLAB_BASELINE,\n"
            "                   as the grader starts a submission (repeatable, up to %d)\n",
            MAX_RELAYS);
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

/* bench-relay's exit statuses. */
enum {
    BENCH_EXIT_CLEAN = 0,  /* every path completed, with no failed call */
    BENCH_EXIT_FAILED = 1, /* a path did not complete cleanly, or a server did not start */
    BENCH_EXIT_USAGE = 2,  /* the command line was wrong */
};

/* One run of the bench: the command line, the servers and the figures. */
typedef struct bench_run {
    double concurrency, seconds, max_calls;
    peer peers[1 + MAX_RELAYS]; /* [0] is the reference; the --relay commands follow */
    size_t npeers;
    rl_proc baseline;
    char baseline_addr[128];
    result direct; /* the baseline's own Lookup+Work, the floor */
    int direct_rc; /* its run_path return */
} bench_run;

/* Reads the command line into |r| (zeroed by the caller). Returns RL_OK to
 * run, or RL_EINVAL with the exit status in |status|: BENCH_EXIT_CLEAN after
 * --help, BENCH_EXIT_USAGE after saying what was wrong. */
static int parse_args(int argc, char **argv, bench_run *r, int *status)
{
    r->concurrency = 64;
    r->seconds = 5;
    r->max_calls = 1000000;
    r->npeers = 1;
    *status = BENCH_EXIT_USAGE;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            *status = BENCH_EXIT_CLEAN;
            return RL_EINVAL;
        }
        if (i + 1 >= argc) {
            usage(stderr);
            return RL_EINVAL;
        }
        const char *opt = argv[i], *v = argv[++i];
        int rc = RL_OK;
        if (strcmp(opt, "--concurrency") == 0)
            rc = parse_num("--concurrency", v, 1, 10000, &r->concurrency);
        else if (strcmp(opt, "--seconds") == 0)
            rc = parse_num("--seconds", v, 0.1, 3600, &r->seconds);
        else if (strcmp(opt, "--calls") == 0)
            rc = parse_num("--calls", v, 1, 1e9, &r->max_calls);
        else if (strcmp(opt, "--relay") == 0) {
            if (r->npeers > MAX_RELAYS || !*v) {
                fprintf(stderr, "bench-relay: --relay wants a command, at most %d of them\n", MAX_RELAYS);
                return RL_EINVAL;
            }
            r->peers[r->npeers++].cmd = v;
        } else {
            usage(stderr);
            return RL_EINVAL;
        }
        if (rc != RL_OK)
            return RL_EINVAL;
    }
    return RL_OK;
}

/* Starts the baseline, the reference relay and every --relay command (a
 * command that does not start is a row that says why). Returns RL_OK, or
 * RL_ESYS after saying why when the baseline or the reference did not
 * start; whatever it returns, the caller finalises every rl_proc in |r|. */
static int start_servers(bench_run *r)
{
    char baseline_path[PATH_MAX], relay_path[PATH_MAX];
    if (rl_path_sibling("baseline", baseline_path, sizeof baseline_path) != RL_OK ||
        rl_path_sibling("relay", relay_path, sizeof relay_path) != RL_OK) {
        fprintf(stderr, "bench-relay: cannot find my own folder through /proc/self/exe\n");
        return RL_ESYS;
    }
    /* The servers' INFO lines (drain on SIGTERM) would only clutter the
     * table; RELAYLAB_LOG overrides. Their output is captured, and shown
     * when one fails to start or does not end cleanly. */
    setenv("RELAYLAB_LOG", "warn", 0);
    char err[512];
    const char *baseline_argv[] = {baseline_path, "--listen", "127.0.0.1:0", NULL};
    rl_proc_options bo = {.argv = baseline_argv, .kill_with_parent = true};
    if (rl_proc_start_server(&r->baseline, &bo, 10000, r->baseline_addr, sizeof r->baseline_addr, err, sizeof err) !=
        RL_OK) {
        fprintf(stderr, "bench-relay: %s (build it with `make`)\n", err);
        return RL_ESYS;
    }
    /* The relay's admission gate (8 downstream calls at once by default,
     * for the overload lab's backend) would make this a measure of its
     * queue; the peers have none, so the reference gets as many as the
     * bench keeps in flight. */
    char inflight[32];
    snprintf(inflight, sizeof inflight, "%u", (unsigned)r->concurrency);
    const char *relay_argv[] = {relay_path,       "--listen",       "127.0.0.1:0", "--baseline",
                                r->baseline_addr, "--max-inflight", inflight,      NULL};
    rl_proc_options ro = {.argv = relay_argv, .kill_with_parent = true};
    peer *ref = &r->peers[0];
    if (rl_proc_start_server(&ref->proc, &ro, 10000, ref->addr, sizeof ref->addr, err, sizeof err) != RL_OK) {
        fprintf(stderr, "bench-relay: %s (build it with `make`)\n", err);
        return RL_ESYS;
    }
    ref->started = true;
    for (size_t i = 1; i < r->npeers; i++)
        start_peer(&r->peers[i], r->baseline_addr);
    return RL_OK;
}

/* Measures each relay in turn, alone with the baseline (the others are
 * stopped once measured: an idle one costs little, but none competes
 * then), then the baseline's direct path. Every server was started before,
 * since forking after gRPC has started its threads is not safe. */
static void run_paths(bench_run *r)
{
    grpc_init();
    unsigned conc = (unsigned)r->concurrency;
    uint64_t max_calls = (uint64_t)r->max_calls;
    printf("bench-relay: %u concurrent ops, %.1f s per path (after a warm-up), at most %.0f ops per path\n", conc,
           r->seconds, r->max_calls);
    printf("relay op: Process(steps=0, lookup_delay_ms=0); direct op: Lookup then Work on the baseline\n");
    printf("CPU: user+system time of the relay's process group and of the baseline over the measured\n"
           "window, per op; relay CPU in cores (1.00 = one core busy all the time)\n\n");
    fflush(stdout);
    for (size_t i = 0; i < r->npeers; i++) {
        peer *p = &r->peers[i];
        if (p->started)
            p->rc = bench_path(p->addr, false, conc, r->seconds, max_calls, p->proc.pid, r->baseline.pid, &p->res);
        if (i == 0)
            stop_server(&p->proc, "reference relay");
        else
            rl_proc_stop(&p->proc, 3000);
    }
    r->direct_rc = bench_path(r->baseline_addr, true, conc, r->seconds, max_calls, 0, r->baseline.pid, &r->direct);
    grpc_shutdown();
}

/* Prints the table. Returns BENCH_EXIT_FAILED when a path did not complete
 * cleanly (a relay that did not start, failed calls, none completed). */
static int print_table(bench_run *r)
{
    printf("| relay | ops | ops/s | p50 ms | p99 ms | errors | relay CPU us/op | relay CPU cores | baseline CPU "
           "us/op |\n");
    printf("|---|---|---|---|---|---|---|---|---|\n");
    int status = BENCH_EXIT_CLEAN;
    char name[80];
    for (size_t i = 0; i < r->npeers; i++) {
        peer *p = &r->peers[i];
        peer_name(p, name, sizeof name);
        if (!p->started) {
            printf("| %s | %s | - | - | - | - | - | - | - |\n", name, p->why);
            status = BENCH_EXIT_FAILED;
            continue;
        }
        print_row(name, &p->res);
        if (p->rc != RL_OK || p->res.ops == 0 || p->res.errors)
            status = BENCH_EXIT_FAILED;
    }
    r->direct.server_cpu_share = -1;
    print_row("direct (baseline Lookup+Work)", &r->direct);
    if (r->direct_rc != RL_OK || r->direct.ops == 0 || r->direct.errors)
        status = BENCH_EXIT_FAILED;
    printf("\n");
    return status;
}

/* What went wrong, below the table; then the reference against each. */
static void print_notes(const bench_run *r)
{
    char name[80];
    for (size_t i = 0; i <= r->npeers; i++) {
        const result *res = i < r->npeers ? &r->peers[i].res : &r->direct;
        int rc = i < r->npeers ? r->peers[i].rc : r->direct_rc;
        if (i < r->npeers && !r->peers[i].started)
            continue;
        if (i < r->npeers)
            peer_name(&r->peers[i], name, sizeof name);
        else
            snprintf(name, sizeof name, "direct");
        if (res->errors)
            printf("%s: %llu failed calls, the first: %s\n", name, (unsigned long long)res->errors, res->first_error);
        if (rc != RL_OK)
            printf("%s: calls still in flight %d s after the stop were cancelled\n", name, CALL_TIMEOUT_MS / 1000 + 2);
        if (res->ops == 0)
            printf("%s: no call completed\n", name);
    }
    const result *ref = &r->peers[0].res, *rd = &r->direct;
    for (size_t i = 1; i < r->npeers; i++) {
        const result *res = &r->peers[i].res;
        if (!r->peers[i].started || res->ops == 0 || ref->ops == 0)
            continue;
        peer_name(&r->peers[i], name, sizeof name);
        printf("reference against %s: ops/s x%.1f", name, ref->ops_per_s / res->ops_per_s);
        if (ref->server_us_per_op > 0 && res->server_us_per_op >= 0)
            printf(", relay CPU per op x%.1f less", res->server_us_per_op / ref->server_us_per_op);
        printf(", p99 %.3f against %.3f ms\n", ref->p99_ms, res->p99_ms);
    }
    if (ref->ops > 0 && rd->ops > 0 && rd->p50_ms > 0 && rd->p99_ms > 0)
        printf("reference/direct: ops/s %.2f, p50 %.2f, p99 %.2f\n", ref->ops_per_s / rd->ops_per_s,
               ref->p50_ms / rd->p50_ms, ref->p99_ms / rd->p99_ms);
}

int main(int argc, char **argv)
{
    rl_log_init("bench-relay");
    /* Static: the peers' captures are large for a stack. */
    static bench_run r;
    int status;
    if (parse_args(argc, argv, &r, &status) != RL_OK)
        return status;
    if (start_servers(&r) != RL_OK) {
        status = BENCH_EXIT_FAILED;
        if (r.baseline.pid)
            rl_proc_stop(&r.baseline, 3000);
    } else {
        run_paths(&r);
        status = print_table(&r);
        print_notes(&r);
        if (status != BENCH_EXIT_CLEAN)
            fprintf(stderr, "bench-relay: a path did not complete cleanly (see above)\n");
        stop_server(&r.baseline, "baseline");
    }
    rl_proc_fini(&r.baseline);
    for (size_t i = 0; i < r.npeers; i++)
        rl_proc_fini(&r.peers[i].proc);
    return status;
}
