/* >>> TODO(overload): the test's own solution (tests/starters/overload.c)
 * What a call must have left once it has a slot: the service and half of
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
