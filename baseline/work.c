/* work: Baseline.Work runs |steps| steps of |step_ms| and reports how many it did. */
#include "timed.h"

#include "relaylab.pb-c.h"

static void plan(const ProtobufCMessage *m, const char **tag, uint32_t *steps, uint32_t *step_ms)
{
    const Relaylab__WorkRequest *req = (const Relaylab__WorkRequest *)m;
    *tag = req->tag;
    *steps = req->steps;
    *step_ms = req->step_ms;
}

static void reply(rl_unary *u, const char *tag, uint32_t steps_done)
{
    Relaylab__WorkReply rep = RELAYLAB__WORK_REPLY__INIT;
    rep.tag = (char *)tag;
    rep.steps_done = steps_done;
    rl_unary_reply(u, &rep.base);
}

const timed_kind bl_work_kind = {"Work", &relaylab__work_request__descriptor, plan, reply};
