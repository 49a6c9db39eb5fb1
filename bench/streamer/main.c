/* bench-streamer: how fast the reference producer streams, and what a
 * stalled reader costs it, paced and --unbounded.
 *
 * For each producer it measures (1) a free reader taking COUNT x SIZE as
 * fast as it can (MB/s, chunks/s, best and median of RUNS), (2) the stall
 * the flow-control lab grades: read one chunk, stop, watch the group's RSS
 * until flat (baseline, peak, growth), and for the reference the number of
 * chunks whose send completed before it stalled (the window), on WINDOWS
 * fresh connections. Figures go to stdout as Markdown for
 * bench/results/streamer.md. */
#include "rl_channel.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_flow.h"
#include "rl_log.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* bench-streamer's exit statuses. */
enum {
    BENCH_EXIT_CLEAN = 0,  /* every producer was measured */
    BENCH_EXIT_FAILED = 1, /* a producer did not start, or a measurement failed (the row is missing) */
    BENCH_EXIT_USAGE = 2,  /* the command line was wrong, or there is no bin/streamer */
};

/* How long a producer may take to print its readiness line. */
#define PRODUCER_READY_MS 20000

typedef struct bench_opts {
    char bin[PATH_MAX];
    uint32_t count, size;
    int runs, windows;
    const char *submission;
} bench_opts;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The streamer's "sent" counter, from a SIGUSR1 stats line. -1 if none came. */
static long long streamer_sent(rl_flow_server *fs)
{
    char before[4096];
    uint64_t total = rl_proc_output_tail(&fs->proc, before, sizeof before);
    kill(fs->proc.pid, SIGUSR1);
    int64_t until = rl_now_ns() + 2 * RL_NS_PER_SEC;
    char tail[4096];
    while (rl_now_ns() < until) {
        usleep(20000);
        if (rl_proc_output_tail(&fs->proc, tail, sizeof tail) == total)
            continue;
        const char *last = NULL;
        for (const char *p = tail; (p = strstr(p, "stats (SIGUSR1)")); p++)
            last = p;
        const char *s = last ? strstr(last, " sent=") : NULL;
        if (s)
            return atoll(s + 6);
    }
    return -1;
}

/* A producer to measure: the reference's |argv|, or a student's command
 * |line|, started as the grader starts a submission. */
typedef struct producer {
    const char *label;
    const char *const *argv;
    const char *line; /* when set, |argv| is not used */
} producer;

/* Starts |pr| into |fs| (stopped again on failure, with the reason on
 * stderr). Returns 0 or the rl_flow_server_start code. */
static int start_producer(rl_flow_server *fs, const producer *pr)
{
    char err[600];
    int rc = pr->line ? rl_flow_server_start_command(fs, pr->line, PRODUCER_READY_MS, err, sizeof err)
                      : rl_flow_server_start(fs, pr->argv, PRODUCER_READY_MS, err, sizeof err);
    if (rc != RL_OK) {
        fprintf(stderr, "bench-streamer: %s\n", err);
        rl_flow_server_stop(fs);
    }
    return rc;
}

/* The free reader's row for |pr|. Returns false when it was not measured
 * (the reason on stderr). */
static bool free_read(const bench_opts *o, const producer *pr)
{
    const char *label = pr->label;
    rl_flow_server fs;
    char err[600];
    if (start_producer(&fs, pr) != RL_OK)
        return false;
    grpc_channel *ch = rl_channel_isolated(fs.addr, NULL);
    double mbs[64], cps[64];
    int n = 0;
    for (int r = 0; r < o->runs && r < 64; r++) {
        rl_stream s;
        int64_t t0 = rl_now_ns();
        int rc = rl_stream_open(&s, ch, "bench", o->count, o->size, t0 + 120 * RL_NS_PER_SEC);
        if (rc == RL_OK)
            rc = rl_flow_read_rest(&s, t0 + 120 * RL_NS_PER_SEC, err, sizeof err);
        else
            snprintf(err, sizeof err, "cannot start the call");
        double secs = (double)(rl_now_ns() - t0) / 1e9;
        if (rc != RL_OK) {
            fprintf(stderr, "bench-streamer: %s run %d: %s\n", label, r, err);
            rl_stream_fini(&s);
            break;
        }
        mbs[n] = (double)s.bytes / 1e6 / secs;
        cps[n] = (double)s.received / secs;
        n++;
        rl_stream_fini(&s);
    }
    grpc_channel_destroy(ch);
    rl_flow_server_stop(&fs);
    if (n == 0)
        return false;
    qsort(mbs, (size_t)n, sizeof *mbs, cmp_double);
    qsort(cps, (size_t)n, sizeof *cps, cmp_double);
    printf("| %s | %u x %u | %d | %.0f | %.0f | %.0f | %.0f |\n", label, o->count, o->size, n, mbs[n - 1], mbs[n / 2],
           cps[n - 1], cps[n / 2]);
    fflush(stdout);
    return true;
}

/* The stalled reader's row for |pr| (|reference|: with the chunks sent
 * before the stall). Returns false when it was not measured. */
static bool stall(const bench_opts *o, const producer *pr, bool reference)
{
    const char *label = pr->label;
    rl_flow_server fs;
    char err[600];
    if (start_producer(&fs, pr) != RL_OK)
        return false;
    grpc_channel *ch = rl_channel_isolated(fs.addr, NULL);
    rl_flow_stall_opts so;
    rl_flow_stall_defaults(&so);
    so.count = o->count;
    so.size = o->size;
    rl_memwatch w;
    rl_stream s;
    memset(&s, 0, sizeof s);
    rl_flow_stall_result res;
    int rc = rl_memwatch_start(&w, fs.proc.pid, 1 << 20, false);
    long long sent = -1;
    if (rc == RL_OK)
        rc = rl_flow_stall(ch, "bench-stall", &so, &w, &s, &res, err, sizeof err);
    if (rc == RL_OK && reference)
        sent = streamer_sent(&fs);
    int rest = rc == RL_OK ? rl_flow_read_rest(&s, rl_now_ns() + 60 * RL_NS_PER_SEC, err, sizeof err) : rc;
    if (rc != RL_OK || rest != RL_OK)
        fprintf(stderr, "bench-streamer: %s stall: %s\n", label, err);
    else {
        char win[64] = "n/a";
        if (sent >= 0)
            snprintf(win, sizeof win, "%lld (%.1f MiB)", sent, (double)sent * o->size / RL_MIB);
        printf("| %s | %.1f | %.1f | %.1f | %s | %.1f s%s | all %llu right |\n", label, w.base_rss / RL_MIB,
               w.peak_rss / RL_MIB, rl_memwatch_growth(&w) / RL_MIB, win, res.watched_ms / 1000.0,
               res.settled ? " (flat)" : "", (unsigned long long)s.received);
    }
    fflush(stdout);
    rl_stream_fini(&s);
    rl_memwatch_fini(&w);
    grpc_channel_destroy(ch);
    rl_flow_server_stop(&fs);
    return rc == RL_OK && rest == RL_OK;
}

/* Chunks sent before the stall on |n| fresh connections to one reference.
 * Returns false when the reference did not start. */
static bool windows(const bench_opts *o, const producer *pr)
{
    rl_flow_server fs;
    if (start_producer(&fs, pr) != RL_OK)
        return false;
    printf("Chunks sent before the stall, %d fresh connections (reader took 1, then idled 1 s):", o->windows);
    long long prev = 0;
    for (int i = 0; i < o->windows; i++) {
        grpc_channel *ch = rl_channel_isolated(fs.addr, NULL);
        rl_stream s;
        bool end = false;
        int rc = rl_stream_open(&s, ch, "bench-window", o->count, o->size, INT64_MAX);
        if (rc == RL_OK)
            rc = rl_stream_next(&s, rl_now_ns() + 10 * RL_NS_PER_SEC, &end);
        if (rc == RL_OK)
            rl_stream_idle(&s, rl_now_ns() + RL_NS_PER_SEC);
        long long sent = streamer_sent(&fs);
        printf(" %lld", sent - prev);
        fflush(stdout);
        rl_stream_cancel(&s);
        rl_stream_fini(&s);
        grpc_channel_destroy(ch);
        /* Let the cancelled call's last send complete before the next count. */
        usleep(100000);
        prev = streamer_sent(&fs);
    }
    printf("\n");
    rl_flow_server_stop(&fs);
    return true;
}

static long parse_num(const char *s, const char *what, long max)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < 1 || v > max) {
        fprintf(stderr, "bench-streamer: %s wants a number from 1 to %ld, not '%s'\n", what, max, s);
        exit(BENCH_EXIT_USAGE);
    }
    return v;
}

int main(int argc, char **argv)
{
    rl_log_init("bench-streamer");
    bench_opts o = {.count = 3000, .size = 65536, .runs = 5, .windows = 10, .submission = NULL};
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    snprintf(o.bin, sizeof o.bin, "%s", n > 0 ? dirname(self) : "bin");
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--bin") == 0 && i + 1 < argc)
            snprintf(o.bin, sizeof o.bin, "%s", argv[++i]);
        else if (strcmp(argv[i], "--count") == 0 && i + 1 < argc)
            o.count = (uint32_t)parse_num(argv[++i], "--count", 1000000);
        else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc)
            o.size = (uint32_t)parse_num(argv[++i], "--size", 4 * 1024 * 1024 - 64);
        else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
            o.runs = (int)parse_num(argv[++i], "--runs", 64);
        else if (strcmp(argv[i], "--windows") == 0 && i + 1 < argc)
            o.windows = (int)parse_num(argv[++i], "--windows", 100);
        else if (strcmp(argv[i], "--submission") == 0 && i + 1 < argc)
            o.submission = argv[++i];
        else {
            fprintf(stderr, "usage: bench-streamer [--bin DIR] [--count N] [--size BYTES] [--runs N] [--windows N]\n"
                            "                      [--submission CMD]\n");
            return BENCH_EXIT_USAGE;
        }
    }
    char streamer[PATH_MAX + 16];
    snprintf(streamer, sizeof streamer, "%s/streamer", o.bin);
    if (access(streamer, X_OK) != 0) {
        fprintf(stderr, "bench-streamer: %s not found; run make first or pass --bin DIR\n", streamer);
        return BENCH_EXIT_USAGE;
    }
    grpc_init();
    const char *paced_argv[] = {streamer, "--threads", "1", NULL};
    const char *unbounded_argv[] = {streamer, "--threads", "1", "--unbounded", NULL};
    const producer paced = {.label = "streamer", .argv = paced_argv};
    const producer unbounded = {.label = "streamer --unbounded", .argv = unbounded_argv};
    const producer sub = {.label = o.submission, .line = o.submission};
    int fails = 0;

    printf(
        "### Free reader\n\n| producer | request | runs | best MB/s | median MB/s | best chunks/s | median chunks/s |\n"
        "|---|---|---|---|---|---|---|\n");
    fails += !free_read(&o, &paced);
    fails += !free_read(&o, &unbounded);
    if (o.submission)
        fails += !free_read(&o, &sub);

    printf("\n### Stalled reader (%u x %u requested, 1 read, then none)\n\n"
           "| producer | baseline MiB | peak MiB | growth MiB | sent at stall | watched | then read |\n"
           "|---|---|---|---|---|---|---|\n",
           o.count, o.size);
    fails += !stall(&o, &paced, true);
    fails += !stall(&o, &unbounded, true);
    if (o.submission)
        fails += !stall(&o, &sub, false);
    printf("\n");
    fails += !windows(&o, &paced);
    grpc_shutdown();
    return fails ? BENCH_EXIT_FAILED : BENCH_EXIT_CLEAN;
}
