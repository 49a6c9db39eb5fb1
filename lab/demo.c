/* demo: side-by-side relay demos for instructors; see demo.h.
 *
 * Each relay runs as a child process in its own group (rl_proc), and every
 * wait has a deadline, so a demo never hangs and never leaves a process. */
#include "demo.h"
#include "status.h"

#include "relaylab.pb-c.h"
#include "rl_channel.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_path.h"
#include "rl_probe.h"
#include "rl_proc.h"
#include "rl_tcp.h"

#include <grpc/grpc.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define READY_MS 10000

int lab_server_start(lab_server *s, const char *label, const char *prog, const char *const *args)
{
    char path[PATH_MAX];
    const char *argv[16];
    size_t n = 0;
    if (rl_path_sibling(prog, path, sizeof path) || access(path, X_OK) != 0) {
        /* Missing is not "not built": the student kit holds no reference. */
        fprintf(stderr,
                "lab: %s: there is no bin/%s next to bin/lab (the student kit has none; in a checkout, "
                "run make)\n",
                label, prog);
        return LAB_EXIT_FAILED;
    }
    argv[n++] = path;
    for (; args && *args && n < 15; args++)
        argv[n++] = *args;
    argv[n] = NULL;
    memset(s, 0, sizeof *s);
    s->label = label;
    rl_proc_options opt = {.argv = argv, .kill_with_parent = true};
    char err[512];
    if (rl_proc_start_server(&s->proc, &opt, READY_MS, s->addr, sizeof s->addr, err, sizeof err)) {
        fprintf(stderr, "lab: %s: %s; run 'make' first?\n", label, err);
        rl_proc_stop(&s->proc, 0);
        rl_proc_fini(&s->proc);
        return LAB_EXIT_FAILED;
    }
    s->ch = rl_channel_isolated(s->addr, NULL);
    return LAB_EXIT_OK;
}

void lab_server_stop(lab_server *s)
{
    if (s->ch)
        grpc_channel_destroy(s->ch);
    s->ch = NULL;
    if (s->proc.pid)
        rl_proc_stop(&s->proc, 2000);
    rl_proc_fini(&s->proc);
}

/* Starts the baseline and one relay per |mistakes| entry (NULL = the
 * reference). Returns LAB_EXIT_OK, or LAB_EXIT_FAILED after stopping
 * whatever had started. */
static int start_all(lab_server *baseline, lab_server *relays, const char *const *mistakes, size_t n)
{
    if (lab_server_start(baseline, "baseline", "baseline", NULL))
        return LAB_EXIT_FAILED;
    for (size_t i = 0; i < n; i++) {
        const char *args[] = {"--listen",
                              "127.0.0.1:0",
                              "--baseline",
                              baseline->addr,
                              "--threads",
                              "1",
                              mistakes[i] ? "--mistake" : NULL,
                              mistakes[i],
                              NULL};
        if (lab_server_start(&relays[i], mistakes[i] ? mistakes[i] : "reference", "relay", args)) {
            while (i--)
                lab_server_stop(&relays[i]);
            lab_server_stop(baseline);
            return LAB_EXIT_FAILED;
        }
    }
    return LAB_EXIT_OK;
}

static void stop_all(lab_server *baseline, lab_server *relays, size_t n)
{
    for (size_t i = 0; i < n; i++)
        lab_server_stop(&relays[i]);
    lab_server_stop(baseline);
}

/* Calls Process and returns its final status name; the call is bounded by
 * its own deadline or by |wait_ms|. */
static const char *process(grpc_channel *ch, const char *tag, int64_t budget_ms, uint32_t lookup_ms, uint32_t steps,
                           uint32_t step_ms, int64_t *deadline_ns)
{
    Relaylab__ProcessRequest req = RELAYLAB__PROCESS_REQUEST__INIT;
    req.tag = (char *)tag;
    req.lookup_delay_ms = lookup_ms;
    req.steps = steps;
    req.step_ms = step_ms;
    rl_probe_call c;
    memset(&c, 0, sizeof c);
    *deadline_ns = budget_ms < 0 ? RL_NO_DEADLINE : rl_now_ns() + budget_ms * RL_NS_PER_MS;
    const char *status = "no answer";
    if (rl_probe_call_start(&c, ch, "/relaylab.Relay/Process", &req.base, *deadline_ns) == 0 &&
        rl_probe_call_wait(&c, rl_now_ns() + 10 * RL_NS_PER_SEC) == 0)
        status = rl_status_name(c.batch.status);
    rl_probe_call_fini(&c);
    return status;
}

/* "697 ms" / "none" for what a record arrived with. */
static void received(const Relaylab__CallRecord *r, char *buf, size_t len)
{
    if (!r)
        snprintf(buf, len, "not called");
    else if (!r->has_deadline)
        snprintf(buf, len, "none");
    else
        snprintf(buf, len, "%lld ms", (long long)r->deadline_ms);
}

static void received_vs_left(const Relaylab__CallRecord *r, int64_t deadline_ns, char *buf, size_t len)
{
    char got[24];
    received(r, got, sizeof got);
    if (!r || deadline_ns == RL_NO_DEADLINE)
        snprintf(buf, len, "%s", got);
    else
        snprintf(buf, len, "%s (%lld left)", got, (long long)((deadline_ns - r->arrival_ns) / RL_NS_PER_MS));
}

static const char *const deadline_mistakes[] = {NULL, "forward-timeout", "drop-deadline", "huge-timeout"};
static const char *const deadline_lessons[] = {
    "the time left, every hop",
    "Work got the original timeout, unchanged",
    "the deadline was dropped",
    "no deadline became 24.8 days",
};

int lab_demo_deadline(void)
{
    enum { N = sizeof deadline_mistakes / sizeof *deadline_mistakes };
    lab_server baseline, relays[N];
    grpc_init();
    if (start_all(&baseline, relays, deadline_mistakes, N)) {
        grpc_shutdown();
        return LAB_EXIT_FAILED;
    }
    printf("Deadline demo: the client gives each relay 1000 ms; Lookup takes 300 ms, then Work.\n"
           "What the baseline received (and what truly remained at that moment):\n\n");
    printf("%-16s %-18s %-22s %-22s %s\n", "relay", "client got", "Lookup received", "Work received", "lesson");
    for (size_t i = 0; i < N; i++) {
        char tag[64];
        snprintf(tag, sizeof tag, "demo-budget-%zu", i);
        int64_t d;
        const char *st = process(relays[i].ch, tag, 1000, 300, 1, 10, &d);
        size_t want = 2;
        Relaylab__ObserveReply *r = NULL;
        rl_observe_until(baseline.ch, tag, rl_observe_all_ended, &want, rl_now_ns() + 3 * RL_NS_PER_SEC, 5, &r);
        char lk[64], wk[64];
        received_vs_left(r ? rl_observe_find(r, "Lookup", 0) : NULL, d, lk, sizeof lk);
        received_vs_left(r ? rl_observe_find(r, "Work", 0) : NULL, d, wk, sizeof wk);
        printf("%-16s %-18s %-22s %-22s %s\n", relays[i].label, st, lk, wk, deadline_lessons[i]);
        if (r)
            relaylab__observe_reply__free_unpacked(r, NULL);
    }
    printf("\nThe same call with no deadline at all (the right answer is none, every hop):\n\n");
    printf("%-16s %-18s %-22s %-22s\n", "relay", "client got", "Lookup received", "Work received");
    for (size_t i = 0; i < N; i++) {
        char tag[64];
        snprintf(tag, sizeof tag, "demo-none-%zu", i);
        int64_t d;
        const char *st = process(relays[i].ch, tag, -1, 10, 1, 10, &d);
        size_t want = 2;
        Relaylab__ObserveReply *r = NULL;
        rl_observe_until(baseline.ch, tag, rl_observe_all_ended, &want, rl_now_ns() + 3 * RL_NS_PER_SEC, 5, &r);
        char lk[64], wk[64];
        received(r ? rl_observe_find(r, "Lookup", 0) : NULL, lk, sizeof lk);
        received(r ? rl_observe_find(r, "Work", 0) : NULL, wk, sizeof wk);
        printf("%-16s %-18s %-22s %-22s\n", relays[i].label, st, lk, wk);
        if (r)
            relaylab__observe_reply__free_unpacked(r, NULL);
    }
    printf("\nGrade a relay with: bin/grader deadline --submission 'COMMAND'\n");
    stop_all(&baseline, relays, N);
    grpc_shutdown();
    return LAB_EXIT_OK;
}

/* Work has done a few steps: cancelling then shows how many more it does. */
static bool work_running(const Relaylab__ObserveReply *r, void *user)
{
    (void)user;
    const Relaylab__CallRecord *w = rl_observe_find(r, "Work", 0);
    return w && w->steps_done >= 3;
}

static bool lookup_running(const Relaylab__ObserveReply *r, void *user)
{
    (void)user;
    return rl_observe_find(r, "Lookup", 0) != NULL;
}

/* Starts Process, cancels it once |seen| holds at the baseline, waits for
 * the baseline's calls to end, and returns the final records (or NULL). */
static Relaylab__ObserveReply *cancel_when(lab_server *relay, lab_server *baseline, const char *tag, uint32_t lookup_ms,
                                           rl_observe_pred seen, int64_t *cancel_ns)
{
    Relaylab__ProcessRequest req = RELAYLAB__PROCESS_REQUEST__INIT;
    req.tag = (char *)tag;
    req.lookup_delay_ms = lookup_ms;
    req.steps = 100;
    req.step_ms = 20;
    rl_probe_call c;
    memset(&c, 0, sizeof c);
    Relaylab__ObserveReply *r = NULL;
    *cancel_ns = 0;
    if (rl_probe_call_start(&c, relay->ch, "/relaylab.Relay/Process", &req.base, RL_NO_DEADLINE) == 0 &&
        rl_observe_until(baseline->ch, tag, seen, NULL, rl_now_ns() + 5 * RL_NS_PER_SEC, 2, &r) == 0) {
        *cancel_ns = rl_probe_call_cancel(&c);
        rl_probe_call_wait(&c, rl_now_ns() + 5 * RL_NS_PER_SEC);
        relaylab__observe_reply__free_unpacked(r, NULL);
        r = NULL;
        /* A relay that ignores the cancel runs Work to its end (2 s) and
         * may call Work after Lookup: wait for both, bounded. */
        size_t want = lookup_ms ? 2 : 1;
        rl_observe_until(baseline->ch, tag, rl_observe_all_ended, &want, rl_now_ns() + 4 * RL_NS_PER_SEC, 5, &r);
    }
    rl_probe_call_fini(&c);
    return r;
}

static void describe_after_cancel(const Relaylab__CallRecord *rec, int64_t cancel_ns, char *buf, size_t len)
{
    if (!rec) {
        snprintf(buf, len, "never called");
        return;
    }
    if (!rec->ended) {
        snprintf(buf, len, "still running");
        return;
    }
    int64_t after = rec->end_ns > cancel_ns ? (rec->end_ns - cancel_ns) / RL_NS_PER_MS : 0;
    if (rec->arrival_ns > cancel_ns)
        snprintf(buf, len, "started after the cancel, %s, %u steps", rl_status_name(rec->status), rec->steps_done);
    else
        snprintf(buf, len, "%s %lld ms after, %u steps", rl_status_name(rec->status), (long long)after,
                 rec->steps_done);
}

static const char *const cancel_mistakes[] = {NULL, "ignore-cancel"};

int lab_demo_cancel(void)
{
    enum { N = sizeof cancel_mistakes / sizeof *cancel_mistakes };
    lab_server baseline, relays[N];
    grpc_init();
    if (start_all(&baseline, relays, cancel_mistakes, N)) {
        grpc_shutdown();
        return LAB_EXIT_FAILED;
    }
    printf("Cancel demo: Process runs Work (100 steps of 20 ms); the client gives up while Work runs,\n"
           "then again while Lookup (1000 ms) runs. What the baseline saw after the cancel:\n\n");
    printf("%-16s %-40s %-40s\n", "relay", "cancel during Work: Work", "cancel during Lookup: Lookup / Work");
    for (size_t i = 0; i < N; i++) {
        char tag[64], during_work[64], lk[64], wk[64];
        int64_t cancel_ns;
        snprintf(tag, sizeof tag, "demo-cancel-work-%zu", i);
        Relaylab__ObserveReply *r = cancel_when(&relays[i], &baseline, tag, 0, work_running, &cancel_ns);
        describe_after_cancel(r ? rl_observe_find(r, "Work", 0) : NULL, cancel_ns, during_work, sizeof during_work);
        if (r)
            relaylab__observe_reply__free_unpacked(r, NULL);
        snprintf(tag, sizeof tag, "demo-cancel-lookup-%zu", i);
        r = cancel_when(&relays[i], &baseline, tag, 1000, lookup_running, &cancel_ns);
        describe_after_cancel(r ? rl_observe_find(r, "Lookup", 0) : NULL, cancel_ns, lk, sizeof lk);
        describe_after_cancel(r ? rl_observe_find(r, "Work", 0) : NULL, cancel_ns, wk, sizeof wk);
        if (r)
            relaylab__observe_reply__free_unpacked(r, NULL);
        printf("%-16s %-40s %s / %s\n", relays[i].label, during_work, lk, wk);
    }
    printf("\nGrade a relay with: bin/grader cancel --submission 'COMMAND'\n");
    stop_all(&baseline, relays, N);
    grpc_shutdown();
    return LAB_EXIT_OK;
}

/* ---- shutdown ---------------------------------------------------------- */

/* Each relay gets SIGTERM with two calls in flight: a short one whose Work
 * (5 x 100 ms) ends well inside the grace, and a long one whose Work
 * (60 x 100 ms) outlives it. A grace of seconds keeps the demo short; the
 * exit is awaited for the grace plus the grader's own slack (1.5 s: the
 * grace's timer, cancelling, tearing gRPC down on a loaded machine). */
#define SD_GRACE_MS      1500
#define SD_GRACE_ARG     "1500"
#define SD_STEP_MS       100
#define SD_SHORT_STEPS   5
#define SD_LONG_STEPS    60
#define SD_EXIT_SLACK_MS 1500
/* The new call goes out once the listener is closed, or this long after
 * SIGTERM if it never closes (listener-last keeps admitting): a relay
 * closes it within milliseconds, so this is a loaded machine's scheduling
 * delay many times over, and still well before the grace ends. */
#define SD_NEW_CALL_AFTER_MS    700
#define SD_NEW_CALL_DEADLINE_MS 3000
/* A refusal takes a few ms; one slower than this waited for something. */
#define SD_REFUSE_MS 1000
#define SD_REACH_MS  5000

static const char *const shutdown_mistakes[] = {NULL, "no-handler", "stop-now", "wait-forever", "listener-last"};
static const char *const shutdown_lessons[] = {
    "the rule", "dies at once", "no grace", "no bound: needs SIGKILL", "admits during the drain",
};

/* True once |addr| ("127.0.0.1:PORT") accepts no TCP connection. */
static bool listener_closed(const char *addr)
{
    rl_tcp_answer a;
    return rl_tcp_probe(rl_tcp_port_of(addr), 100, &a) == RL_OK && a == RL_TCP_REFUSED;
}

static bool work_underway(const Relaylab__ObserveReply *r, void *user)
{
    (void)user;
    const Relaylab__CallRecord *w = rl_observe_find(r, "Work", 0);
    return w && !w->ended && w->steps_done >= 1;
}

static bool work_over(const Relaylab__ObserveReply *r, void *user)
{
    (void)user;
    const Relaylab__CallRecord *w = rl_observe_find(r, "Work", 0);
    return w && w->ended;
}

/* Starts Process with Work |steps| x SD_STEP_MS and no deadline, and waits
 * (bounded) until the baseline shows its Work running. Returns 0 or 1. */
static int start_until_work(rl_probe_call *c, lab_server *relay, lab_server *baseline, const char *tag, uint32_t steps)
{
    Relaylab__ProcessRequest req = RELAYLAB__PROCESS_REQUEST__INIT;
    req.tag = (char *)tag;
    req.steps = steps;
    req.step_ms = SD_STEP_MS;
    Relaylab__ObserveReply *r = NULL;
    int rc = rl_probe_call_start(c, relay->ch, "/relaylab.Relay/Process", &req.base, RL_NO_DEADLINE) == 0 &&
                     rl_observe_until(baseline->ch, tag, work_underway, NULL, rl_now_ns() + SD_REACH_MS * RL_NS_PER_MS,
                                      5, &r) == 0
                 ? 0
                 : 1;
    if (r)
        relaylab__observe_reply__free_unpacked(r, NULL);
    return rc;
}

static long long ms_after(int64_t s, int64_t t)
{
    return (long long)((t - s) / RL_NS_PER_MS);
}

/* "OK at 412 ms" / "UNAVAILABLE at 3 ms" / "no answer": a call in flight at
 * SIGTERM |s|. */
static void describe_call(const rl_probe_call *c, int64_t s, char *buf, size_t len)
{
    if (!c->done)
        snprintf(buf, len, "no answer");
    else
        snprintf(buf, len, "%s at %lld ms", rl_status_name(c->batch.status), ms_after(s, c->end_ns));
}

/* "refused UNAVAILABLE in 1 ms" / "served OK in 104 ms": the call started
 * after SIGTERM. */
static void describe_new(const rl_probe_call *c, char *buf, size_t len)
{
    if (!c->started)
        snprintf(buf, len, "not made");
    else if (!c->done)
        snprintf(buf, len, "no answer");
    else if (c->batch.status == GRPC_STATUS_OK)
        snprintf(buf, len, "served OK in %lld ms", ms_after(c->start_ns, c->end_ns));
    else
        snprintf(buf, len, "%s %s in %lld ms", ms_after(c->start_ns, c->end_ns) > SD_REFUSE_MS ? "failed" : "refused",
                 rl_status_name(c->batch.status), ms_after(c->start_ns, c->end_ns));
}

/* What the baseline recorded of the long call's Work. */
static void describe_work(const Relaylab__CallRecord *w, int64_t s, bool killed, int64_t at, char *buf, size_t len)
{
    if (!w)
        snprintf(buf, len, "never called");
    else if (!w->ended && killed)
        snprintf(buf, len, "still running at %lld ms", ms_after(s, at));
    else if (!w->ended)
        snprintf(buf, len, "still running after the exit");
    else if (w->cancelled)
        snprintf(buf, len, "cancelled at %lld ms", ms_after(s, w->end_ns));
    else if (w->status == GRPC_STATUS_OK)
        snprintf(buf, len, "completed at %lld ms", ms_after(s, w->end_ns));
    else
        snprintf(buf, len, "%s at %lld ms", rl_status_name(w->status), ms_after(s, w->end_ns));
}

static void describe_exit(const rl_proc *p, int64_t s, bool killed, int64_t at, char *buf, size_t len)
{
    if (killed)
        snprintf(buf, len, "killed at %lld ms", ms_after(s, at));
    else if (p->term_sig)
        snprintf(buf, len, "died of %s at %lld ms", rl_signal_name(p->term_sig), ms_after(s, p->exit_ns));
    else
        snprintf(buf, len, "status %d at %lld ms", p->exit_code, ms_after(s, p->exit_ns));
}

/* Polls every call not yet done, without blocking: a call's end is the
 * instant a wait sees its status. */
static void poll_calls(rl_probe_call *calls, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (calls[i].started && !calls[i].done)
            rl_probe_call_wait(&calls[i], 0);
}

static bool calls_done(const rl_probe_call *calls, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (calls[i].started && !calls[i].done)
            return false;
    return true;
}

/* One row: starts a relay with |mistake| (NULL: the reference), puts the
 * two calls in flight, sends SIGTERM, makes the new call, and follows the
 * calls and the process to the end, bounded. Returns LAB_EXIT_OK, or LAB_EXIT_FAILED when the relay
 * could not be started. */
static int shutdown_row(lab_server *baseline, size_t i)
{
    const char *mistake = shutdown_mistakes[i];
    const char *args[] = {"--listen",
                          "127.0.0.1:0",
                          "--baseline",
                          baseline->addr,
                          "--grace-ms",
                          SD_GRACE_ARG,
                          mistake ? "--mistake" : NULL,
                          mistake,
                          NULL};
    lab_server relay;
    if (lab_server_start(&relay, mistake ? mistake : "reference", "relay", args))
        return LAB_EXIT_FAILED;
    enum { LONG, SHORT, NEW, NCALLS };
    rl_probe_call calls[NCALLS];
    memset(calls, 0, sizeof calls);
    char tags[NCALLS][64];
    for (int k = 0; k < NCALLS; k++)
        snprintf(tags[k], sizeof tags[k], "demo-shutdown-%zu-%s", i, k == LONG ? "long" : k == SHORT ? "short" : "new");
    if (start_until_work(&calls[LONG], &relay, baseline, tags[LONG], SD_LONG_STEPS) ||
        start_until_work(&calls[SHORT], &relay, baseline, tags[SHORT], SD_SHORT_STEPS)) {
        printf("%-14s %s\n", relay.label, "its Work never ran at the baseline: see the relay's output");
        for (int k = 0; k < NCALLS; k++)
            rl_probe_call_fini(&calls[k]);
        lab_server_stop(&relay);
        return LAB_EXIT_OK;
    }
    /* The signal goes to the relay itself, as an orchestrator sends it. */
    kill(relay.proc.pid, SIGTERM);
    int64_t s = rl_now_ns();
    int64_t new_at = s + SD_NEW_CALL_AFTER_MS * RL_NS_PER_MS;
    int64_t exit_by = s + (SD_GRACE_MS + SD_EXIT_SLACK_MS) * RL_NS_PER_MS;
    bool new_made = false;
    for (;;) {
        poll_calls(calls, NCALLS);
        bool alive = rl_proc_alive(&relay.proc);
        if (!new_made && (rl_now_ns() >= new_at || !alive || listener_closed(relay.addr))) {
            Relaylab__ProcessRequest req = RELAYLAB__PROCESS_REQUEST__INIT;
            req.tag = tags[NEW];
            req.steps = 1;
            req.step_ms = 1;
            rl_probe_call_start(&calls[NEW], relay.ch, "/relaylab.Relay/Process", &req.base,
                                rl_now_ns() + SD_NEW_CALL_DEADLINE_MS * RL_NS_PER_MS);
            new_made = true; /* once, even if gRPC refused the batch (then "not made") */
        }
        if ((!alive && new_made && calls_done(calls, NCALLS)) || rl_now_ns() >= exit_by)
            break;
        rl_sleep_ms(2, NULL);
    }
    /* What Work was doing when the relay ended: read before a kill, whose
     * dropped connection would cancel it. */
    bool killed = rl_proc_alive(&relay.proc);
    int64_t end_at = rl_now_ns();
    Relaylab__ObserveReply *r = NULL;
    bool observed;
    if (killed) {
        observed = rl_observe(baseline->ch, tags[LONG], 2000, &r) == 0;
        rl_proc_stop(&relay.proc, 0);
    } else {
        observed =
            rl_observe_until(baseline->ch, tags[LONG], work_over, NULL, rl_now_ns() + RL_NS_PER_SEC, 5, &r) != RL_EGRPC;
    }
    int64_t calls_by = rl_now_ns() + 2 * RL_NS_PER_SEC;
    while (!calls_done(calls, NCALLS) && rl_now_ns() < calls_by) {
        poll_calls(calls, NCALLS);
        rl_sleep_ms(2, NULL);
    }
    char shortc[64], newc[64], work[64], ex[64];
    describe_call(&calls[SHORT], s, shortc, sizeof shortc);
    describe_new(&calls[NEW], newc, sizeof newc);
    if (observed && r)
        describe_work(rl_observe_find(r, "Work", 0), s, killed, end_at, work, sizeof work);
    else
        snprintf(work, sizeof work, "the observer did not answer");
    describe_exit(&relay.proc, s, killed, end_at, ex, sizeof ex);
    printf("%-14s %-22s %-30s %-29s %-26s %s\n", relay.label, shortc, newc, work, ex, shutdown_lessons[i]);
    fflush(stdout);
    if (r)
        relaylab__observe_reply__free_unpacked(r, NULL);
    for (int k = 0; k < NCALLS; k++)
        rl_probe_call_fini(&calls[k]);
    lab_server_stop(&relay);
    return LAB_EXIT_OK;
}

int lab_demo_shutdown(void)
{
    enum { N = sizeof shutdown_mistakes / sizeof *shutdown_mistakes };
    lab_server baseline;
    grpc_init();
    if (lab_server_start(&baseline, "baseline", "baseline", NULL)) {
        grpc_shutdown();
        return LAB_EXIT_FAILED;
    }
    printf("Shutdown demo: each relay runs with a %d ms grace (--grace-ms) and gets SIGTERM while two calls\n"
           "run: a short one (Work %d x %d ms, done inside the grace) and a long one (Work %d x %d ms, outliving\n"
           "it). Once the listener is closed (or %d ms after SIGTERM) a new call is made. Times are ms after\n"
           "SIGTERM; the process is killed if it has not exited %d ms after it.\n\n",
           SD_GRACE_MS, SD_SHORT_STEPS, SD_STEP_MS, SD_LONG_STEPS, SD_STEP_MS, SD_NEW_CALL_AFTER_MS,
           SD_GRACE_MS + SD_EXIT_SLACK_MS);
    printf("%-14s %-22s %-30s %-29s %-26s %s\n", "relay", "short call", "new call after SIGTERM", "long call's Work",
           "exit", "lesson");
    fflush(stdout);
    int rc = LAB_EXIT_OK;
    for (size_t i = 0; i < N && rc == LAB_EXIT_OK; i++)
        rc = shutdown_row(&baseline, i);
    if (rc == LAB_EXIT_OK)
        printf("\nGrade a relay with: bin/grader shutdown --submission 'COMMAND'\n");
    lab_server_stop(&baseline);
    grpc_shutdown();
    return rc;
}

int lab_demo_picture_path(const char *name, char *out, size_t len)
{
    const char *asked = getenv("RELAYLAB_DEMO_SVG");
    if (asked && *asked) {
        snprintf(out, len, "%s", asked);
        return 0;
    }
    char bin[PATH_MAX], dir[PATH_MAX + 32], real[PATH_MAX];
    if (rl_path_exe_dir(bin, sizeof bin) != RL_OK)
        return -1;
    snprintf(dir, sizeof dir, "%s/../build", bin);
    mkdir(dir, 0755);
    snprintf(dir, sizeof dir, "%s/../build/demos", bin);
    if ((mkdir(dir, 0755) != 0 && errno != EEXIST) || !realpath(dir, real))
        return -1;
    snprintf(out, len, "%s/%s", real, name);
    return 0;
}
