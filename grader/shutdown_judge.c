/* shutdown_judge: the shutdown exercise's rules and verdicts; see
 * shutdown_judge.h. The wording is the scenarios' own: each verdict
 * function is the chain a scenario ran on what it measured. */
#include "shutdown_judge.h"

#include <grpc/status.h>
#include <signal.h>
#include <stdio.h>

bool gr_shutdown_refused(int status, int64_t took_ms)
{
    static const int not_refusals[] = {GR_SHUTDOWN_NOT_REFUSALS};
    for (size_t i = 0; i < sizeof not_refusals / sizeof not_refusals[0]; i++)
        if (status == not_refusals[i])
            return false;
    return took_ms <= GR_SHUTDOWN_REFUSE_MS;
}

int64_t gr_shutdown_stop_margin(uint32_t steps, int64_t step_ms)
{
    return (int64_t)steps * step_ms * GR_SHUTDOWN_STOP_MARGIN_PCT / 100;
}

bool gr_shutdown_signal_in_time(int64_t work_left_ms, uint32_t steps, int64_t step_ms)
{
    return work_left_ms >= gr_shutdown_stop_margin(steps, step_ms);
}

const char *gr_shutdown_exit_mistake(const gr_exit *ex)
{
    if (ex->killed)
        return "it had not exited when the grader killed it";
    if (ex->signal == SIGTERM)
        return "it died of SIGTERM: there is no SIGTERM handler, so the process ends at once and every call in "
               "flight fails";
    if (ex->signal)
        return "it crashed during the drain";
    if (ex->status != 0)
        return "a graceful shutdown exits 0";
    return NULL;
}

gr_verdict gr_shutdown_judge_too_late(const int64_t *left_ms, int n, uint32_t steps, int64_t step_ms, char *buf,
                                      size_t len)
{
    char runs[96] = "";
    for (int i = 0, k = 0; i < n && k >= 0 && (size_t)k < sizeof runs; i++)
        k += snprintf(runs + k, sizeof runs - (size_t)k, "%s%lld", i ? ", " : "", (long long)left_ms[i]);
    snprintf(buf, len,
             "grade again: the machine was too slow to tell. In %d tries the call in flight at "
             "SIGTERM completed OK, but SIGTERM came too late to tell a drain from a server that "
             "stops at once: its Work ran on only %s ms after the signal (negative: it had ended "
             "before), less than the %lld ms a stop(0) needs to be seen",
             n, runs, (long long)gr_shutdown_stop_margin(steps, step_ms));
    return GR_ERROR;
}

gr_verdict gr_shutdown_judge_in_flight(const gr_shutdown_in_flight_facts *f, char *buf, size_t len)
{
    if (!f->answered) {
        snprintf(buf, len,
                 "the call in flight at SIGTERM had no answer %d ms later, past the %d ms grace: the drain "
                 "does not end in-flight calls at the grace",
                 f->waited_ms, f->grace_ms);
        return GR_FAIL;
    }
    if (f->ok) {
        snprintf(buf, len,
                 "the call in flight at SIGTERM completed OK %lld ms after it (its Work ran on %lld ms after "
                 "the signal: a server that stopped at once would have cut it)",
                 (long long)f->ms, (long long)f->left_ms);
        return GR_PASS;
    }
    if (f->ex->exited && f->ex->signal == SIGTERM)
        snprintf(buf, len, "the call in flight failed %s %lld ms after SIGTERM: %s", f->status, (long long)f->ms,
                 gr_shutdown_exit_mistake(f->ex));
    else
        snprintf(buf, len,
                 "the call in flight failed %s %lld ms after SIGTERM: the server stopped without a grace "
                 "(calls admitted before the signal must be let finish)",
                 f->status, (long long)f->ms);
    return GR_FAIL;
}

gr_verdict gr_shutdown_judge_refuses_new(const gr_shutdown_refuses_facts *f, char *buf, size_t len)
{
    if (!f->closed) {
        const char *mistake = f->ex ? gr_shutdown_exit_mistake(f->ex) : NULL;
        if (mistake)
            snprintf(buf, len, "it %s %lld ms after SIGTERM: %s", f->ex->how, (long long)f->ex->ms, mistake);
        else
            snprintf(buf, len,
                     "new connections were still accepted %d ms after SIGTERM while a call was in flight: "
                     "stop admitting first (close the listener), then drain",
                     GR_SHUTDOWN_ADMISSION_MS);
        return GR_FAIL;
    }
    long long after = (long long)f->after_ms;
    /* A process the signal killed refuses everything, as a dead one does:
     * no admission was closed while a call drained, so that is no PASS. */
    if (f->died) {
        snprintf(buf, len,
                 "a call started %lld ms after SIGTERM failed %s, but only because the process was gone: %s; "
                 "nothing closed admission while a call drained (see in-flight)",
                 after, f->status_text, gr_shutdown_exit_mistake(f->died));
        return GR_FAIL;
    }
    if (f->status == GRPC_STATUS_OK) {
        snprintf(buf, len,
                 "a call started %lld ms after SIGTERM was served%s: a server that is shutting down must admit "
                 "no new call (clients retry on a live instance)",
                 after, f->told ? "" : " on the open connection, which had no GOAWAY");
        return GR_FAIL;
    }
    if (!gr_shutdown_refused(f->status, f->took_ms)) {
        snprintf(buf, len,
                 "a call started %lld ms after SIGTERM failed %s only after %lld ms: a server that is shutting "
                 "down refuses new calls at once, so that clients go elsewhere",
                 after, f->status_text, (long long)f->took_ms);
        return GR_FAIL;
    }
    snprintf(buf, len, "the listener closed %lld ms after SIGTERM; a new call then failed %s in %lld ms %s",
             (long long)f->closed_ms, f->status_text, (long long)f->took_ms,
             f->admitted_ended ? "(the admitted call had already ended: see in-flight)"
                               : "while the admitted one ran on");
    return GR_PASS;
}

gr_verdict gr_shutdown_judge_exits(const gr_shutdown_exits_facts *f, char *buf, size_t len)
{
    const gr_exit *ex = f->ex;
    const char *mistake = gr_shutdown_exit_mistake(ex);
    if (ex->killed) {
        snprintf(buf, len,
                 "still running %lld ms after SIGTERM, past the %d ms grace, with no call left in flight: "
                 "something held the exit (a drain without a bound?); it was killed",
                 (long long)ex->ms, f->grace_ms);
        return GR_FAIL;
    }
    if (mistake) {
        snprintf(buf, len, "it %s %lld ms after SIGTERM: %s", ex->how, (long long)ex->ms, mistake);
        return ex->signal && ex->signal != SIGTERM ? GR_CRASH : GR_FAIL;
    }
    if (!f->call_ok) {
        snprintf(buf, len,
                 "it exited 0 after %lld ms, but the call in flight did not complete (%s): exit once the "
                 "admitted calls are done",
                 (long long)ex->ms, f->call_done ? f->why : "no status");
        return GR_FAIL;
    }
    if (f->survivors) {
        snprintf(buf, len, "it exited 0 after %lld ms, but %d process(es) it started ran on", (long long)ex->ms,
                 f->survivors);
        return GR_FAIL;
    }
    snprintf(buf, len, "exited 0 %lld ms after SIGTERM, once the call in flight had completed (%lld ms)",
             (long long)ex->ms, (long long)f->call_ms);
    return GR_PASS;
}

gr_verdict gr_shutdown_judge_grace(const gr_shutdown_grace_facts *f, char *buf, size_t len)
{
    const gr_exit *ex = f->ex;
    const char *mistake = gr_shutdown_exit_mistake(ex);
    int64_t end_ms = f->end_ms;
    if (end_ms >= 0 && end_ms < f->grace_ms - GR_SHUTDOWN_GRACE_EARLY_MS) {
        snprintf(buf, len, "Work was ended %lld ms after SIGTERM, before the %d ms grace (%u of %d steps): %s",
                 (long long)end_ms, f->grace_ms, f->steps_done, f->steps,
                 mistake && ex->signal == SIGTERM ? mistake
                                                  : "calls in flight must be given the grace, not cut at once");
        return GR_FAIL;
    }
    int64_t late_by = end_ms - f->grace_ms - GR_SHUTDOWN_GRACE_LATE_MS;
    if (f->cancelled && late_by > 0 && f->waited_ms >= late_by && !ex->killed) {
        /* Cancelled at the grace by its timer, delivered late because the
         * chain waited for a CPU: seen with a Go relay 1.4 s late, a hog on
         * each core and ten graders at once. */
        snprintf(buf, len,
                 "Work was cancelled %lld ms after SIGTERM, past the %d ms grace by more than its %d ms allowance, "
                 "while the relay and the baseline waited %lld ms for a CPU: the machine was too busy to tell a "
                 "late cancel from a starved one -- grade again on a less busy machine",
                 (long long)end_ms, f->grace_ms, GR_SHUTDOWN_GRACE_LATE_MS, (long long)f->waited_ms);
        return GR_ERROR;
    }
    if (end_ms < 0 || end_ms > f->grace_ms + GR_SHUTDOWN_GRACE_LATE_MS || !f->cancelled) {
        snprintf(buf, len,
                 "Work %s %lld ms after SIGTERM, past the %d ms grace: the call that outlived the grace was "
                 "not cancelled, so its downstream work ran on as an orphan%s%s",
                 end_ms < 0     ? "still ran"
                 : f->cancelled ? "was cancelled only"
                                : "ran to its end",
                 (long long)(end_ms < 0 ? f->now_ms : end_ms), f->grace_ms,
                 ex->killed ? "; and the process did not exit until it was killed" : "", "");
        return GR_FAIL;
    }
    if (ex->killed) {
        snprintf(buf, len,
                 "Work was cancelled at the grace (%lld ms after SIGTERM), but the process was still running "
                 "%lld ms after SIGTERM: a stuck call held the exit past the %d ms grace",
                 (long long)end_ms, (long long)ex->ms, f->grace_ms);
        return GR_FAIL;
    }
    if (mistake) {
        snprintf(buf, len, "Work was cancelled at the grace, but it %s %lld ms after SIGTERM: %s", ex->how,
                 (long long)ex->ms, mistake);
        return GR_FAIL;
    }
    snprintf(buf, len,
             "at the %d ms grace the call still in flight was ended: Work cancelled %lld ms after SIGTERM "
             "(%u of %d steps), and the process exited 0 after %lld ms",
             f->grace_ms, (long long)end_ms, f->steps_done, f->steps, (long long)ex->ms);
    return GR_PASS;
}

/* Every call the relay had admitted before SIGTERM (the baseline saw its
 * downstream work begin) must have succeeded: that is the grace. A call it
 * never admitted may have failed, if it failed fast: gRPC itself cancels
 * the calls that reach a server after it began to shut down and before the
 * client saw its GOAWAY (measured: 0 to 2 of about 100 with a grpcio server
 * that drains correctly, CANCELLED in 1 ms), and a refusal is what a client
 * retries on a live instance; no server code can reach those calls. One
 * that waited is a refusal done wrong. */
gr_verdict gr_shutdown_judge_rolling(const gr_shutdown_rolling_facts *f, char *buf, size_t len)
{
    if (!f->held_ok) {
        snprintf(buf, len,
                 "the call in flight on instance 1 at SIGTERM did not complete (%s): calls in flight must be "
                 "let finish",
                 f->held_why);
        return GR_FAIL;
    }
    int all = f->ok + f->failed;
    if (f->failed > f->nkept) {
        snprintf(buf, len, "%d of %d calls failed while instance 1 was replaced (the first: %s)", f->failed, all,
                 f->failures[0].status);
        return GR_FAIL;
    }
    int lost = 0, slow = 0, refused = 0, late = 0;
    const gr_shutdown_failed_call *first_lost = NULL, *first_slow = NULL;
    for (int i = 0; i < f->nkept; i++) {
        const gr_shutdown_failed_call *c = &f->failures[i];
        if (c->admitted_ns && c->admitted_ns < f->sig_ns) {
            lost++;
            first_lost = first_lost ? first_lost : c;
        } else if (c->admitted_ns) {
            late++;
        } else if (c->took_ms > GR_SHUTDOWN_REFUSE_MS) {
            slow++;
            first_slow = first_slow ? first_slow : c;
        } else {
            refused++;
        }
    }
    const gr_exit *ex = f->ex;
    const char *mistake = gr_shutdown_exit_mistake(ex);
    if (lost) {
        snprintf(buf, len,
                 "%d of %d calls failed that the relay had admitted before SIGTERM (the first: %s)%s%s: calls in "
                 "flight at SIGTERM must be let finish",
                 lost, all, first_lost->status, mistake ? "; instance 1 " : "", mistake ? ex->how : "");
        return GR_FAIL;
    }
    if (slow) {
        snprintf(buf, len,
                 "%d calls that were never admitted failed only after %lld ms or more (%s): refuse at once, so that "
                 "clients go to the live instance",
                 slow, (long long)first_slow->took_ms, first_slow->status);
        return GR_FAIL;
    }
    if (mistake) {
        snprintf(buf, len, "no admitted call failed, but instance 1 %s %lld ms after SIGTERM: %s", ex->how,
                 (long long)ex->ms, mistake);
        return GR_FAIL;
    }
    snprintf(buf, len,
             "%d calls through both instances (%d before SIGTERM): every call admitted before SIGTERM "
             "succeeded%s%s; instance 1 exited 0 %lld ms after SIGTERM and its replacement listened after %lld ms",
             all, f->before, refused ? ", those never admitted were refused at once (a client retries them)" : "",
             late ? ", and some admitted during the drain failed (see refuses-new)" : "", (long long)ex->ms,
             (long long)f->listen_ms);
    return GR_PASS;
}
