/* compare_memory: the flow lab's memory comparison; see compare_memory.h.
 * Each producer gets a fresh process and a fresh connection, and the same
 * fixed watch, so the curves share a time axis and differ only by producer. */
#include "compare_memory.h"
#include "status.h"

#include "rl_channel.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_flow.h"
#include "rl_path.h"
#include "rl_svg.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* grader/flow_judge.h's GR_FLOW_BUDGET_MIB, for the table's last column. */
#define GRADER_BUDGET_MIB 48.0
#define MAX_PRODUCERS     3
/* How long a producer may take to print its readiness line. */
#define READY_MS 20000

typedef struct cm_opts {
    const char *submission; /* shell command, or NULL */
    const char *svg;        /* output path, or NULL */
    double seconds;         /* watch length after the first chunk */
    uint32_t count, size;
} cm_opts;

typedef struct producer {
    const char *label;
    const char *argv[6]; /* a reference producer */
    const char *line;    /* else the submission's command line, started
                          * as the grader starts a submission */
    rl_memwatch w;       /* with its series */
    rl_flow_stall_result res;
    bool ok;
    char err[600];
} producer;

static void usage(FILE *f)
{
    fprintf(f, "usage: lab compare-memory [--submission CMD] [--svg FILE] [--seconds S] [--count N] [--size BYTES]\n"
               "  Runs bin/streamer, bin/streamer --unbounded and CMD (a producer that listens on\n"
               "  $RELAYLAB_LISTEN) through one stall: Produce(N x BYTES, default 3000 x 65536), read one\n"
               "  chunk, stop reading for S seconds (default 4), sampling each producer's RSS.\n");
}

static int parse_u32(const char *s, const char *what, uint32_t max, uint32_t *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || v < 1 || v > max) {
        fprintf(stderr, "lab compare-memory: %s wants a number from 1 to %u, not '%s'\n", what, max, s);
        return RL_EINVAL;
    }
    *out = (uint32_t)v;
    return RL_OK;
}

static void run_producer(producer *p, const cm_opts *o)
{
    memset(&p->w, 0, sizeof p->w);
    p->ok = false;
    fprintf(stderr, "lab: running %s ...\n", p->label);
    rl_flow_server fs;
    int rc = p->line ? rl_flow_server_start_command(&fs, p->line, READY_MS, p->err, sizeof p->err)
                     : rl_flow_server_start(&fs, p->argv, READY_MS, p->err, sizeof p->err);
    if (rc != RL_OK) {
        rl_flow_server_stop(&fs);
        return;
    }
    grpc_channel *ch = rl_channel_isolated(fs.addr, NULL);
    rl_flow_stall_opts so;
    rl_flow_stall_defaults(&so);
    so.count = o->count;
    so.size = o->size;
    so.min_ms = so.max_ms = (int64_t)(o->seconds * 1000);
    /* Watched as the grader's flow judge watches (grader/ex_flow.c,
     * stall_opts): a producer starved by a loaded machine may not have
     * shown its growth when the stall ends, so a watch that ends with the
     * RSS still moving in the upper half of the budget, or rising faster
     * than 2 MiB/s, goes on until it is flat or past the budget (30 s at
     * most). A fixed 3 s showed the unbounded producer "within" the budget
     * at 29.5 and 36.7 MiB at load 25 on 2 cores (bench/results/soak.md). */
    so.undecided_lo = (uint64_t)(GRADER_BUDGET_MIB / 2 * RL_MIB);
    so.undecided_hi = (uint64_t)(GRADER_BUDGET_MIB * RL_MIB);
    so.undecided_max_ms = 30000;
    so.rising_per_s = UINT64_C(2) << 20;
    rl_stream s;
    memset(&s, 0, sizeof s);
    if (rl_memwatch_start(&p->w, fs.proc.pid, UINT64_C(1) << 20, true) != RL_OK)
        snprintf(p->err, sizeof p->err, "%s exited at once", p->label);
    else if (rl_flow_stall(ch, "compare-memory", &so, &p->w, &s, &p->res, p->err, sizeof p->err) == RL_OK)
        p->ok = true;
    rl_stream_fini(&s);
    grpc_channel_destroy(ch);
    rl_flow_server_stop(&fs);
}

static void print_table(producer *ps, size_t n, const cm_opts *o)
{
    int64_t longest = 0;
    for (size_t i = 0; i < n; i++)
        if (ps[i].ok && ps[i].res.watched_ms > longest)
            longest = ps[i].res.watched_ms;
    printf("\nProduce(%u x %u) = %.1f MiB requested; the reader took 1 chunk, then stopped for %.1f s", o->count,
           o->size, (double)o->count * o->size / RL_MIB, o->seconds);
    if (longest > (int64_t)(o->seconds * 1000) + 500)
        printf(" (%.1f s for a producer whose RSS still rose toward the budget, as the grader waits)",
               (double)longest / 1000);
    printf(".\n\n");
    printf("%-34s %14s %14s %12s  %s\n", "producer", "baseline RSS", "peak RSS", "growth", "grader budget");
    for (size_t i = 0; i < n; i++) {
        producer *p = &ps[i];
        if (!p->ok) {
            printf("%-34.34s  did not run: %s\n", p->label, p->err);
            continue;
        }
        double g = rl_memwatch_growth(&p->w) / RL_MIB;
        printf("%-34.34s %10.1f MiB %10.1f MiB %8.1f MiB  %s\n", p->label, p->w.base_rss / RL_MIB,
               p->w.peak_rss / RL_MIB, g, g <= GRADER_BUDGET_MIB ? "within 48 MiB" : "OVER 48 MiB");
    }
}

/* Writes the RSS-over-time plot to o->svg. Returns RL_OK, or rl_svg_save's
 * code after a message. */
static int write_svg(producer *ps, size_t n, const cm_opts *o)
{
    rl_svg_series series[MAX_PRODUCERS];
    double *xs[MAX_PRODUCERS] = {NULL}, *ys[MAX_PRODUCERS] = {NULL};
    size_t ns = 0;
    for (size_t i = 0; i < n; i++) {
        if (!ps[i].ok || !ps[i].w.npoints)
            continue;
        size_t k = ps[i].w.npoints;
        xs[ns] = malloc(k * sizeof(double));
        ys[ns] = malloc(k * sizeof(double));
        if (!xs[ns] || !ys[ns])
            abort();
        for (size_t j = 0; j < k; j++) {
            xs[ns][j] = (double)ps[i].w.points[j].t_ns / 1e9;
            ys[ns][j] = (double)ps[i].w.points[j].rss / RL_MIB;
        }
        series[ns] = (rl_svg_series){.label = ps[i].label, .x = xs[ns], .y = ys[ns], .n = k};
        ns++;
    }
    char title[160];
    snprintf(title, sizeof title, "Producer RSS while the reader stalls (Produce %u x %u, 1 chunk read)", o->count,
             o->size);
    /* The grader judges growth over each producer's own start; the line
     * is drawn over the lowest start, the strictest reading. */
    double base = 0;
    for (size_t i = 0; i < ns; i++) {
        series[i].dash = (rl_svg_dash)(i % 3);
        series[i].markers = 1;
        base = (i == 0 || ys[i][0] < base) ? ys[i][0] : base;
    }
    char budget_label[96];
    snprintf(budget_label, sizeof budget_label, "grader's budget: %.0f MiB over the start", GRADER_BUDGET_MIB);
    rl_svg_ref budget = {.label = budget_label, .value = base + GRADER_BUDGET_MIB};
    rl_svg_ref stall = {.label = "the reader stalls after 1 chunk", .value = 0};
    for (size_t i = 0; i < n; i++)
        if (ps[i].ok && ps[i].res.first_chunk_ms > 0) {
            stall.value = (double)ps[i].res.first_chunk_ms / 1000.0;
            break;
        }
    rl_svg_plot plot = {.title = title,
                        .xlabel = "time since the stream was requested (s)",
                        .ylabel = "RSS of the producer's process group (MiB)",
                        .series = series,
                        .nseries = ns,
                        .width = 900,
                        .height = 560,
                        .refs = &budget,
                        .nrefs = 1,
                        .events = &stall,
                        .nevents = stall.value > 0 ? 1 : 0,
                        .caption = "A producer that waits for the window stays flat under the budget; one that "
                                   "queues keeps climbing"};
    char err[300];
    int rc = rl_svg_save(o->svg, &plot, err, sizeof err);
    for (size_t i = 0; i < ns; i++) {
        free(xs[i]);
        free(ys[i]);
    }
    if (rc != RL_OK) {
        fprintf(stderr, "lab compare-memory: %s\n", err);
        return rc;
    }
    printf("\nPlot written to %s (open it in a browser).\n", o->svg);
    return RL_OK;
}

/* Fills |ps| with the reference producers (and the submission); returns how
 * many, or 0 when there is nothing to run. The student kit has no
 * bin/streamer (it answers the flow exercise): there only the submission
 * runs, and a line says why the references are not beside it. */
static size_t producers(producer *ps, const cm_opts *o, char *streamer, size_t len)
{
    memset(ps, 0, MAX_PRODUCERS * sizeof *ps);
    size_t n = 0;
    if (rl_path_sibling("streamer", streamer, len) == RL_OK && access(streamer, X_OK) == 0) {
        ps[n++] = (producer){.label = "streamer (paced by the window)", .argv = {streamer, "--threads", "1", NULL}};
        ps[n++] = (producer){.label = "streamer --unbounded (the mistake)",
                             .argv = {streamer, "--threads", "1", "--unbounded", NULL}};
    } else if (o->submission) {
        printf("(The reference producers, bin/streamer, are in the instructor's kit, not this one: your producer "
               "runs alone.)\n");
    } else {
        fprintf(stderr, "lab: the reference producers (bin/streamer) are in the instructor's kit, not this one: "
                        "name yours with --submission CMD\n");
        return 0;
    }
    if (o->submission)
        ps[n++] = (producer){.label = o->submission, .line = o->submission};
    return n;
}

int lab_compare_memory_main(int argc, char **argv)
{
    cm_opts o = {NULL, NULL, 4.0, 3000, 65536};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return LAB_EXIT_OK;
        } else if (!v) {
            fprintf(stderr, "lab compare-memory: unknown or incomplete option '%s'\n", a);
            usage(stderr);
            return LAB_EXIT_USAGE;
        } else if (strcmp(a, "--submission") == 0) {
            o.submission = v;
        } else if (strcmp(a, "--svg") == 0) {
            o.svg = v;
        } else if (strcmp(a, "--seconds") == 0) {
            char *end;
            o.seconds = strtod(v, &end);
            if (*end || !(o.seconds >= 0.5 && o.seconds <= 60)) {
                fprintf(stderr, "lab compare-memory: --seconds wants 0.5 to 60, not '%s'\n", v);
                return LAB_EXIT_USAGE;
            }
        } else if (strcmp(a, "--count") == 0) {
            if (parse_u32(v, "--count", 1000000, &o.count) != 0)
                return LAB_EXIT_USAGE;
        } else if (strcmp(a, "--size") == 0) {
            if (parse_u32(v, "--size", 4 * 1024 * 1024 - 64, &o.size) != 0)
                return LAB_EXIT_USAGE;
        } else {
            fprintf(stderr, "lab compare-memory: unknown option '%s'\n", a);
            usage(stderr);
            return LAB_EXIT_USAGE;
        }
        i++;
    }
    char streamer[PATH_MAX];
    producer ps[MAX_PRODUCERS];
    size_t n = producers(ps, &o, streamer, sizeof streamer);
    if (!n)
        return LAB_EXIT_FAILED;
    grpc_init();
    int fails = 0;
    for (size_t i = 0; i < n; i++) {
        run_producer(&ps[i], &o);
        fails += !ps[i].ok;
    }
    print_table(ps, n, &o);
    if (o.svg)
        fails += write_svg(ps, n, &o) != RL_OK;
    for (size_t i = 0; i < n; i++)
        rl_memwatch_fini(&ps[i].w);
    grpc_shutdown();
    return fails ? LAB_EXIT_FAILED : LAB_EXIT_OK;
}

/* One text row of RSS over time: a block per |step_ns|, height by |top|. */
static void spark(const rl_memwatch *w, int64_t step_ns, int64_t end_ns, double top)
{
    static const char *const bars[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
    size_t j = 0;
    for (int64_t t = 0; t <= end_ns; t += step_ns) {
        while (j + 1 < w->npoints && w->points[j + 1].t_ns <= t)
            j++;
        double v = (double)w->points[j].rss / RL_MIB;
        int level = top > 0 ? (int)(v / top * 7.999) : 0;
        fputs(bars[level < 0 ? 0 : level > 7 ? 7 : level], stdout);
    }
}

int lab_flow_demo(void)
{
    cm_opts o = {NULL, NULL, 3.0, 3000, 65536};
    char streamer[PATH_MAX];
    producer ps[MAX_PRODUCERS];
    size_t n = producers(ps, &o, streamer, sizeof streamer);
    if (!n)
        return LAB_EXIT_FAILED;
    printf("Flow control: a server-streaming producer should make chunk n+1 only when the send of\n"
           "chunk n completed, i.e. when the HTTP/2 window let it go. A reader that stops then\n"
           "costs one window (4-8 MiB, held by the client), not the whole stream.\n");
    fflush(stdout);
    grpc_init();
    int fails = 0;
    for (size_t i = 0; i < n; i++) {
        run_producer(&ps[i], &o);
        fails += !ps[i].ok;
    }
    print_table(ps, n, &o);
    if (fails) {
        /* No conclusion from a demo that did not run. */
        printf("\nThe demo did not run in full (see above): nothing to conclude.\n");
        for (size_t i = 0; i < n; i++)
            rl_memwatch_fini(&ps[i].w);
        grpc_shutdown();
        return LAB_EXIT_FAILED;
    }
    double top = 0;
    int64_t end = 0;
    for (size_t i = 0; i < n; i++)
        if (ps[i].ok) {
            top = ps[i].w.peak_rss / RL_MIB > top ? ps[i].w.peak_rss / RL_MIB : top;
            int64_t last = ps[i].w.points[ps[i].w.npoints - 1].t_ns;
            end = last > end ? last : end;
        }
    if (top > 0) {
        printf("\nRSS over time (one column per 0.1 s, full height = %.0f MiB):\n", top);
        for (size_t i = 0; i < n; i++) {
            if (!ps[i].ok)
                continue;
            printf("  %-36.36s ", ps[i].label);
            spark(&ps[i].w, 100 * RL_NS_PER_MS, end, top);
            printf("\n");
        }
    }
    printf("\nThe unbounded producer's thread built all %u chunks while the reader was stalled; the paced\n"
           "one stopped after one window. `lab compare-memory --svg rss.svg` draws the same as a plot;\n"
           "`bin/grader flow --submission CMD` grades a producer against a %.0f MiB budget.\n",
           o.count, GRADER_BUDGET_MIB);
    for (size_t i = 0; i < n; i++)
        rl_memwatch_fini(&ps[i].w);
    grpc_shutdown();
    return fails ? LAB_EXIT_FAILED : LAB_EXIT_OK;
}
