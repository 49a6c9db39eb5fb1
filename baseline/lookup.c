/* lookup: Baseline.Lookup waits delay_ms, then answers with the tag. */
#include "timed.h"

#include "relaylab.pb-c.h"

static void plan(const ProtobufCMessage *m, const char **tag, uint32_t *steps, uint32_t *step_ms)
{
    const Relaylab__LookupRequest *req = (const Relaylab__LookupRequest *)m;
    *tag = req->tag;
    *steps = req->delay_ms ? 1 : 0;
    *step_ms = req->delay_ms;
}

static void reply(rl_unary *u, const char *tag, uint32_t steps_done)
{
    (void)steps_done;
    Relaylab__LookupReply rep = RELAYLAB__LOOKUP_REPLY__INIT;
    rep.tag = (char *)tag;
    rl_unary_reply(u, &rep.base);
}

const timed_kind bl_lookup_kind = {"Lookup", &relaylab__lookup_request__descriptor, plan, reply};
