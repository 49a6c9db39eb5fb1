/* demo_overload: `lab demo overload`; see demo_overload.h.
 *
 * For each relay (the reference, then each overload mistake) a fresh
 * baseline with a Work capacity of CAPACITY calls of WORK_MS, and the relay
 * in front of it, one load per multiple of that capacity. Fresh processes
 * per relay, so one relay's backlog never reaches the next. Every wait has
 * a deadline and every process is stopped, as in demo.c. */
#include "demo_overload.h"
#include "demo.h"
#include "status.h"

#include "relaylab.pb-c.h"
#include "rl_channel.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_flow.h"
#include "rl_load.h"
#include "rl_path.h"
#include "rl_probe.h"
#include "rl_proc.h"
#include "rl_stats.h"
#include "rl_svg.h"
#include "rl_tcp.h"

#include <grpc/grpc.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The world of the overload exercise (grader/ex_overload.c): 8 Work calls
 * at once of 40 x 20 ms, so 10 calls/s, and 2 s deadlines. */
#define CAPACITY       8
#define STEPS          40
#define STEP_MS        20
#define CAPACITY_PER_S ((double)CAPACITY * 1000.0 / (STEPS * STEP_MS))
#define DEADLINE_MS    2000
#define LOAD_MS        4000
/* Goodput counts the calls started in the second half of the load: the
 * first holds the start-up any queue serves (as the grader judges it). */
#define DOWN_CALLS       3
#define DOWN_DEADLINE_MS 2000

static const double multiples[] = {1, 2, 5, 10};
#define NLOADS (sizeof multiples / sizeof multiples[0])
static const char *const relays[] = {NULL, "unbounded-queue", "wait-for-ready"};
#define NRELAYS (sizeof relays / sizeof relays[0])

typedef struct point {
    double offered, goodput; /* calls/s */
    int ok, refused, failed_late;
    int64_t p50, p99; /* ms, of the OK calls */
    int wasted;       /* at the baseline */
    double rss_mib;   /* the relay's peak */
} point;

/* One unary call on |ch|; returns its status, or -1 when it did not end. */
static int call(grpc_channel *ch, const char *method, const ProtobufCMessage *req, int64_t deadline_ms,
                int64_t *took_ms)
{
    rl_probe_call c;
    int st = -1;
    int64_t t0 = rl_now_ns();
    if (rl_probe_call_start(&c, ch, method, req, t0 + deadline_ms * RL_NS_PER_MS) == RL_OK &&
        rl_probe_call_wait(&c, c.deadline_ns + 2 * RL_NS_PER_SEC) == RL_OK)
        st = (int)c.batch.status;
    if (took_ms)
        *took_ms = c.end_ns ? (c.end_ns - t0) / RL_NS_PER_MS : -1;
    rl_probe_call_fini(&c);
    return st;
}

/* One load of |rate| calls/s through |relay|; fills |pt|. */
static int measure(lab_server *baseline, lab_server *relay, double rate, int index, point *pt)
{
    char prefix[64];
    snprintf(prefix, sizeof prefix, "demo.%d", index);
    rl_proc_peak w = {relay->proc.pid, 0};
    rl_load_options o = {.prefix = prefix,
                         .rate = rate,
                         .duration_ms = LOAD_MS,
                         .deadline_ms = DEADLINE_MS,
                         .steps = STEPS,
                         .step_ms = STEP_MS,
                         .tick = rl_proc_peak_sample,
                         .user = &w,
                         .tick_ms = 100};
    rl_load_call *calls = NULL;
    size_t n = 0;
    if (rl_load_run(relay->ch, &o, 2000, &calls, &n) != RL_OK) {
        free(calls);
        fprintf(stderr, "lab: cannot start the calls\n");
        return LAB_EXIT_FAILED;
    }
    memset(pt, 0, sizeof *pt);
    pt->offered = rate;
    int64_t *lat = calloc(n ? n : 1, sizeof *lat);
    size_t nlat = 0;
    int late_half_ok = 0;
    int64_t half = n ? calls[0].start_ns + LOAD_MS / 2 * RL_NS_PER_MS : 0;
    for (size_t i = 0; i < n; i++) {
        int64_t ms = calls[i].end_ns ? (calls[i].end_ns - calls[i].start_ns) / RL_NS_PER_MS : DEADLINE_MS;
        if (calls[i].end_ns && calls[i].status == GRPC_STATUS_OK) {
            lat[nlat++] = ms;
            late_half_ok += calls[i].start_ns >= half;
        } else if (ms > DEADLINE_MS * 3 / 4)
            pt->failed_late++;
        else
            pt->refused++;
    }
    rl_stats_sort_i64(lat, nlat);
    pt->ok = (int)nlat;
    pt->goodput = late_half_ok / (LOAD_MS / 2000.0); /* over the late half */
    pt->p50 = rl_stats_pct_i64(lat, nlat, 50);
    pt->p99 = rl_stats_pct_i64(lat, nlat, 99);
    pt->rss_mib = (double)w.peak_rss / RL_MIB;
    Relaylab__ObserveReply *obs = NULL;
    rl_observe_until(baseline->ch, "", rl_observe_all_ended, NULL, rl_now_ns() + 3 * RL_NS_PER_SEC, 20, &obs);
    for (size_t i = 0; obs && i < obs->n_calls; i++)
        if (rl_load_index(prefix, obs->calls[i]->tag) >= 0 && obs->calls[i]->wasted)
            pt->wasted++;
    if (obs)
        relaylab__observe_reply__free_unpacked(obs, NULL);
    free(lat);
    free(calls);
    return LAB_EXIT_OK;
}

/* The relay |mistake| (NULL: the reference) at every load, then with its
 * backend's port closed: how long a call takes to fail. */
static int run_relay(const char *mistake, point *pts, int64_t *down_ms, int *down_status)
{
    lab_server baseline, relay;
    const char *bargs[] = {"--listen", "127.0.0.1:0", "--observer", "", NULL};
    char obs_path[128];
    snprintf(obs_path, sizeof obs_path, "unix:/tmp/relaylab-demo-overload-%d.sock", (int)getpid());
    bargs[3] = obs_path;
    if (lab_server_start(&baseline, "baseline", "baseline", bargs))
        return LAB_EXIT_FAILED;
    grpc_channel_destroy(baseline.ch);
    baseline.ch = rl_channel_isolated(obs_path, NULL); /* the Observer answers only there */
    const char *rargs[] = {"--listen", "127.0.0.1:0", "--baseline", baseline.addr, mistake ? "--mistake" : NULL,
                           mistake,    NULL};
    if (lab_server_start(&relay, "relay", "relay", rargs)) {
        lab_server_stop(&baseline);
        return LAB_EXIT_FAILED;
    }
    Relaylab__CapacityRequest cap = RELAYLAB__CAPACITY_REQUEST__INIT;
    cap.max_work = CAPACITY;
    int rc = call(baseline.ch, "/relaylab.Observer/SetCapacity", &cap.base, 3000, NULL) == GRPC_STATUS_OK
                 ? LAB_EXIT_OK
                 : LAB_EXIT_FAILED;
    if (rc)
        fprintf(stderr, "lab: the baseline's observer did not take SetCapacity\n");
    for (size_t k = 0; !rc && k < NLOADS; k++) {
        rc = measure(&baseline, &relay, multiples[k] * CAPACITY_PER_S, (int)k, &pts[k]);
        /* Let what the load left behind end before the next one. */
        rl_sleep_ms(DEADLINE_MS / 2, NULL);
    }
    if (!rc) {
        /* Its port closed, a backend that went away, and held at once
         * (rl_tcp_hold) so that no other server is handed it: one started
         * on port 0 by another program was, and answered for it. */
        int port = rl_tcp_port_of(baseline.addr);
        lab_server_stop(&baseline);
        int hold = -1;
        if (rl_tcp_hold(port, &hold) != RL_OK)
            fprintf(stderr, "lab: cannot hold the baseline's port (%s); going on without\n", strerror(errno));
        Relaylab__ProcessRequest req = RELAYLAB__PROCESS_REQUEST__INIT;
        req.tag = (char *)"demo.down";
        req.steps = 1;
        req.step_ms = 10;
        int64_t worst = 0;
        for (int i = 0; i < DOWN_CALLS; i++) {
            int64_t took;
            *down_status = call(relay.ch, "/relaylab.Relay/Process", &req.base, DOWN_DEADLINE_MS, &took);
            worst = took > worst ? took : worst;
        }
        *down_ms = worst;
        if (hold >= 0)
            close(hold);
    }
    lab_server_stop(&relay);
    lab_server_stop(&baseline);
    return rc;
}

static void write_plot(point pts[NRELAYS][NLOADS], const char *path)
{
    if (!path) {
        printf("\n(No plot: the kit's build/ folder cannot be made; name a file with --svg FILE.)\n");
        return;
    }
    double xs[NRELAYS][NLOADS], ys[NRELAYS][NLOADS];
    rl_svg_series series[NRELAYS];
    for (size_t r = 0; r < NRELAYS; r++) {
        for (size_t k = 0; k < NLOADS; k++) {
            xs[r][k] = pts[r][k].offered;
            ys[r][k] = pts[r][k].goodput;
        }
        /* Dashes and markers: the reference and wait-for-ready lie on
         * each other when the backend is up (they differ only when it is
         * down), and neither may hide the other. */
        series[r] = (rl_svg_series){.label = relays[r] ? relays[r] : "reference",
                                    .x = xs[r],
                                    .y = ys[r],
                                    .n = NLOADS,
                                    .dash = (rl_svg_dash)(r % 3),
                                    .markers = 1};
    }
    bool same = true; /* the reference and wait-for-ready, point for point */
    for (size_t k = 0; k < NLOADS; k++)
        same = same && ys[0][k] == ys[NRELAYS - 1][k];
    char cap_label[64];
    snprintf(cap_label, sizeof cap_label, "backend capacity: %.0f calls/s", CAPACITY_PER_S);
    rl_svg_ref capacity = {.label = cap_label, .value = CAPACITY_PER_S};
    rl_svg_plot p = {.title = "Goodput against offered load (2 s deadlines)",
                     .xlabel = "offered load (calls/s)",
                     .ylabel = "goodput: calls OK within their deadline (calls/s)",
                     .series = series,
                     .nseries = NRELAYS,
                     .refs = &capacity,
                     .nrefs = 1,
                     /* wait-for-ready serves as the reference does while the
                      * backend is up (a little more or less, as it falls): its
                      * harm is in the outage, drawn in the -down plot. */
                     .caption = same ? "Shedding keeps goodput near capacity; an unbounded queue falls to 0. "
                                       "wait-for-ready's harm is in the outage plot"
                                     : "Shedding keeps goodput near capacity; an unbounded queue falls to 0. "
                                       "wait-for-ready's harm is in the outage plot, not here"};
    char err[256];
    if (rl_svg_save(path, &p, err, sizeof err) == RL_OK)
        printf("\nThe plot of goodput against offered load: %s\n", path);
    else
        fprintf(stderr, "lab: cannot write %s: %s\n", path, err);
}

/* The lesson of wait-for-ready, which the goodput plot cannot show (with
 * the backend up it serves as the reference does): with the backend's port
 * closed, how long a call takes to fail, one row a relay, against the
 * call's deadline. Written beside |svg_path| as NAME-down.svg. */
static void write_down_plot(const int64_t *down_ms, const int *down_status, const char *svg_path)
{
    if (!svg_path)
        return;
    char path[PATH_MAX + 80];
    size_t n = strlen(svg_path);
    if (n > 4 && strcmp(svg_path + n - 4, ".svg") == 0)
        snprintf(path, sizeof path, "%.*s-down.svg", (int)(n - 4), svg_path);
    else
        snprintf(path, sizeof path, "%s-down.svg", svg_path);
    const char *rows[NRELAYS];
    rl_svg_span spans[NRELAYS];
    char labels[NRELAYS][96];
    for (size_t r = 0; r < NRELAYS; r++) {
        rows[r] = relays[r] ? relays[r] : "reference";
        bool fast = down_status[r] >= 0 && down_ms[r] < DOWN_DEADLINE_MS / 4;
        snprintf(labels[r], sizeof labels[r], "%s in %lld ms",
                 down_status[r] < 0 ? "no status" : rl_status_name(down_status[r]), (long long)down_ms[r]);
        spans[r] = (rl_svg_span){.row = r,
                                 .x0 = 0,
                                 .x1 = (double)down_ms[r],
                                 .label = labels[r],
                                 .kind = fast ? RL_SVG_SPAN_GOOD : RL_SVG_SPAN_BAD};
    }
    rl_svg_ref deadline = {.label = "each call's deadline (2000 ms)", .value = DOWN_DEADLINE_MS};
    char caption[200];
    snprintf(caption, sizeof caption,
             "Backend gone: the reference fails a call in %lld ms, so the caller can go elsewhere; wait-for-ready "
             "holds it %lld ms",
             (long long)down_ms[0], (long long)down_ms[NRELAYS - 1]);
    rl_svg_timeline t = {.title = "With the backend's port closed: how long a call takes to fail",
                         .xlabel = "ms from the call to its status",
                         .rows = rows,
                         .nrows = NRELAYS,
                         .spans = spans,
                         .nspans = NRELAYS,
                         .events = &deadline,
                         .nevents = 1,
                         .caption = caption,
                         .width = 860};
    FILE *f = fopen(path, "w");
    int rc = f ? rl_svg_timeline_write(f, &t) : RL_ESYS;
    if (f && fclose(f) != 0)
        rc = RL_ESYS;
    if (rc == RL_OK)
        printf("The plot of a call's time to fail with the backend gone: %s\n", path);
    else
        fprintf(stderr, "lab: cannot write %s\n", path);
}

int lab_demo_overload(const char *svg_path)
{
    static point pts[NRELAYS][NLOADS];
    int64_t down_ms[NRELAYS] = {0};
    int down_status[NRELAYS] = {0};
    printf("Overload and outages: a relay in front of a backend that serves %d calls at once, %d ms each\n"
           "(%.0f calls/s). The load offers %.1f to %.0f times that for %d s, each call with %d ms to live,\n"
           "through the reference relay and each overload mistake; then the backend's port closes.\n"
           "(About a minute and a half.)\n\n",
           CAPACITY, STEPS * STEP_MS, CAPACITY_PER_S, multiples[0], multiples[NLOADS - 1], LOAD_MS / 1000, DEADLINE_MS);
    fflush(stdout);
    grpc_init();
    for (size_t r = 0; r < NRELAYS; r++) {
        if (run_relay(relays[r], pts[r], &down_ms[r], &down_status[r])) {
            grpc_shutdown();
            return LAB_EXIT_FAILED;
        }
    }
    grpc_shutdown();
    printf("%-16s %8s %9s %8s %8s %8s %8s %8s %9s\n", "relay", "offered", "goodput", "p50", "p99", "refused", "late",
           "wasted", "RSS");
    printf("%-16s %8s %9s %8s %8s %8s %8s %8s %9s\n", "", "calls/s", "calls/s*", "ms", "ms", "calls", "calls", "calls",
           "MiB");
    for (size_t r = 0; r < NRELAYS; r++) {
        for (size_t k = 0; k < NLOADS; k++) {
            const point *p = &pts[r][k];
            printf("%-16s %8.0f %9.1f %8lld %8lld %8d %8d %8d %9.1f\n",
                   k           ? ""
                   : relays[r] ? relays[r]
                               : "reference",
                   p->offered, p->goodput, (long long)p->p50, (long long)p->p99, p->refused, p->failed_late, p->wasted,
                   p->rss_mib);
        }
    }
    printf("\n(* goodput: calls started in the second half of the load that succeeded, per second;\n"
           "late: calls that failed after holding their client for over 3/4 of the deadline; wasted:\n"
           "calls the backend worked on, or queued, for a caller that had gone.)\n\nBackend's port closed:\n");
    for (size_t r = 0; r < NRELAYS; r++)
        printf("  %-16s a call fails in %lld ms (%s)\n", relays[r] ? relays[r] : "reference", (long long)down_ms[r],
               down_status[r] < 0 ? "no status" : rl_status_name(down_status[r]));
    write_plot(pts, svg_path);
    write_down_plot(down_ms, down_status, svg_path);
    return LAB_EXIT_OK;
}

int lab_demo_overload_main(void)
{
    char svg[PATH_MAX + 64];
    return lab_demo_overload(lab_demo_picture_path(LAB_DEMO_OVERLOAD_SVG, svg, sizeof svg) == 0 ? svg : NULL);
}
