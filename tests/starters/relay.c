/* >>> TODO(deadline, cancel): the test's own solution (tests/starters/relay.c)
 * The client's deadline is absolute (pc->deadline): handing it on as it is
 * gives each downstream call exactly the time left, and none when there is
 * none. */
static void work_done(pcall *pc)
{
    char details[256];
    if (pc->down_status != GRPC_STATUS_OK) {
        reply(pc, pc->down_status, down_details(pc, details, sizeof details), NULL);
        return;
    }
    Relaylab__WorkReply *w = (Relaylab__WorkReply *)down_reply(pc, &relaylab__work_reply__descriptor);
    if (!w) {
        reply(pc, GRPC_STATUS_INTERNAL, "Work answered without a WorkReply", NULL);
        return;
    }
    Relaylab__ProcessReply r = RELAYLAB__PROCESS_REPLY__INIT;
    r.tag = w->tag;
    r.steps_done = w->steps_done;
    reply(pc, GRPC_STATUS_OK, "", &r);
    protobuf_c_message_free_unpacked(&w->base, NULL);
}

static void lookup_done(pcall *pc)
{
    char details[256];
    if (pc->cancelled) {
        reply(pc, GRPC_STATUS_CANCELLED, "the client went away", NULL);
        return;
    }
    if (pc->down_status != GRPC_STATUS_OK) {
        reply(pc, pc->down_status, down_details(pc, details, sizeof details), NULL);
        return;
    }
    Relaylab__WorkRequest req = RELAYLAB__WORK_REQUEST__INIT;
    req.tag = pc->request->tag;
    req.steps = pc->request->steps;
    req.step_ms = pc->request->step_ms;
    down_call(pc, work_method, &req.base, pc->deadline, work_done);
}

static void process(pcall *pc)
{
    Relaylab__LookupRequest req = RELAYLAB__LOOKUP_REQUEST__INIT;
    req.tag = pc->request->tag;
    req.delay_ms = pc->request->lookup_delay_ms;
    down_call(pc, lookup_method, &req.base, pc->deadline, lookup_done);
}

static void client_gone(pcall *pc)
{
    down_cancel(pc);
}
/* <<< TODO */
