/* ex_retry: the retry exercise. The submission is a channel config; the
 * grader applies its client service config to its own C-core client, makes
 * the baseline fail attempts on purpose (Trailers-Only, so that a retry is
 * possible at all), and counts the attempts the baseline saw. The rules
 * (gRFC A6): retry what can succeed on a retry, as often as maxAttempts says
 * (clamped to 5), and never once the call has committed (a response message
 * went out). The caller's deadline is the exercise's world's
 * (grader/worlds/retry.json, calls.longest_deadline_ms), not the file's.
 * The verdicts are retry_judge.c's, from what each call showed. */
#include "config_check.h"
#include "exercise.h"
#include "retry_figure.h"
#include "retry_judge.h"
#include "relaylab.pb-c.h"
#include "chancfg/rl_chancfg.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_pb.h"
#include "rl_probe.h"
#include "run.h"
#include "scenario.h"

#include <grpc/grpc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The caller's deadline covers every attempt and every backoff; it comes
 * from the world (the handout's 2 s is the default world's), so a policy
 * whose waits do not fit fails gives-up. This one applies when the world
 * states no deadline. */
#define DEFAULT_BUDGET_MS 2000
/* UNAVAILABLEs in a row before the baseline answers, when the world states
 * none (backend.unavailable_in_a_row). */
#define DEFAULT_RUN 2

/* What one scenario needs: the loaded config, and a channel to the baseline
 * carrying the config's service config exactly as written (unchecked, so
 * gRPC's own reaction to a bad one is what the student sees). */
typedef struct retry_env {
    gr_config_env ce;  /* the submission in the exercise's world */
    rl_chancfg *cfg;   /* ce.cfg */
    int64_t budget_ms; /* the caller's deadline */
    grpc_channel *ch;
    rl_chancfg_method method; /* relaylab.Baseline/Lookup as gRPC sees it */
    bool has_method;
    bool retries_off; /* grpc.enable_retries is 0 */
} retry_env;

static int env_open(gr_ctx *ctx, const char *rpc, retry_env *env, gr_scenario_result *out)
{
    memset(env, 0, sizeof *env);
    if (gr_config_open(ctx, "retry", &env->ce, out))
        return GR_DECIDED;
    env->cfg = env->ce.cfg;
    if (rl_chancfg_calls_deadline(env->cfg, &env->budget_ms) != RL_OK)
        env->budget_ms = DEFAULT_BUDGET_MS;
    char *sc = NULL;
    if (rl_chancfg_service_config(env->cfg, &sc) != RL_OK || !sc) {
        free(sc);
        return gr_result(out, GR_FAIL, "the config has no client.service_config, so no call is ever retried");
    }
    grpc_arg arg[2] = {{.type = GRPC_ARG_STRING, .key = (char *)GRPC_ARG_SERVICE_CONFIG, .value.string = sc}};
    grpc_channel_args args = {1, arg};
    /* The one client arg that switches the whole policy off. */
    int64_t enable;
    bool configured = false;
    if (rl_chancfg_effective_int(env->cfg, RL_CHANCFG_CLIENT, GRPC_ARG_ENABLE_RETRIES, &enable, &configured) == RL_OK &&
        configured) {
        env->retries_off = enable == 0;
        arg[args.num_args++] = (grpc_arg){
            .type = GRPC_ARG_INTEGER, .key = (char *)GRPC_ARG_ENABLE_RETRIES, .value.integer = enable ? 1 : 0};
    }
    env->ch = gr_channel_create(ctx, gr_baseline_addr(ctx, 0), &args);
    free(sc);
    env->has_method = rl_chancfg_method_config(env->cfg, "relaylab.Baseline", rpc, &env->method) == RL_OK;
    return 0;
}

static void env_close(retry_env *env)
{
    if (env->ch)
        grpc_channel_destroy(env->ch);
    gr_config_close(&env->ce);
    env->cfg = NULL;
}

/* What the config makes of the method's calls, for the judges. */
static void policy_of(const retry_env *env, gr_retry_policy *p)
{
    p->retries_off = env->retries_off;
    p->has_method = env->has_method;
    p->has_retry = env->method.has_retry;
    p->max_attempts = env->method.max_attempts;
    p->retryable_codes = env->method.retryable_codes;
}

/* Calls Baseline/|rpc| with |tag| (Lookup with no delay, Work with no
 * steps) and collects the baseline's attempts for it. Returns 0, or
 * GR_DECIDED (ERROR). */
static int call_attempts(gr_ctx *ctx, retry_env *env, const char *rpc, const char *tag, rl_probe_call *c,
                         Relaylab__ObserveReply **obs, gr_scenario_result *out)
{
    Relaylab__LookupRequest lreq = RELAYLAB__LOOKUP_REQUEST__INIT;
    Relaylab__WorkRequest wreq = RELAYLAB__WORK_REQUEST__INIT;
    lreq.tag = wreq.tag = (char *)tag;
    bool work = strcmp(rpc, "Work") == 0;
    char method[64];
    snprintf(method, sizeof method, "/relaylab.Baseline/%s", rpc);
    if (gr_scenario_call(c, env->ch, method, work ? &wreq.base : &lreq.base,
                         rl_now_ns() + env->budget_ms * RL_NS_PER_MS, out))
        return GR_DECIDED;
    /* An attempt still in flight at the deadline ends right after it. */
    return gr_scenario_observe(ctx, tag, obs, out);
}

/* A lame channel (gRPC refused the service config) fails every call with
 * INVALID_ARGUMENT before anything reaches the baseline: FAIL, and
 * GR_DECIDED; else 0. */
static int lame(const rl_probe_call *c, const Relaylab__ObserveReply *obs, gr_scenario_result *out)
{
    char details[256], fb[GR_FEEDBACK_MAX];
    rl_probe_call_details(c, details, sizeof details);
    if (!gr_retry_lame(rl_observe_count(obs, NULL), c->batch.status, details, fb, sizeof fb))
        return 0;
    return gr_result(out, GR_FAIL, "%s", fb);
}

/* Checks that attempt k carried grpc-previous-rpc-attempts k-1. */
static bool attempts_numbered(const Relaylab__ObserveReply *obs)
{
    for (size_t i = 0; i < obs->n_calls; i++)
        if (obs->calls[i]->attempt != i + 1)
            return false;
    return true;
}

/* Makes the baseline fail the first |fail_first| attempts of |rpc| with
 * |code| (after the first message when |after_first_message|). Returns 0,
 * or GR_DECIDED (ERROR). */
static int arm_fault(gr_ctx *ctx, const char *rpc, uint32_t fail_first, int code, bool after_first_message,
                     gr_scenario_result *out)
{
    if (rl_observer_set_fault(gr_baseline_channel(ctx, 0), rpc, fail_first, code, after_first_message,
                              GR_SCENARIO_OBSERVER_MS) != RL_OK)
        return gr_result(out, GR_ERROR, "the baseline refused the fault injection");
    return 0;
}

/* One faulted call and what the baseline saw of it. */
typedef struct faulted {
    retry_env env;
    rl_probe_call c;
    Relaylab__ObserveReply *obs; /* the attempts, NULL until observed */
    size_t n;                    /* how many attempts of the method */
    int fail_first;              /* attempts the baseline failed on purpose */
    size_t want;                 /* attempts that are right (the picture's red), 0: no bound */
    grpc_status_code code;       /* with this status */
} faulted;

/* The verdict on a faulted call that gRPC sent (retry_judge.h). */
typedef gr_verdict (*faulted_judge)(const gr_retry_facts *f, char *buf, size_t len);

/* A scenario made of one call of |rpc| through the config's channel, the
 * baseline failing its first |fail_first| attempts with |code|: |judge|
 * decides from the attempts, unless a step before it already did. */
static int faulted_scenario(gr_ctx *ctx, const char *rpc, int fail_first, grpc_status_code code, size_t want,
                            faulted_judge judge, gr_scenario_result *out)
{
    faulted f;
    memset(&f, 0, sizeof f);
    f.want = want;
    f.fail_first = fail_first;
    f.code = code;
    if (env_open(ctx, rpc, &f.env, out) || arm_fault(ctx, rpc, (uint32_t)fail_first, code, false, out) ||
        call_attempts(ctx, &f.env, rpc, gr_tag(ctx), &f.c, &f.obs, out))
        goto done;
    f.n = rl_observe_count(f.obs, rpc);
    if (!lame(&f.c, f.obs, out)) {
        gr_retry_facts rf = {.budget_ms = f.env.budget_ms,
                             .fail_first = f.fail_first,
                             .code = f.code,
                             .n = f.n,
                             .numbered = attempts_numbered(f.obs),
                             .status = f.c.batch.status,
                             .ms = (f.c.end_ns - f.c.start_ns) / RL_NS_PER_MS};
        policy_of(&f.env, &rf.policy);
        char fb[GR_FEEDBACK_MAX];
        gr_result(out, judge(&rf, fb, sizeof fb), "%s", fb);
    }
    gr_retry_attempts_figure(out, rpc, f.c.start_ns, f.c.end_ns, f.c.batch.status, f.obs, f.env.budget_ms, f.want);
done:
    gr_scenario_done(&f.c, &f.obs);
    env_close(&f.env);
    return 0;
}

/* How many UNAVAILABLEs in a row the world's restarting backend sends. The
 * world is loaded again by faulted_scenario; this only needs the number
 * first. */
static int world_run(gr_ctx *ctx)
{
    rl_chancfg_world w;
    char err[256];
    int run = DEFAULT_RUN;
    if (gr_config_world("retry", gr_world_path(ctx), gr_variant(ctx), &w, err, sizeof err) == RL_OK) {
        if (w.unavailable_in_a_row)
            run = w.unavailable_in_a_row;
        rl_chancfg_world_fini(&w);
    }
    return run;
}

static int unavailable_then_ok(gr_ctx *ctx, gr_scenario_result *out)
{
    int run = world_run(ctx);
    return faulted_scenario(ctx, "Lookup", run, GRPC_STATUS_UNAVAILABLE, (size_t)run + 1, gr_retry_judge_retried_to_ok,
                            out);
}

/* Codes that are answers, not blips: the same request gets them again. */
static const grpc_status_code answer_codes[] = {
    GRPC_STATUS_INVALID_ARGUMENT,  GRPC_STATUS_NOT_FOUND,           GRPC_STATUS_ALREADY_EXISTS,
    GRPC_STATUS_PERMISSION_DENIED, GRPC_STATUS_FAILED_PRECONDITION, GRPC_STATUS_OUT_OF_RANGE,
    GRPC_STATUS_UNIMPLEMENTED,     GRPC_STATUS_DATA_LOSS,           GRPC_STATUS_UNAUTHENTICATED,
};

/* The answer code to inject: one the config would retry if there is one
 * (that is the mistake to catch), else INVALID_ARGUMENT. */
static grpc_status_code answer_to_inject(gr_ctx *ctx)
{
    rl_chancfg *cfg = NULL;
    rl_chancfg_method m;
    grpc_status_code code = GRPC_STATUS_INVALID_ARGUMENT;
    char err[300];
    if (gr_config_load(ctx, &cfg, err, sizeof err) == RL_OK &&
        rl_chancfg_method_config(cfg, "relaylab.Baseline", "Lookup", &m) == RL_OK && m.has_retry)
        for (size_t i = 0; i < sizeof answer_codes / sizeof *answer_codes; i++)
            if (m.retryable_codes & (1u << answer_codes[i])) {
                code = answer_codes[i];
                break;
            }
    rl_chancfg_free(cfg);
    return code;
}

static int non_retryable(gr_ctx *ctx, gr_scenario_result *out)
{
    return faulted_scenario(ctx, "Lookup", 1, answer_to_inject(ctx), 1, gr_retry_judge_answer_not_retried, out);
}

static int persistent(gr_ctx *ctx, gr_scenario_result *out)
{
    /* The bound is the config's maxAttempts: the judge says it; no red. */
    return faulted_scenario(ctx, "Lookup", 100, GRPC_STATUS_UNAVAILABLE, 0, gr_retry_judge_gives_up, out);
}

/* A server-streaming Fetch read to its end on a private queue. The batch
 * that starts it asks for initial metadata: with retries active, a batch
 * without it may never see its status (docs/grpc-facts.md). */
typedef struct fetch_result {
    int messages, duplicates;
    grpc_status_code status;
    bool completed;
} fetch_result;

static bool next_event(grpc_completion_queue *cq, void *tag, int64_t until_ns)
{
    grpc_event ev = grpc_completion_queue_pluck(cq, tag, rl_ns_to_deadline(until_ns), NULL);
    return ev.type == GRPC_OP_COMPLETE;
}

static void fetch_all(grpc_channel *ch, const char *tag, uint32_t count, int64_t budget_ms, fetch_result *res)
{
    memset(res, 0, sizeof *res);
    res->status = GRPC_STATUS_UNKNOWN;
    int64_t until = rl_now_ns() + budget_ms * RL_NS_PER_MS;
    grpc_completion_queue *cq = grpc_completion_queue_create_for_pluck(NULL);
    grpc_call *call = grpc_channel_create_call(ch, NULL, GRPC_PROPAGATE_DEFAULTS, cq,
                                               grpc_slice_from_static_string("/relaylab.Baseline/Fetch"), NULL,
                                               rl_ns_to_deadline(until), NULL);
    Relaylab__FetchRequest req = RELAYLAB__FETCH_REQUEST__INIT;
    req.tag = (char *)tag;
    req.count = count;
    grpc_byte_buffer *send = rl_pb_pack(&req.base), *recv = NULL;
    grpc_metadata_array md, trailers;
    grpc_metadata_array_init(&md);
    grpc_metadata_array_init(&trailers);
    grpc_slice details = grpc_empty_slice();
    grpc_op ops[4];
    memset(ops, 0, sizeof ops);
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[1].op = GRPC_OP_SEND_MESSAGE;
    ops[1].data.send_message.send_message = send;
    ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[3].data.recv_initial_metadata.recv_initial_metadata = &md;
    int started = grpc_call_start_batch(call, ops, 4, &ops[0], NULL) == GRPC_CALL_OK;
    bool ok = started && next_event(cq, &ops[0], until + RL_NS_PER_SEC);
    uint32_t next_seq = 0;
    while (ok) {
        memset(ops, 0, sizeof ops);
        ops[0].op = GRPC_OP_RECV_MESSAGE;
        ops[0].data.recv_message.recv_message = &recv;
        if (grpc_call_start_batch(call, ops, 1, &ops[0], NULL) != GRPC_CALL_OK ||
            !next_event(cq, &ops[0], until + RL_NS_PER_SEC) || !recv)
            break;
        ProtobufCMessage *m = NULL;
        if (rl_pb_unpack(&relaylab__fetch_reply__descriptor, recv, 0, &m) == RL_OK) {
            Relaylab__FetchReply *r = (Relaylab__FetchReply *)m;
            if (r->seq < next_seq)
                res->duplicates++;
            else
                next_seq = r->seq + 1;
            protobuf_c_message_free_unpacked(m, NULL);
        }
        res->messages++;
        grpc_byte_buffer_destroy(recv);
        recv = NULL;
    }
    if (started) {
        memset(ops, 0, sizeof ops);
        ops[0].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
        ops[0].data.recv_status_on_client.trailing_metadata = &trailers;
        ops[0].data.recv_status_on_client.status = &res->status;
        ops[0].data.recv_status_on_client.status_details = &details;
        if (grpc_call_start_batch(call, ops, 1, &ops[0], NULL) == GRPC_CALL_OK)
            res->completed = next_event(cq, &ops[0], until + RL_NS_PER_SEC);
        if (!res->completed) {
            grpc_call_cancel(call, NULL);
            next_event(cq, &ops[0], rl_now_ns() + 5 * RL_NS_PER_SEC);
        }
    }
    grpc_slice_unref(details);
    grpc_metadata_array_destroy(&md);
    grpc_metadata_array_destroy(&trailers);
    grpc_byte_buffer_destroy(send);
    grpc_call_unref(call);
    grpc_completion_queue_shutdown(cq);
    grpc_completion_queue_destroy(cq);
}

static int committed_stream(gr_ctx *ctx, gr_scenario_result *out)
{
    retry_env env;
    Relaylab__ObserveReply *obs = NULL;
    fetch_result res;
    if (env_open(ctx, "Fetch", &env, out) || arm_fault(ctx, "Fetch", 1, GRPC_STATUS_UNAVAILABLE, true, out))
        goto done;
    int64_t t0 = rl_now_ns();
    fetch_all(env.ch, gr_tag(ctx), 3, env.budget_ms, &res);
    int64_t t1 = rl_now_ns();
    if (gr_scenario_observe(ctx, gr_tag(ctx), &obs, out))
        goto done;
    gr_retry_attempts_figure(out, "Fetch", t0, t1, res.status, obs, env.budget_ms, 1);
    char fb[GR_FEEDBACK_MAX];
    gr_verdict v = gr_retry_judge_committed_stream(rl_observe_count(obs, "Fetch"), res.messages, res.duplicates,
                                                   res.status, fb, sizeof fb);
    gr_result(out, v, "%s", fb);
done:
    gr_scenario_free_obs(&obs);
    env_close(&env);
    return 0;
}

static int work_once(gr_ctx *ctx, gr_scenario_result *out)
{
    return faulted_scenario(ctx, "Work", 1, GRPC_STATUS_UNAVAILABLE, 1, gr_retry_judge_work_once, out);
}

/* The lesson: a retryPolicy that applies to Lookup, the call the world's
 * restarts fail. */
static bool sets_retry(const rl_chancfg *cfg, char *why, size_t len)
{
    rl_chancfg_method m;
    if (rl_chancfg_method_config(cfg, "relaylab.Baseline", "Lookup", &m) == RL_OK && m.has_retry)
        return true;
    snprintf(why, len,
             "no valid retryPolicy applies to relaylab.Baseline/Lookup, so a backend restart fails the call "
             "(lab show retry)");
    return false;
}

static int check(gr_ctx *ctx, gr_scenario_result *out)
{
    return gr_config_check_run(ctx, "retry", sets_retry, out);
}

/* One lane (lanes.h): six scenarios of a few calls each, 0.3 s all told. */
static const gr_scenario scenarios[] = {
    {"check", "the config's rules in the exercise's world, and gRPC accepts it", check, 0, 0},
    {"retries-unavailable", "UNAVAILABLE as often as the world's backend restarts, then OK", unavailable_then_ok, 0, 0},
    {"gives-up", "a persistent failure stops at maxAttempts", persistent, 0, 0},
    {"not-an-answer", "an answer (INVALID_ARGUMENT, ...) is not retried", non_retryable, 0, 0},
    {"work-once", "Work is never retried", work_once, 0, 0},
    {"committed-stream", "a committed stream is not retried", committed_stream, 0, 0},
};

const gr_exercise gr_ex_retry = {
    .name = "retry",
    .summary = "a retryPolicy retries only what can succeed, never after commit",
    .kind = GR_SUBMISSION_CONFIG,
    .baselines = 1,
    .scenarios = scenarios,
    .nscenarios = sizeof scenarios / sizeof scenarios[0],
};
