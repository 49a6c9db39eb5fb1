/* process: Process calls and observations shared by scenarios; see process.h. */
#include "process.h"

#include "judge.h"
#include "rl_deadline.h"
#include "rl_err.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

int gr_process_start(gr_ctx *ctx, rl_probe_call *c, const char *tag, uint32_t lookup_delay_ms, uint32_t steps,
                     uint32_t step_ms, int64_t deadline_ns, gr_scenario_result *res)
{
    Relaylab__ProcessRequest req = RELAYLAB__PROCESS_REQUEST__INIT;
    req.tag = (char *)tag;
    req.lookup_delay_ms = lookup_delay_ms;
    req.steps = steps;
    req.step_ms = step_ms;
    gr_note_tag(ctx, tag);
    if (rl_probe_call_start(c, gr_submission_channel(ctx), "/relaylab.Relay/Process", &req.base, deadline_ns) != RL_OK)
        return gr_result(res, GR_ERROR, "cannot start the Process call");
    return 0;
}

/* Drops from |r| the records that belong to another call of the grader's. */
static void keep_records_of(gr_ctx *ctx, const char *tag, Relaylab__ObserveReply *r)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_calls; i++) {
        Relaylab__CallRecord *rec = r->calls[i];
        if (strcmp(rec->tag, tag) == 0 || !gr_tag_sent(ctx, rec->tag))
            r->calls[n++] = rec;
        else
            relaylab__call_record__free_unpacked(rec, NULL);
    }
    r->n_calls = n;
}

typedef struct filtered_pred {
    gr_ctx *ctx;
    const char *tag;
    rl_observe_pred pred;
    void *user;
} filtered_pred;

/* Filters the fresh reply (owned by rl_observe_until, which hands this very
 * reply back) before the scenario's condition sees it. */
static bool filtered(const Relaylab__ObserveReply *r, void *user)
{
    filtered_pred *f = user;
    keep_records_of(f->ctx, f->tag, (Relaylab__ObserveReply *)r);
    return f->pred(r, f->user);
}

int gr_process_observe_until(gr_ctx *ctx, const char *tag, rl_observe_pred pred, void *user, int64_t until_ns,
                             int64_t poll_ms, Relaylab__ObserveReply **out)
{
    filtered_pred f = {ctx, tag, pred, user};
    return rl_observe_until(gr_baseline_channel(ctx, 0), "", filtered, &f, until_ns, poll_ms, out);
}

int gr_process_observe(gr_ctx *ctx, const char *tag, Relaylab__ObserveReply **out, gr_scenario_result *res)
{
    if (gr_scenario_observe(ctx, "", out, res))
        return GR_DECIDED;
    keep_records_of(ctx, tag, *out);
    return 0;
}

void gr_process_status_text(const rl_probe_call *c, char *buf, size_t len)
{
    char details[160];
    rl_probe_call_details(c, details, sizeof details);
    /* "CANCELLED (CANCELLED)" says nothing twice: details that only repeat
     * the status's name are left out. */
    if (details[0] && strcasecmp(details, rl_status_name(c->batch.status)) != 0)
        snprintf(buf, len, "%s (%s)", rl_status_name(c->batch.status), details);
    else
        snprintf(buf, len, "%s", rl_status_name(c->batch.status));
}

bool gr_process_reply_ok(const rl_probe_call *c, const char *tag, char *why, size_t len)
{
    if (c->batch.status != GRPC_STATUS_OK) {
        char st[200];
        gr_process_status_text(c, st, sizeof st);
        snprintf(why, len, "Process failed with %s", st);
        return false;
    }
    ProtobufCMessage *m = NULL;
    if (rl_probe_call_reply(c, &relaylab__process_reply__descriptor, &m) != RL_OK) {
        snprintf(why, len, "Process answered OK without a valid ProcessReply");
        return false;
    }
    Relaylab__ProcessReply *r = (Relaylab__ProcessReply *)m;
    bool ok = strcmp(r->tag, tag) == 0;
    if (!ok)
        snprintf(why, len, "Process answered tag '%.60s', expected '%.60s': the reply must carry the request's tag",
                 r->tag, tag);
    protobuf_c_message_free_unpacked(m, NULL);
    return ok;
}

/* ---- starting a call and reaching a downstream method ---- */

typedef struct running_wait {
    const char *method;
    uint32_t min_steps;  /* Work: steps it must have done */
    rl_probe_call *call; /* stop waiting when the Process call ended */
    bool call_ended;     /* the call had ended before this observation */
} running_wait;

static bool is_running(const Relaylab__ObserveReply *r, void *user)
{
    running_wait *w = user;
    /* The records are judged against the call's end, so they must be
     * taken after it: an observation from before it may show a Work that
     * then ended, Process answering, between the two looks. */
    if (w->call_ended)
        return true;
    const Relaylab__CallRecord *rec = rl_observe_find(r, w->method, 0);
    /* Work counts as running once a step is done: the cancel then lands in
     * the middle of real work, not in the relay's call set-up. */
    if (rec && !rec->ended && (w->min_steps == 0 || rec->steps_done >= w->min_steps))
        return true;
    w->call_ended = rl_probe_call_wait(w->call, 0) == RL_OK; /* non-blocking check */
    return false;
}

/* Judges a Process call that ended, or a relay that never reached |method|
 * within |reach_ms|, from |nl| Lookup and |nw| Work records. Returns
 * GR_DECIDED. */
static int not_reached(gr_ctx *ctx, const rl_probe_call *c, const char *method, int64_t reach_ms, size_t nl, size_t nw,
                       gr_scenario_result *out)
{
    char what[96];
    snprintf(what, sizeof what, "before %s started", method);
    /* A call that ended before the relay got there is a sign of death. */
    if (gr_scenario_crash_check(ctx, c->done, what, out))
        return GR_DECIDED;
    if (c->done && c->batch.status == GRPC_STATUS_DEADLINE_EXCEEDED) {
        /* Every call start_and_reach makes has no deadline: this status is
         * the relay's own doing (judge.h). */
        char fb[GR_FEEDBACK_MAX];
        gr_judge_no_deadline_expired_feedback(gr_ms_between(c->start_ns, c->end_ns), nl, nw, fb, sizeof fb);
        return gr_result(out, GR_FAIL, "%s", fb);
    }
    if (c->done) {
        char st[200];
        gr_process_status_text(c, st, sizeof st);
        return gr_result(out, GR_FAIL,
                         "Process returned %s before %s ran (the baseline saw %zu Lookup and %zu Work calls)", st,
                         method, nl, nw);
    }
    return gr_result(out, GR_TIMEOUT,
                     "%s never started within %lld ms of the Process call (the baseline saw %zu Lookup and "
                     "%zu Work calls) and Process did not answer",
                     method, (long long)reach_ms, nl, nw);
}

int gr_process_try_reach(gr_ctx *ctx, rl_probe_call *c, const char *tag, const char *method, uint32_t lookup_ms,
                         uint32_t steps, uint32_t step_ms, int64_t reach_ms, gr_scenario_result *out)
{
    if (gr_process_start(ctx, c, tag, lookup_ms, steps, step_ms, RL_NO_DEADLINE, out))
        return GR_DECIDED;
    running_wait w = {.method = method, .min_steps = strcmp(method, "Work") == 0 ? 1 : 0, .call = c};
    Relaylab__ObserveReply *obs = NULL;
    int rc = gr_process_observe_until(ctx, tag, is_running, &w, c->start_ns + reach_ms * RL_NS_PER_MS, 2, &obs);
    if (rc == RL_ETIMEOUT && w.call_ended) {
        /* The call ended at the last look before the bound: one more, so
         * the records are from after its end. */
        gr_scenario_free_obs(&obs);
        rc = gr_process_observe_until(ctx, tag, is_running, &w, rl_now_ns(), 2, &obs);
    }
    const Relaylab__CallRecord *rec = rl_observe_find(obs, method, 0);
    bool running = rc == RL_OK && rec && !rec->ended && !c->done;
    /* The relay did its part: |method| ran to its end and Process answered
     * OK, all between two looks of a grader that was not running (seen with
     * a 200 ms Work at a load average of 10 on 2 cores). */
    bool missed = rc == RL_OK && rec && rec->ended && rec->status == GRPC_STATUS_OK && c->done &&
                  c->batch.status == GRPC_STATUS_OK;
    size_t nl = rl_observe_count(obs, "Lookup"), nw = rl_observe_count(obs, "Work");
    int decided = gr_scenario_observed(rc, obs, out);
    gr_scenario_free_obs(&obs);
    if (running || decided)
        return decided;
    if (missed)
        return GR_PROCESS_MISSED;
    return not_reached(ctx, c, method, reach_ms, nl, nw, out);
}

int gr_process_start_and_reach(gr_ctx *ctx, rl_probe_call *c, const char *tag, const char *method, uint32_t lookup_ms,
                               uint32_t steps, uint32_t step_ms, int64_t reach_ms, gr_scenario_result *out)
{
    int rc = gr_process_try_reach(ctx, c, tag, method, lookup_ms, steps, step_ms, reach_ms, out);
    if (rc != GR_PROCESS_MISSED)
        return rc;
    return gr_result(out, GR_ERROR,
                     "%s ran and ended and Process answered OK before the grader saw %s running: the "
                     "machine is too busy to time this scenario -- grade again",
                     method, method);
}
