/* submission: start (environment, argv, limits, readiness), stop, replace
 * and the verdict wording of the student's server; the scenario's
 * accessors to it; see submission.h.
 *
 * Every wait has a deadline and ends on an interruption (a signal to the
 * grader kills every child group from the handler itself). */
#include "submission.h"

#include "ports.h"
#include "rl_alloc.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_log.h"
#include "rl_proc_sample.h"
#include "rl_proc_spawn.h"
#include "rl_tcp.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* SIGTERM grace for the submission, as the brief and the handouts promise. */
#define SUBMISSION_GRACE_MS 2000
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
#define SUB_NOFILE      1024
/* How long a starting submission may keep hitting its memory limit. */
#define MEMORY_THRASH_MS  1000
#define MEMORY_HIT_GAP_MS 250
#define SUB_FSIZE_BYTES   (UINT64_C(64) << 20)
/* RLIMIT_NPROC counts the user's threads system-wide (and root is exempt),
 * so it can only stop a fork bomb if set above what the user already runs. */
#define SUB_NPROC_HEADROOM 512

/* ---- accessors ---- */

gr_instance *gr_started_instance(gr_ctx *ctx, int i)
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
    gr_instance *s = gr_started_instance(ctx, i);
    return s ? s->addr : NULL;
}

const char *gr_submission_addr(gr_ctx *ctx)
{
    return gr_submission_addr_at(ctx, 0);
}

grpc_channel *gr_submission_channel_at(gr_ctx *ctx, int i)
{
    gr_instance *s = gr_started_instance(ctx, i);
    return s ? s->ch : NULL;
}

grpc_channel *gr_submission_channel(gr_ctx *ctx)
{
    return gr_submission_channel_at(ctx, 0);
}

bool gr_submission_alive_at(gr_ctx *ctx, int i)
{
    gr_instance *s = gr_started_instance(ctx, i);
    return s && rl_proc_alive(&s->proc);
}

bool gr_submission_alive(gr_ctx *ctx)
{
    return gr_submission_alive_at(ctx, 0);
}

void gr_submission_describe_limit(char *how, size_t howlen, bool thrashed, bool oom_killed, long long limit_mb)
{
    size_t n = strlen(how);
    if (thrashed)
        snprintf(how + n, howlen - n, " (by the grader, after %d ms of hitting the sandbox's memory limit of %lld MiB)",
                 MEMORY_THRASH_MS, limit_mb);
    else if (oom_killed)
        snprintf(how + n, howlen - n, " at the sandbox's memory limit of %lld MiB", limit_mb);
}

void gr_submission_describe(gr_ctx *ctx, gr_instance *s, char *how, size_t howlen)
{
    rl_proc_describe(&s->proc, how, howlen);
    bool oom = !s->killed_at_memory_limit && s->sandboxed && rl_proc_death_signal(&s->proc) == SIGKILL &&
               gr_sandbox_oom_kills(&s->sb) > 0;
    gr_submission_describe_limit(how, howlen, s->killed_at_memory_limit, oom, (long long)ctx->opt->data_limit_mb);
}

/* "the submission" when it is the only instance, "instance 2 of the
 * submission" otherwise. */
static void instance_name(const gr_ctx *ctx, const gr_instance *s, char *who, size_t len)
{
    if (ctx->ninstances > 1)
        snprintf(who, len, "instance %d of the submission", s->index + 1);
    else
        snprintf(who, len, "the submission");
}

bool gr_submission_died(gr_ctx *ctx, int64_t wait_ms, char *how, size_t howlen)
{
    gr_instance *s = gr_started_instance(ctx, 0);
    if (!s || !rl_proc_wait_exit(&s->proc, wait_ms))
        return false;
    if (how)
        gr_submission_describe(ctx, s, how, howlen);
    return true;
}

void gr_submission_crash_feedback(gr_ctx *ctx, gr_instance *s, const char *what, gr_scenario_result *out)
{
    char how[192], tail[600], who[48];
    gr_submission_describe(ctx, s, how, sizeof how);
    rl_proc_output_tail(&s->proc, tail, sizeof tail);
    instance_name(ctx, s, who, sizeof who);
    gr_crash_result(out, who, how, what, tail, GR_SANDBOX_PIDS_MAX);
}

bool gr_crash_check(gr_ctx *ctx, int64_t wait_ms, const char *what, gr_scenario_result *out)
{
    if (!gr_submission_died(ctx, wait_ms, NULL, 0))
        return false;
    gr_submission_crash_feedback(ctx, &ctx->subs[0], what, out);
    return true;
}

pid_t gr_submission_pgid(gr_ctx *ctx)
{
    gr_instance *s = gr_started_instance(ctx, 0);
    return s ? s->proc.pid : 0;
}

size_t gr_submission_output_tail(gr_ctx *ctx, char *buf, size_t len)
{
    gr_instance *s = gr_started_instance(ctx, 0);
    if (!s) {
        if (len)
            buf[0] = '\0';
        return 0;
    }
    return (size_t)rl_proc_output_tail(&s->proc, buf, len);
}

/* ---- starting ---- */

/* Stops a submission started on a clashing port, without judging it. */
static void discard_submission(gr_ctx *ctx, gr_instance *s)
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

/* True when a socket of another process holds |port| (only listeners if
 * |listeners_only|): then the submission is not what answers there, or
 * could not bind, and nothing it did is to be judged. */
static bool port_clash(gr_ctx *ctx, gr_instance *s, int port, bool listeners_only)
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

static bool tcp_accepts(int port)
{
    rl_tcp_answer a;
    return rl_tcp_probe(port, 200, &a) == RL_OK && a == RL_TCP_ACCEPTED;
}

/* Waits until |ch| is READY or |until_ns|, kicking it to connect. */
static bool channel_ready(grpc_channel *ch, int64_t until_ns, rl_proc *watch)
{
    grpc_completion_queue *cq = grpc_completion_queue_create_for_next(NULL);
    grpc_connectivity_state st = grpc_channel_check_connectivity_state(ch, 1);
    bool ok = false;
    static int watch_tag;
    while (!gr_driver_interrupted) {
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

char *gr_submission_command(const char *sub)
{
    /* One rule for every program that starts a submission-like command
     * (lib/rl_proc_spawn.h): the grader, the benches and the lab. */
    char *cmd = NULL;
    if (rl_proc_command_text(sub, &cmd) != RL_OK)
        cmd = rl_xstrdup("");
    return cmd;
}

/* The argv/env/limits building of a spawn, in one place: the submission's
 * start is the only user here (bench/ and lab/ start submission-like
 * commands through lib/rl_proc). */
void gr_submission_launch_init(gr_ctx *ctx, gr_instance *s, gr_launch *l)
{
    memset(l, 0, sizeof *l);
    snprintf(l->env_listen, sizeof l->env_listen, "RELAYLAB_LISTEN=%s", s->addr);
    snprintf(l->env_baseline, sizeof l->env_baseline, "RELAYLAB_BASELINE=%s",
             ctx->nbaselines ? ctx->baselines[0].addr : "");
    size_t o = (size_t)snprintf(l->env_baselines, sizeof l->env_baselines, "RELAYLAB_BASELINES=");
    for (int i = 0; i < ctx->nbaselines; i++)
        o += (size_t)snprintf(l->env_baselines + o, sizeof l->env_baselines - o, "%s%s", i ? "," : "",
                              ctx->baselines[i].addr);
    /* The exercise's own variables come after the address ones. In the
     * sandbox (sandbox_env), only what a server needs: nothing of the
     * grader's environment; HOME and TMPDIR are the view's scratch tmpfs. */
    const char *fixed[] = {l->env_listen, l->env_baseline, l->env_baselines};
    const char *sandbox_fixed[] = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", "TMPDIR=/tmp", "LANG=C.UTF-8"};
    size_t nenv = 0, nsandbox_env = 0;
    for (size_t k = 0; k < 3; k++)
        l->env[nenv++] = l->sandbox_env[nsandbox_env++] = fixed[k];
    for (size_t k = 0; k < 4; k++)
        l->sandbox_env[nsandbox_env++] = sandbox_fixed[k];
    /* Node looks in NODE_PATH only after every node_modules up from the
     * script, so a folder with its own packages keeps them. */
    if (ctx->opt->node_path)
        l->env[nenv++] = l->sandbox_env[nsandbox_env++] = ctx->opt->node_path;
    for (size_t k = 0; ctx->ex->env && ctx->ex->env[k] && k < 15; k++)
        l->env[nenv++] = l->sandbox_env[nsandbox_env++] = ctx->ex->env[k];
    if (ctx->world_env)
        l->env[nenv++] = l->sandbox_env[nsandbox_env++] = ctx->world_env;

    l->cmd = gr_submission_command(ctx->opt->submission);
    l->plain_argv[0] = "/bin/sh";
    l->plain_argv[1] = "-c";
    l->plain_argv[2] = l->cmd;
    l->sandbox_argv = ctx->opt->sandbox ? gr_sandbox_argv(ctx->opt->sandbox, l->cmd) : NULL;
    l->lim = (rl_proc_limits){
        .data_bytes = (uint64_t)ctx->opt->data_limit_mb << 20,
        .cpu_seconds = SUB_CPU_SECONDS,
        .nofile = SUB_NOFILE,
        .nproc = nproc_limit(),
        .fsize_bytes = SUB_FSIZE_BYTES,
    };
    l->po = (rl_proc_options){.argv = l->plain_argv, .setenv = l->env, .limits = &l->lim, .kill_with_parent = true};
    if (ctx->opt->sandbox) {
        l->po.argv = (const char *const *)l->sandbox_argv;
        l->po.setenv = l->sandbox_env;
        l->po.clean_env = true;
        l->po.no_new_privs = true;
        l->po.join_cgroups = s->sb.joins;
        l->po.fd3 = s->sb.status_w;
        l->po.fd4 = s->sb.tree_fd > 0 ? s->sb.tree_fd : 0;
        /* RLIMIT_NPROC would count nobody's tasks machine-wide; the pids
         * cgroup is the limit here. */
        l->lim.nproc = 0;
    }
}

void gr_submission_launch_fini(gr_launch *l)
{
    free(l->cmd);
    l->cmd = NULL;
    gr_sandbox_argv_free(l->sandbox_argv);
    l->sandbox_argv = NULL;
}

/* Spawns instance |s| (s->addr set) and, in the sandbox, waits until the
 * jail ran its command. Returns GR_PASS, or GR_ERROR with |out| filled. */
static gr_verdict spawn_instance(gr_ctx *ctx, gr_instance *s, gr_scenario_result *out)
{
    if (ctx->opt->sandbox) {
        /* The folder as it was checked, cloned for this run alone. */
        if (s->sb.tree_fd >= 0)
            close(s->sb.tree_fd);
        s->sb.tree_fd = gr_sandbox_tree(ctx->opt->sandbox);
        if (s->sb.tree_fd < 0 && errno) {
            gr_result(out, GR_ERROR, "cannot show the submission's folder in the sandbox (open_tree): %s",
                      strerror(errno));
            return GR_ERROR;
        }
    }
    gr_launch l;
    gr_submission_launch_init(ctx, s, &l);
    int src = rl_proc_spawn(&s->proc, &l.po);
    int spawn_errno = errno;
    gr_submission_launch_fini(&l);
    if (src != RL_OK) {
        gr_result(out, GR_ERROR, "cannot start the submission: %s", strerror(spawn_errno));
        return GR_ERROR;
    }
    s->have = true;
    gr_watchdog_guard(&ctx->wd, GR_WATCHDOG_SUBMISSION + s->index, s->proc.pid);
    if (!ctx->opt->sandbox)
        return GR_PASS;
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
    return GR_PASS;
}

bool gr_limit_watch_sample(gr_limit_watch *w, uint64_t hits, int64_t now_ns)
{
    if (hits != w->seen_hits) {
        w->last_hit = now_ns;
        if (!w->hitting_since)
            w->hitting_since = now_ns;
    } else if (w->hitting_since && now_ns - w->last_hit > MEMORY_HIT_GAP_MS * RL_NS_PER_MS) {
        w->hitting_since = 0;
    }
    w->seen_hits = hits;
    return w->hitting_since && now_ns - w->hitting_since >= MEMORY_THRASH_MS * RL_NS_PER_MS;
}

bool gr_limit_watch_still_hitting(const gr_limit_watch *w, int64_t now_ns)
{
    return w->last_hit && now_ns - w->last_hit <= MEMORY_THRASH_MS * RL_NS_PER_MS;
}

/* Samples |s|'s memory-limit hits into |w|; true when it has thrashed. */
static bool thrashing(gr_instance *s, gr_limit_watch *w)
{
    uint64_t hits = 0;
    if (!s->sandboxed || gr_sandbox_memory_hits(&s->sb, &hits) != RL_OK)
        return false;
    return gr_limit_watch_sample(w, hits, rl_now_ns());
}

/* Polls until something accepts on |port|, |until_ns|, |s|'s exit, an
 * interruption, or a thrashing start (which it stops). Returns true when
 * something accepted. */
static bool await_listener(gr_instance *s, int port, int64_t until_ns)
{
    gr_limit_watch t = {0};
    while (!gr_driver_interrupted && rl_now_ns() < until_ns) {
        if (!rl_proc_alive(&s->proc))
            break;
        if (tcp_accepts(port))
            return true;
        if (thrashing(s, &t)) {
            s->killed_at_memory_limit = true;
            rl_proc_stop(&s->proc, 0);
            break;
        }
        rl_sleep_ms(20, &gr_driver_interrupted);
    }
    /* Out of time while still hitting the memory limit: the limit is what
     * kept it from listening, whatever the machine's speed. A loaded
     * machine schedules it too seldom for its hits to count as thrashing
     * above, so it is ended as the thrash rule would. */
    if (!gr_driver_interrupted && rl_proc_alive(&s->proc) && gr_limit_watch_still_hitting(&t, rl_now_ns())) {
        s->killed_at_memory_limit = true;
        rl_proc_stop(&s->proc, 0);
    }
    return false;
}

/* Polls the exercise's world (a submission that dials out) until it says
 * the submission started, |until_ns|, its exit or an interruption. */
static bool await_world(gr_ctx *ctx, gr_instance *s, int64_t until_ns)
{
    while (!gr_driver_interrupted && rl_now_ns() < until_ns && rl_proc_alive(&s->proc)) {
        if (ctx->ex->world->ready(ctx->world))
            return true;
        rl_sleep_ms(20, &gr_driver_interrupted);
    }
    return false;
}

gr_verdict gr_submission_start_verdict(const gr_start_seen *o, gr_scenario_result *out)
{
    const char *sep = o->lines[0] ? "; last output: " : "; it printed nothing";
    if (o->interrupted) {
        gr_result(out, GR_ERROR, "interrupted while waiting for the submission to listen");
        return GR_ERROR;
    }
    if (o->exited) {
        gr_verdict v = o->death_signal ? GR_CRASH : GR_NOT_READY;
        if (o->world)
            gr_result(out, v, "%s %s before it was ready (it %s)%s%s", o->who, o->how, o->world_not_ready, sep,
                      o->lines);
        else
            gr_result(out, v, "%s %s before it listened on %s%s%s", o->who, o->how, o->addr, sep, o->lines);
        return v;
    }
    if (o->world)
        gr_result(out, GR_NOT_READY, "%s %s within %.1f s%s%s", o->who, o->world_not_ready, o->seconds, sep, o->lines);
    else if (o->accepts)
        gr_result(out, GR_NOT_READY,
                  "%s accepted TCP connections on %s but no gRPC (HTTP/2) connection became ready within "
                  "%.1f s%s%s",
                  o->who, o->addr, o->seconds, sep, o->lines);
    else
        gr_result(out, GR_NOT_READY, "%s did not listen on %s (RELAYLAB_LISTEN) within %.1f s%s%s", o->who, o->addr,
                  o->seconds, sep, o->lines);
    return GR_NOT_READY;
}

/* The verdict of instance |s|'s start begun at |t0_ns| that did not become
 * ready: what the driver sees now, worded by gr_submission_start_verdict. */
static gr_verdict judge_start(gr_ctx *ctx, gr_instance *s, bool accepts, int64_t t0_ns, gr_scenario_result *out)
{
    char tail[4096], lines[240], who[48], how[192] = ""; /* a stack's why may lie 2 KiB up */
    rl_proc_output_tail(&s->proc, tail, sizeof tail);
    gr_last_lines(tail, lines, sizeof lines, 200);
    instance_name(ctx, s, who, sizeof who);
    gr_start_seen seen = {
        .who = who,
        .addr = s->addr,
        .world = ctx->ex->world != NULL,
        .world_not_ready = ctx->ex->world ? ctx->ex->world->not_ready : NULL,
        .interrupted = gr_driver_interrupted,
        .how = how,
        .accepts = accepts,
        .lines = lines,
    };
    if (!seen.interrupted && !rl_proc_alive(&s->proc)) {
        seen.exited = true;
        gr_submission_describe(ctx, s, how, sizeof how);
        seen.death_signal = rl_proc_death_signal(&s->proc);
    }
    seen.seconds = (double)(rl_now_ns() - t0_ns) / 1e9;
    return gr_submission_start_verdict(&seen, out);
}

/* One start of instance |s| on a fresh port (|first|: the first of this
 * run), or on |port| when it is not 0 (a restart), up to readiness. Returns
 * GR_PASS when it is ready, else the verdict to record with |out| filled.
 * Sets *clash, with the submission still running, when another process
 * held the port: then nothing is judged. */
static gr_verdict start_once(gr_ctx *ctx, gr_instance *s, bool first, int port, gr_scenario_result *out, bool *clash)
{
    *clash = false;
    if (!port && gr_ports_pick(first, &port) != RL_OK) {
        gr_result(out, GR_ERROR, "cannot find a free port: %s", strerror(errno));
        return GR_ERROR;
    }
    s->port = port;
    snprintf(s->addr, sizeof s->addr, "127.0.0.1:%d", port);
    if (spawn_instance(ctx, s, out) != GR_PASS)
        return GR_ERROR;
    int64_t t0 = rl_now_ns();
    int64_t until = t0 + ctx->opt->ready_timeout_ms * RL_NS_PER_MS;
    const gr_world_ops *world = ctx->ex->world;
    if (world && await_world(ctx, s, until))
        return GR_PASS;
    bool accepts = !world && await_listener(s, port, until);
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
    if (!world && !gr_driver_interrupted && port_clash(ctx, s, port, false)) {
        *clash = true;
        return GR_ERROR;
    }
    return judge_start(ctx, s, accepts, t0, out);
}

/* Starts the submission on a fresh port until no other process holds the
 * port (a clash with a program started at the same moment, e.g. another
 * grader), at most PORT_TRIES times. Returns GR_PASS when it is ready, else
 * the verdict to record with |out| filled. */
gr_verdict gr_submission_start(gr_ctx *ctx, gr_instance *s, gr_scenario_result *out)
{
    for (int i = 0; i < PORT_TRIES; i++) {
        bool clash;
        gr_verdict v = start_once(ctx, s, i == 0 && s->index == 0, 0, out, &clash);
        if (!clash)
            return v;
        s->port_clashes++;
        RL_DEBUG("port %d was taken by another process; restarting the submission on another port", s->port);
        discard_submission(ctx, s);
        if (gr_driver_interrupted) {
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

/* ---- stopping and replacing ---- */

/* Output above this earns a note: a server that floods its log fills disks. */
#define OUTPUT_NOTE_BYTES (UINT64_C(1024) * 1024)

#define GR_STR_(x) #x
#define GR_STR(x)  GR_STR_(x)

/* Puts |what| before |res|' feedback: a limit the sandbox enforced is what
 * the student must read first, whatever the scenario made of its effects
 * (a fork bomb's NOT-READY or TIMEOUT otherwise reads as the exercise's
 * usual advice). */
static void lead_feedback(gr_scenario_result *res, const char *what)
{
    if (strstr(res->feedback, what))
        return;
    char *was = rl_xstrdup(res->feedback);
    size_t n = strlen(what);
    bool stop = n && (what[n - 1] == '.' || what[n - 1] == '?');
    snprintf(res->feedback, sizeof res->feedback, "%s%s%s", what, !was[0] ? "" : stop ? " " : ". ", was);
    free(was);
}

/* Names each of the sandbox's limits instance |s| reached (issue 34): the
 * task limit (pids.events), the memory limit (the OOM killer's kills,
 * memory.oom_control or memory.events) and the file size limit (the leader
 * killed by SIGXFSZ). Read before the cgroups go. */
static void name_limits(gr_ctx *ctx, gr_instance *s, gr_scenario_result *res)
{
    char what[256];
    uint64_t hits = 0;
    bool threads_said = strstr(res->feedback, "limit of " GR_STR(GR_SANDBOX_PIDS_MAX) " tasks") != NULL;
    if (s->sandboxed && !threads_said && gr_sandbox_task_limit_hits(&s->sb, &hits) == RL_OK && hits > 0) {
        snprintf(what, sizeof what,
                 "limit: it reached the sandbox's task limit of %d processes and threads (the kernel refused it a "
                 "new one %llu time(s)): a fork bomb, or a thread or process per call without a bound?",
                 GR_SANDBOX_PIDS_MAX, (unsigned long long)hits);
        lead_feedback(res, what);
    }
    /* The memory limit by the OOM killer's kills, not memory.failcnt: the
     * cgroup counts page cache, so a healthy program at a tight limit hits
     * it too (reclaim). Named already when it ended the submission itself
     * (describe_submission); this names a worker the kernel killed. */
    int oom = s->sandboxed ? gr_sandbox_oom_kills(&s->sb) : 0;
    if (oom > 0 && !strstr(res->feedback, "memory limit")) {
        snprintf(what, sizeof what,
                 "limit: it reached the sandbox's memory limit of %lld MiB (the OOM killer ended %d of its "
                 "processes)",
                 (long long)ctx->opt->data_limit_mb, oom);
        lead_feedback(res, what);
    }
    if (s->have && !rl_proc_alive(&s->proc) && rl_proc_death_signal(&s->proc) == SIGXFSZ) {
        snprintf(what, sizeof what, "limit: it reached the sandbox's file size limit of %llu MiB (SIGXFSZ)",
                 (unsigned long long)(SUB_FSIZE_BYTES >> 20));
        lead_feedback(res, what);
    }
}

/* Stops the submission. What a well-behaved server would not have needed
 * (SIGKILL after SIGTERM, megabytes of output) is noted in |res|' feedback;
 * the verdict stays the scenario's own. */
void gr_submission_stop(gr_ctx *ctx, gr_instance *s, gr_scenario_result *res)
{
    if (s->tallied)
        rl_wait_tally_fini(&s->signal_wait);
    s->tallied = false;
    if (s->ch)
        grpc_channel_destroy(s->ch);
    s->ch = NULL;
    if (s->have) {
        gr_watchdog_release(&ctx->wd, GR_WATCHDOG_SUBMISSION + s->index);
        name_limits(ctx, s, res);
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
    gr_instance *s = &ctx->subs[i];
    int port = s->port;
    /* What the old one earned (a note for a SIGKILL) is not this
     * scenario's verdict: the scenario judged its exit itself. */
    gr_scenario_result scratch;
    memset(&scratch, 0, sizeof scratch);
    gr_submission_stop(ctx, s, &scratch);
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

/* The first instance that died without the scenario asking it to (a
 * signal), or NULL. */
gr_instance *gr_submission_dead(gr_ctx *ctx)
{
    for (int i = 0; i < ctx->ninstances; i++) {
        gr_instance *s = &ctx->subs[i];
        if (s->have && !s->signalled && !rl_proc_alive(&s->proc))
            return s;
    }
    return NULL;
}
