/* baselines: start, restart, stop and the verdicts on the run's baselines
 * (a baseline dead during the scenario, a submission flooding them); see
 * baselines.h. Every wait has a deadline and ends on an interruption. */
#include "baselines.h"

#include "ports.h"
#include "rl_alloc.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_tcp.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BASELINE_GRACE_MS 500
#define BASELINE_READY_MS 10000

_Static_assert(GR_MAX_BASELINES <= GR_WATCHDOG_MAX_BASELINES, "every baseline needs a watchdog slot");

int gr_baseline_count(gr_ctx *ctx)
{
    return ctx->nbaselines;
}

/* Baseline |i| while it runs, else NULL. */
static gr_baseline *running_baseline(gr_ctx *ctx, int i)
{
    if (i < 0 || i >= ctx->nbaselines || !ctx->baselines[i].running)
        return NULL;
    return &ctx->baselines[i];
}

const char *gr_baseline_addr(gr_ctx *ctx, int i)
{
    gr_baseline *b = running_baseline(ctx, i);
    return b ? b->addr : NULL;
}

pid_t gr_baseline_pid(gr_ctx *ctx, int i)
{
    gr_baseline *b = running_baseline(ctx, i);
    return b ? b->proc.pid : 0;
}

grpc_channel *gr_baseline_channel(gr_ctx *ctx, int i)
{
    gr_baseline *b = running_baseline(ctx, i);
    return b ? b->ch : NULL;
}

/* ---- start and stop ---- */

static int start_baseline(gr_ctx *ctx, int i, const char *listen, const char *const *extra, char *err, size_t errlen)
{
    gr_baseline *b = &ctx->baselines[i];
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
        gr_last_lines(tail, lines, sizeof lines, 200);
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
    gr_baseline *b = &ctx->baselines[i];
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

/* Holds baseline |i|'s port (rl_tcp_hold). */
static void hold_port(gr_baseline *b)
{
    if (!b->held && b->port > 0)
        b->held = rl_tcp_hold(b->port, &b->held_fd) == RL_OK;
}

static void release_port(gr_baseline *b)
{
    if (b->held)
        close(b->held_fd);
    b->held = false;
}

/* Stops baseline |i| and holds its port at once. Graders run side by side
 * (grade-class), and a server of another one, started on port 0, was
 * handed a stopped baseline's port and answered for it. The baseline does
 * not share its port (rl_server.h), so the hold is taken once it is gone:
 * left open is the instant between its exit and the bind, no longer the
 * whole time it is down. */
static void stop_holding_port(gr_ctx *ctx, int i)
{
    stop_baseline(ctx, i);
    hold_port(&ctx->baselines[i]);
}

/* Starts every baseline of the run on a port of its own. A baseline that
 * fails to start is the grader's problem (seen while bin/ was being
 * rebuilt), never the submission's: each gets one retry. */
int gr_baselines_start(gr_ctx *ctx, char *err, size_t errlen)
{
    for (int i = 0; i < ctx->nbaselines; i++) {
        int rc = start_baseline(ctx, i, "127.0.0.1:0", NULL, err, errlen);
        if (rc != RL_OK && !gr_driver_interrupted) {
            stop_baseline(ctx, i);
            rl_sleep_ms(500, &gr_driver_interrupted);
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
    stop_holding_port(ctx, i);
    /* After the watchdog fired, a new baseline would outlive its kills. */
    if (gr_interrupted(ctx)) {
        snprintf(err, errlen, "the scenario was stopped (grader watchdog or signal)");
        return RL_ECHILD;
    }
    /* The new baseline binds beside the hold; the hold ends once it
     * listens (or with the run, if it could not start). */
    int rc = start_baseline(ctx, i, listen, extra_argv, err, errlen);
    if (rc == RL_OK)
        release_port(&ctx->baselines[i]);
    return rc;
}

int gr_stop_baseline(gr_ctx *ctx, int i)
{
    if (i < 0 || i >= ctx->nbaselines)
        return RL_EINVAL;
    stop_holding_port(ctx, i); /* for gr_restart_baseline, and nobody else */
    return RL_OK;
}

void gr_baselines_stop(gr_ctx *ctx)
{
    for (int i = 0; i < ctx->nbaselines; i++) {
        stop_baseline(ctx, i);
        release_port(&ctx->baselines[i]);
    }
}

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
        gr_result(res, GR_ERROR, "the grader's baseline%s %s during the scenario (not the submission's fault)", which,
                  how);
}

void gr_baselines_judge_dead(gr_ctx *ctx, gr_scenario_result *res)
{
    for (int i = 0; i < ctx->nbaselines; i++)
        if (ctx->baselines[i].running && !rl_proc_alive(&ctx->baselines[i].proc)) {
            judge_dead_baseline(ctx, i, res);
            break;
        }
}

/* A submission holding thousands of connections to a baseline (the
 * measured attack: 24 processes of 900 idle connections each) is flooding
 * the grader's instrument, not relaying: whatever the scenario concluded
 * (its calls failing, or, before the baseline guarded its descriptors,
 * the observer silent and an ERROR of the grader's), the verdict is FAIL
 * and says so. Counted on the baselines' side, in the grader's network
 * namespace, while the submission still runs. */
void gr_baselines_judge_flood(gr_ctx *ctx, gr_scenario_result *res)
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
