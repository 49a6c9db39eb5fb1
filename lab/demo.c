/* demo: side-by-side relay demos for instructors; see demo.h.
 *
 * Each relay runs as a child process in its own group (rl_proc), and every
 * wait has a deadline, so a demo never hangs and never leaves a process. */
#include "demo.h"

#include "relaylab.pb-c.h"
#include "rl_channel.h"
#include "rl_deadline.h"
#include "rl_path.h"
#include "rl_probe.h"
#include "rl_proc.h"

#include <grpc/grpc.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#define READY_MS 10000
#define MAX_RELAYS 6

typedef struct server_proc {
    const char *label;
    rl_proc proc;
    char addr[64];
    grpc_channel *ch;
} server_proc;

/* Starts bin/|prog| with |args| and waits for its "listening on" line. */
static int start_server(server_proc *s, const char *label, const char *prog, const char *const *args)
{
    char path[PATH_MAX];
    const char *argv[16];
    size_t n = 0;
    if (rl_path_sibling(prog, path, sizeof path)) {
        fprintf(stderr, "lab: cannot locate %s next to lab\n", prog);
        return 1;
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
        return 1;
    }
    s->ch = rl_channel_isolated(s->addr, NULL);
    return 0;
}

static void stop_server(server_proc *s)
{
    if (s->ch)
        grpc_channel_destroy(s->ch);
    s->ch = NULL;
    if (s->proc.pid)
        rl_proc_stop(&s->proc, 2000);
    rl_proc_fini(&s->proc);
}

/* Starts the baseline and one relay per |mistakes| entry (NULL = the
 * reference). Returns 0, or 1 after stopping whatever had started. */
static int start_all(server_proc *baseline, server_proc *relays, const char *const *mistakes, size_t n)
{
    if (start_server(baseline, "baseline", "baseline", NULL))
        return 1;
    for (size_t i = 0; i < n; i++) {
        const char *args[] = {"--listen", "127.0.0.1:0", "--baseline", baseline->addr, "--threads", "1",
                              mistakes[i] ? "--mistake" : NULL, mistakes[i], NULL};
        if (start_server(&relays[i], mistakes[i] ? mistakes[i] : "reference", "relay", args)) {
            while (i--)
                stop_server(&relays[i]);
            stop_server(baseline);
            return 1;
        }
    }
    return 0;
}

static void stop_all(server_proc *baseline, server_proc *relays, size_t n)
{
    for (size_t i = 0; i < n; i++)
        stop_server(&relays[i]);
    stop_server(baseline);
}

static bool all_ended(const Relaylab__ObserveReply *r, void *user)
{
    size_t want = *(const size_t *)user;
    if (r->n_calls < want)
        return false;
    for (size_t i = 0; i < r->n_calls; i++)
        if (!r->calls[i]->ended)
            return false;
    return true;
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
        status = rl_status_name(c.status);
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
    server_proc baseline, relays[N];
    grpc_init();
    if (start_all(&baseline, relays, deadline_mistakes, N)) {
        grpc_shutdown();
        return 1;
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
        rl_observe_until(baseline.ch, tag, all_ended, &want, rl_now_ns() + 3 * RL_NS_PER_SEC, 5, &r);
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
        rl_observe_until(baseline.ch, tag, all_ended, &want, rl_now_ns() + 3 * RL_NS_PER_SEC, 5, &r);
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
    return 0;
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
static Relaylab__ObserveReply *cancel_when(server_proc *relay, server_proc *baseline, const char *tag,
                                           uint32_t lookup_ms, rl_observe_pred seen, int64_t *cancel_ns)
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
        rl_observe_until(baseline->ch, tag, all_ended, &want, rl_now_ns() + 4 * RL_NS_PER_SEC, 5, &r);
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
    server_proc baseline, relays[N];
    grpc_init();
    if (start_all(&baseline, relays, cancel_mistakes, N)) {
        grpc_shutdown();
        return 1;
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
    return 0;
}
