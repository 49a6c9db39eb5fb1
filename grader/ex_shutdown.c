/* ex_shutdown: the graceful-shutdown exercise. When the platform sends
 * SIGTERM, a relay closes admission first (new calls fail UNAVAILABLE at
 * once, so clients go to a live instance), lets the calls it admitted
 * finish within the grace it was given (RELAYLAB_GRACE_MS), ends what
 * outlives the grace together with the downstream calls it made, and exits
 * 0. The grader sends the signal at an instant S it records itself, chosen
 * when the baseline shows the downstream Work running, and judges on the
 * same clock what the client saw, what the baseline saw and how the
 * process ended. The last scenario replaces one of two instances behind a
 * round_robin channel under steady load, as a rolling restart does. */
#include "exercise.h"
#include "process.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_probe.h"
#include "rl_proc.h"
#include "rl_tcp.h"
#include "run.h"
#include "scenario.h"
#include "shutdown_figure.h"
#include "shutdown_judge.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The grace the submission is given (RELAYLAB_GRACE_MS), far under
 * Kubernetes' 30 s default so that a run takes seconds. */
#define GRACE_MS  2000
#define GRACE_ENV "RELAYLAB_GRACE_MS=2000"
/* Work of the call in flight at SIGTERM: 8 x 100 ms, well inside the grace;
 * and of the call that outlives it: 40 x 100 ms. */
#define STEP_MS 100
/* How long after SIGTERM refuses-new waits to see a process the signal
 * killed as dead: the death is at once, its reaping may lag a loaded
 * grader; a process still running by then was not killed by the signal. */
#define DEATH_SEEN_MS 1000
#define SHORT_STEPS   8
#define LONG_STEPS    40
/* How soon the listener closes after SIGTERM and what a refusal is:
 * GR_SHUTDOWN_ADMISSION_MS, gr_shutdown_refused (shutdown_judge.h). A new call gets
 * NEW_CALL_MS, far more than a refusal takes: one that waits for it is the
 * mistake. */
#define NEW_CALL_MS 5000
/* How long after its listener closed a server has to tell a connected
 * client it is going (an HTTP/2 GOAWAY): every stack measured sends it with
 * the close, read by the client within 2 ms (refuses_new). */
#define GOAWAY_MS 1000
/* What the exit may take past the grace: the grace's own timer, cancelling
 * the calls, tearing gRPC down, on a loaded machine. */
#define EXIT_SLACK_MS 1500
/* When the grace ends, the downstream Work must end with it, within
 * GR_SHUTDOWN_GRACE_LATE_MS after and GR_SHUTDOWN_GRACE_EARLY_MS before
 * (shutdown_judge.h, where the integration tests read them too). Every
 * verdict is shutdown_judge.c's, from the facts a scenario measured. */

static const char *const shutdown_env[] = {GRACE_ENV, NULL};

/* Sends SIGTERM to the submission; returns 0 with *at the instant, or
 * GR_DECIDED (CRASH when it had already died, ERROR when the
 * signal could not be sent). */
static int send_sigterm(gr_ctx *ctx, int instance, int64_t *at, gr_scenario_result *out)
{
    int rc = gr_signal_submission_at(ctx, instance, SIGTERM);
    *at = rl_now_ns();
    if (rc == RL_ECHILD && gr_scenario_crash_check(ctx, true, "before the grader sent SIGTERM", out))
        return GR_DECIDED;
    if (rc != RL_OK)
        return gr_result(out, GR_ERROR, "cannot send the submission SIGTERM: %s", rl_strerror(rc));
    return 0;
}

/* True once no new TCP connection to |addr| ("127.0.0.1:PORT") is
 * accepted: the listener is closed. */
static bool listener_closed(const char *addr)
{
    rl_tcp_answer a;
    return rl_tcp_probe(rl_tcp_port_of(addr), 200, &a) == RL_OK && a == RL_TCP_REFUSED;
}

/* Starts Process with Work |steps| x STEP_MS and waits until Work runs. */
static int start_in_flight(gr_ctx *ctx, rl_probe_call *c, const char *tag, uint32_t steps, gr_scenario_result *out)
{
    return gr_process_start_and_reach(ctx, c, tag, "Work", 0, steps, STEP_MS, GR_PROCESS_REACH_MS, out);
}

/* True once the baseline shows the (first) Work of the records ended. */
static bool work_ended(const Relaylab__ObserveReply *r, void *user)
{
    (void)user;
    const Relaylab__CallRecord *rec = rl_observe_find(r, "Work", 0);
    return rec && rec->ended;
}

/* in-flight: the call running at SIGTERM completes OK. A starved grader
 * can send the signal so late that the call's Work is over, or nearly, by
 * then: a server that stops at once would still answer it, so such a run
 * tells nothing (gr_shutdown_signal_in_time). It is taken again on a fresh
 * instance, IN_FLIGHT_TRIES times at most, and then ERROR, never PASS. */
#define IN_FLIGHT_TRIES    3
#define IN_FLIGHT_TOO_LATE 2 /* in_flight_try: the run could not tell */

/* Before a call in flight that completed OK at SIGTERM |s| counts for a
 * drain: how long its Work ran on after the signal (*left_ms: its end at
 * the baseline; the client's answer, later, when there is no record), which
 * is how long a server that stops at once had to show it. Returns 0 when
 * that was long enough (gr_shutdown_signal_in_time), IN_FLIGHT_TOO_LATE when
 * not, GR_DECIDED on the observer's ERROR. */
static int signal_in_time(gr_ctx *ctx, const char *tag, const rl_probe_call *c, int64_t s, int64_t *left_ms,
                          gr_scenario_result *out)
{
    Relaylab__ObserveReply *obs = NULL;
    int rc = gr_process_observe_until(ctx, tag, work_ended, NULL, rl_now_ns() + GR_SCENARIO_CANCEL_MS * RL_NS_PER_MS, 5,
                                      &obs);
    int decided = gr_scenario_observed(rc, obs, out);
    if (!decided) {
        const Relaylab__CallRecord *w = rl_observe_find(obs, "Work", 0);
        *left_ms = gr_ms_between(s, w && w->ended ? w->end_ns : c->end_ns);
        if (!gr_shutdown_signal_in_time(*left_ms, SHORT_STEPS, STEP_MS))
            decided = IN_FLIGHT_TOO_LATE;
    }
    gr_scenario_free_obs(&obs);
    return decided;
}

/* Starts a call of SHORT_STEPS under |tag| and sends SIGTERM while it runs
 * (at *s_ns), or once it was answered when |late| (the grader's own test of
 * a signal that comes too late, as from a grader starved past its Work).
 * Returns 0, or nonzero with |out| decided. */
static int signal_in_flight(gr_ctx *ctx, rl_probe_call *c, const char *tag, bool late, int64_t *s_ns,
                            gr_scenario_result *out)
{
    if (start_in_flight(ctx, c, tag, SHORT_STEPS, out))
        return GR_DECIDED;
    if (late)
        rl_probe_call_wait(c, rl_now_ns() + (SHORT_STEPS * STEP_MS + GRACE_MS) * RL_NS_PER_MS);
    return send_sigterm(ctx, 0, s_ns, out) ? GR_DECIDED : 0;
}

/* One run of in-flight with tag |tag|, SIGTERM sent late when |late|:
 * returns 0 or GR_DECIDED with |out| set, or IN_FLIGHT_TOO_LATE
 * with |out| untouched and *left_ms how long the Work ran on after SIGTERM
 * (negative: it had ended). */
static int in_flight_try(gr_ctx *ctx, const char *tag, bool late, int64_t *left_ms, gr_scenario_result *out)
{
    rl_probe_call c;
    int64_t s;
    int decided = 0;
    if (signal_in_flight(ctx, &c, tag, late, &s, out))
        goto done;
    char fb[GR_FEEDBACK_MAX], why[256], st[200];
    gr_shutdown_in_flight_facts f = {.grace_ms = GRACE_MS, .waited_ms = GRACE_MS + EXIT_SLACK_MS, .status = st};
    f.answered = rl_probe_call_wait(&c, s + (GRACE_MS + EXIT_SLACK_MS) * RL_NS_PER_MS) == RL_OK;
    if (!f.answered) {
        gr_result(out, gr_shutdown_judge_in_flight(&f, fb, sizeof fb), "%s", fb);
        goto done;
    }
    rl_probe_call_release(&c);
    f.ms = gr_ms_between(s, c.end_ns);
    if ((f.ok = gr_process_reply_ok(&c, tag, why, sizeof why))) {
        if (!(decided = signal_in_time(ctx, tag, &c, s, left_ms, out))) {
            f.left_ms = *left_ms;
            gr_result(out, gr_shutdown_judge_in_flight(&f, fb, sizeof fb), "%s", fb);
            gr_shutdown_figure(out, &c, s, NULL, 0, NULL, true, GRACE_MS);
        }
        goto done;
    }
    gr_process_status_text(&c, st, sizeof st);
    gr_exit ex;
    gr_await_submission_exit(ctx, GR_SCENARIO_EXIT_LAG_MS, false, &ex);
    gr_shutdown_figure(out, &c, s, NULL, 0, ex.exited ? &ex : NULL, false, GRACE_MS);
    f.ex = &ex;
    gr_result(out, gr_shutdown_judge_in_flight(&f, fb, sizeof fb), "%s", fb);
done:
    gr_scenario_done(&c, NULL);
    return decided;
}

/* One run of a scenario with a call in flight at SIGTERM, as in_flight_try. */
typedef int (*in_flight_fn)(gr_ctx *ctx, const char *tag, bool late, int64_t *left_ms, gr_scenario_result *out);

/* Runs |run| until a run tells, IN_FLIGHT_TRIES times at most, its first
 * |late_tries| with the signal sent late. */
static int in_flight_runs(gr_ctx *ctx, in_flight_fn run, int late_tries, gr_scenario_result *out)
{
    int64_t left[IN_FLIGHT_TRIES] = {0};
    for (int i = 0; i < IN_FLIGHT_TRIES; i++) {
        if (i) {
            /* The last run's instance got SIGTERM: it drains and exits (or
             * is ended), and a fresh one takes its port. */
            gr_exit ex;
            gr_await_submission_exit(ctx, GRACE_MS + EXIT_SLACK_MS, true, &ex);
            if (gr_restart_submission(ctx, 0, out) != RL_OK)
                return 0;
        }
        char tag[200];
        snprintf(tag, sizeof tag, "%s.%d", gr_tag(ctx), i);
        int rc = run(ctx, tag, i < late_tries, &left[i], out);
        if (rc != IN_FLIGHT_TOO_LATE)
            return rc;
    }
    char fb[GR_FEEDBACK_MAX];
    gr_verdict v = gr_shutdown_judge_too_late(left, IN_FLIGHT_TRIES, SHORT_STEPS, STEP_MS, fb, sizeof fb);
    return gr_result(out, v, "%s", fb);
}

static int in_flight(gr_ctx *ctx, gr_scenario_result *out)
{
    return in_flight_runs(ctx, in_flight_try, 0, out);
}

/* refuses-new: after SIGTERM the listener closes at once, and a new call
 * fails fast while the admitted one still runs. Which status it gets is the
 * library's, not the server's code: measured with the reference relay (C
 * core 1.51), a stream that reached the draining connection before the
 * client saw its GOAWAY was cancelled (CANCELLED in 1 ms); one that came
 * after went to a new connection, refused (UNAVAILABLE). Both are a fast
 * refusal; being served, or left to the deadline, is the mistake. */
static int refuses_new(gr_ctx *ctx, gr_scenario_result *out)
{
    const char *tag = gr_tag(ctx);
    const char *addr = gr_submission_addr(ctx);
    rl_probe_call c, n;
    memset(&n, 0, sizeof n);
    int64_t s;
    if (start_in_flight(ctx, &c, tag, 15, out) || send_sigterm(ctx, 0, &s, out))
        goto done;
    int64_t closed = 0;
    while (!closed && rl_now_ns() < s + GR_SHUTDOWN_ADMISSION_MS * RL_NS_PER_MS && !gr_interrupted(ctx)) {
        if (listener_closed(addr))
            closed = rl_now_ns();
        else
            rl_sleep_ms(5, NULL);
    }
    char fb[GR_FEEDBACK_MAX], st[200];
    gr_shutdown_refuses_facts f = {.closed = closed != 0, .status_text = st};
    if (!closed) {
        gr_exit ex;
        bool exited = gr_await_submission_exit(ctx, 0, false, &ex) == RL_OK;
        f.ex = exited ? &ex : NULL;
        gr_result(out, gr_shutdown_judge_refuses_new(&f, fb, sizeof fb), "%s", fb);
        gr_shutdown_open_figure(out, &c, s, exited && gr_shutdown_exit_mistake(&ex) ? &ex : NULL,
                                c.done && c.batch.status == GRPC_STATUS_OK, GRACE_MS, GR_SHUTDOWN_ADMISSION_MS);
        goto done;
    }
    /* A new call on the connection the admitted call still uses: the server
     * must refuse it, not serve it and not leave it waiting. It starts once
     * the client has read what the server sent (a live client reads a
     * GOAWAY as it arrives): a call that raced the GOAWAY is the protocol's
     * window, which grpc-go serves and the C core cancels, not admission
     * after the server said it was going. A server that sends no GOAWAY
     * within GOAWAY_MS of closing its listener gets the call on its open
     * connection. */
    bool told = rl_probe_channel_read(gr_submission_channel(ctx), closed + GOAWAY_MS * RL_NS_PER_MS);
    char tag2[200];
    snprintf(tag2, sizeof tag2, "%s.new", tag);
    int64_t started = rl_now_ns();
    if (gr_process_start(ctx, &n, tag2, 0, 1, 1, started + NEW_CALL_MS * RL_NS_PER_MS, out) ||
        gr_scenario_wait(&n, out))
        goto done;
    f.took_ms = gr_ms_between(started, n.end_ns);
    f.after_ms = gr_ms_between(s, started);
    rl_probe_call_wait(&c, 0);
    gr_shutdown_figure(out, &c, s, &n, closed, NULL, c.done && c.batch.status == GRPC_STATUS_OK, GRACE_MS);
    gr_process_status_text(&n, st, sizeof st);
    /* A process the signal killed refuses everything, as a dead one does:
     * no admission was closed while a call drained, so that is no PASS.
     * Asked only when the admitted call is over (a drain keeps it running),
     * and with a bound, since the grader may not have reaped the death yet
     * when the refusal came (seen: the C relay, refused in 0 ms). */
    gr_exit died;
    bool killed_by_sigterm = rl_probe_call_wait(&c, 0) == RL_OK &&
                             gr_await_submission_exit(ctx, DEATH_SEEN_MS, false, &died) == RL_OK && died.exited &&
                             died.signal == SIGTERM;
    f.died = killed_by_sigterm ? &died : NULL;
    f.status = n.batch.status;
    f.told = told;
    f.closed_ms = gr_ms_between(s, closed);
    f.admitted_ended = rl_probe_call_wait(&c, 0) == RL_OK;
    gr_result(out, gr_shutdown_judge_refuses_new(&f, fb, sizeof fb), "%s", fb);
done:
    gr_scenario_done(&n, NULL);
    return gr_scenario_done(&c, NULL);
}

/* Nothing of the submission may run on once its main process exited. */
static int survivors(gr_ctx *ctx)
{
    rl_proc_sample now;
    pid_t pg = gr_submission_pgid(ctx);
    return pg && rl_proc_group_sample(pg, &now) == RL_OK ? now.nprocs : 0;
}

/* exits: once the call in flight is done, the process exits 0, within the
 * grace. A server that stops at once exits 0 too, and fails the call in
 * flight only if the signal came in time: as in-flight, a run whose signal
 * came too late is taken again, then ERROR. */
static int exits_try(gr_ctx *ctx, const char *tag, bool late, int64_t *left_ms, gr_scenario_result *out)
{
    rl_probe_call c;
    int64_t s;
    int decided = 0;
    if (signal_in_flight(ctx, &c, tag, late, &s, out))
        goto done;
    /* The call first: its end is taken when the wait sees it. Then it is
     * let go, as a live client does: a connection that got a GOAWAY closes
     * only when its last call is released, and grpc-go's drain waits for it
     * (exit 2007 ms after SIGTERM held, 709 ms released; answered at 697). */
    rl_probe_call_wait(&c, s + (GRACE_MS + EXIT_SLACK_MS) * RL_NS_PER_MS);
    rl_probe_call_release(&c);
    gr_exit ex;
    gr_await_submission_exit(ctx, GRACE_MS + EXIT_SLACK_MS, true, &ex);
    char fb[GR_FEEDBACK_MAX], why[256];
    gr_shutdown_exits_facts f = {.grace_ms = GRACE_MS, .ex = &ex, .call_done = c.done, .why = why};
    f.call_ok = c.done && gr_process_reply_ok(&c, tag, why, sizeof why);
    f.survivors = ex.exited ? survivors(ctx) : 0;
    f.call_ms = gr_ms_between(s, c.end_ns);
    gr_shutdown_figure(out, &c, s, NULL, 0, &ex, f.call_ok, GRACE_MS);
    /* A PASS holds only once the signal is known to have come in time. */
    gr_verdict v = gr_shutdown_judge_exits(&f, fb, sizeof fb);
    if (v != GR_PASS || !(decided = signal_in_time(ctx, tag, &c, s, left_ms, out)))
        gr_result(out, v, "%s", fb);
done:
    gr_scenario_done(&c, NULL);
    return decided;
}

static int exits(gr_ctx *ctx, gr_scenario_result *out)
{
    return in_flight_runs(ctx, exits_try, 0, out);
}

/* grace-ends: a call that outlives the grace is ended at the grace, with
 * its downstream Work, and the process exits 0. */
static int grace_ends(gr_ctx *ctx, gr_scenario_result *out)
{
    static const gr_shutdown_times times = {GRACE_MS, GR_SHUTDOWN_GRACE_EARLY_MS, GR_SHUTDOWN_GRACE_LATE_MS};
    const char *tag = gr_tag(ctx);
    rl_probe_call c;
    Relaylab__ObserveReply *obs = NULL;
    int64_t s;
    if (start_in_flight(ctx, &c, tag, LONG_STEPS, out))
        goto done;
    /* A chain waiting for a CPU delivers the grace's cancel late through no
     * fault of the relay's (gr_shutdown_judge_grace): its wait is read
     * around. */
    int64_t wait_a = gr_chain_wait_ns(ctx);
    if (send_sigterm(ctx, 0, &s, out))
        goto done;
    /* The client call is read as it ends (an unread answer can hold a
     * server's drain), then the exit awaited. */
    rl_probe_call_wait(&c, s + (GRACE_MS + EXIT_SLACK_MS) * RL_NS_PER_MS);
    rl_probe_call_release(&c);
    gr_exit ex;
    gr_await_submission_exit(ctx, GRACE_MS + EXIT_SLACK_MS, true, &ex);
    int rc = gr_process_observe_until(ctx, tag, work_ended, NULL, rl_now_ns() + GR_SCENARIO_CANCEL_MS * RL_NS_PER_MS, 5,
                                      &obs);
    if (gr_scenario_observed(rc, obs, out))
        goto done;
    const Relaylab__CallRecord *w = rl_observe_find(obs, "Work", 0);
    int64_t end_ms = w && w->ended ? gr_ms_between(s, w->end_ns) : -1;
    gr_shutdown_grace_facts f = {.grace_ms = GRACE_MS, .steps = LONG_STEPS, .end_ms = end_ms, .ex = &ex};
    f.cancelled = w && w->cancelled;
    f.steps_done = w ? w->steps_done : 0;
    f.now_ms = gr_ms_between(s, rl_now_ns());
    int64_t wait_b = wait_a < 0 ? -1 : gr_chain_wait_ns(ctx);
    f.waited_ms = gr_waited_ms(wait_a, wait_b);
    char fb[GR_FEEDBACK_MAX];
    gr_result(out, gr_shutdown_judge_grace(&f, fb, sizeof fb), "%s", fb);
    gr_shutdown_grace_figure(out, &c, s, w, end_ms, &ex, &times);
done:
    return gr_scenario_done(&c, &obs);
}

/* ---- rolling restart ---- */

/* Concurrent calls kept going through the round_robin channel. */
#define SLOTS 6
/* Each call: Process with Work 4 x 25 ms, about 100 ms. */
#define LOAD_STEPS   4
#define LOAD_STEP_MS 25
/* Load before the SIGTERM, and after the replacement listens. */
#define BEFORE_MS 600
#define AFTER_MS  1000

/* A call that failed, kept to be told apart afterwards: admitted (the
 * relay called the baseline for it) or refused. */
typedef struct failure {
    int tag;
    int64_t start_ns; /* for the picture */
    int64_t took_ms;
    char status[160];
} failure;

#define MAX_FAILURES GR_SHUTDOWN_KEPT

typedef struct load {
    gr_ctx *ctx;
    grpc_channel *ch;
    rl_probe_call calls[SLOTS];
    int tags[SLOTS];
    bool busy[SLOTS];
    int started, ok, failed;
    failure failures[MAX_FAILURES];
    int next_tag;
} load;

static void load_start(load *l, int i)
{
    char tag[200];
    l->tags[i] = l->next_tag;
    snprintf(tag, sizeof tag, "%s.%d", gr_tag(l->ctx), l->next_tag++);
    Relaylab__ProcessRequest req = RELAYLAB__PROCESS_REQUEST__INIT;
    req.tag = tag;
    req.steps = LOAD_STEPS;
    req.step_ms = LOAD_STEP_MS;
    gr_note_tag(l->ctx, tag);
    l->busy[i] = rl_probe_call_start(&l->calls[i], l->ch, "/relaylab.Relay/Process", &req.base,
                                     rl_now_ns() + NEW_CALL_MS * RL_NS_PER_MS) == RL_OK;
    if (l->busy[i])
        l->started++;
    else
        rl_probe_call_fini(&l->calls[i]);
}

/* Reaps the calls that ended (counting them) and starts the next ones,
 * until |until_ns|; with |drain|, starts none and waits for all of them,
 * also past |until_ns| but no longer than each one's deadline allows (the
 * client's own timer ends it then). */
static void load_run(load *l, int64_t until_ns, bool drain)
{
    for (;;) {
        int busy = 0;
        for (int i = 0; i < SLOTS; i++) {
            if (l->busy[i] && rl_probe_call_wait(&l->calls[i], 0) == RL_OK) {
                if (l->calls[i].batch.status == GRPC_STATUS_OK) {
                    l->ok++;
                } else {
                    if (l->failed < MAX_FAILURES) {
                        failure *f = &l->failures[l->failed];
                        f->tag = l->tags[i];
                        f->start_ns = l->calls[i].start_ns;
                        f->took_ms = gr_ms_between(l->calls[i].start_ns, l->calls[i].end_ns);
                        gr_process_status_text(&l->calls[i], f->status, sizeof f->status);
                    }
                    l->failed++;
                }
                rl_probe_call_fini(&l->calls[i]);
                l->busy[i] = false;
            }
            if (!l->busy[i] && !drain && rl_now_ns() < until_ns)
                load_start(l, i);
            busy += l->busy[i];
        }
        if (drain ? !busy || rl_now_ns() >= until_ns : rl_now_ns() >= until_ns)
            return;
        if (gr_interrupted(l->ctx))
            return;
        rl_sleep_ms(2, NULL);
    }
}

/* When the relay admitted call |tag| of this run: the arrival of its first
 * downstream call at the baseline; 0 when it never did. */
static int64_t admitted_at(const Relaylab__ObserveReply *obs, const char *run_tag, int tag)
{
    char want[200];
    snprintf(want, sizeof want, "%s.%d", run_tag, tag);
    int64_t first = 0;
    for (size_t i = 0; i < obs->n_calls; i++)
        if (strcmp(obs->calls[i]->tag, want) == 0 && (!first || obs->calls[i]->arrival_ns < first))
            first = obs->calls[i]->arrival_ns;
    return first;
}

/* Judges the rolling restart (gr_shutdown_judge_rolling): the held call
 * |held_ok| (|why| when not), then the load's failed calls, each with when
 * the relay admitted it (the baseline's record) beside SIGTERM |s|. */
static void judge_rolling(gr_ctx *ctx, const load *l, bool held_ok, const char *why, int before, int64_t s,
                          const gr_exit *ex, int64_t listen_ms, gr_scenario_result *out)
{
    Relaylab__ObserveReply *obs = NULL;
    if (held_ok && l->failed && rl_observe(gr_baseline_channel(ctx, 0), "", GR_SCENARIO_OBSERVER_MS, &obs) != RL_OK) {
        gr_scenario_observer_failed(out, RL_EGRPC);
        return;
    }
    gr_shutdown_failed_call failed[MAX_FAILURES];
    gr_shutdown_rolling_facts f = {.held_ok = held_ok,
                                   .held_why = why,
                                   .ok = l->ok,
                                   .failed = l->failed,
                                   .before = before,
                                   .failures = failed,
                                   .sig_ns = s,
                                   .ex = ex,
                                   .listen_ms = listen_ms};
    f.nkept = l->failed < MAX_FAILURES ? l->failed : MAX_FAILURES;
    for (int i = 0; i < f.nkept; i++) {
        failed[i].admitted_ns = obs ? admitted_at(obs, gr_tag(ctx), l->failures[i].tag) : 0;
        failed[i].took_ms = l->failures[i].took_ms;
        failed[i].status = l->failures[i].status;
    }
    gr_scenario_free_obs(&obs);
    char fb[GR_FEEDBACK_MAX];
    gr_result(out, gr_shutdown_judge_rolling(&f, fb, sizeof fb), "%s", fb);
}

/* Hands rolling's load to its picture (shutdown_figure.h). */
static void rolling_picture(gr_scenario_result *out, const load *l, int64_t t0, int64_t sig, const gr_exit *ex,
                            int64_t listening, const rl_probe_call *held, bool held_ok)
{
    gr_shutdown_rolling r = {.ok = l->ok, .failed = l->failed, .nkept = 0};
    for (int i = 0; i < l->failed && i < MAX_FAILURES; i++, r.nkept++) {
        r.fail_start_ns[i] = l->failures[i].start_ns;
        r.fail_took_ms[i] = l->failures[i].took_ms;
    }
    gr_shutdown_rolling_figure(out, &r, t0, sig, ex, listening, held, held_ok, GRACE_MS);
}

/* Starts the held call on instance |i|: Process with Work 10 x STEP_MS. */
static int reach_on(gr_ctx *ctx, int i, rl_probe_call *c, const char *tag, gr_scenario_result *out)
{
    Relaylab__ProcessRequest req = RELAYLAB__PROCESS_REQUEST__INIT;
    req.tag = (char *)tag;
    req.steps = 10;
    req.step_ms = STEP_MS;
    gr_note_tag(ctx, tag);
    if (rl_probe_call_start(c, gr_submission_channel_at(ctx, i), "/relaylab.Relay/Process", &req.base,
                            rl_now_ns() + NEW_CALL_MS * RL_NS_PER_MS) != RL_OK)
        return gr_result(out, GR_ERROR, "cannot start the Process call");
    return 0;
}

/* True once the baseline shows the held call's Work with a step done. */
static bool held_running(gr_ctx *ctx, const char *tag)
{
    Relaylab__ObserveReply *obs = NULL;
    bool running = false;
    if (rl_observe(gr_baseline_channel(ctx, 0), tag, GR_SCENARIO_OBSERVER_MS, &obs) == RL_OK) {
        const Relaylab__CallRecord *w = rl_observe_find(obs, "Work", 0);
        running = w && !w->ended && w->steps_done >= 1;
    }
    gr_scenario_free_obs(&obs);
    return running;
}

/* rolling: two instances behind a round_robin channel under steady load;
 * the first gets SIGTERM, exits and is replaced on its port: the client
 * sees no failed call. */
static int rolling(gr_ctx *ctx, gr_scenario_result *out)
{
    char target[200], sc[] = "{\"loadBalancingConfig\": [{\"round_robin\": {}}]}";
    snprintf(target, sizeof target, "ipv4:%s,%s", gr_submission_addr_at(ctx, 0), gr_submission_addr_at(ctx, 1));
    grpc_arg arg = {.type = GRPC_ARG_STRING, .key = (char *)GRPC_ARG_SERVICE_CONFIG, .value.string = sc};
    grpc_channel_args extra = {.num_args = 1, .args = &arg};
    load l;
    memset(&l, 0, sizeof l);
    l.ctx = ctx;
    l.ch = gr_channel_create(ctx, target, &extra);
    int64_t t0 = rl_now_ns(), s = 0;
    load_run(&l, t0 + BEFORE_MS * RL_NS_PER_MS, false);
    int before = l.ok + l.failed;
    /* One call surely in flight on instance 1 at SIGTERM: started on its own
     * channel and running at the baseline (the load alone may leave it idle
     * at that instant, which would let a server without a grace pass). */
    char held_tag[200];
    snprintf(held_tag, sizeof held_tag, "%s.held", gr_tag(ctx));
    rl_probe_call held;
    memset(&held, 0, sizeof held);
    int decided = reach_on(ctx, 0, &held, held_tag, out);
    int64_t reach_until = rl_now_ns() + GR_PROCESS_REACH_MS * RL_NS_PER_MS;
    bool running = false;
    while (!decided && !gr_interrupted(ctx) && rl_now_ns() < reach_until && !(running = held_running(ctx, held_tag)) &&
           rl_probe_call_wait(&held, 0) != RL_OK)
        load_run(&l, rl_now_ns() + 10 * RL_NS_PER_MS, false);
    if (!decided && !running) {
        char st[200] = "no answer";
        if (held.done)
            gr_process_status_text(&held, st, sizeof st);
        decided = gr_result(out, GR_FAIL, "a Process call on instance 1 never reached Work within %d ms (%s)",
                            GR_PROCESS_REACH_MS, st);
    }
    if (!decided)
        decided = send_sigterm(ctx, 0, &s, out);
    gr_exit ex;
    memset(&ex, 0, sizeof ex);
    if (!decided) {
        /* The load goes on while it drains; the exit is awaited in slices. */
        while (gr_submission_alive_at(ctx, 0) && rl_now_ns() < s + (GRACE_MS + EXIT_SLACK_MS) * RL_NS_PER_MS &&
               !gr_interrupted(ctx)) {
            load_run(&l, rl_now_ns() + 20 * RL_NS_PER_MS, false);
            /* Read as it ends and let go: an unread answer, or a call held
             * on the connection, can hold a drain (exits_try). */
            if (rl_probe_call_wait(&held, 0) == RL_OK)
                rl_probe_call_release(&held);
        }
        gr_await_submission_exit_at(ctx, 0, GRACE_MS + EXIT_SLACK_MS, true, &ex);
        int64_t r0 = rl_now_ns();
        decided = gr_restart_submission(ctx, 0, out) != RL_OK;
        int64_t listening = rl_now_ns();
        if (!decided) {
            load_run(&l, listening + AFTER_MS * RL_NS_PER_MS, false);
            load_run(&l, rl_now_ns() + (NEW_CALL_MS + GR_SCENARIO_GRACE_MS) * RL_NS_PER_MS, true);
            rl_probe_call_wait(&held, rl_now_ns() + GR_SCENARIO_CANCEL_MS * RL_NS_PER_MS);
            char why[256];
            bool held_ok = gr_process_reply_ok(&held, held_tag, why, sizeof why);
            judge_rolling(ctx, &l, held_ok, why, before, s, &ex, gr_ms_between(r0, listening), out);
            rolling_picture(out, &l, t0, s, &ex, listening, &held, held_ok);
        }
    }
    rl_probe_call_fini(&held);
    /* Whatever is still running is cancelled: the verdict is written. */
    for (int i = 0; i < SLOTS; i++)
        if (l.busy[i]) {
            gr_scenario_cancel(&l.calls[i]);
            rl_probe_call_fini(&l.calls[i]);
        }
    grpc_channel_destroy(l.ch);
    return 0;
}

/* Lanes (lanes.h): rolling (two instances and a replacement) beside two
 * lanes of single-instance stops. Each has its own relay and baseline; an
 * exit's deadline gives back the CPU wait the relay met since its signal
 * (gr_await_submission_exit). */
static const gr_scenario scenarios[] = {
    {"in-flight", "a call in flight at SIGTERM completes", in_flight, 0, 2},
    {"refuses-new", "admission closes first: new calls fail fast", refuses_new, 0, 1},
    {"exits", "exits 0 once in-flight work is done", exits, 0, 2},
    {"grace-ends", "the grace ends what outlives it, downstream too", grace_ends, 0, 1},
    {"rolling", "a rolling restart loses no call", rolling, 2, 0},
};

const gr_exercise gr_ex_shutdown = {
    .name = "shutdown",
    .summary = "SIGTERM: close admission, drain within the grace, exit 0",
    .kind = GR_SUBMISSION_COMMAND,
    .baselines = 1,
    .env = shutdown_env,
    .scenarios = scenarios,
    .nscenarios = sizeof scenarios / sizeof scenarios[0],
};

/* ---- shutdown-late: the grader's own test of a signal sent too late ----
 * in-flight (and exits) with SIGTERM sent only once the call in flight has
 * been answered, as a grader starved past the whole Work would send it: on
 * the first try only, the next one tells (a good relay passes, one that
 * stops at once fails); on every try, ERROR whatever the relay, never PASS.
 * Found only with GR_TEST_EXERCISES_ENV set (exercise.h). */

static int in_flight_late_once(gr_ctx *ctx, gr_scenario_result *out)
{
    return in_flight_runs(ctx, in_flight_try, 1, out);
}

static int in_flight_late_every_try(gr_ctx *ctx, gr_scenario_result *out)
{
    return in_flight_runs(ctx, in_flight_try, IN_FLIGHT_TRIES, out);
}

static int exits_late_every_try(gr_ctx *ctx, gr_scenario_result *out)
{
    return in_flight_runs(ctx, exits_try, IN_FLIGHT_TRIES, out);
}

static const gr_scenario late_scenarios[] = {
    {"in-flight-late-once", "in-flight, SIGTERM late once: tried again", in_flight_late_once, 0, 0},
    {"in-flight-late-every-try", "in-flight, SIGTERM late every try: ERROR", in_flight_late_every_try, 0, 0},
    {"exits-late-every-try", "exits, SIGTERM late every try: ERROR", exits_late_every_try, 0, 0},
};

const gr_exercise gr_ex_shutdown_late = {
    .name = "shutdown-late",
    .summary = "the grader's own test: in-flight and exits when SIGTERM came too late to tell",
    .kind = GR_SUBMISSION_COMMAND,
    .baselines = 1,
    .env = shutdown_env,
    .scenarios = late_scenarios,
    .nscenarios = sizeof late_scenarios / sizeof late_scenarios[0],
};
