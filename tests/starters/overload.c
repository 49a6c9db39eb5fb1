/* >>> TODO(overload): the test's own solution (tests/starters/overload.c)
 * Process as tests/starters/relay.c has it, answering with answer(). The
 * client's deadline is absolute (pc->deadline): handing it on as it is
 * gives each downstream call exactly the time left, and none when there is
 * none. */
static void work_done(pcall *pc)
{
    char details[256];
    if (pc->down_status != GRPC_STATUS_OK) {
        answer(pc, pc->down_status, down_details(pc, details, sizeof details), NULL);
        return;
    }
    Relaylab__WorkReply *w = (Relaylab__WorkReply *)down_reply(pc, &relaylab__work_reply__descriptor);
    if (!w) {
        answer(pc, GRPC_STATUS_INTERNAL, "Work answered without a WorkReply", NULL);
        return;
    }
    Relaylab__ProcessReply r = RELAYLAB__PROCESS_REPLY__INIT;
    r.tag = w->tag;
    r.steps_done = w->steps_done;
    answer(pc, GRPC_STATUS_OK, "", &r);
    protobuf_c_message_free_unpacked(&w->base, NULL);
}

static void lookup_done(pcall *pc)
{
    char details[256];
    if (pc->cancelled) {
        answer(pc, GRPC_STATUS_CANCELLED, "the client went away", NULL);
        return;
    }
    if (pc->down_status != GRPC_STATUS_OK) {
        answer(pc, pc->down_status, down_details(pc, details, sizeof details), NULL);
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

/* What a call must have left once it has a slot: the service and half of
 * it again, for its variation, and the machine's slack. */
static double needed(void)
{
    return 1.5 * service_ms + SLACK_MS;
}

static void arrived(pcall *pc)
{
    if (inflight < MAX_INFLIGHT && queued == 0) {
        start(pc);
        return;
    }
    double wait = (queued / MAX_INFLIGHT + 1) * service_ms;
    if (queued >= MAX_QUEUE)
        refuse(pc, "overloaded: the queue is full");
    else if (time_left_ms(pc) < wait + needed())
        refuse(pc, "overloaded: the wait would outlast the deadline");
    else
        queue_push(pc);
}

static void slot_freed(void)
{
    pcall *pc;
    while (inflight < MAX_INFLIGHT && (pc = queue_pop()))
        if (time_left_ms(pc) < needed())
            refuse(pc, "overloaded: the call can no longer be served in time");
        else
            start(pc);
}

static void on_tick(void)
{
    for (pcall *pc = queue_head, *next; pc; pc = next) {
        next = pc->qnext;
        if (time_left_ms(pc) < needed()) {
            queue_remove(pc);
            refuse(pc, "overloaded: the call can no longer be served in time");
        }
    }
}
/* <<< TODO */
