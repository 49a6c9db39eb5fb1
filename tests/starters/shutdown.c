/* >>> TODO(shutdown): the test's own solution (tests/starters/shutdown.c) */
static bool stopping, cut;
static gpr_timespec grace_end;

static void on_server_shut(tag *t, bool ok)
{
    (void)t, (void)ok;
    leave(0);
}
static tag server_shut = {on_server_shut};

static void cut_now(const char *why)
{
    end_all(why);
    grpc_server_cancel_all_calls(server);
    cut = true;
}

static void on_sigterm(void)
{
    if (stopping) {
        cut_now("the server is stopping now");
        return;
    }
    stopping = true;
    grpc_server_shutdown_and_notify(server, cq, &server_shut);
    grace_end = in_ms(grace_ms);
}

static void on_tick(void)
{
    if (!stopping || cut)
        return;
    if (admitted_calls == 0) {
        /* Every call is done: close the idle connections, so the shutdown
         * completes now. */
        grpc_server_cancel_all_calls(server);
        cut = true;
    } else if (gpr_time_cmp(now(), grace_end) >= 0) {
        cut_now("the grace is over");
    }
}
/* <<< TODO */
