/* mistake: the table of relay modes, the correct one first; see mistake.h. */
#include "mistake.h"

#include "rl_deadline.h"
#include "rl_health.h"

#include <grpc/grpc.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

/* Correct: no deadline of our own. With GRPC_PROPAGATE_DEADLINE gRPC gives the
 * child min(own, parent's), so the child inherits exactly the time left, and
 * no deadline upstream means none downstream. */
static gpr_timespec inherit(gpr_timespec upstream, int64_t arrival_ns, int64_t now_ns)
{
    (void)upstream, (void)arrival_ns, (void)now_ns;
    return gpr_inf_future(GPR_CLOCK_MONOTONIC);
}

/* The upstream deadline as it is, for a call made without a parent. */
static gpr_timespec same_deadline(gpr_timespec upstream, int64_t arrival_ns, int64_t now_ns)
{
    (void)arrival_ns, (void)now_ns;
    return upstream;
}

/* Bug: the timeout the relay was given is handed on unchanged, as if no time
 * had passed since the request arrived. Each hop then grants more time than
 * its caller has left: here Work gets the client's full timeout again after
 * Lookup already used part of it. */
static gpr_timespec forward_timeout(gpr_timespec upstream, int64_t arrival_ns, int64_t now_ns)
{
    int64_t up_ns;
    if (rl_deadline_to_ns(upstream, &up_ns) != 0)
        return gpr_inf_future(GPR_CLOCK_MONOTONIC);
    return rl_ns_to_deadline(now_ns + (up_ns - arrival_ns));
}

/* Bug: the textbook conversion of "time left" to an int32 timeout. For no
 * deadline gpr_time_to_millis saturates at 2147483647 ms (24.8 days), which
 * then goes out as a finite deadline that no server will ever reach. With a
 * finite upstream deadline the result is right (within the millisecond that
 * gpr_time_to_millis rounds up, which the propagated deadline clamps). */
static gpr_timespec int32_timeout(gpr_timespec upstream, int64_t arrival_ns, int64_t now_ns)
{
    (void)arrival_ns;
    gpr_timespec now = rl_ns_to_deadline(now_ns);
    int32_t ms = gpr_time_to_millis(gpr_time_sub(upstream, now));
    return gpr_time_add(now, gpr_time_from_millis(ms, GPR_TIMESPAN));
}

/* Bug: no SIGTERM handler. rl_server blocked the two signals in every
 * thread it and gRPC started (rl_server_signals_init); giving them back
 * their default action and unblocking them in this thread, the only one
 * that takes them, lets the first one kill the process, calls and all. */
static void no_handler_wait(void *user)
{
    (void)user;
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    for (;;)
        pause(); /* SIGTERM's default action ends the process */
}

/* Bug: stop(0): no grace at all. */
static void stop_now_plan(void *user, int sig, rl_shutdown_plan *plan)
{
    (void)user, (void)sig;
    plan->grace_ms = 0;
}

/* Bug: wait for the calls in flight without any bound, deaf to a second
 * signal: only SIGKILL ends a stuck call. */
static void wait_forever_plan(void *user, int sig, rl_shutdown_plan *plan)
{
    (void)user, (void)sig;
    plan->grace_ms = -1;
    plan->interruptible = false;
    plan->stop_ms = -1;
}

/* Bug: the listener is closed last. Watch streams end at the signal, as the
 * rule ends them when admission closes. */
static void listener_last_plan(void *user, int sig, rl_shutdown_plan *plan)
{
    (void)user, (void)sig;
    rl_health_end_watches();
    plan->note = "admitting calls until none is in flight";
}

/* ...and new calls keep coming in while it waits for none to be in flight. */
static bool listener_last_admitting(void *user)
{
    (void)user;
    return rl_server_calls_in_flight() > 0;
}

const rl_shutdown_hooks relay_shutdown_no_handler = {no_handler_wait, NULL, NULL, NULL};
const rl_shutdown_hooks relay_shutdown_stop_now = {NULL, stop_now_plan, NULL, NULL};
const rl_shutdown_hooks relay_shutdown_wait_forever = {NULL, wait_forever_plan, NULL, NULL};
const rl_shutdown_hooks relay_shutdown_listener_last = {NULL, listener_last_plan, listener_last_admitting, NULL};

#define PROPAGATE_BOTH (GRPC_PROPAGATE_DEADLINE | GRPC_PROPAGATE_CANCELLATION)

static const relay_mistake modes[] = {
    {"none", "the correct relay: deadline and cancellation propagate, Work only while time is left", PROPAGATE_BOTH,
     inherit, true, 1, NULL, false, false},
    /* No GRPC_PROPAGATE_DEADLINE: the parent's deadline would clamp the bug away. */
    {"forward-timeout", "each downstream call gets the full timeout the relay received, not the time left",
     GRPC_PROPAGATE_CANCELLATION, forward_timeout, true, 1, NULL, false, false},
    {"drop-deadline", "downstream calls get no deadline at all", GRPC_PROPAGATE_CANCELLATION, inherit, true, 1, NULL,
     false, false},
    {"huge-timeout", "no upstream deadline becomes a 2147483647 ms (int32) deadline downstream", PROPAGATE_BOTH,
     int32_timeout, true, 1, NULL, false, false},
    /* No parent call at all, the right deadline set by hand, and no check
     * before Work: a cancelled Process still runs Lookup and Work to the end.
     * (A parent cannot be used here: gRPC cancels every child created after
     * the parent server call completed, whatever the propagation mask, see
     * PublishToParent in call.cc, so Work would never reach the baseline.) */
    {"ignore-cancel", "cancellation is not propagated and Work still starts after the client gave up", 0, same_deadline,
     false, 1, NULL, false, false},
    {"call-twice", "Work is called a second time whatever the first returned (retry on anything)", PROPAGATE_BOTH,
     inherit, true, 2, NULL, false, false},
    /* The shutdown mistakes: a correct relay whose server mishandles SIGTERM. */
    {"no-handler", "no SIGTERM handler: the process dies at once and the calls in flight fail", PROPAGATE_BOTH, inherit,
     true, 1, &relay_shutdown_no_handler, false, false},
    {"stop-now", "SIGTERM stops the server with no grace (stop(0)): the calls in flight are cut", PROPAGATE_BOTH,
     inherit, true, 1, &relay_shutdown_stop_now, false, false},
    {"wait-forever",
     "SIGTERM waits for the calls in flight without a bound: a stuck call holds the exit until "
     "SIGKILL",
     PROPAGATE_BOTH, inherit, true, 1, &relay_shutdown_wait_forever, false, false},
    {"listener-last",
     "SIGTERM waits for the calls in flight before it closes the listener: new calls keep "
     "arriving",
     PROPAGATE_BOTH, inherit, true, 1, &relay_shutdown_listener_last, false, false},
    /* The overload mistakes: a correct relay that admits calls badly. */
    {"unbounded-queue",
     "calls wait for a downstream slot in a queue with no bound and no deadline check, and are "
     "forwarded whatever time they have left: under overload every call waits and goodput collapses",
     PROPAGATE_BOTH, inherit, true, 1, NULL, true, false},
    {"wait-for-ready",
     "downstream calls use wait_for_ready: with the backend down each call waits for its "
     "deadline instead of failing UNAVAILABLE at once",
     PROPAGATE_BOTH, inherit, true, 1, NULL, false, true},
};

const relay_mistake *relay_mistake_default(void)
{
    return &modes[0];
}

const relay_mistake *relay_mistake_find(const char *name)
{
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
        if (strcmp(modes[i].name, name) == 0)
            return &modes[i];
    return NULL;
}

void relay_mistake_print_list(FILE *f)
{
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
        fprintf(f, "  %-16s %s\n", modes[i].name, modes[i].description);
}

gpr_timespec relay_mistake_effective_deadline(const relay_mistake *m, gpr_timespec upstream, int64_t arrival_ns,
                                              int64_t now_ns)
{
    gpr_timespec own = m->deadline(upstream, arrival_ns, now_ns);
    if (m->propagate & GRPC_PROPAGATE_DEADLINE)
        return gpr_time_min(own, gpr_convert_clock_type(upstream, own.clock_type));
    return own;
}
