/* process: Process calls and observations shared by scenarios; see process.h. */
#include "process.h"

#include "rl_err.h"

#include <stdio.h>
#include <string.h>

int rl_process_start(rl_grade_ctx *ctx, rl_probe_call *c, const char *tag, uint32_t lookup_delay_ms, uint32_t steps,
                     uint32_t step_ms, int64_t deadline_ns, rl_scenario_result *res)
{
    Relaylab__ProcessRequest req = RELAYLAB__PROCESS_REQUEST__INIT;
    req.tag = (char *)tag;
    req.lookup_delay_ms = lookup_delay_ms;
    req.steps = steps;
    req.step_ms = step_ms;
    rl_grade_note_tag(ctx, tag);
    if (rl_probe_call_start(c, rl_grade_submission_channel(ctx), "/relaylab.Relay/Process", &req.base,
                            deadline_ns) != RL_OK)
        return rl_scenario_decide(res, RL_ERROR, "cannot start the Process call");
    return 0;
}

/* Drops from |r| the records that belong to another call of the grader's. */
static void keep_records_of(rl_grade_ctx *ctx, const char *tag, Relaylab__ObserveReply *r)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_calls; i++) {
        Relaylab__CallRecord *rec = r->calls[i];
        if (strcmp(rec->tag, tag) == 0 || !rl_grade_tag_sent(ctx, rec->tag))
            r->calls[n++] = rec;
        else
            relaylab__call_record__free_unpacked(rec, NULL);
    }
    r->n_calls = n;
}

typedef struct filtered_pred {
    rl_grade_ctx *ctx;
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

int rl_process_observe_until(rl_grade_ctx *ctx, const char *tag, rl_observe_pred pred, void *user, int64_t until_ns,
                             int64_t poll_ms, Relaylab__ObserveReply **out)
{
    filtered_pred f = {ctx, tag, pred, user};
    return rl_observe_until(rl_grade_baseline_channel(ctx, 0), "", filtered, &f, until_ns, poll_ms, out);
}

int rl_process_observe(rl_grade_ctx *ctx, const char *tag, Relaylab__ObserveReply **out, rl_scenario_result *res)
{
    if (rl_scenario_observe(ctx, "", out, res))
        return RL_SCENARIO_DECIDED;
    keep_records_of(ctx, tag, *out);
    return 0;
}

void rl_process_status_text(const rl_probe_call *c, char *buf, size_t len)
{
    char details[160];
    rl_probe_call_details(c, details, sizeof details);
    if (details[0])
        snprintf(buf, len, "%s (%s)", rl_status_name(c->status), details);
    else
        snprintf(buf, len, "%s", rl_status_name(c->status));
}

bool rl_process_reply_ok(const rl_probe_call *c, const char *tag, char *why, size_t len)
{
    if (c->status != GRPC_STATUS_OK) {
        char st[200];
        rl_process_status_text(c, st, sizeof st);
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
