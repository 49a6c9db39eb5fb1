/* ex_keepalive: the keepalive exercise. The submission is a channel config,
 * judged in the exercise's world (config_check.h): the world's intermediary,
 * call deadline and fixed server args, whatever the file declares. Its rules
 * are checked first; then live runs on the lab's clock: a baseline with the
 * server args, behind an intermediary that silently stops forwarding a
 * connection idle for LAB_IDLE_MS, and a C-core client with the client args.
 * A world with a slower intermediary (the field's minutes) has every
 * keepalive duration scaled down by the same factor, so the ratios that
 * decide the rules hold; feedback quotes the config's own numbers. The
 * verdicts are keepalive_judge.c's, from what the live runs measured. */
#include "config_check.h"
#include "exercise.h"
#include "keepalive_figure.h"
#include "keepalive_judge.h"
#include "worlds/rl_intermediary.h"
#include "relaylab.pb-c.h"
#include "chancfg/rl_chancfg.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_log.h"
#include "rl_probe.h"
#include "run.h"
#include "scenario.h"

#include <grpc/support/log.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LAB_IDLE_MS   4000                /* the lab NAT's idle timeout: a world's slower one is scaled to it */
#define QUIET_MS      GR_KA_QUIET_MS      /* idle gap, and the silent call's length */
#define GOAWAY_RUN_MS GR_KA_GOAWAY_RUN_MS /* how long no-goaway keeps the connection busy and idle */

/* grpc.client_idle_timeout_ms is here because the checker accepts it as a
 * way to keep connections from the intermediary's idle cut-off (the client
 * drops an idle connection first): the live run must give it its chance. */
static const char *const client_keys[] = {
    "grpc.keepalive_time_ms",
    "grpc.keepalive_timeout_ms",
    "grpc.keepalive_permit_without_calls",
    "grpc.http2.max_pings_without_data",
    "grpc.client_idle_timeout_ms",
};
static const char *const server_keys[] = {
    "grpc.http2.min_ping_interval_without_data_ms",
    "grpc.keepalive_permit_without_calls",
    "grpc.http2.max_ping_strikes",
    "grpc.keepalive_time_ms",
    "grpc.keepalive_timeout_ms",
    "grpc.max_connection_idle_ms",
    "grpc.max_connection_age_ms",
    "grpc.max_connection_age_grace_ms",
};
#define NCLIENT (sizeof client_keys / sizeof *client_keys)
#define NSERVER (sizeof server_keys / sizeof *server_keys)

static bool is_duration(const char *key)
{
    size_t n = strlen(key);
    return n > 3 && strcmp(key + n - 3, "_ms") == 0;
}

/* Connection age and idle limits re-spread load; they are not part of the
 * keepalive rules, and scaling them would turn a declared 10-minute age into
 * seconds that cut the lab's 10 s calls short. They keep their own values. */
static bool scales(const char *key)
{
    return is_duration(key) && !strstr(key, "max_connection_");
}

/* Scaling must not make a ping's timeout so short that scheduling noise on a
 * loaded machine looks like a dead path: timeouts keep at least this. */
#define MIN_SCALED_TIMEOUT_MS 1000

/* A configured value, scaled down when it is a keepalive duration. */
static bool scaled(const rl_chancfg *cfg, rl_chancfg_side side, const char *key, double k, int64_t *out)
{
    bool configured = false;
    int64_t v;
    if (rl_chancfg_effective_int(cfg, side, key, &v, &configured) != RL_OK || !configured)
        return false;
    if (scales(key) && v != INT_MAX && k > 1.0) {
        int64_t floor = strstr(key, "timeout") ? MIN_SCALED_TIMEOUT_MS : 1;
        v = (int64_t)(v / k);
        if (v < floor)
            v = floor;
    }
    *out = v;
    return true;
}

/* gRPC logs the GOAWAY it gets; that line is how the client side learns of
 * too_many_pings without a call in flight. */
static atomic_int too_many_pings;
/* When the first such line came (CLOCK_MONOTONIC ns, 0: none): the
 * no-goaway picture marks it. */
static _Atomic int64_t too_many_pings_ns;

static void log_hook(gpr_log_func_args *args)
{
    if (strstr(args->message, "too_many_pings")) {
        int64_t none = 0;
        atomic_compare_exchange_strong(&too_many_pings_ns, &none, rl_now_ns());
        atomic_store(&too_many_pings, 1);
    }
}

/* Keeps the client's I/O and timers polled for |ms| (keepalive only runs
 * while some thread polls), watching the channel's state meanwhile. */
static void idle_for(grpc_channel *ch, int64_t ms)
{
    grpc_completion_queue *cq = grpc_completion_queue_create_for_next(NULL);
    int64_t until = rl_now_ns() + ms * RL_NS_PER_MS;
    int watching = 0;
    while (rl_now_ns() < until) {
        if (!watching) {
            grpc_connectivity_state st = grpc_channel_check_connectivity_state(ch, 0);
            grpc_channel_watch_connectivity_state(ch, st, rl_ns_to_deadline(until), cq, &watching);
            watching = 1;
        }
        grpc_event ev = grpc_completion_queue_next(cq, rl_ns_to_deadline(until), NULL);
        if (ev.type == GRPC_OP_COMPLETE)
            watching = 0;
    }
    /* The last watch ends at |until|: collect it before the queue goes. */
    if (watching)
        grpc_completion_queue_next(cq, rl_deadline_after_ms(1000), NULL);
    grpc_completion_queue_shutdown(cq);
    while (grpc_completion_queue_next(cq, rl_deadline_after_ms(1000), NULL).type != GRPC_QUEUE_SHUTDOWN)
        ;
    grpc_completion_queue_destroy(cq);
}

static void call_baseline(grpc_channel *ch, const char *method, const ProtobufCMessage *req, int64_t budget_ms,
                          gr_ka_call *out)
{
    rl_probe_call c;
    out->status = GRPC_STATUS_UNKNOWN;
    out->details[0] = '\0';
    /* No verdict from the call itself: the scenario judges its status. */
    if (gr_scenario_call(&c, ch, method, req, rl_now_ns() + budget_ms * RL_NS_PER_MS, NULL) == 0) {
        out->status = c.batch.status;
        rl_probe_call_details(&c, out->details, sizeof out->details);
    }
    out->ms = (rl_now_ns() - c.start_ns) / RL_NS_PER_MS;
    rl_probe_call_fini(&c);
}

/* One live run's setup: the restarted baseline with the server args, the
 * lab NAT in front of it, the client channel, and the log hook. */
typedef struct live_env {
    gr_config_env ce; /* the submission in the exercise's world */
    rl_chancfg *cfg;  /* ce.cfg */
    double k;         /* world time / lab time, >= 1 */
    int64_t idle_ms;  /* the world's intermediary timeout */
    int64_t nat_ms;   /* the lab NAT's: idle_ms / k */
    const char *kind;
    rl_intermediary *im;
    grpc_channel *ch;
    int64_t real_ka; /* config's client keepalive time, INT_MAX: off */
} live_env;

/* Sets up |env|. Returns 0, or GR_DECIDED. End it with
 * live_done either way. */
static int live_open(gr_ctx *ctx, live_env *env, gr_scenario_result *out)
{
    memset(env, 0, sizeof *env);
    if (gr_config_open(ctx, "keepalive", &env->ce, out))
        return GR_DECIDED;
    env->cfg = env->ce.cfg;
    /* gr_config_world made sure the world has an intermediary. */
    rl_chancfg_intermediary(env->cfg, &env->idle_ms, &env->kind);
    env->k = env->idle_ms > LAB_IDLE_MS ? (double)env->idle_ms / LAB_IDLE_MS : 1.0;
    env->nat_ms = env->idle_ms > LAB_IDLE_MS ? LAB_IDLE_MS : env->idle_ms;
    env->real_ka = INT_MAX;
    rl_chancfg_effective_int(env->cfg, RL_CHANCFG_CLIENT, "grpc.keepalive_time_ms", &env->real_ka, NULL);

    char argbuf[NSERVER][128];
    const char *argv[2 * NSERVER + 1];
    size_t na = 0;
    for (size_t i = 0; i < NSERVER; i++) {
        int64_t v;
        if (scaled(env->cfg, RL_CHANCFG_SERVER, server_keys[i], env->k, &v)) {
            snprintf(argbuf[i], sizeof argbuf[i], "%s=%lld", server_keys[i], (long long)v);
            argv[na++] = "--arg";
            argv[na++] = argbuf[i];
        }
    }
    argv[na] = NULL;
    char err[256];
    if (gr_restart_baseline(ctx, 0, argv, err, sizeof err) != RL_OK)
        return gr_result(out, GR_ERROR, "cannot restart the baseline with the server args: %s", err);
    /* The NAT: the intermediary with the baseline as its one upstream. */
    int port = atoi(strrchr(gr_baseline_addr(ctx, 0), ':') + 1);
    rl_intermediary_options nat = {.upstream_ports = &port, .nupstreams = 1, .idle_drop_ms = env->nat_ms};
    if (rl_intermediary_start(&nat, &env->im, err, sizeof err) != RL_OK)
        return gr_result(out, GR_ERROR, "%s", err);

    grpc_arg cargs[NCLIENT];
    size_t nc = 0;
    for (size_t i = 0; i < NCLIENT; i++) {
        int64_t v;
        if (scaled(env->cfg, RL_CHANCFG_CLIENT, client_keys[i], env->k, &v)) {
            cargs[nc].type = GRPC_ARG_INTEGER;
            cargs[nc].key = (char *)client_keys[i];
            cargs[nc++].value.integer = v > INT_MAX ? INT_MAX : (int)v;
        }
    }
    grpc_channel_args ca = {nc, cargs};
    char target[64];
    snprintf(target, sizeof target, "127.0.0.1:%d", rl_intermediary_port(env->im));
    atomic_store(&too_many_pings, 0);
    atomic_store(&too_many_pings_ns, 0);
    gpr_set_log_function(log_hook);
    env->ch = gr_channel_create(ctx, target, &ca);
    return 0;
}

/* Ends the live run (the channel, the NAT, the log hook), keeping what the
 * verdict quotes; |st| (may be NULL) gets the NAT's figures. Safe to call
 * again. */
static void live_close(live_env *env, rl_intermediary_stats *st)
{
    if (env->ch)
        grpc_channel_destroy(env->ch);
    gpr_set_log_function(rl_log_grpc);
    if (env->im) {
        if (st)
            rl_intermediary_stats_get(env->im, st);
        rl_intermediary_stop(env->im);
        env->im = NULL;
    }
    env->ch = NULL;
    /* env->ce stays for the verdict's wording; the scenario releases it. */
}

/* The end of a keepalive scenario: closes what is still open, releases
 * the config, and returns 0. */
static int live_done(live_env *env)
{
    live_close(env, NULL);
    gr_config_close(&env->ce);
    env->cfg = NULL;
    return 0;
}

static void lookup(live_env *env, gr_ctx *ctx, const char *suffix, uint32_t delay_ms, gr_ka_call *out)
{
    char tag[200];
    snprintf(tag, sizeof tag, "%s.%s", gr_tag(ctx), suffix);
    Relaylab__LookupRequest req = RELAYLAB__LOOKUP_REQUEST__INIT;
    req.tag = tag;
    req.delay_ms = delay_ms;
    call_baseline(env->ch, "/relaylab.Baseline/Lookup", &req.base, delay_ms + 2000, out);
}

/* "60000 ms" or "off", the config's own keepalive time. */
static const char *ka_text(const live_env *env, char *buf, size_t len)
{
    if (env->real_ka == INT_MAX)
        snprintf(buf, len, "off");
    else
        snprintf(buf, len, "%lld ms", (long long)env->real_ka);
    return buf;
}

/* " (world azure-lb: its l4-lb's 240000 ms scaled 1:60 to the lab's 4000 ms)". */
static const char *scale_note(const live_env *env, char *buf, size_t len)
{
    char world[144];
    gr_config_world_name(&env->ce, world, sizeof world);
    if (env->k > 1.0)
        snprintf(buf, len, " (%s: its %s's %lld ms scaled 1:%.0f to the lab's %d ms)", world, env->kind,
                 (long long)env->idle_ms, env->k, LAB_IDLE_MS);
    else
        snprintf(buf, len, " (%s: its %s's %lld ms, unscaled)", world, env->kind, (long long)env->idle_ms);
    return buf;
}

/* What every live scenario's verdict quotes once the run is over. */
typedef struct live_result {
    rl_intermediary_stats st; /* the NAT's figures */
    char ka[32];              /* ka_text */
    char note[256];           /* scale_note */
} live_result;

/* Ends the live run (live_close) and fills |r|, and |f| with what the
 * verdicts quote (pointing into |r|). */
static void live_end(live_env *env, live_result *r, gr_ka_run *f)
{
    live_close(env, &r->st);
    ka_text(env, r->ka, sizeof r->ka);
    scale_note(env, r->note, sizeof r->note);
    memset(f, 0, sizeof *f);
    f->real_ka = env->real_ka;
    f->idle_ms = env->idle_ms;
    f->nat_ms = env->nat_ms;
    f->kind = env->kind;
    f->max_pings = 2;
    rl_chancfg_effective_int(env->cfg, RL_CHANCFG_CLIENT, "grpc.keepalive_permit_without_calls", &f->permit, NULL);
    rl_chancfg_effective_int(env->cfg, RL_CHANCFG_CLIENT, "grpc.http2.max_pings_without_data", &f->max_pings, NULL);
    f->ka = r->ka;
    f->note = r->note;
    f->dropped = r->st.dropped;
    f->connections = r->st.connections;
}

/* What the live pictures draw of the run (keepalive_figure.h): the scale,
 * the NAT, and the client's keepalive time as the run gave it. */
static void picture_of(const live_env *env, const live_result *r, gr_ka_picture *p)
{
    memset(p, 0, sizeof *p);
    p->k = env->k;
    p->nat_ms = env->nat_ms;
    p->real_ka = env->real_ka;
    if (env->real_ka != INT_MAX && env->real_ka > 0)
        scaled(env->cfg, RL_CHANCFG_CLIENT, "grpc.keepalive_time_ms", env->k, &p->lab_ka);
    p->ka = r->ka;
    p->dropped = r->st.dropped;
    p->too_many_pings = atomic_load(&too_many_pings);
}

static int idle(gr_ctx *ctx, gr_scenario_result *out)
{
    live_env env;
    if (live_open(ctx, &env, out))
        return live_done(&env);
    gr_ka_call first, second;
    lookup(&env, ctx, "before-idle", 0, &first);
    if (first.status == GRPC_STATUS_OK) {
        idle_for(env.ch, QUIET_MS);
        lookup(&env, ctx, "after-idle", 0, &second);
    }
    live_result r;
    gr_ka_run f;
    live_end(&env, &r, &f);
    gr_ka_picture pic;
    picture_of(&env, &r, &pic);
    if (first.status == GRPC_STATUS_OK)
        gr_ka_nat_figure(out, &pic, &first, &second, true);
    char fb[GR_FEEDBACK_MAX];
    gr_result(out, gr_ka_judge_idle(&f, &first, &second, fb, sizeof fb), "%s", fb);
    return live_done(&env);
}

static int quiet_call(gr_ctx *ctx, gr_scenario_result *out)
{
    live_env env;
    if (live_open(ctx, &env, out))
        return live_done(&env);
    gr_ka_call call;
    lookup(&env, ctx, "quiet", QUIET_MS, &call);
    live_result r;
    gr_ka_run f;
    live_end(&env, &r, &f);
    gr_ka_picture pic;
    picture_of(&env, &r, &pic);
    gr_ka_nat_figure(out, &pic, &call, &call, false);
    char fb[GR_FEEDBACK_MAX];
    gr_result(out, gr_ka_judge_quiet_call(&f, &call, atomic_load(&too_many_pings), fb, sizeof fb), "%s", fb);
    return live_done(&env);
}

static int no_goaway(gr_ctx *ctx, gr_scenario_result *out)
{
    live_env env;
    if (live_open(ctx, &env, out))
        return live_done(&env);
    /* Calls and idle gaps, a third each, so pings go out both with a call
     * in flight and with none. */
    int64_t until = rl_now_ns() + GOAWAY_RUN_MS * RL_NS_PER_MS;
    int calls = 0, failed = 0;
    gr_ka_call c;
    char first_failure[200] = "";
    gr_ka_goaway_run g = {.t0 = rl_now_ns(), .n = 0};
    while (rl_now_ns() < until && !gr_interrupted(ctx)) {
        char suffix[32];
        snprintf(suffix, sizeof suffix, "busy-%d", calls++);
        int64_t started = rl_now_ns();
        lookup(&env, ctx, suffix, 2500, &c);
        if (c.status != GRPC_STATUS_OK && !failed++)
            snprintf(first_failure, sizeof first_failure, "%s (%s)", rl_status_name(c.status), c.details);
        idle_for(env.ch, 2500);
        if (g.n < GR_KA_GOAWAY_MAX_CALLS) {
            g.start_ns[g.n] = started;
            g.call_ms[g.n] = c.ms;
            g.ok[g.n] = c.status == GRPC_STATUS_OK;
            g.idle_end_ns[g.n++] = rl_now_ns();
        }
    }
    gr_ka_goaway facts = {
        .calls = calls, .failed = failed, .first_failure = first_failure, .min_ms = 300000, .strikes = 2};
    rl_chancfg_effective_int(env.cfg, RL_CHANCFG_SERVER, "grpc.http2.min_ping_interval_without_data_ms", &facts.min_ms,
                             NULL);
    rl_chancfg_effective_int(env.cfg, RL_CHANCFG_SERVER, "grpc.http2.max_ping_strikes", &facts.strikes, NULL);
    live_result r;
    gr_ka_run f;
    live_end(&env, &r, &f);
    gr_ka_picture pic;
    picture_of(&env, &r, &pic);
    g.calls = calls;
    g.failed = failed;
    scaled(env.cfg, RL_CHANCFG_CLIENT, "grpc.keepalive_time_ms", env.k, &g.lab_ka);
    g.min_drawn =
        scaled(env.cfg, RL_CHANCFG_SERVER, "grpc.http2.min_ping_interval_without_data_ms", env.k, &g.lab_min) ||
        (g.lab_min = facts.min_ms) > 0;
    g.goaway_ns = atomic_load(&too_many_pings_ns);
    gr_ka_goaway_figure(out, &pic, &g);
    facts.too_many_pings = atomic_load(&too_many_pings);
    char fb[GR_FEEDBACK_MAX];
    gr_result(out, gr_ka_judge_no_goaway(&f, &facts, fb, sizeof fb), "%s", fb);
    return live_done(&env);
}

/* The lesson: a client keepalive time, without which nothing crosses the
 * NAT's idle cut-off. */
static bool sets_keepalive(const rl_chancfg *cfg, char *why, size_t len)
{
    return gr_config_sets(cfg, RL_CHANCFG_CLIENT, "grpc.keepalive_time_ms",
                          "nothing pings an idle connection, so the NAT forgets it (lab show keepalive)", why, len);
}

static int check(gr_ctx *ctx, gr_scenario_result *out)
{
    return gr_config_check_run(ctx, "keepalive", sets_keepalive, out);
}

/* Lanes (lanes.h): idle, quiet-call and no-goaway at once. They are
 * 10-15 s of a connection left idle or silent behind the lab NAT, with next
 * to no CPU, each with its own baseline, NAT and channel in its own
 * worker (the GOAWAY count is the worker's). */
static const gr_scenario scenarios[] = {
    {"check", "the config's rules in the exercise's world, and gRPC accepts it", check, 0, 0},
    {"idle", "a call after 10 s idle, on a live connection", idle, 0, 0},
    {"quiet-call", "a 10 s call that sends nothing survives the NAT", quiet_call, 0, 1},
    {"no-goaway", "no too_many_pings over calls and idle gaps", no_goaway, 0, 2},
};

const gr_exercise gr_ex_keepalive = {
    .name = "keepalive",
    .summary = "keepalive agrees with the server and the intermediary",
    .kind = GR_SUBMISSION_CONFIG,
    .baselines = 1,
    .baselines_by_scenario = true, /* each live run restarts it with the config's server args */
    .scenarios = scenarios,
    .nscenarios = sizeof scenarios / sizeof scenarios[0],
};
