/* demo_balance: `lab demo balance` and `lab compare-balance`; see
 * demo_balance.h.
 *
 * Every case starts its own three baselines (with the case's server args),
 * runs the grader's balance world (lib/worlds/rl_balance_world.c) and prints calls
 * per second per backend, window by window, with the connections each
 * backend held. Every process is stopped before the next case. */
#include "demo_balance.h"
#include "status.h"

#include "worlds/rl_balance_world.h"
#include "rl_channel.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_path.h"
#include "rl_proc.h"
#include "rl_svg.h"

#include <grpc/grpc.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define READY_MS         10000
#define NBACKENDS        3
#define WINDOW_MS        500
#define RUN_MS           6000
#define ADD_AT_MS        1500
#define NCLIENTS         6
#define RATE             50   /* calls per second of each client */
#define AGE_MS           2000 /* the lab's max_connection_age (the world's 60 s at 1:30) */
#define GRACE_MS         1000 /* its grace (the world's 30 s) */
#define LONG_MS          600  /* the long calls (the world's 18 s of a 20 s deadline) */
#define LONG_DEADLINE_MS 1667 /* the world's 20 s, plus 1 s unscaled for a loaded machine */
#define SKEW             10   /* the busy client sends this many times the others' rate */

typedef struct backend {
    rl_proc proc;
    char addr[64];
    int port;
    grpc_channel *observer;
} backend;

static void stop_backends(backend *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (b[i].observer)
            grpc_channel_destroy(b[i].observer);
        b[i].observer = NULL;
        if (b[i].proc.pid)
            rl_proc_stop(&b[i].proc, 2000);
        rl_proc_fini(&b[i].proc);
    }
}

/* Starts |n| baselines with |args| (NULL-terminated, may be NULL). */
static int start_backends(backend *b, size_t n, const char *const *args)
{
    char path[PATH_MAX];
    if (rl_path_sibling("baseline", path, sizeof path)) {
        fprintf(stderr, "lab: cannot locate baseline next to lab; run 'make' first?\n");
        return LAB_EXIT_FAILED;
    }
    memset(b, 0, n * sizeof *b);
    for (size_t i = 0; i < n; i++) {
        const char *argv[16] = {path, "--threads", "1"};
        size_t k = 3;
        for (const char *const *a = args; a && *a && k < 15; a++)
            argv[k++] = *a;
        argv[k] = NULL;
        rl_proc_options opt = {.argv = argv, .kill_with_parent = true};
        char err[512];
        if (rl_proc_start_server(&b[i].proc, &opt, READY_MS, b[i].addr, sizeof b[i].addr, err, sizeof err)) {
            fprintf(stderr, "lab: baseline %zu: %s\n", i + 1, err);
            stop_backends(b, i + 1);
            return LAB_EXIT_FAILED;
        }
        const char *colon = strrchr(b[i].addr, ':');
        b[i].port = colon ? atoi(colon + 1) : 0;
        b[i].observer = rl_channel_isolated(b[i].addr, NULL);
    }
    return LAB_EXIT_OK;
}

typedef struct demo_case {
    const char *title;
    const char *label; /* for the plot's legend */
    bool age;          /* baselines with max_connection_age */
    bool direct;       /* client-side round_robin over all three */
    bool skew;         /* one busy client, three quiet, two backends */
} demo_case;

static const demo_case cases[] = {
    {"1. L4 balancer (round robin per connection), no max_connection_age; backend 3 joins at 1.5 s", "L4, no age",
     false, false, false},
    {"2. the same with max_connection_age 2 s (+-10 % jitter), grace 1 s; calls of 0.6 s in flight", "L4, age 2 s",
     true, false, false},
    {"3. no balancer: each client round_robin over all three backends (static address list)", "client round_robin",
     false, true, false},
    {"4. L4 balancer, two backends: one client sends 10x what each of three others sends", "skew", false, false, true},
};
#define NCASES (sizeof cases / sizeof *cases)

static int run_case(const demo_case *c, rl_bw_result *r)
{
    char age[64], grace[64];
    snprintf(age, sizeof age, "grpc.max_connection_age_ms=%d", AGE_MS);
    snprintf(grace, sizeof grace, "grpc.max_connection_age_grace_ms=%d", GRACE_MS);
    const char *age_args[] = {"--arg", age, "--arg", grace, NULL};
    size_t nb = c->skew ? 2 : NBACKENDS;
    backend b[NBACKENDS];
    if (start_backends(b, nb, c->age ? age_args : NULL))
        return LAB_EXIT_FAILED;
    int ports[NBACKENDS];
    grpc_channel *obs[NBACKENDS];
    for (size_t i = 0; i < nb; i++) {
        ports[i] = b[i].port;
        obs[i] = b[i].observer;
    }
    int rate[NCLIENTS];
    int nclients = c->skew ? 4 : NCLIENTS;
    for (int i = 0; i < nclients; i++)
        rate[i] = c->skew ? (i == 0 ? SKEW * RATE / 2 : RATE / 2) : RATE;
    grpc_arg rr = {.type = GRPC_ARG_STRING,
                   .key = (char *)GRPC_ARG_SERVICE_CONFIG,
                   .value.string = (char *)"{\"loadBalancingConfig\": [{\"round_robin\": {}}]}"};
    grpc_channel_args rr_args = {1, &rr};
    char tag[64];
    snprintf(tag, sizeof tag, "demo-balance-%d", (int)(c - cases));
    rl_bw_options o = {
        .ports = ports,
        .observers = obs,
        .nbackends = nb,
        .initial = c->direct || c->skew ? nb : 2,
        .add_at_ms = ADD_AT_MS,
        .run_ms = RUN_MS,
        .window_ms = WINDOW_MS,
        .nclients = nclients,
        .rate = rate,
        .deadline_ms = 1000,
        .long_ms = c->age ? LONG_MS : 0,
        .long_deadline_ms = LONG_DEADLINE_MS,
        .client_args = c->direct ? &rr_args : NULL,
        .direct = c->direct,
        .tag = tag,
    };
    char err[300];
    int rc = rl_bw_run(&o, r, err, sizeof err);
    stop_backends(b, nb);
    if (rc != RL_OK) {
        fprintf(stderr, "lab: %s\n", err);
        return LAB_EXIT_FAILED;
    }
    return LAB_EXIT_OK;
}

static void print_case(const demo_case *c, const rl_bw_result *r, bool show_conns)
{
    double per_s = 1000.0 / (double)r->window_ms;
    printf("\n%s\n", c->title);
    printf("  %-11s", "window (s)");
    for (size_t b = 0; b < r->nbackends; b++)
        printf("  backend%zu", b + 1);
    printf("   connections carrying calls\n");
    for (size_t w = 0; w < r->nwindows; w++) {
        printf("  %4.1f-%-4.1f ", (double)(w * r->window_ms) / 1000.0, (double)((w + 1) * r->window_ms) / 1000.0);
        for (size_t b = 0; b < r->nbackends; b++)
            printf("  %8.0f", r->calls[w][b] * per_s);
        printf("   [");
        for (size_t b = 0; b < r->nbackends; b++)
            printf("%s%d", b ? " " : "", r->conns[w][b]);
        printf("]%s\n", (!c->direct && !c->skew && w * r->window_ms < ADD_AT_MS && (w + 1) * r->window_ms > ADD_AT_MS)
                            ? "  <- backend3 joins"
                            : "");
    }
    size_t last = r->nwindows, from = last > 4 ? last - 4 : 0;
    printf("  last 2 s, calls/s:");
    for (size_t b = 0; b < r->nbackends; b++) {
        long n = 0;
        for (size_t w = from; w < last; w++)
            n += r->calls[w][b];
        /* NOLINTNEXTLINE(clang-analyzer-core.DivideZero): rl_bw_run ran at least one window */
        printf(" %ld", (long)(n * 1000 / (long)((last - from) * r->window_ms)));
    }
    printf("; calls %d, failed %d%s%s; connections made %zu\n", r->sent, r->failed, r->failed ? ", first " : "",
           r->failed ? r->first_failure : "", r->nconn);
    if (show_conns) {
        printf("    slowest short call %.1f ms; %d over %d ms\n", r->short_max_us / 1000.0, r->short_slow,
               RL_BW_SLOW_MS);
        for (size_t b = 0; b < r->lb.nupstreams; b++)
            printf("    lb upstream %zu: opened %d active %d up %lld down %lld\n", b, r->lb.upstreams[b].opened,
                   r->lb.upstreams[b].active, (long long)r->lb.upstreams[b].bytes_up,
                   (long long)r->lb.upstreams[b].bytes_down);
        for (size_t i = 0; i < r->nconn; i++)
            printf("    conn %-24s b%d %6.3f..%6.3f s %d calls\n", r->conn[i].peer, r->conn[i].backend + 1,
                   (double)(r->conn[i].first_ns - r->start_ns) / 1e9, (double)(r->conn[i].last_ns - r->start_ns) / 1e9,
                   r->conn[i].calls);
    }
}

/* "PATH" with "-skew" before its extension: the skew case's own plot. */
static void skew_path(const char *path, char *out, size_t len)
{
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    if (!dot || (slash && dot < slash))
        dot = path + strlen(path);
    snprintf(out, len, "%.*s-skew%s", (int)(dot - path), path, dot);
}

/* Two plots, one quantity each: the joining backend's share of the calls
 * (cases 1-3, against the fair share and the instant it joins), and the
 * busy client's backend's share (backend 1) in the skew case (against its fair 50 %),
 * written next to the first as PATH-skew.svg. Each point is the middle
 * of its 0.5 s window. */
static int write_svg(const char *path, const rl_bw_result *rs)
{
    rl_svg_series series[NCASES], skew[1];
    static double xs[NCASES][RL_BW_MAX_WINDOWS], ys[NCASES][RL_BW_MAX_WINDOWS];
    size_t ns = 0, nskew = 0;
    for (size_t i = 0; i < NCASES; i++) {
        const rl_bw_result *r = &rs[i];
        /* Skew: backend 1, where the busy client's connection lands (the
         * balancer's first pick). */
        size_t b = cases[i].skew ? 0 : 2;
        for (size_t w = 0; w < r->nwindows; w++) {
            xs[i][w] = ((double)w + 0.5) * (double)r->window_ms / 1000.0;
            ys[i][w] = 100.0 * rl_bw_share(r, b, w, w + 1);
        }
        rl_svg_series se = {.label = cases[i].label,
                            .x = xs[i],
                            .y = ys[i],
                            .n = r->nwindows,
                            .dash = (rl_svg_dash)(ns % 3),
                            .markers = 1};
        if (cases[i].skew) {
            se.label = "backend 1 of 2, holding the busy client's connection";
            skew[nskew++] = se;
        } else {
            series[ns++] = se;
        }
    }
    rl_svg_ref fair = {.label = "fair share: 33 %", .value = 100.0 / 3};
    rl_svg_ref joins = {.label = "backend 3 joins (L4 cases)", .value = ADD_AT_MS / 1000.0};
    rl_svg_plot plot = {.title = "Share of the calls on backend 3 of 3",
                        .xlabel = "time (s, middle of each 0.5 s window)",
                        .ylabel = "backend 3's share of the window's calls (%)",
                        .series = series,
                        .nseries = ns,
                        .width = 900,
                        .height = 560,
                        .refs = &fair,
                        .nrefs = 1,
                        .events = &joins,
                        .nevents = 1,
                        .caption = "Through an L4 balancer the new backend stays at 0 % unless connections age; "
                                   "client round_robin has all three from the start"};
    char err[300], path2[4096];
    if (rl_svg_save(path, &plot, err, sizeof err) != RL_OK) {
        fprintf(stderr, "lab compare-balance: %s\n", err);
        return LAB_EXIT_FAILED;
    }
    printf("\nPlot written to %s (open it in a browser).\n", path);
    if (!nskew)
        return LAB_EXIT_OK;
    rl_svg_ref half = {.label = "fair share: 50 %", .value = 50};
    rl_svg_plot sp = {.title = "Skew: balanced connections are not balanced calls",
                      .xlabel = "time (s, middle of each 0.5 s window)",
                      .ylabel = "the busy client's backend's share (%)",
                      .series = skew,
                      .nseries = nskew,
                      .width = 900,
                      .height = 460,
                      .refs = &half,
                      .nrefs = 1,
                      .caption = "One client sends 10x the others: the backend holding its connection takes most "
                                 "calls"};
    skew_path(path, path2, sizeof path2);
    if (rl_svg_save(path2, &sp, err, sizeof err) != RL_OK) {
        fprintf(stderr, "lab compare-balance: %s\n", err);
        return LAB_EXIT_FAILED;
    }
    printf("Plot written to %s (open it in a browser).\n", path2);
    return LAB_EXIT_OK;
}

/* |only|: 1-based case to run alone, 0: all. */
static int run_all(const char *svg, int only, bool show_conns)
{
    static rl_bw_result rs[NCASES];
    grpc_init();
    printf("An L4 balancer picks a backend per connection; gRPC sends every call of a channel on one\n"
           "connection. %d client channels, %d calls/s each, through a round-robin balancer; a third\n"
           "backend joins at %.1f s. Calls per second per backend, per %d ms window:\n",
           NCLIENTS, RATE, ADD_AT_MS / 1000.0, WINDOW_MS);
    int rc = LAB_EXIT_OK;
    for (size_t i = 0; i < NCASES && !rc; i++) {
        if (only && (size_t)only != i + 1)
            continue;
        rc = run_case(&cases[i], &rs[i]);
        if (!rc)
            print_case(&cases[i], &rs[i], show_conns);
    }
    if (!rc) {
        printf("\nWithout an age the joining backend gets nothing: connections are made once. With\n"
               "max_connection_age the server sends GOAWAY, the clients reconnect through the balancer\n"
               "and the new backend fills up, with no failed call because the grace outlasts the longest\n"
               "call. Client-side round_robin spreads calls, not connections. And balanced connections are\n"
               "not balanced calls: the busy client's backend takes most of the load.\n");
        if (svg && !only)
            rc = write_svg(svg, rs);
    }
    grpc_shutdown();
    return rc;
}

int lab_demo_balance(void)
{
    return run_all(NULL, 0, false);
}

int lab_compare_balance_main(int argc, char **argv)
{
    const char *svg = NULL;
    int only = 0;
    bool show_conns = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--svg") == 0 && i + 1 < argc)
            svg = argv[++i];
        else if (strcmp(argv[i], "--case") == 0 && i + 1 < argc && atoi(argv[i + 1]) >= 1 &&
                 atoi(argv[i + 1]) <= (int)NCASES)
            only = atoi(argv[++i]);
        else if (strcmp(argv[i], "--connections") == 0)
            show_conns = true;
        else
            return LAB_EXIT_SHOW_USAGE;
    }
    if (svg && only) {
        fprintf(stderr, "lab compare-balance: --svg plots all four cases; not with --case\n");
        return LAB_EXIT_USAGE;
    }
    return run_all(svg, only, show_conns);
}
