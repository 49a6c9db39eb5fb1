/* run: the grader's driver: for each scenario run fresh baselines and a
 * fresh submission, readiness, the scenario under a watchdog, then the kill
 * of every process group and of anything that escaped them; see run.h.
 *
 * Every wait here has a deadline. A signal to the grader kills every child
 * group from the handler itself, so the running scenario's calls fail within
 * milliseconds and the driver can record what it has and return. */
#include "run.h"

#include "judge.h"
#include "rl_alloc.h"
#include "rl_channel.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_log.h"
#include "rl_proc.h"
#include "rl_tcp.h"
#include "rl_text.h"
#include "ports.h"
#include "sandbox.h"
#include "watchdog.h"

#include <grpc/grpc_security.h>

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A scenario is bounded by its own waits (the longest is about 6 s); the
 * watchdog only catches a grader bug or a gRPC call that never returns. */
#define WATCHDOG_MS 60000
/* SIGTERM grace for the submission, as the brief and the handouts promise. */
#define SUBMISSION_GRACE_MS 2000
#define BASELINE_GRACE_MS 500
#define BASELINE_READY_MS 10000
/* Starts of the submission when another process holds its port; each
 * clash is rare (ports.h), so a run of them means something else is wrong. */
#define PORT_TRIES 4
/* A submission on a clashing port may be healthy; it is not judged, only
 * stopped, so a short grace is enough. */
#define DISCARD_GRACE_MS 200

/* Limits for the submission. Measured on an idle relay: grpcio maps 560 MB
 * of address space (VmData 74 MB), a grpc-js relay 1.0 GB (VmData 65 MB), so
 * RLIMIT_AS would kill a healthy Node relay at start; RLIMIT_DATA counts only
 * private writable memory, which is what a leak grows. The default data
 * limit (gr_options.data_limit_mb, 1024) is over 10x what either
 * needs; both pass every scenario under it. */
#define SUB_CPU_SECONDS 60
#define SUB_NOFILE 1024
/* How long a starting submission may keep hitting its memory limit. */
#define MEMORY_THRASH_MS 1000
#define MEMORY_HIT_GAP_MS 250
#define SUB_FSIZE_BYTES (UINT64_C(64) << 20)
/* RLIMIT_NPROC counts the user's threads system-wide (and root is exempt),
 * so it can only stop a fork bomb if set above what the user already runs. */
#define SUB_NPROC_HEADROOM 512


_Static_assert(GR_MAX_BASELINES <= GR_WATCHDOG_MAX_BASELINES, "every baseline needs a watchdog slot");

static volatile sig_atomic_t interrupted;

/* Connections to a baseline beyond which a submission is flooding it: an
 * honest relay holds one or a few per baseline (a channel per call, leaked,
 * is still hundreds in a scenario); the baseline keeps its observer's
 * descriptors whatever comes (baseline/fd_guard.h). */
#define GR_BASELINE_CONNECTIONS_MAX 1000

/* One of the run's baselines. */
typedef struct baseline {
    rl_proc proc;
    bool running;             /* |proc| was spawned and is not stopped yet */
    int port;                 /* its TCP port, kept across a restart */
    char addr[64];            /* "127.0.0.1:PORT", what the submission is given */
    char observer_addr[192];  /* "unix:PRIVATE_DIR/observer-I.sock" */
    grpc_channel *ch;         /* to |observer_addr|; NULL when not running */
} baseline;

/* One instance of the submission. */
typedef struct instance {
    int index;
    rl_proc proc;
    bool have;  /* |proc| was spawned and is not stopped yet */
    char addr[64];
    int port;
    int port_clashes; /* starts abandoned because another process held the port */
    grpc_channel *ch;
    /* The scenario signalled it (gr_signal_submission): its exit is
     * what the scenario asked for, not a crash. */
    bool signalled;
    int64_t signal_ns; /* when, CLOCK_MONOTONIC */
    /* Its sandbox (opt->sandbox), valid while |sandboxed|. */
    gr_sandbox_run sb;
    bool sandboxed;
    bool killed_at_memory_limit; /* the grader ended a start thrashing at it */
} instance;

struct gr_ctx {
    const gr_exercise *ex;
    const gr_scenario *sc;
    const gr_options *opt;
    int run_index;
    char tag[160];

    /* The run's baselines, ex->baselines of them. Each serves the Observer
     * to the grader alone on a unix socket in the grader's private folder
     * (0700) for this run; |private_dir| is empty when none was made. */
    baseline baselines[GR_MAX_BASELINES];
    int nbaselines;
    char private_dir[128];

    /* The instances of the submission, ex->instances of them (command
     * exercises); the single-instance accessors mean instance 0. */
    instance subs[GR_MAX_INSTANCES];
    int ninstances;

    /* Tags the grader sent in this run (gr_note_tag). */
    char **tags;
    size_t ntags, captags;

    /* Holds the groups above while they may be killed: each is published
     * right after its spawn and released before its leader is reaped. */
    gr_watchdog wd;
};

/* ---- small helpers ---- */

/* Ends |fb| (of |size| bytes) with GR_FEEDBACK_CUT when |needed| bytes of
 * text did not fit. */
static void mark_cut(char *fb, size_t size, size_t needed)
{
    size_t cut = sizeof GR_FEEDBACK_CUT;
    if (needed < size || size < cut)
        return;
    memcpy(fb + size - cut, GR_FEEDBACK_CUT, cut);
}

/* Feedback quotes what a submission said (status details, tags, its
 * output): it is made printable here, where it is made, so no terminal,
 * log, CSV or results.json downstream ever gets an ESC or a CR from it
 * (rl_text.h). Feedback is one line: newlines are escaped too. */
int gr_result(gr_scenario_result *out, gr_verdict v, const char *fmt, ...)
{
    out->verdict = v;
    char raw[GR_FEEDBACK_MAX + 1];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    size_t m = rl_text_printable(out->feedback, sizeof out->feedback, raw, strlen(raw), 0);
    if (n > 0 && (size_t)n > m)
        m = (size_t)n;
    mark_cut(out->feedback, sizeof out->feedback, m);
    return 0;
}

void gr_feedback_append(gr_scenario_result *out, const char *text)
{
    size_t n = strlen(out->feedback);
    if (n >= sizeof out->feedback - 1)
        return; /* full, and already marked */
    size_t m = 0;
    if (n) {
        snprintf(out->feedback + n, sizeof out->feedback - n, "; ");
        m = 2;
    }
    m += rl_text_printable(out->feedback + n + m, sizeof out->feedback - n - m, text, strlen(text), 0);
    mark_cut(out->feedback, sizeof out->feedback, n + m);
}

static bool tcp_accepts(int port)
{
    rl_tcp_answer a;
    return rl_tcp_probe(port, 200, &a) == RL_OK && a == RL_TCP_ACCEPTED;
}

grpc_channel *gr_channel_create(gr_ctx *ctx, const char *target, const grpc_channel_args *extra)
{
    (void)ctx;
    return rl_channel_isolated(target, extra);
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

/* Instance |i| while it was started and not stopped, else NULL. */
static instance *started_instance(gr_ctx *ctx, int i)
{
    if (i < 0 || i >= ctx->ninstances || !ctx->subs[i].have)
        return NULL;
    return &ctx->subs[i];
}

int gr_instance_count(gr_ctx *ctx)
{
    return ctx->ninstances;
}

const char *gr_submission_addr_at(gr_ctx *ctx, int i)
{
    instance *s = started_instance(ctx, i);
    return s ? s->addr : NULL;
}

const char *gr_submission_addr(gr_ctx *ctx)
{
    return gr_submission_addr_at(ctx, 0);
}

int gr_baseline_count(gr_ctx *ctx)
{
    return ctx->nbaselines;
}

/* Baseline |i| while it runs, else NULL. */
static baseline *running_baseline(gr_ctx *ctx, int i)
{
    if (i < 0 || i >= ctx->nbaselines || !ctx->baselines[i].running)
        return NULL;
    return &ctx->baselines[i];
}

const char *gr_baseline_addr(gr_ctx *ctx, int i)
{
    baseline *b = running_baseline(ctx, i);
    return b ? b->addr : NULL;
}

grpc_channel *gr_submission_channel_at(gr_ctx *ctx, int i)
{
    instance *s = started_instance(ctx, i);
    return s ? s->ch : NULL;
}

grpc_channel *gr_submission_channel(gr_ctx *ctx)
{
    return gr_submission_channel_at(ctx, 0);
}

grpc_channel *gr_baseline_channel(gr_ctx *ctx, int i)
{
    baseline *b = running_baseline(ctx, i);
    return b ? b->ch : NULL;
}

const char *gr_config_path(gr_ctx *ctx)
{
    return ctx->ex->kind == GR_SUBMISSION_CONFIG ? ctx->opt->submission : NULL;
}

const char *gr_submission_dir(gr_ctx *ctx)
{
    return ctx->opt->dir;
}

const char *gr_world_path(gr_ctx *ctx)
{
    return ctx->opt->world;
}

const char *gr_variant(gr_ctx *ctx)
{
    return ctx->opt->variant;
}

const char *gr_made_for(gr_ctx *ctx)
{
    return ctx->opt->made_for;
}

const char *gr_identity_note(gr_ctx *ctx)
{
    return ctx->opt->identity_note;
}

bool gr_submission_alive_at(gr_ctx *ctx, int i)
{
    instance *s = started_instance(ctx, i);
    return s && rl_proc_alive(&s->proc);
}

bool gr_submission_alive(gr_ctx *ctx)
{
    return gr_submission_alive_at(ctx, 0);
}

/* How instance |s| ended, naming the sandbox's memory limit when its cgroup
 * killed it (a SIGKILL alone would not say why). */
static void describe_submission(gr_ctx *ctx, instance *s, char *how, size_t howlen)
{
    rl_proc_describe(&s->proc, how, howlen);
    if (s->killed_at_memory_limit) {
        size_t n = strlen(how);
        snprintf(how + n, howlen - n, " (by the grader, after %d ms of hitting the sandbox's memory limit of %lld MiB)",
                 MEMORY_THRASH_MS, (long long)ctx->opt->data_limit_mb);
    } else if (s->sandboxed && rl_proc_death_signal(&s->proc) == SIGKILL && gr_sandbox_oom_kills(&s->sb) > 0) {
        size_t n = strlen(how);
        snprintf(how + n, howlen - n, " at the sandbox's memory limit of %lld MiB",
                 (long long)ctx->opt->data_limit_mb);
    }
}

bool gr_submission_died(gr_ctx *ctx, int64_t wait_ms, char *how, size_t howlen)
{
    instance *s = started_instance(ctx, 0);
    if (!s || !rl_proc_wait_exit(&s->proc, wait_ms))
        return false;
    if (how)
        describe_submission(ctx, s, how, howlen);
    return true;
}

/* "CRASH (SIGSEGV)"-style feedback for a dead instance; "the submission"
 * when it is the only one, "instance 2 of the submission" otherwise. */
static void crash_feedback(gr_ctx *ctx, instance *s, const char *what, gr_scenario_result *out)
{
    char how[192], tail[600], lines[200], who[48] = "the submission";
    describe_submission(ctx, s, how, sizeof how);
    rl_proc_output_tail(&s->proc, tail, sizeof tail);
    last_lines(tail, lines, sizeof lines, 160);
    if (ctx->ninstances > 1)
        snprintf(who, sizeof who, "instance %d of the submission", s->index + 1);
    /* "can't start new thread" names no mistake: the mistake is a thread
     * per call (or stream), which the sandbox's task limit stops under
     * load where a bounded pool would not. */
    bool threads = strstr(tail, "can't start new thread") || strstr(tail, "pthread_create") ||
                   strstr(tail, "uv_thread_create") || strstr(tail, "Thread creation failed");
    if (threads)
        gr_result(out, GR_CRASH,
                  "%s %s %s: it could not start another thread, past the sandbox's limit of %d tasks (threads and "
                  "processes): a thread per call or stream? Serve calls from a bounded pool%s%s",
                  who, how, what, GR_SANDBOX_PIDS_MAX, lines[0] ? "; last output: " : "", lines);
    else
        gr_result(out, GR_CRASH, "%s %s %s%s%s", who, how, what, lines[0] ? "; last output: " : "", lines);
}

bool gr_crash_check(gr_ctx *ctx, int64_t wait_ms, const char *what, gr_scenario_result *out)
{
    if (!gr_submission_died(ctx, wait_ms, NULL, 0))
        return false;
    crash_feedback(ctx, &ctx->subs[0], what, out);
    return true;
}

int gr_signal_submission_at(gr_ctx *ctx, int i, int sig)
{
    instance *s = started_instance(ctx, i);
    if (!s || sig <= 0 || sig >= NSIG)
        return RL_EINVAL;
    if (!rl_proc_alive(&s->proc))
        return RL_ECHILD;
    s->signalled = true;
    s->signal_ns = rl_now_ns();
    /* Unsandboxed, the leader is the program (the shell exec'd it; see
     * start_once) and our unreaped child, so its pid cannot be reused. */
    if (!s->sandboxed)
        return kill(s->proc.pid, sig) == 0 ? RL_OK : RL_ESYS;
    int rc = gr_sandbox_signal_command(s->proc.pid, sig);
    /* Gone between the look and the signal: it exited on its own, and the
     * wait will say how. */
    return rc == RL_ENOTFOUND && !rl_proc_alive(&s->proc) ? RL_ECHILD : rc;
}

int gr_signal_submission(gr_ctx *ctx, int sig)
{
    return gr_signal_submission_at(ctx, 0, sig);
}

int gr_await_submission_exit_at(gr_ctx *ctx, int i, int64_t within_ms, bool kill_at_deadline,
                                      gr_exit *out)
{
    memset(out, 0, sizeof *out);
    out->status = -1;
    instance *s = started_instance(ctx, i);
    if (!s)
        return RL_EINVAL;
    int64_t from = s->signalled ? s->signal_ns : rl_now_ns();
    int64_t until = from + within_ms * RL_NS_PER_MS;
    /* In slices, to notice an interruption (the watchdog's kill ends the
     * wait at once anyway). */
    for (;;) {
        int64_t left_ms = (until - rl_now_ns()) / RL_NS_PER_MS;
        if (left_ms <= 0 || gr_interrupted(ctx) || rl_proc_wait_exit(&s->proc, left_ms < 50 ? left_ms : 50))
            break;
    }
    out->exited = !rl_proc_alive(&s->proc);
    if (!out->exited && kill_at_deadline && !gr_interrupted(ctx)) {
        /* The group and the leader, as rl_proc_stop does, without reaping:
         * the leader keeps its pid (and the watchdog its slot) until the
         * teardown. The sandbox's init dies with unshare's SIGKILL and takes
         * the namespace along. */
        kill(-s->proc.pid, SIGKILL);
        kill(s->proc.pid, SIGKILL);
        out->killed = rl_proc_wait_exit(&s->proc, 5000);
    }
    int64_t end = out->exited ? s->proc.exit_ns : rl_now_ns();
    out->ms = (end - from) / RL_NS_PER_MS;
    if (out->exited || out->killed) {
        out->signal = rl_proc_death_signal(&s->proc);
        out->status = out->signal ? -1 : s->proc.exit_code;
        describe_submission(ctx, s, out->how, sizeof out->how);
        /* The last bytes it wrote may still be in the pipe: let the reader
         * reach the end (no line holds "\n", so this waits for the end of
         * the output, or shortly after the exit when an orphan holds it). */
        char none[2];
        rl_proc_wait_line(&s->proc, "\n", 500, none, sizeof none);
    } else {
        snprintf(out->how, sizeof out->how, "still running");
    }
    char tail[sizeof out->output + 64];
    rl_proc_output_tail(&s->proc, tail, sizeof tail);
    last_lines(tail, out->output, sizeof out->output, sizeof out->output - 8);
    return out->exited ? RL_OK : RL_ETIMEOUT;
}

int gr_await_submission_exit(gr_ctx *ctx, int64_t within_ms, bool kill_at_deadline, gr_exit *out)
{
    return gr_await_submission_exit_at(ctx, 0, within_ms, kill_at_deadline, out);
}

pid_t gr_submission_pgid(gr_ctx *ctx)
{
    instance *s = started_instance(ctx, 0);
    return s ? s->proc.pid : 0;
}

size_t gr_submission_output_tail(gr_ctx *ctx, char *buf, size_t len)
{
    instance *s = started_instance(ctx, 0);
    if (!s) {
        if (len)
            buf[0] = '\0';
        return 0;
    }
    return (size_t)rl_proc_output_tail(&s->proc, buf, len);
}

const char *gr_tag(gr_ctx *ctx)
{
    return ctx->tag;
}

void gr_note_tag(gr_ctx *ctx, const char *tag)
{
    if (gr_tag_sent(ctx, tag))
        return;
    if (ctx->ntags == ctx->captags) {
        ctx->captags = ctx->captags ? 2 * ctx->captags : 16;
        ctx->tags = rl_xrealloc(ctx->tags, ctx->captags * sizeof *ctx->tags);
    }
    ctx->tags[ctx->ntags++] = rl_xstrdup(tag);
}

bool gr_tag_sent(gr_ctx *ctx, const char *tag)
{
    for (size_t i = 0; i < ctx->ntags; i++)
        if (strcmp(ctx->tags[i], tag) == 0)
            return true;
    return false;
}

int gr_run_index(gr_ctx *ctx)
{
    return ctx->run_index;
}

int gr_run_count(gr_ctx *ctx)
{
    return ctx->opt->runs;
}

bool gr_interrupted(gr_ctx *ctx)
{
    return interrupted || gr_watchdog_fired(&ctx->wd);
}

/* ---- baseline ---- */

static int start_baseline(gr_ctx *ctx, int i, const char *listen, const char *const *extra, char *err,
                          size_t errlen)
{
    baseline *b = &ctx->baselines[i];
    char path[4096];
    snprintf(path, sizeof path, "%s/baseline", ctx->opt->bin_dir);
    snprintf(b->observer_addr, sizeof b->observer_addr, "unix:%s/observer-%d.sock", ctx->private_dir, i);
    const char *argv[32];
    size_t n = 0;
    argv[n++] = path;
    argv[n++] = "--listen";
    argv[n++] = listen;
    argv[n++] = "--observer";
    argv[n++] = b->observer_addr;
    for (size_t k = 0; extra && extra[k] && n < 31; k++)
        argv[n++] = extra[k];
    argv[n] = NULL;
    /* A socket file left by a previous baseline of this run would make
     * the bind fail. */
    unlink(b->observer_addr + strlen("unix:"));
    rl_proc_options po = {.argv = argv, .kill_with_parent = true};
    if (rl_proc_spawn(&b->proc, &po) != RL_OK) {
        snprintf(err, errlen, "cannot start %s: %s", path, strerror(errno));
        return RL_ESYS;
    }
    b->running = true;
    gr_watchdog_guard(&ctx->wd, GR_WATCHDOG_BASELINE + i, b->proc.pid);
    int rc = rl_proc_wait_ready(&b->proc, BASELINE_READY_MS, b->addr, sizeof b->addr);
    if (rc != RL_OK) {
        char tail[400], lines[240];
        rl_proc_output_tail(&b->proc, tail, sizeof tail);
        last_lines(tail, lines, sizeof lines, 200);
        snprintf(err, errlen, "the baseline (%s) did not start: %s", path, lines[0] ? lines : rl_strerror(rc));
        return rc;
    }
    int port = rl_tcp_port_of(b->addr);
    b->port = port > 0 ? port : 0;
    /* Observer and faults go through the private socket only: the
     * submission is given the TCP address, where Observer refuses. */
    b->ch = gr_channel_create(ctx, b->observer_addr, NULL);
    return RL_OK;
}

static void stop_baseline(gr_ctx *ctx, int i)
{
    baseline *b = &ctx->baselines[i];
    if (b->ch)
        grpc_channel_destroy(b->ch);
    b->ch = NULL;
    if (b->running) {
        gr_watchdog_release(&ctx->wd, GR_WATCHDOG_BASELINE + i);
        rl_proc_stop(&b->proc, BASELINE_GRACE_MS);
        rl_proc_fini(&b->proc);
    }
    b->running = false;
}

/* Starts every baseline of the run on a port of its own. A baseline that
 * fails to start is the grader's problem (seen while bin/ was being
 * rebuilt), never the submission's: each gets one retry. */
static int start_baselines(gr_ctx *ctx, char *err, size_t errlen)
{
    for (int i = 0; i < ctx->nbaselines; i++) {
        int rc = start_baseline(ctx, i, "127.0.0.1:0", NULL, err, errlen);
        if (rc != RL_OK && !interrupted) {
            stop_baseline(ctx, i);
            rl_sleep_ms(500, &interrupted);
            rc = start_baseline(ctx, i, "127.0.0.1:0", NULL, err, errlen);
        }
        if (rc != RL_OK)
            return rc;
    }
    return RL_OK;
}

int gr_restart_baseline(gr_ctx *ctx, int i, const char *const *extra_argv, char *err, size_t errlen)
{
    if (i < 0 || i >= ctx->nbaselines) {
        snprintf(err, errlen, "this run has no baseline %d (it has %d)", i, ctx->nbaselines);
        return RL_EINVAL;
    }
    char listen[64];
    snprintf(listen, sizeof listen, "127.0.0.1:%d", ctx->baselines[i].port);
    stop_baseline(ctx, i);
    /* After the watchdog fired, a new baseline would outlive its kills. */
    if (gr_interrupted(ctx)) {
        snprintf(err, errlen, "the scenario was stopped (grader watchdog or signal)");
        return RL_ECHILD;
    }
    return start_baseline(ctx, i, listen, extra_argv, err, errlen);
}

int gr_stop_baseline(gr_ctx *ctx, int i)
{
    if (i < 0 || i >= ctx->nbaselines)
        return RL_EINVAL;
    stop_baseline(ctx, i); /* keeps its port for gr_restart_baseline */
    return RL_OK;
}

/* ---- submission ---- */

/* Stops a submission started on a clashing port, without judging it. */
static void discard_submission(gr_ctx *ctx, instance *s)
{
    if (s->ch)
        grpc_channel_destroy(s->ch);
    s->ch = NULL;
    if (s->have) {
        gr_watchdog_release(&ctx->wd, GR_WATCHDOG_SUBMISSION + s->index);
        rl_proc_stop(&s->proc, DISCARD_GRACE_MS);
        rl_proc_fini(&s->proc);
    }
    s->have = false;
}

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

/* True when a socket of another process holds |port| (only listeners if
 * |listeners_only|): then the submission is not what answers there, or
 * could not bind, and nothing it did is to be judged. */
static bool port_clash(gr_ctx *ctx, instance *s, int port, bool listeners_only)
{
    int ours, foreign;
    pid_t except[GR_MAX_BASELINES];
    size_t nexcept = 0;
    for (int i = 0; i < ctx->nbaselines; i++)
        if (ctx->baselines[i].running)
            except[nexcept++] = ctx->baselines[i].proc.pid;
    if (gr_ports_holders(port, listeners_only, s->proc.pid, except, nexcept, &ours, &foreign) != RL_OK)
        return false;
    if (foreign)
        RL_DEBUG("port %d: %d socket(s) of another process, %d of the submission", port, foreign, ours);
    return foreign > 0;
}

/* One start of instance |s| on a fresh port (|first|: the first of this
 * run), or on |port| when it is not 0 (a restart), up to readiness. Returns GR_PASS when it is ready, else the verdict
 * to record with |out| filled. Sets *clash, with the submission still
 * running, when another process held the port: then nothing is judged. */
static gr_verdict start_once(gr_ctx *ctx, instance *s, bool first, int port, gr_scenario_result *out,
                             bool *clash)
{
    *clash = false;
    if (!port && gr_ports_pick(first, &port) != RL_OK) {
        gr_result(out, GR_ERROR, "cannot find a free port: %s", strerror(errno));
        return GR_ERROR;
    }
    s->port = port;
    snprintf(s->addr, sizeof s->addr, "127.0.0.1:%d", port);
    char env_listen[96], env_baseline[96], env_baselines[32 + GR_MAX_BASELINES * 64];
    snprintf(env_listen, sizeof env_listen, "RELAYLAB_LISTEN=%s", s->addr);
    snprintf(env_baseline, sizeof env_baseline, "RELAYLAB_BASELINE=%s", ctx->nbaselines ? ctx->baselines[0].addr : "");
    size_t o = (size_t)snprintf(env_baselines, sizeof env_baselines, "RELAYLAB_BASELINES=");
    for (int i = 0; i < ctx->nbaselines; i++)
        o += (size_t)snprintf(env_baselines + o, sizeof env_baselines - o, "%s%s", i ? "," : "",
                              ctx->baselines[i].addr);
    /* The exercise's own variables come after the address ones. */
    const char *env[8 + 17] = {env_listen, env_baseline, env_baselines};
    const char *sandbox_env[8 + 17] = {env_listen,  env_baseline,   env_baselines, "PATH=/usr/local/bin:/usr/bin:/bin",
                                       "HOME=/tmp", "TMPDIR=/tmp", "LANG=C.UTF-8"};
    size_t n0 = 3, m0 = 7;
    /* Node looks in NODE_PATH only after every node_modules up from the
     * script, so a folder with its own packages keeps them. */
    if (ctx->opt->node_path) {
        env[n0++] = ctx->opt->node_path;
        sandbox_env[m0++] = ctx->opt->node_path;
    }
    for (size_t k = 0, n = n0, m = m0; ctx->ex->env && ctx->ex->env[k] && k < 16; k++) {
        env[n++] = ctx->ex->env[k];
        sandbox_env[m++] = ctx->ex->env[k];
    }
    /* A simple command is exec'd by the shell, so the submission itself
     * leads the group and its exit status or signal reaches us unaltered.
     * `exec` takes no leading VAR=value words, so those go through env(1). */
    const char *sub = ctx->opt->submission;
    char *cmd = rl_xmalloc(strlen(sub) + 16);
    bool simple = strpbrk(sub, ";&|()`\n") == NULL && strncmp(sub, "exec ", 5) != 0;
    sprintf(cmd, "%s%s", !simple ? "" : starts_with_assignment(sub) ? "exec env " : "exec ", sub);
    const char *plain_argv[] = {"/bin/sh", "-c", cmd, NULL};
    /* In the sandbox (sandbox_env), only what a server needs: nothing of
     * the grader's environment; HOME and TMPDIR are the view's scratch
     * tmpfs. */
    char **sandbox_argv = ctx->opt->sandbox ? gr_sandbox_argv(ctx->opt->sandbox, cmd) : NULL;
    rl_proc_limits lim = {
        .data_bytes = (uint64_t)ctx->opt->data_limit_mb << 20,
        .cpu_seconds = SUB_CPU_SECONDS,
        .nofile = SUB_NOFILE,
        .nproc = nproc_limit(),
        .fsize_bytes = SUB_FSIZE_BYTES,
    };
    rl_proc_options po = {.argv = plain_argv, .setenv = env, .limits = &lim, .kill_with_parent = true};
    if (ctx->opt->sandbox) {
        po.argv = (const char *const *)sandbox_argv;
        po.setenv = sandbox_env;
        po.clean_env = true;
        po.no_new_privs = true;
        po.join_cgroups = s->sb.joins;
        po.fd3 = s->sb.status_w;
        /* RLIMIT_NPROC would count nobody's tasks machine-wide; the pids
         * cgroup is the limit here. */
        lim.nproc = 0;
    }
    int src = rl_proc_spawn(&s->proc, &po);
    int spawn_errno = errno;
    free(cmd);
    gr_sandbox_argv_free(sandbox_argv);
    if (src != RL_OK) {
        gr_result(out, GR_ERROR, "cannot start the submission: %s", strerror(spawn_errno));
        return GR_ERROR;
    }
    s->have = true;
    gr_watchdog_guard(&ctx->wd, GR_WATCHDOG_SUBMISSION + s->index, s->proc.pid);
    if (ctx->opt->sandbox) {
        gr_sandbox_spawned(&s->sb);
        /* The jail says whether it ran the command: its failure is the
         * sandbox's, never the submission's NOT-READY. */
        char why[512];
        if (gr_sandbox_wait_started(&s->sb, ctx->opt->ready_timeout_ms, why, sizeof why) != RL_OK) {
            gr_result(out, GR_ERROR, "%s", why);
            return GR_ERROR;
        }
        /* Measured per sandbox: a process that left the group (setsid)
         * still counts; unshare itself is not the submission. Instance 0
         * is the one measured. */
        if (s->index == 0)
            gr_sandbox_measure(&s->sb, s->proc.pid);
    }

    int64_t t0 = rl_now_ns();
    int64_t until = t0 + ctx->opt->ready_timeout_ms * RL_NS_PER_MS;
    bool accepts = false;
    /* A start that keeps hitting the sandbox's memory limit can thrash for
     * many seconds (no swap: the cgroup evicts the program's own code pages
     * and reads them back) before the kernel's OOM killer ends it, so its
     * verdict would depend on the machine. One second of it ends the start,
     * as the OOM killer would have. "Of it": new hits with no pause longer
     * than MEMORY_HIT_GAP_MS, since on a loaded machine a thrashing program
     * is not scheduled in every 20 ms sample and then adds no hit there. */
    uint64_t hits = 0, seen_hits = 0;
    int64_t hitting_since = 0, last_hit = 0;
    while (!interrupted && rl_now_ns() < until) {
        if (!rl_proc_alive(&s->proc))
            break;
        if ((accepts = tcp_accepts(port)))
            break;
        if (s->sandboxed && gr_sandbox_memory_hits(&s->sb, &hits) == RL_OK) {
            int64_t now = rl_now_ns();
            if (hits != seen_hits) {
                last_hit = now;
                if (!hitting_since)
                    hitting_since = now;
            } else if (hitting_since && now - last_hit > MEMORY_HIT_GAP_MS * RL_NS_PER_MS) {
                hitting_since = 0;
            }
            seen_hits = hits;
            if (hitting_since && rl_now_ns() - hitting_since >= MEMORY_THRASH_MS * RL_NS_PER_MS) {
                s->killed_at_memory_limit = true;
                rl_proc_stop(&s->proc, 0);
                break;
            }
        }
        rl_sleep_ms(20, &interrupted);
    }
    /* Whatever accepted must be the submission's: another program's server
     * on this port would be graded in its place. */
    if (accepts && port_clash(ctx, s, port, true)) {
        *clash = true;
        return GR_ERROR;
    }
    if (accepts) {
        s->ch = gr_channel_create(ctx, s->addr, NULL);
        if (channel_ready(s->ch, until, &s->proc)) {
            /* Again: a second listener (SO_REUSEPORT, which gRPC servers
             * set) may have joined while the channel connected. */
            if (!port_clash(ctx, s, port, true))
                return GR_PASS;
            *clash = true;
            return GR_ERROR;
        }
    }
    /* A submission that could not bind because another socket held the
     * port is not NOT-READY: check before judging. */
    if (!interrupted && port_clash(ctx, s, port, false)) {
        *clash = true;
        return GR_ERROR;
    }
    char tail[600], lines[240];
    rl_proc_output_tail(&s->proc, tail, sizeof tail);
    last_lines(tail, lines, sizeof lines, 200);
    const char *sep = lines[0] ? "; last output: " : "; it printed nothing";
    char who[48] = "the submission";
    if (ctx->ninstances > 1)
        snprintf(who, sizeof who, "instance %d of the submission", s->index + 1);
    if (interrupted) {
        gr_result(out, GR_ERROR, "interrupted while waiting for the submission to listen");
        return GR_ERROR;
    }
    if (!rl_proc_alive(&s->proc)) {
        char how[192];
        describe_submission(ctx, s, how, sizeof how);
        gr_verdict v = rl_proc_death_signal(&s->proc) ? GR_CRASH : GR_NOT_READY;
        gr_result(out, v, "%s %s before it listened on %s%s%s", who, how, s->addr, sep, lines);
        return v;
    }
    double secs = (double)(rl_now_ns() - t0) / 1e9;
    if (accepts)
        gr_result(out, GR_NOT_READY,
                        "%s accepted TCP connections on %s but no gRPC (HTTP/2) connection became ready within "
                        "%.1f s%s%s",
                        who, s->addr, secs, sep, lines);
    else
        gr_result(out, GR_NOT_READY, "%s did not listen on %s (RELAYLAB_LISTEN) within %.1f s%s%s", who,
                        s->addr, secs, sep, lines);
    return GR_NOT_READY;
}

/* Starts the submission on a fresh port until no other process holds the
 * port (a clash with a program started at the same moment, e.g. another
 * grader), at most PORT_TRIES times. Returns GR_PASS when it is ready, else
 * the verdict to record with |out| filled. */
static gr_verdict start_submission(gr_ctx *ctx, instance *s, gr_scenario_result *out)
{
    for (int i = 0; i < PORT_TRIES; i++) {
        bool clash;
        gr_verdict v = start_once(ctx, s, i == 0 && s->index == 0, 0, out, &clash);
        if (!clash)
            return v;
        s->port_clashes++;
        RL_DEBUG("port %d was taken by another process; restarting the submission on another port", s->port);
        discard_submission(ctx, s);
        if (interrupted) {
            gr_result(out, GR_ERROR, "interrupted while waiting for the submission to listen");
            return GR_ERROR;
        }
    }
    gr_result(out, GR_ERROR,
                    "another process held the submission's port in %d starts in a row (the last %d): a clash between "
                    "programs on this machine, not the submission's fault",
                    s->port_clashes, s->port);
    return GR_ERROR;
}

/* Output above this earns a note: a server that floods its log fills disks. */
#define OUTPUT_NOTE_BYTES (1024 * 1024)


/* Stops the submission. What a well-behaved server would not have needed
 * (SIGKILL after SIGTERM, megabytes of output) is noted in |res|' feedback;
 * the verdict stays the scenario's own. */
static void stop_submission(gr_ctx *ctx, instance *s, gr_scenario_result *res)
{
    if (s->ch)
        grpc_channel_destroy(s->ch);
    s->ch = NULL;
    if (s->have) {
        gr_watchdog_release(&ctx->wd, GR_WATCHDOG_SUBMISSION + s->index);
        char tail[2];
        uint64_t written = rl_proc_output_tail(&s->proc, tail, sizeof tail);
        bool was_alive = rl_proc_alive(&s->proc);
        bool killed = rl_proc_stop(&s->proc, SUBMISSION_GRACE_MS);
        rl_proc_fini(&s->proc);
        char note[160];
        if (was_alive && killed) {
            snprintf(note, sizeof note, "note: it did not exit within %d ms of SIGTERM and was killed",
                     SUBMISSION_GRACE_MS);
            gr_feedback_append(res, note);
        }
        if (s->port_clashes) {
            snprintf(note, sizeof note,
                     "note: another process held the port of %d earlier start(s); the submission was restarted on "
                     "a fresh port and judged there",
                     s->port_clashes);
            gr_feedback_append(res, note);
        }
        if (written > OUTPUT_NOTE_BYTES) {
            snprintf(note, sizeof note, "note: it wrote %.1f MiB of output (the grader keeps the first and last 4 KiB)",
                     (double)written / (1024 * 1024));
            gr_feedback_append(res, note);
        }
    }
    s->have = false;
}

int gr_restart_submission(gr_ctx *ctx, int i, gr_scenario_result *out)
{
    if (i < 0 || i >= ctx->ninstances)
        return RL_EINVAL;
    instance *s = &ctx->subs[i];
    int port = s->port;
    /* What the old one earned (a note for a SIGKILL) is not this
     * scenario's verdict: the scenario judged its exit itself. */
    gr_scenario_result scratch;
    memset(&scratch, 0, sizeof scratch);
    stop_submission(ctx, s, &scratch);
    if (i == 0)
        rl_proc_sample_by_cgroup(0, NULL, 0, NULL);
    if (s->sandboxed)
        gr_sandbox_teardown(&s->sb);
    s->signalled = false;
    s->killed_at_memory_limit = false;
    s->port_clashes = 0;
    if (gr_interrupted(ctx)) {
        gr_result(out, GR_ERROR, "the scenario was stopped (grader watchdog or signal)");
        return RL_ECHILD;
    }
    char err[512];
    if (s->sandboxed && gr_sandbox_prepare(&s->sb, (uint64_t)ctx->opt->data_limit_mb << 20, err, sizeof err) != RL_OK) {
        s->sandboxed = false;
        gr_result(out, GR_ERROR, "%s", err);
        return RL_ECHILD;
    }
    bool clash;
    gr_verdict v = start_once(ctx, s, false, port, out, &clash);
    if (clash)
        gr_result(out, GR_ERROR,
                        "another process took port %d of instance %d while it was replaced: a clash between programs "
                        "on this machine, not the submission's fault",
                        port, i + 1);
    return v == GR_PASS && !clash ? RL_OK : RL_ECHILD;
}

/* ---- the grader's private folder ---- */

/* Makes this run's private folder (mkdtemp: mode 0700, owned by the
 * grader) under $TMPDIR or /tmp, for the baselines' observer sockets. A
 * unix socket path has room for 107 bytes, so a long $TMPDIR falls back to
 * /tmp. */
static int make_private_dir(gr_ctx *ctx, char *err, size_t errlen)
{
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp || strlen(tmp) > 60)
        tmp = "/tmp";
    snprintf(ctx->private_dir, sizeof ctx->private_dir, "%s/relaylab-grader-XXXXXX", tmp);
    if (!mkdtemp(ctx->private_dir)) {
        snprintf(err, errlen, "cannot create the grader's private folder in %s: %s", tmp, strerror(errno));
        ctx->private_dir[0] = '\0';
        return RL_ESYS;
    }
    return RL_OK;
}

static void remove_private_dir(gr_ctx *ctx)
{
    if (!ctx->private_dir[0])
        return;
    for (int i = 0; i < ctx->nbaselines; i++)
        if (ctx->baselines[i].observer_addr[0])
            unlink(ctx->baselines[i].observer_addr + strlen("unix:"));
    if (rmdir(ctx->private_dir) != 0)
        RL_DEBUG("cannot remove %s: %s", ctx->private_dir, strerror(errno));
    ctx->private_dir[0] = '\0';
}


/* ---- one run of one scenario ---- */

/* The baseline died during the scenario, and the grader did not kill it. A
 * crash (SIGSEGV, SIGABRT, an exit) is the grader's own fault. A sent
 * signal is too in the sandbox, where the submission can neither see nor
 * signal the baseline; without it, the submission may have sent it, and a
 * submission that kills its downstream to turn its failures into grader
 * errors must not be excused: it fails, and the feedback says why. */
static void judge_dead_baseline(gr_ctx *ctx, int i, gr_scenario_result *res)
{
    char how[96], which[48] = "";
    rl_proc_describe(&ctx->baselines[i].proc, how, sizeof how);
    if (ctx->nbaselines > 1)
        snprintf(which, sizeof which, " (%d of %d)", i + 1, ctx->nbaselines);
    int sig = rl_proc_death_signal(&ctx->baselines[i].proc);
    bool sent = sig == SIGKILL || sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGQUIT ||
                sig == SIGUSR1 || sig == SIGUSR2 || sig == SIGALRM || sig == SIGPIPE;
    if (sent && !ctx->opt->sandbox)
        gr_result(res, GR_FAIL,
                        "the baseline%s %s during the scenario; graded without the sandbox, the grader cannot tell "
                        "who sent it, and a submission that kills its downstream is not excused",
                        which, how);
    else
        gr_result(res, GR_ERROR,
                        "the grader's baseline%s %s during the scenario (not the submission's fault)", which, how);
}

/* The first instance that died without the scenario asking it to (a
 * signal), or NULL. */
static instance *dead_instance(gr_ctx *ctx)
{
    for (int i = 0; i < ctx->ninstances; i++) {
        instance *s = &ctx->subs[i];
        if (s->have && !s->signalled && !rl_proc_alive(&s->proc))
            return s;
    }
    return NULL;
}

/* A submission holding thousands of connections to a baseline (the
 * measured attack: 24 processes of 900 idle connections each) is flooding
 * the grader's instrument, not relaying: whatever the scenario concluded
 * (its calls failing, or, before the baseline guarded its descriptors,
 * the observer silent and an ERROR of the grader's), the verdict is FAIL
 * and says so. Counted on the baselines' side, in the grader's network
 * namespace, while the submission still runs. */
static void judge_flood(gr_ctx *ctx, gr_scenario_result *res)
{
    if (!ctx->ninstances)
        return;
    int total = 0, most = 0, which = 0;
    for (int i = 0; i < ctx->nbaselines; i++) {
        int n;
        if (!ctx->baselines[i].running || ctx->baselines[i].port <= 0 ||
            gr_ports_connections(ctx->baselines[i].port, &n) != RL_OK)
            continue;
        total += n;
        if (n > most) {
            most = n;
            which = i;
        }
    }
    if (total <= GR_BASELINE_CONNECTIONS_MAX)
        return;
    char *said = rl_xstrdup(res->feedback);
    gr_verdict was = res->verdict;
    gr_result(res, GR_FAIL,
              "the submission opened %d connections to the baseline%s (%d to %s): a relay needs a few, and "
              "more than %d only exhaust the baseline's file descriptors; the scenario itself said %s: %s",
              total, ctx->nbaselines > 1 ? "s" : "", most, ctx->baselines[which].addr, GR_BASELINE_CONNECTIONS_MAX,
              gr_verdict_name(was), said);
    free(said);
}

static void run_once(const gr_exercise *ex, const gr_scenario *sc, const gr_options *opt, int run_index,
                     gr_scenario_result *res, char *output, size_t outlen)
{
    gr_ctx *ctx = rl_xcalloc(1, sizeof *ctx);
    ctx->ex = ex;
    ctx->sc = sc;
    ctx->opt = opt;
    ctx->run_index = run_index;
    gr_watchdog_init(&ctx->wd);
    snprintf(ctx->tag, sizeof ctx->tag, "%s.%s.%d.%ld", ex->name, sc->id, run_index, (long)getpid());
    memset(res, 0, sizeof *res);
    output[0] = '\0';

    char err[512];
    if (ex->baselines < 0 || ex->baselines > GR_MAX_BASELINES) {
        gr_result(res, GR_ERROR, "the exercise asks for %d baselines; the grader runs 0 to %d", ex->baselines,
                        GR_MAX_BASELINES);
        goto teardown;
    }
    ctx->nbaselines = ex->baselines;
    if (ctx->nbaselines && make_private_dir(ctx, err, sizeof err) != RL_OK) {
        gr_result(res, GR_ERROR, "%s", err);
        goto teardown;
    }
    if (start_baselines(ctx, err, sizeof err) != RL_OK) {
        gr_result(res, GR_ERROR, "%s", err);
        goto teardown;
    }
    ctx->ninstances = ex->kind != GR_SUBMISSION_COMMAND ? 0
                      : sc->instances                ? sc->instances
                      : ex->instances                ? ex->instances
                                                     : 1;
    if (ctx->ninstances > GR_MAX_INSTANCES) {
        gr_result(res, GR_ERROR, "the exercise asks for %d instances; the grader runs 1 to %d", ctx->ninstances,
                        GR_MAX_INSTANCES);
        ctx->ninstances = 0;
        goto teardown;
    }
    for (int i = 0; i < ctx->ninstances; i++) {
        instance *s = &ctx->subs[i];
        s->index = i;
        if (opt->sandbox) {
            s->sandboxed = true;
            if (gr_sandbox_prepare(&s->sb, (uint64_t)opt->data_limit_mb << 20, err, sizeof err) != RL_OK) {
                gr_result(res, GR_ERROR, "%s", err);
                goto teardown;
            }
        }
        if (start_submission(ctx, s, res) != GR_PASS)
            goto teardown;
    }

    /* The watchdog kills the children: the scenario's calls then fail at once. */
    bool wd_on = gr_watchdog_arm(&ctx->wd, WATCHDOG_MS) == RL_OK;
    int rc = sc->run(ctx, res);
    if (wd_on)
        gr_watchdog_disarm(&ctx->wd);
    if (rc < 0 && res->verdict != GR_ERROR) {
        /* A copy: the feedback is both an argument and the destination. */
        char *said = rl_xstrdup(res->feedback);
        gr_result(res, GR_ERROR, "the grader failed in this scenario (%s)%s%s", rl_strerror(rc),
                        said[0] ? ": " : "", said);
        free(said);
    }

    if (interrupted) {
        gr_result(res, GR_ERROR, "interrupted: the grader was asked to stop");
    } else if (gr_watchdog_fired(&ctx->wd)) {
        gr_result(res, GR_ERROR, "the scenario did not finish within %d s (grader watchdog)", WATCHDOG_MS / 1000);
    } else if (res->verdict != GR_CRASH && res->verdict != GR_ERROR && dead_instance(ctx)) {
        /* Dead at the end is a crash whatever the scenario concluded: an
         * answer followed by an exit is not a working server. (An exit the
         * scenario asked for with a signal is its to judge.) */
        crash_feedback(ctx, dead_instance(ctx), "during the scenario", res);
    } else {
        for (int i = 0; i < ctx->nbaselines; i++)
            if (ctx->baselines[i].running && !rl_proc_alive(&ctx->baselines[i].proc)) {
                judge_dead_baseline(ctx, i, res);
                break;
            }
    }
    if (!interrupted)
        judge_flood(ctx, res);

teardown:
    for (int i = 0; i < ctx->ninstances; i++) {
        instance *s = &ctx->subs[i];
        /* The output of the first instance that crashed or never listened. */
        if ((res->verdict == GR_CRASH || res->verdict == GR_NOT_READY) && s->have && !output[0])
            rl_proc_output_text(&s->proc, output, outlen);
        stop_submission(ctx, s, res);
    }
    for (int i = 0; i < ctx->nbaselines; i++)
        stop_baseline(ctx, i);
    /* Whatever escaped the groups (setsid, double fork) came back to us as
     * subreaper: nothing of a submission may outlive its scenario. */
    rl_proc_sample_by_cgroup(0, NULL, 0, NULL);
    for (int i = 0; i < ctx->ninstances; i++)
        if (ctx->subs[i].sandboxed)
            gr_sandbox_teardown(&ctx->subs[i].sb);
    int orphans = rl_proc_reap_orphans(NULL, 0, 3000);
    if (orphans)
        RL_DEBUG("killed %d escaped process(es) after %s/%s", orphans, ex->name, sc->id);
    remove_private_dir(ctx);
    for (size_t i = 0; i < ctx->ntags; i++)
        free(ctx->tags[i]);
    free(ctx->tags);
    gr_watchdog_fini(&ctx->wd);
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

int gr_check_only(const gr_exercise *ex, const char *only, char *err, size_t errlen)
{
    if (!only)
        return RL_OK;
    char *copy = rl_xstrdup(only);
    char *save = NULL;
    int rc = RL_OK;
    for (char *id = strtok_r(copy, ",", &save); id && rc == RL_OK; id = strtok_r(NULL, ",", &save)) {
        bool found = false;
        for (size_t i = 0; i < ex->nscenarios && !found; i++)
            found = strcmp(ex->scenarios[i].id, id) == 0;
        if (!found) {
            snprintf(err, errlen, "exercise %s has no scenario '%s'", ex->name, id);
            rc = RL_EINVAL;
        }
    }
    free(copy);
    return rc;
}

int gr_run_exercise(const gr_exercise *ex, const gr_options *opt, gr_outcome *outcomes,
                          size_t *noutcomes, char *err, size_t errlen)
{
    *noutcomes = 0;
    if (gr_check_only(ex, opt->only, err, errlen) != RL_OK)
        return RL_EINVAL;
    for (size_t i = 0; i < ex->nscenarios; i++) {
        const gr_scenario *sc = &ex->scenarios[i];
        if (!selected(opt->only, sc->id))
            continue;
        gr_outcome *o = &outcomes[(*noutcomes)++];
        memset(o, 0, sizeof *o);
        o->scenario = sc;
        o->verdict = GR_PASS;
        int64_t t0 = rl_now_ns();
        for (int r = 1; r <= opt->runs; r++) {
            if (interrupted) {
                if (o->runs == 0 || o->verdict != GR_ERROR)
                    snprintf(o->feedback, sizeof o->feedback, "interrupted: the grader was asked to stop");
                o->verdict = GR_ERROR;
                break;
            }
            gr_scenario_result res;
            char output[sizeof o->output];
            if (opt->progress)
                fprintf(stderr, "%s/%s run %d/%d ...\n", ex->name, sc->id, r, opt->runs);
            int64_t r0 = rl_now_ns();
            run_once(ex, sc, opt, r, &res, output, sizeof output);
            o->runs++;
            if (res.verdict == GR_PASS)
                o->passed++;
            /* Keep the worst run's story; on ties the first one. */
            if (o->runs == 1 || res.verdict > o->verdict) {
                o->verdict = res.verdict;
                memcpy(o->feedback, res.feedback, sizeof o->feedback);
                memcpy(o->output, output, sizeof o->output);
            }
            if (opt->progress)
                fprintf(stderr, "%s/%s run %d/%d: %s (%.1f s) %s\n", ex->name, sc->id, r, opt->runs,
                        gr_verdict_name(res.verdict), (double)(rl_now_ns() - r0) / 1e9, res.feedback);
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

int gr_install_guards(void)
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

bool gr_was_interrupted(void)
{
    return interrupted;
}
