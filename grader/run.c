/* run: the grader's driver: for each scenario run a fresh baseline and a
 * fresh submission, readiness, the scenario under a watchdog, then the kill
 * of both process groups and of anything that escaped them; see run.h.
 *
 * Every wait here has a deadline. A signal to the grader kills every child
 * group from the handler itself, so the running scenario's calls fail within
 * milliseconds and the driver can record what it has and return. */
#include "run.h"

#include "judge.h"
#include "rl_alloc.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_log.h"
#include "rl_proc.h"

#include <grpc/grpc_security.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* A scenario is bounded by its own waits (the longest is about 6 s); the
 * watchdog only catches a grader bug or a gRPC call that never returns. */
#define WATCHDOG_MS 60000
/* SIGTERM grace for the submission, as the brief and the handouts promise. */
#define SUBMISSION_GRACE_MS 2000
#define BASELINE_GRACE_MS 500
#define BASELINE_READY_MS 10000

/* Limits for the submission. Measured on an idle relay: grpcio maps 560 MB
 * of address space (VmData 74 MB), a grpc-js relay 1.0 GB (VmData 65 MB), so
 * RLIMIT_AS would kill a healthy Node relay at start; RLIMIT_DATA counts only
 * private writable memory, which is what a leak grows. The default data
 * limit (rl_grade_options.data_limit_mb, 1024) is over 10x what either
 * needs; both pass every scenario under it. */
#define SUB_CPU_SECONDS 60
#define SUB_NOFILE 1024
#define SUB_FSIZE_BYTES (UINT64_C(64) << 20)
/* RLIMIT_NPROC counts the user's threads system-wide (and root is exempt),
 * so it can only stop a fork bomb if set above what the user already runs. */
#define SUB_NPROC_HEADROOM 512

static volatile sig_atomic_t interrupted;

struct rl_grade_ctx {
    const rl_exercise *ex;
    const rl_scenario *sc;
    const rl_grade_options *opt;
    int run_index;
    char tag[160];

    rl_proc baseline;
    bool have_baseline;
    int baseline_port;
    char baseline_addr[64];
    grpc_channel *baseline_ch;

    rl_proc sub;
    bool have_sub;
    char sub_addr[64];
    grpc_channel *sub_ch;

    volatile int watchdog_fired;
};

/* ---- small helpers ---- */

static void sleep_ms(int64_t ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR && !interrupted)
        ;
}

int rl_grade_result(rl_scenario_result *out, rl_verdict v, const char *fmt, ...)
{
    out->verdict = v;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->feedback, sizeof out->feedback, fmt, ap);
    va_end(ap);
    return 0;
}

/* A free port chosen by the OS. Another process could take it before the
 * submission binds it; on loopback of a grading machine that race is rare
 * and shows as NOT-READY with the submission's own bind error. */
static int pick_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sa;
    int port = -1;
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 && getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
        port = ntohs(sa.sin_port);
    close(fd);
    return port;
}

static bool tcp_accepts(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    /* Loopback connects complete or fail at once, so a blocking connect
     * cannot hang here. */
    bool ok = connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
    close(fd);
    return ok;
}

grpc_channel *rl_grade_channel_create(rl_grade_ctx *ctx, const char *target, const grpc_channel_args *extra)
{
    (void)ctx;
    size_t n = extra ? extra->num_args : 0;
    grpc_arg *args = rl_xcalloc(n + 1, sizeof *args);
    for (size_t i = 0; i < n; i++)
        args[i] = extra->args[i];
    args[n].type = GRPC_ARG_INTEGER;
    args[n].key = (char *)GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL;
    args[n].value.integer = 1;
    grpc_channel_args ca = {.num_args = n + 1, .args = args};
    grpc_channel_credentials *creds = grpc_insecure_credentials_create();
    grpc_channel *ch = grpc_channel_create(target, creds, &ca);
    grpc_channel_credentials_release(creds);
    free(args);
    return ch;
}

/* Waits until |ch| is READY or |until_ns|, kicking it to connect. */
static bool channel_ready(grpc_channel *ch, int64_t until_ns, rl_proc *watch)
{
    grpc_completion_queue *cq = grpc_completion_queue_create_for_next(NULL);
    grpc_connectivity_state st = grpc_channel_check_connectivity_state(ch, 1);
    bool ok = false;
    static int watch_tag;
    while (!interrupted) {
        if (st == GRPC_CHANNEL_READY) {
            ok = true;
            break;
        }
        int64_t now = rl_now_ns();
        if (now >= until_ns || (watch && !rl_proc_alive(watch)))
            break;
        if (st == GRPC_CHANNEL_IDLE || st == GRPC_CHANNEL_TRANSIENT_FAILURE)
            grpc_channel_check_connectivity_state(ch, 1);
        int64_t wake = now + 100 * RL_NS_PER_MS < until_ns ? now + 100 * RL_NS_PER_MS : until_ns;
        grpc_channel_watch_connectivity_state(ch, st, rl_ns_to_deadline(wake), cq, &watch_tag);
        /* The watch always completes: on a change or at its deadline. */
        grpc_completion_queue_next(cq, rl_ns_to_deadline(wake + RL_NS_PER_SEC), NULL);
        st = grpc_channel_check_connectivity_state(ch, 0);
    }
    grpc_completion_queue_shutdown(cq);
    int64_t drain_until = rl_now_ns() + 2 * RL_NS_PER_SEC;
    while (grpc_completion_queue_next(cq, rl_ns_to_deadline(drain_until), NULL).type == GRPC_OP_COMPLETE)
        ;
    grpc_completion_queue_destroy(cq);
    return ok;
}

/* The last line or two of |text|, on one line, at most |max| chars. */
static void last_lines(const char *text, char *buf, size_t len, size_t max)
{
    size_t n = strlen(text);
    while (n && (text[n - 1] == '\n' || text[n - 1] == ' '))
        n--;
    size_t start = n > max ? n - max : 0;
    size_t o = 0;
    if (start && len > 4) {
        memcpy(buf, "...", 3);
        o = 3;
    }
    for (size_t i = start; i < n && o + 3 < len; i++) {
        if (text[i] == '\n') {
            buf[o++] = ' ';
            buf[o++] = '|';
            buf[o++] = ' ';
        } else {
            buf[o++] = text[i];
        }
    }
    buf[o] = '\0';
}

/* ---- accessors ---- */

const char *rl_grade_submission_addr(rl_grade_ctx *ctx)
{
    return ctx->have_sub ? ctx->sub_addr : NULL;
}

const char *rl_grade_baseline_addr(rl_grade_ctx *ctx)
{
    return ctx->have_baseline ? ctx->baseline_addr : NULL;
}

grpc_channel *rl_grade_submission_channel(rl_grade_ctx *ctx)
{
    return ctx->sub_ch;
}

grpc_channel *rl_grade_baseline_channel(rl_grade_ctx *ctx)
{
    return ctx->baseline_ch;
}

const char *rl_grade_config_path(rl_grade_ctx *ctx)
{
    return ctx->ex->kind == RL_SUBMISSION_CONFIG ? ctx->opt->submission : NULL;
}

const char *rl_grade_world_path(rl_grade_ctx *ctx)
{
    return ctx->opt->world;
}

const char *rl_grade_variant(rl_grade_ctx *ctx)
{
    return ctx->opt->variant;
}

bool rl_grade_submission_alive(rl_grade_ctx *ctx)
{
    return ctx->have_sub && rl_proc_alive(&ctx->sub);
}

bool rl_grade_submission_died(rl_grade_ctx *ctx, int64_t wait_ms, char *how, size_t howlen)
{
    if (!ctx->have_sub)
        return false;
    if (!rl_proc_wait_exit(&ctx->sub, wait_ms))
        return false;
    if (how)
        rl_proc_describe(&ctx->sub, how, howlen);
    return true;
}

/* "CRASH (SIGSEGV)"-style feedback for a dead submission. */
static void crash_feedback(rl_grade_ctx *ctx, const char *what, rl_scenario_result *out)
{
    char how[96], tail[600], lines[200];
    rl_proc_describe(&ctx->sub, how, sizeof how);
    rl_proc_output_tail(&ctx->sub, tail, sizeof tail);
    last_lines(tail, lines, sizeof lines, 160);
    rl_grade_result(out, RL_CRASH, "the submission %s %s%s%s", how, what, lines[0] ? "; last output: " : "", lines);
}

bool rl_grade_crash_check(rl_grade_ctx *ctx, int64_t wait_ms, const char *what, rl_scenario_result *out)
{
    if (!rl_grade_submission_died(ctx, wait_ms, NULL, 0))
        return false;
    crash_feedback(ctx, what, out);
    return true;
}

pid_t rl_grade_submission_pgid(rl_grade_ctx *ctx)
{
    return ctx->have_sub ? ctx->sub.pid : 0;
}

size_t rl_grade_submission_output_tail(rl_grade_ctx *ctx, char *buf, size_t len)
{
    if (!ctx->have_sub) {
        if (len)
            buf[0] = '\0';
        return 0;
    }
    return (size_t)rl_proc_output_tail(&ctx->sub, buf, len);
}

const char *rl_grade_tag(rl_grade_ctx *ctx)
{
    return ctx->tag;
}

int rl_grade_run_index(rl_grade_ctx *ctx)
{
    return ctx->run_index;
}

int rl_grade_run_count(rl_grade_ctx *ctx)
{
    return ctx->opt->runs;
}

bool rl_grade_interrupted(rl_grade_ctx *ctx)
{
    return interrupted || ctx->watchdog_fired;
}

/* ---- baseline ---- */

static int start_baseline(rl_grade_ctx *ctx, const char *listen, const char *const *extra, char *err, size_t errlen)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/baseline", ctx->opt->bin_dir);
    const char *argv[32];
    size_t n = 0;
    argv[n++] = path;
    argv[n++] = "--listen";
    argv[n++] = listen;
    for (size_t i = 0; extra && extra[i] && n < 31; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    rl_proc_options po = {.argv = argv, .kill_with_parent = true};
    if (rl_proc_spawn(&ctx->baseline, &po) != RL_OK) {
        snprintf(err, errlen, "cannot start %s: %s", path, strerror(errno));
        return RL_ESYS;
    }
    ctx->have_baseline = true;
    char line[256];
    int rc = rl_proc_wait_line(&ctx->baseline, "listening on ", BASELINE_READY_MS, line, sizeof line);
    if (rc != RL_OK) {
        char tail[400], lines[240];
        rl_proc_output_tail(&ctx->baseline, tail, sizeof tail);
        last_lines(tail, lines, sizeof lines, 200);
        snprintf(err, errlen, "the baseline (%s) did not start: %s", path, lines[0] ? lines : rl_strerror(rc));
        return rc;
    }
    const char *addr = strstr(line, "listening on ") + strlen("listening on ");
    snprintf(ctx->baseline_addr, sizeof ctx->baseline_addr, "%s", addr);
    const char *colon = strrchr(ctx->baseline_addr, ':');
    ctx->baseline_port = colon ? atoi(colon + 1) : 0;
    ctx->baseline_ch = rl_grade_channel_create(ctx, ctx->baseline_addr, NULL);
    return RL_OK;
}

static void stop_baseline(rl_grade_ctx *ctx)
{
    if (ctx->baseline_ch)
        grpc_channel_destroy(ctx->baseline_ch);
    ctx->baseline_ch = NULL;
    if (ctx->have_baseline) {
        rl_proc_stop(&ctx->baseline, BASELINE_GRACE_MS);
        rl_proc_fini(&ctx->baseline);
    }
    ctx->have_baseline = false;
}

int rl_grade_restart_baseline(rl_grade_ctx *ctx, const char *const *extra_argv, char *err, size_t errlen)
{
    char listen[64];
    snprintf(listen, sizeof listen, "127.0.0.1:%d", ctx->baseline_port);
    stop_baseline(ctx);
    return start_baseline(ctx, listen, extra_argv, err, errlen);
}

/* ---- submission ---- */

static uint64_t nproc_limit(void)
{
    /* /proc/loadavg's 4th field is running/total scheduling entities. */
    FILE *f = fopen("/proc/loadavg", "re");
    unsigned long total = 0;
    if (f) {
        if (fscanf(f, "%*s %*s %*s %*u/%lu", &total) != 1)
            total = 0;
        fclose(f);
    }
    return (uint64_t)total + SUB_NPROC_HEADROOM;
}

/* True when |cmd| begins with a shell assignment word, "NAME=value ...". */
static bool starts_with_assignment(const char *cmd)
{
    while (*cmd == ' ' || *cmd == '\t')
        cmd++;
    if (!(isalpha((unsigned char)*cmd) || *cmd == '_'))
        return false;
    while (isalnum((unsigned char)*cmd) || *cmd == '_')
        cmd++;
    return *cmd == '=';
}

/* Starts the submission and waits for it to listen. Returns RL_PASS when it
 * is ready, else the verdict to record with |out| filled. */
static rl_verdict start_submission(rl_grade_ctx *ctx, rl_scenario_result *out)
{
    int port = pick_port();
    if (port <= 0) {
        rl_grade_result(out, RL_ERROR, "cannot find a free port: %s", strerror(errno));
        return RL_ERROR;
    }
    snprintf(ctx->sub_addr, sizeof ctx->sub_addr, "127.0.0.1:%d", port);
    char env_listen[96], env_baseline[96];
    snprintf(env_listen, sizeof env_listen, "RELAYLAB_LISTEN=%s", ctx->sub_addr);
    snprintf(env_baseline, sizeof env_baseline, "RELAYLAB_BASELINE=%s", ctx->baseline_addr);
    const char *env[] = {env_listen, env_baseline, NULL};
    /* A simple command is exec'd by the shell, so the submission itself
     * leads the group and its exit status or signal reaches us unaltered.
     * `exec` takes no leading VAR=value words, so those go through env(1). */
    const char *sub = ctx->opt->submission;
    char *cmd = rl_xmalloc(strlen(sub) + 16);
    bool simple = strpbrk(sub, ";&|()`\n") == NULL && strncmp(sub, "exec ", 5) != 0;
    sprintf(cmd, "%s%s", !simple ? "" : starts_with_assignment(sub) ? "exec env " : "exec ", sub);
    const char *argv[] = {"/bin/sh", "-c", cmd, NULL};
    rl_proc_limits lim = {
        .data_bytes = (uint64_t)ctx->opt->data_limit_mb << 20,
        .cpu_seconds = SUB_CPU_SECONDS,
        .nofile = SUB_NOFILE,
        .nproc = nproc_limit(),
        .fsize_bytes = SUB_FSIZE_BYTES,
    };
    rl_proc_options po = {.argv = argv, .setenv = env, .limits = &lim, .kill_with_parent = true};
    int src = rl_proc_spawn(&ctx->sub, &po);
    free(cmd);
    if (src != RL_OK) {
        rl_grade_result(out, RL_ERROR, "cannot start the submission: %s", strerror(errno));
        return RL_ERROR;
    }
    ctx->have_sub = true;

    int64_t t0 = rl_now_ns();
    int64_t until = t0 + ctx->opt->ready_timeout_ms * RL_NS_PER_MS;
    bool accepts = false;
    while (!interrupted && rl_now_ns() < until) {
        if (!rl_proc_alive(&ctx->sub))
            break;
        if ((accepts = tcp_accepts(port)))
            break;
        sleep_ms(20);
    }
    if (accepts) {
        ctx->sub_ch = rl_grade_channel_create(ctx, ctx->sub_addr, NULL);
        if (channel_ready(ctx->sub_ch, until, &ctx->sub))
            return RL_PASS;
    }
    char tail[600], lines[240];
    rl_proc_output_tail(&ctx->sub, tail, sizeof tail);
    last_lines(tail, lines, sizeof lines, 200);
    const char *sep = lines[0] ? "; last output: " : "; it printed nothing";
    if (interrupted) {
        rl_grade_result(out, RL_ERROR, "interrupted while waiting for the submission to listen");
        return RL_ERROR;
    }
    if (!rl_proc_alive(&ctx->sub)) {
        char how[96];
        rl_proc_describe(&ctx->sub, how, sizeof how);
        rl_verdict v = rl_proc_death_signal(&ctx->sub) ? RL_CRASH : RL_NOT_READY;
        rl_grade_result(out, v, "the submission %s before it listened on %s%s%s", how, ctx->sub_addr, sep, lines);
        return v;
    }
    double secs = (double)(rl_now_ns() - t0) / 1e9;
    if (accepts)
        rl_grade_result(out, RL_NOT_READY,
                        "the submission accepted TCP connections on %s but no gRPC (HTTP/2) connection became ready "
                        "within %.1f s%s%s",
                        ctx->sub_addr, secs, sep, lines);
    else
        rl_grade_result(out, RL_NOT_READY, "the submission did not listen on %s (RELAYLAB_LISTEN) within %.1f s%s%s",
                        ctx->sub_addr, secs, sep, lines);
    return RL_NOT_READY;
}

/* Output above this earns a note: a server that floods its log fills disks. */
#define OUTPUT_NOTE_BYTES (1024 * 1024)

static void add_note(rl_scenario_result *res, const char *note)
{
    size_t n = strlen(res->feedback);
    if (n < sizeof res->feedback - 1)
        snprintf(res->feedback + n, sizeof res->feedback - n, "%s%s", n ? "; " : "", note);
}

/* Stops the submission. What a well-behaved server would not have needed
 * (SIGKILL after SIGTERM, megabytes of output) is noted in |res|' feedback;
 * the verdict stays the scenario's own. */
static void stop_submission(rl_grade_ctx *ctx, rl_scenario_result *res)
{
    if (ctx->sub_ch)
        grpc_channel_destroy(ctx->sub_ch);
    ctx->sub_ch = NULL;
    if (ctx->have_sub) {
        char tail[2];
        uint64_t written = rl_proc_output_tail(&ctx->sub, tail, sizeof tail);
        bool was_alive = rl_proc_alive(&ctx->sub);
        bool killed = rl_proc_stop(&ctx->sub, SUBMISSION_GRACE_MS);
        rl_proc_fini(&ctx->sub);
        char note[160];
        if (was_alive && killed) {
            snprintf(note, sizeof note, "note: it did not exit within %d ms of SIGTERM and was killed",
                     SUBMISSION_GRACE_MS);
            add_note(res, note);
        }
        if (written > OUTPUT_NOTE_BYTES) {
            snprintf(note, sizeof note, "note: it wrote %.1f MiB of output (the grader keeps the first and last 4 KiB)",
                     (double)written / (1024 * 1024));
            add_note(res, note);
        }
    }
    ctx->have_sub = false;
}

/* ---- watchdog ---- */

typedef struct watchdog {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cond;
    bool done;
    rl_grade_ctx *ctx;
} watchdog;

static void *watchdog_main(void *arg)
{
    watchdog *w = arg;
    int64_t until = rl_now_ns() + WATCHDOG_MS * RL_NS_PER_MS;
    struct timespec ts = {.tv_sec = until / RL_NS_PER_SEC, .tv_nsec = (long)(until % RL_NS_PER_SEC)};
    pthread_mutex_lock(&w->mu);
    while (!w->done)
        if (pthread_cond_timedwait(&w->cond, &w->mu, &ts) == ETIMEDOUT)
            break;
    bool fire = !w->done;
    pthread_mutex_unlock(&w->mu);
    if (fire) {
        /* Kill the children: the scenario's calls then fail at once. */
        w->ctx->watchdog_fired = 1;
        if (w->ctx->have_sub)
            kill(-w->ctx->sub.pid, SIGKILL);
        if (w->ctx->have_baseline)
            kill(-w->ctx->baseline.pid, SIGKILL);
    }
    return NULL;
}

static bool watchdog_start(watchdog *w, rl_grade_ctx *ctx)
{
    memset(w, 0, sizeof *w);
    w->ctx = ctx;
    pthread_mutex_init(&w->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w->cond, &ca);
    pthread_condattr_destroy(&ca);
    return pthread_create(&w->thread, NULL, watchdog_main, w) == 0;
}

static void watchdog_stop(watchdog *w)
{
    pthread_mutex_lock(&w->mu);
    w->done = true;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->mu);
}

/* ---- one run of one scenario ---- */

static void run_once(const rl_exercise *ex, const rl_scenario *sc, const rl_grade_options *opt, int run_index,
                     rl_scenario_result *res, char *output, size_t outlen)
{
    rl_grade_ctx *ctx = rl_xcalloc(1, sizeof *ctx);
    ctx->ex = ex;
    ctx->sc = sc;
    ctx->opt = opt;
    ctx->run_index = run_index;
    snprintf(ctx->tag, sizeof ctx->tag, "%s.%s.%d.%ld", ex->name, sc->id, run_index, (long)getpid());
    memset(res, 0, sizeof *res);
    output[0] = '\0';

    char err[512];
    if (ex->needs_baseline) {
        /* One retry: a baseline that fails to start is the grader's problem
         * (seen while bin/ was being rebuilt), never the submission's. */
        int brc = start_baseline(ctx, "127.0.0.1:0", NULL, err, sizeof err);
        if (brc != RL_OK && !interrupted) {
            stop_baseline(ctx);
            sleep_ms(500);
            brc = start_baseline(ctx, "127.0.0.1:0", NULL, err, sizeof err);
        }
        if (brc != RL_OK) {
            rl_grade_result(res, RL_ERROR, "%s", err);
            goto teardown;
        }
    }
    if (ex->kind == RL_SUBMISSION_COMMAND && start_submission(ctx, res) != RL_PASS)
        goto teardown;

    watchdog wd;
    bool wd_on = watchdog_start(&wd, ctx);
    int rc = sc->run(ctx, res);
    if (wd_on)
        watchdog_stop(&wd);
    if (rc < 0 && res->verdict != RL_ERROR)
        rl_grade_result(res, RL_ERROR, "the grader failed in this scenario (%s)%s%s", rl_strerror(rc),
                        res->feedback[0] ? ": " : "", res->feedback);

    if (interrupted) {
        rl_grade_result(res, RL_ERROR, "interrupted: the grader was asked to stop");
    } else if (ctx->watchdog_fired) {
        rl_grade_result(res, RL_ERROR, "the scenario did not finish within %d s (grader watchdog)", WATCHDOG_MS / 1000);
    } else if (ctx->have_sub && res->verdict != RL_CRASH && res->verdict != RL_ERROR && !rl_proc_alive(&ctx->sub)) {
        /* Dead at the end is a crash whatever the scenario concluded: an
         * answer followed by an exit is not a working server. */
        crash_feedback(ctx, "during the scenario", res);
    } else if (ctx->have_baseline && !rl_proc_alive(&ctx->baseline)) {
        char how[96];
        rl_proc_describe(&ctx->baseline, how, sizeof how);
        rl_grade_result(res, RL_ERROR, "the grader's baseline %s during the scenario (not the submission's fault)",
                        how);
    }

teardown:
    if ((res->verdict == RL_CRASH || res->verdict == RL_NOT_READY) && ctx->have_sub)
        rl_proc_output_text(&ctx->sub, output, outlen);
    stop_submission(ctx, res);
    stop_baseline(ctx);
    /* Whatever escaped the groups (setsid, double fork) came back to us as
     * subreaper: nothing of a submission may outlive its scenario. */
    int orphans = rl_proc_reap_orphans(NULL, 0, 3000);
    if (orphans)
        RL_DEBUG("killed %d escaped process(es) after %s/%s", orphans, ex->name, sc->id);
    free(ctx);
}

static bool selected(const char *only, const char *id)
{
    if (!only)
        return true;
    size_t n = strlen(id);
    for (const char *p = only; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == n && strncmp(p, id, n) == 0)
            return true;
        if (!comma)
            break;
        p = comma + 1;
    }
    return false;
}

int rl_grade_run_exercise(const rl_exercise *ex, const rl_grade_options *opt, rl_grade_outcome *outcomes,
                          size_t *noutcomes, char *err, size_t errlen)
{
    *noutcomes = 0;
    /* Every --only id must exist: a typo must not silently grade nothing. */
    if (opt->only) {
        char *copy = rl_xstrdup(opt->only);
        char *save = NULL;
        for (char *id = strtok_r(copy, ",", &save); id; id = strtok_r(NULL, ",", &save)) {
            bool found = false;
            for (size_t i = 0; i < ex->nscenarios && !found; i++)
                found = strcmp(ex->scenarios[i].id, id) == 0;
            if (!found) {
                snprintf(err, errlen, "exercise %s has no scenario '%s'", ex->name, id);
                free(copy);
                return RL_EINVAL;
            }
        }
        free(copy);
    }
    for (size_t i = 0; i < ex->nscenarios; i++) {
        const rl_scenario *sc = &ex->scenarios[i];
        if (!selected(opt->only, sc->id))
            continue;
        rl_grade_outcome *o = &outcomes[(*noutcomes)++];
        memset(o, 0, sizeof *o);
        o->scenario = sc;
        o->verdict = RL_PASS;
        int64_t t0 = rl_now_ns();
        for (int r = 1; r <= opt->runs; r++) {
            if (interrupted) {
                if (o->runs == 0 || o->verdict != RL_ERROR)
                    snprintf(o->feedback, sizeof o->feedback, "interrupted: the grader was asked to stop");
                o->verdict = RL_ERROR;
                break;
            }
            rl_scenario_result res;
            char output[sizeof o->output];
            if (opt->progress)
                fprintf(stderr, "%s/%s run %d/%d ...\n", ex->name, sc->id, r, opt->runs);
            int64_t r0 = rl_now_ns();
            run_once(ex, sc, opt, r, &res, output, sizeof output);
            o->runs++;
            if (res.verdict == RL_PASS)
                o->passed++;
            /* Keep the worst run's story; on ties the first one. */
            if (o->runs == 1 || res.verdict > o->verdict) {
                o->verdict = res.verdict;
                memcpy(o->feedback, res.feedback, sizeof o->feedback);
                memcpy(o->output, output, sizeof o->output);
            }
            if (opt->progress)
                fprintf(stderr, "%s/%s run %d/%d: %s (%.1f s) %s\n", ex->name, sc->id, r, opt->runs,
                        rl_verdict_name(res.verdict), (double)(rl_now_ns() - r0) / 1e9, res.feedback);
        }
        o->seconds = (double)(rl_now_ns() - t0) / 1e9;
    }
    return RL_OK;
}

/* ---- guards ---- */

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
    rl_proc_signal_all(SIGKILL);
}

int rl_grade_install_guards(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL) || sigaction(SIGHUP, &sa, NULL))
        return RL_ESYS;
    signal(SIGPIPE, SIG_IGN);
    return rl_proc_become_subreaper();
}

bool rl_grade_was_interrupted(void)
{
    return interrupted;
}
