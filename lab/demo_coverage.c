/* demo_coverage: `lab demo coverage`; see demo_coverage.h.
 *
 * Each agent gets a fresh world, so one agent's streams never meet the
 * next. The burst is the grader's (grader/ex_coverage.c, burst-skewed): 200
 * calls of 500 ms, one every 10 ms, on the server where the agent's newest
 * stream landed. The time series come from the servers' own records (each
 * stream's open and close, each call's dispatch, hand-over and answer),
 * read once at the end, so sampling costs the agents nothing. */
#include "demo_coverage.h"
#include "demo.h"
#include "status.h"

#include "relaylab.pb-c.h"
#include "rl_coverage.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_path.h"
#include "rl_proc.h"
#include "rl_stats.h"
#include "rl_svg.h"
#include "worlds/rl_tworld.h"

#include <grpc/grpc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NSERVERS     3
#define CALLS        200
#define WORK_MS      500
#define INTERVAL_MS  10
#define SKEW_PERCENT 80
/* Watched from the burst's start: the reference answers everything in
 * about 3 s; the incident still has most calls queued then. */
#define WATCH_MS  5000
#define SAMPLE_MS 125
#define NSAMPLES  (WATCH_MS / SAMPLE_MS + 1)
#define SETTLE_MS 5000

typedef struct figures {
    int64_t max_wait_ms, p50_wait_ms;
    int queued_at_end;  /* never handed to a stream within WATCH_MS */
    int b_streams_mid;  /* streams on the busy server at the burst's end */
    int idle_elsewhere; /* streams on the others then (no call goes there) */
    int peak_total;
    char busy[4];
    double x[NSAMPLES], streams[NSERVERS][NSAMPLES], inflight[NSAMPLES], queued[NSAMPLES], oldest[NSAMPLES];
} figures;

static int streams_at(const Relaylab__ObserveTunnelReply *o, int64_t t)
{
    int n = 0;
    for (size_t k = 0; k < o->n_streams; k++)
        n += o->streams[k]->opened_ns <= t && (!o->streams[k]->closed_ns || o->streams[k]->closed_ns > t);
    return n;
}

static void series_of(Relaylab__ObserveTunnelReply *const *o, int b, int64_t t0, figures *f)
{
    for (int k = 0; k < NSAMPLES; k++) {
        int64_t t = t0 + (int64_t)k * SAMPLE_MS * RL_NS_PER_MS;
        f->x[k] = k * SAMPLE_MS / 1000.0;
        int total = 0;
        for (int i = 0; i < NSERVERS; i++) {
            f->streams[i][k] = streams_at(o[i], t);
            total += (int)f->streams[i][k];
        }
        f->peak_total = total > f->peak_total ? total : f->peak_total;
        int inflight = 0, queued = 0;
        int64_t oldest = 0;
        for (size_t c = 0; c < o[b]->n_calls; c++) {
            const Relaylab__TunnelCallRecord *r = o[b]->calls[c];
            if (r->dispatched_ns > t)
                continue;
            if (r->handed_ns && r->handed_ns <= t) {
                inflight += !r->answered_ns || r->answered_ns > t;
            } else {
                queued++;
                oldest = t - r->dispatched_ns > oldest ? t - r->dispatched_ns : oldest;
            }
        }
        f->inflight[k] = inflight;
        f->queued[k] = queued;
        f->oldest[k] = (double)oldest / RL_NS_PER_MS;
    }
    int64_t end = t0 + (int64_t)WATCH_MS * RL_NS_PER_MS;
    int64_t *waits = calloc(o[b]->n_calls + 1, sizeof *waits);
    size_t n = 0;
    for (size_t c = 0; c < o[b]->n_calls; c++) {
        const Relaylab__TunnelCallRecord *r = o[b]->calls[c];
        bool handed = r->handed_ns && r->handed_ns <= end;
        f->queued_at_end += !handed;
        waits[n++] = ((handed ? r->handed_ns : end) - r->dispatched_ns) / RL_NS_PER_MS;
    }
    rl_stats_sort_i64(waits, n);
    f->max_wait_ms = n ? waits[n - 1] : 0;
    f->p50_wait_ms = n ? rl_stats_pct_i64(waits, n, 50) : 0;
    free(waits);
    int64_t mid = t0 + (int64_t)CALLS * INTERVAL_MS * RL_NS_PER_MS;
    f->b_streams_mid = streams_at(o[b], mid);
    for (int i = 0; i < NSERVERS; i++)
        if (i != b)
            f->idle_elsewhere += streams_at(o[i], mid);
}

/* One agent in a fresh world: settle, skew placement toward the server the
 * calls go to, burst, watch, read the records. */
static int run_agent(const char *mistake, figures *f)
{
    char tunnel[4096], agent[4096], dir[] = "/tmp/lab-coverage-XXXXXX", err[256] = "";
    if (rl_path_sibling("tunnel", tunnel, sizeof tunnel) || rl_path_sibling("agent", agent, sizeof agent)) {
        fprintf(stderr, "lab: bin/tunnel or bin/agent is missing next to bin/lab: run make\n");
        return LAB_EXIT_FAILED;
    }
    if (!mkdtemp(dir)) {
        perror("lab: mkdtemp");
        return LAB_EXIT_FAILED;
    }
    int rc = LAB_EXIT_FAILED;
    rl_tworld w;
    memset(&w, 0, sizeof w);
    rl_proc p;
    memset(&p, 0, sizeof p);
    Relaylab__ObserveTunnelReply *o[NSERVERS] = {NULL};
    rl_tworld_options wo = {
        .tunnel_bin = tunnel, .sock_dir = dir, .nservers = NSERVERS, .placement = {RL_PLACE_UNIFORM, 0, 0}};
    if (rl_tworld_start(&w, &wo, err, sizeof err) != RL_OK) {
        fprintf(stderr, "lab: the coverage world did not start: %s\n", err);
        goto out;
    }
    char env[96];
    snprintf(env, sizeof env, "RELAYLAB_TUNNEL=%s", rl_tworld_addr(&w));
    const char *argv[] = {agent, mistake ? "--mistake" : NULL, mistake, NULL};
    const char *setenv[] = {env, "RELAYLAB_LOG=warn", NULL};
    rl_proc_options po = {.argv = argv, .setenv = setenv, .kill_with_parent = true};
    if (rl_proc_spawn(&p, &po) != RL_OK) {
        perror("lab: starting bin/agent");
        goto out;
    }
    /* Settled: its first streams placed, and one tick for them to be named. */
    int64_t until = rl_now_ns() + (int64_t)SETTLE_MS * RL_NS_PER_MS;
    for (;;) {
        rl_l7proxy_stats st;
        rl_tworld_stats(&w, &st);
        int open = 0;
        for (int i = 0; i < NSERVERS; i++)
            open += st.open[i];
        if (open >= RL_COV_GROW_MIN || rl_now_ns() >= until || !rl_proc_alive(&p))
            break;
        rl_sleep_ms(20, NULL);
    }
    rl_sleep_ms(RL_COV_TICK_MS, NULL);
    int b = rl_tworld_last_healthy(&w);
    if (b < 0 || !rl_proc_alive(&p)) {
        fprintf(stderr, "lab: bin/agent%s%s held no stream %d ms after it started\n", mistake ? " --mistake " : "",
                mistake ? mistake : "", SETTLE_MS);
        goto out;
    }
    snprintf(f->busy, sizeof f->busy, "%s", w.ids[b]);
    rl_placement skew = {RL_PLACE_SKEWED, b, SKEW_PERCENT};
    rl_tworld_set_placement(&w, &skew);
    int64_t t0 = rl_now_ns();
    if (rl_tworld_dispatch(&w, b, CALLS, WORK_MS, 0, INTERVAL_MS, NULL) != RL_OK) {
        fprintf(stderr, "lab: tunnel server %s refused the burst\n", w.ids[b]);
        goto out;
    }
    rl_sleep_ms(WATCH_MS + 100, NULL);
    for (int i = 0; i < NSERVERS; i++)
        if (rl_tworld_observe(&w, i, &o[i]) != RL_OK) {
            fprintf(stderr, "lab: tunnel server %s did not answer ObserveTunnel\n", w.ids[i]);
            goto out;
        }
    series_of(o, b, t0, f);
    rc = LAB_EXIT_OK;
out:
    rl_proc_stop(&p, 3000);
    rl_proc_fini(&p);
    for (int i = 0; i < NSERVERS; i++)
        if (o[i])
            relaylab__observe_tunnel_reply__free_unpacked(o[i], NULL);
    rl_tworld_stop(&w);
    for (int i = 0; i < NSERVERS; i++) {
        char sock[512];
        snprintf(sock, sizeof sock, "%s/tunnel-%c.sock", dir, 'A' + i);
        unlink(sock);
    }
    rmdir(dir);
    return rc;
}

static void save(const char *path, const rl_svg_plot *p)
{
    char err[256];
    if (rl_svg_save(path, p, err, sizeof err) == RL_OK)
        printf("  plot: %s\n", path);
    else
        fprintf(stderr, "lab: could not write %s: %s\n", path, err);
}

/* The largest value of |n| samples of |v|. */
static double largest(const double *v, size_t n)
{
    double m = 0;
    for (size_t k = 0; k < n; k++)
        m = v[k] > m ? v[k] : m;
    return m;
}

/* The largest count (streams or calls) and wait in |f|. */
static void peaks(const figures *f, double *count, double *wait)
{
    *count = largest(f->inflight, NSAMPLES);
    double q = largest(f->queued, NSAMPLES);
    *count = q > *count ? q : *count;
    for (int i = 0; i < NSERVERS; i++) {
        double s = largest(f->streams[i], NSAMPLES);
        *count = s > *count ? s : *count;
    }
    *wait = largest(f->oldest, NSAMPLES);
}

/* Two pictures per agent, one quantity each: the streams it held per server
 * beside the calls at the busy server (counts), and how long the oldest
 * queued call had waited (ms). Both agents' pictures of a kind share one
 * scale: each marks the larger peak of the two (|count_max|, |wait_max|),
 * so that the two counts plots and the two wait plots, shown side by side,
 * compare by eye (issue 35). */
static void plot(const char *base, const char *which, const char *title, const figures *f, double count_max,
                 double wait_max)
{
    char labels[NSERVERS][48], path[4096], caption[200];
    rl_svg_series s[NSERVERS + 2];
    for (int i = 0; i < NSERVERS; i++) {
        snprintf(labels[i], sizeof labels[i], "streams on %c%s", 'A' + i, f->busy[0] == 'A' + i ? " (busy)" : "");
        s[i] = (rl_svg_series){.label = labels[i], .x = f->x, .y = f->streams[i], .n = NSAMPLES};
    }
    s[NSERVERS] = (rl_svg_series){.label = "calls in flight on the busy server",
                                  .x = f->x,
                                  .y = f->inflight,
                                  .n = NSAMPLES,
                                  .dash = RL_SVG_DASHED};
    s[NSERVERS + 1] = (rl_svg_series){
        .label = "calls queued at the busy server", .x = f->x, .y = f->queued, .n = NSAMPLES, .dash = RL_SVG_DOTTED};
    /* The shared scale keeps the two agents comparable by eye, so a total
     * agent's few streams and calls in flight lie flat along the bottom:
     * the caption gives their figures, so no series is hidden (issue 35). */
    double most_streams = 0, most_flight = 0, most_queued = 0;
    for (int k = 0; k < NSAMPLES; k++) {
        for (int i = 0; i < NSERVERS; i++)
            most_streams = f->streams[i][k] > most_streams ? f->streams[i][k] : most_streams;
        most_flight = f->inflight[k] > most_flight ? f->inflight[k] : most_flight;
        most_queued = f->queued[k] > most_queued ? f->queued[k] : most_queued;
    }
    if (strcmp(which, "total") == 0)
        snprintf(caption, sizeof caption,
                 "Sized as a total: at most %.0f streams a server and %.0f calls in flight on the busy one, "
                 "while up to %.0f calls queued there",
                 most_streams, most_flight, most_queued);
    else
        snprintf(caption, sizeof caption, "%s",
                 "Sized per server: the busy server's streams grow with its calls, and none queue for long");
    char count_label[64], wait_label[64];
    snprintf(count_label, sizeof count_label, "the larger peak of both agents: %.0f", count_max);
    snprintf(wait_label, sizeof wait_label, "the larger peak of both agents: %.0f ms", wait_max);
    rl_svg_ref count_ref = {.label = count_label, .value = count_max},
               wait_ref = {.label = wait_label, .value = wait_max};
    rl_svg_plot p = {.title = title,
                     .xlabel = "time since the burst began (s)",
                     .ylabel = "streams or calls (count)",
                     .series = s,
                     .nseries = NSERVERS + 2,
                     .refs = &count_ref,
                     .nrefs = 1,
                     .caption = caption};
    snprintf(path, sizeof path, "%s-%s.svg", base, which);
    save(path, &p);

    rl_svg_series w = {.label = "oldest queued call's wait", .x = f->x, .y = f->oldest, .n = NSAMPLES};
    rl_svg_plot pw = {.title = title,
                      .xlabel = "time since the burst began (s)",
                      .ylabel = "wait of the oldest queued call (ms)",
                      .series = &w,
                      .nseries = 1,
                      .refs = &wait_ref,
                      .nrefs = 1,
                      .caption = "How long the longest-waiting call had been queued at the busy server"};
    snprintf(path, sizeof path, "%s-%s-wait.svg", base, which);
    save(path, &pw);
}

int lab_demo_coverage(void)
{
    char base[4096];
    if (lab_demo_picture_path(LAB_DEMO_COVERAGE_SVG, base, sizeof base) != 0)
        snprintf(base, sizeof base, "%s", "");
    size_t bl = strlen(base);
    if (bl > 4 && strcmp(base + bl - 4, ".svg") == 0)
        base[bl - 4] = '\0';
    printf("lab demo coverage: %d calls of %d ms, one every %d ms, on the server where the agent's newest stream\n"
           "landed; after the agent's first streams (spread evenly), %d %% of new streams land on that server.\n"
           "Each agent runs in a fresh world of three tunnel servers behind the L7 proxy.\n\n",
           CALLS, WORK_MS, INTERVAL_MS, SKEW_PERCENT);
    static figures f[2];
    const char *mistakes[2] = {NULL, "total"};
    const char *names[2] = {"reference (per server)", "--mistake total"};
    grpc_init();
    int rc = LAB_EXIT_OK;
    for (int m = 0; m < 2 && rc == LAB_EXIT_OK; m++) {
        memset(&f[m], 0, sizeof f[m]);
        printf("running bin/agent%s%s ...\n", mistakes[m] ? " --mistake " : "", mistakes[m] ? mistakes[m] : "");
        fflush(stdout);
        rc = run_agent(mistakes[m], &f[m]);
    }
    grpc_shutdown();
    if (rc)
        return LAB_EXIT_FAILED;
    printf("\n%-24s %12s %12s %14s %18s %16s %12s\n", "agent", "longest wait", "median wait", "never handed",
           "busy server held", "idle elsewhere", "peak total");
    for (int m = 0; m < 2; m++)
        printf("%-24s %9lld ms %9lld ms %8d of %d %10d streams %9d streams %12d\n", names[m],
               (long long)f[m].max_wait_ms, (long long)f[m].p50_wait_ms, f[m].queued_at_end, CALLS, f[m].b_streams_mid,
               f[m].idle_elsewhere, f[m].peak_total);
    printf("(\"busy server held\" and \"idle elsewhere\": at the burst's end, %d ms in; \"never handed\": still\n"
           "queued after %d ms.)\n\n",
           CALLS * INTERVAL_MS, WATCH_MS);
    printf("Sized as a total, the agent sees idle streams on the other servers and never grows where the calls\n"
           "are: they queue behind its few busy streams there. Sized per server, it doubles its streams on the\n"
           "busy server each tick until the calls in flight are covered, then prunes back to the reserve.\n");
    double c0, w0, c1, w1;
    peaks(&f[0], &c0, &w0);
    peaks(&f[1], &c1, &w1);
    double cmax = c0 > c1 ? c0 : c1, wmax = w0 > w1 ? w0 : w1;
    plot(base, "reference", "Reference agent: streams sized per server (80 % of new streams on the busy server)", &f[0],
         cmax, wmax);
    plot(base, "total", "--mistake total: streams sized as a total (the incident)", &f[1], cmax, wmax);
    return LAB_EXIT_OK;
}
