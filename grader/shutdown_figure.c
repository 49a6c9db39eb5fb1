/* shutdown_figure: the shutdown exercise's pictures; see shutdown_figure.h. */
#include "shutdown_figure.h"

#include "shutdown_judge.h"
#include "process.h"
#include "rl_deadline.h"

#include <stdio.h>

/* The picture of a shutdown on one time axis (ms since the call in flight
 * started): SIGTERM at |sig|, the grace after it, the call in flight |c|,
 * a new call |n| (NULL: none) and its refusal, the listener's close at
 * |closed| (0: not seen) and the exit |ex| (NULL: not waited for). */
void gr_shutdown_figure(gr_scenario_result *out, const rl_probe_call *c, int64_t sig, const rl_probe_call *n,
                        int64_t closed, const gr_exit *ex, bool call_ok, int grace_ms)
{
    gr_figure *f = &out->figure;
    int64_t t0 = c->start_ns;
#define MS(t) ((double)((t)-t0) / 1e6)
    gr_fig_timeline(f, "SIGTERM, the drain, the refusals and the exit", "ms since the call in flight started");
    gr_fig_event(f, MS(sig), "SIGTERM");
    if (closed)
        gr_fig_event(f, MS(closed), "listener closed");
    int64_t cend = c->done ? c->end_ns : rl_now_ns();
    gr_fig_span_add(f, gr_fig_row(f, "call in flight"), 0, MS(cend),
                    call_ok   ? GR_FIG_GIVEN
                    : c->done ? GR_FIG_WRONG
                              : GR_FIG_RAN,
                    "%s",
                    call_ok   ? "completed OK"
                    : c->done ? "failed"
                              : "still running");
    if (n && n->start_ns) {
        int64_t nend = n->done ? n->end_ns : rl_now_ns();
        bool refused = n->done && gr_shutdown_refused(n->batch.status, gr_ms_between(n->start_ns, nend));
        gr_fig_span_add(f, gr_fig_row(f, "new call after SIGTERM"), MS(n->start_ns), MS(nend),
                        refused ? GR_FIG_GIVEN : GR_FIG_WRONG, "%s in %lld ms",
                        n->batch.status == GRPC_STATUS_OK ? "served" : "refused",
                        (long long)gr_ms_between(n->start_ns, nend));
    }
    gr_fig_span_add(f, gr_fig_row(f, "grace"), MS(sig), MS(sig) + grace_ms, GR_FIG_TRUTH, "grace %d ms", grace_ms);
    if (ex) {
        int64_t at = sig + ex->ms * RL_NS_PER_MS;
        bool clean = ex->exited && ex->status == 0;
        gr_fig_span_add(f, gr_fig_row(f, "the server process"), 0, MS(at), clean ? GR_FIG_RAN : GR_FIG_WRONG, "%s",
                        ex->how);
        gr_fig_caption(f, "The server %s %lld ms after SIGTERM; the call in flight %s", ex->how, (long long)ex->ms,
                       call_ok ? "completed first" : "did not complete");
    } else {
        gr_fig_caption(f, "The call in flight %s after SIGTERM%s", call_ok ? "completed" : "did not complete",
                       n && n->start_ns ? "; a new call must be refused at once" : "");
    }
#undef MS
}

void gr_shutdown_open_figure(gr_scenario_result *out, const rl_probe_call *c, int64_t sig, const gr_exit *ex,
                             bool call_ok, int grace_ms, int admission_ms)
{
    gr_shutdown_figure(out, c, sig, NULL, 0, ex, call_ok, grace_ms);
    if (ex)
        return;
    double at = (double)(sig - c->start_ns) / 1e6;
    gr_fig_span_add(&out->figure, gr_fig_row(&out->figure, "listener"), at, at + admission_ms, GR_FIG_WRONG,
                    "still accepting %d ms after SIGTERM", admission_ms);
    gr_fig_caption(&out->figure, "The listener stayed open after SIGTERM: new calls were still admitted");
}

/* grace-ends' picture (ms since the call in flight started): SIGTERM, the
 * grace and its end, the client's call until its status, its Work at the
 * baseline (blue when cancelled at the grace, red when cut before it or
 * left running past it) and the server process until its exit. Drawn from
 * what the scenario measured; the caption follows the verdict in |out|. */
void gr_shutdown_grace_figure(gr_scenario_result *out, const rl_probe_call *c, int64_t sig,
                              const Relaylab__CallRecord *w, int64_t end_ms, const gr_exit *ex,
                              const gr_shutdown_times *t)
{
    gr_figure *f = &out->figure;
    int64_t t0 = c->start_ns;
#define GMS(t) ((double)((t)-t0) / 1e6)
    gr_fig_timeline(f, "A call that outlives the grace", "ms since the call in flight started");
    gr_fig_event(f, GMS(sig), "SIGTERM");
    gr_fig_event(f, GMS(sig) + t->grace_ms, "grace ends");
    int64_t cend = c->done ? c->end_ns : rl_now_ns();
    char st[200];
    gr_process_status_text(c, st, sizeof st);
    gr_fig_span_add(f, gr_fig_row(f, "client: call in flight"), 0, GMS(cend), GR_FIG_RAN, "%s",
                    c->done ? st : "still running");
    int wr = gr_fig_row(f, "Work at the baseline");
    if (w) {
        int64_t wend = w->ended ? w->end_ns : rl_now_ns();
        bool at_grace = end_ms >= t->grace_ms - t->early_ms && end_ms <= t->grace_ms + t->late_ms && w->cancelled;
        gr_fig_span_add(f, wr, GMS(w->arrival_ns), GMS(wend), at_grace ? GR_FIG_GIVEN : GR_FIG_WRONG, "%s",
                        !w->ended      ? "still running"
                        : w->cancelled ? "Work, cancelled"
                                       : "Work, ran to its end");
    }
    gr_fig_span_add(f, gr_fig_row(f, "grace"), GMS(sig), GMS(sig) + t->grace_ms, GR_FIG_TRUTH, "grace %d ms",
                    t->grace_ms);
    bool clean = ex->exited && ex->status == 0;
    gr_fig_span_add(f, gr_fig_row(f, "the server process"), 0, GMS(sig + ex->ms * RL_NS_PER_MS),
                    clean ? GR_FIG_RAN : GR_FIG_WRONG, "%s", ex->how);
    if (out->verdict == GR_PASS)
        gr_fig_caption(f, "At the grace's end the call still running was cancelled, Work with it, and the server "
                          "exited 0");
    else if (end_ms >= 0 && end_ms < t->grace_ms - t->early_ms)
        gr_fig_caption(f,
                       "Work was ended %lld ms after SIGTERM, before the %d ms grace: a call in flight is owed "
                       "the whole grace",
                       (long long)end_ms, t->grace_ms);
    else if (end_ms < 0 || end_ms > t->grace_ms + t->late_ms || (w && !w->cancelled))
        gr_fig_caption(f, "Work ran on past the grace's end: the call that outlived it was not cancelled, its Work "
                          "orphaned");
    else
        gr_fig_caption(f,
                       "Work was cancelled at the grace, but the server %s %lld ms after SIGTERM: exit 0 "
                       "after it",
                       ex->how, (long long)ex->ms);
#undef GMS
}

/* rolling's picture (ms since the load started): instance 1 serving until
 * SIGTERM, its drain until it exited, its replacement from when it
 * listened; the call held on instance 1 across SIGTERM; each call of the
 * load that failed (red, as many as the figure holds); the grace. The
 * caption follows the verdict in |out|. */
void gr_shutdown_rolling_figure(gr_scenario_result *out, const gr_shutdown_rolling *l, int64_t t0, int64_t sig,
                                const gr_exit *ex, int64_t listening, const rl_probe_call *held, bool held_ok,
                                int grace_ms)
{
    gr_figure *f = &out->figure;
#define RMS(t) ((double)((t)-t0) / 1e6)
    gr_fig_timeline(f, "A rolling restart under steady load", "ms since the load started");
    gr_fig_event(f, RMS(sig), "SIGTERM to instance 1");
    gr_fig_event(f, RMS(listening), "the replacement listens");
    int64_t now = rl_now_ns();
    int64_t exit_at = sig + ex->ms * RL_NS_PER_MS;
    bool clean = ex->exited && ex->status == 0;
    int r1 = gr_fig_row(f, "instance 1");
    gr_fig_span_add(f, r1, 0, RMS(sig), GR_FIG_RAN, "serving");
    gr_fig_span_add(f, r1, RMS(sig), RMS(exit_at), clean ? GR_FIG_GIVEN : GR_FIG_WRONG, "drain: %s", ex->how);
    gr_fig_span_add(f, gr_fig_row(f, "its replacement"), RMS(listening), RMS(now), GR_FIG_RAN, "serving");
    int64_t hend = held->done ? held->end_ns : now;
    gr_fig_span_add(f, gr_fig_row(f, "a call held across SIGTERM"), RMS(held->start_ns), RMS(hend),
                    held_ok ? GR_FIG_GIVEN : GR_FIG_WRONG, "%s", held_ok ? "completed OK" : "failed");
    gr_fig_span_add(f, gr_fig_row(f, "grace"), RMS(sig), RMS(sig) + grace_ms, GR_FIG_TRUTH, "grace %d ms", grace_ms);
    int fr = l->failed ? gr_fig_row(f, "calls refused or failed") : -1;
    for (int i = 0; i < l->nkept; i++) {
        double a = RMS(l->fail_start_ns[i]);
        gr_fig_span_add(f, fr, a, a + (double)l->fail_took_ms[i], GR_FIG_WRONG, NULL);
    }
    if (out->verdict == GR_PASS)
        gr_fig_caption(f, "Every call admitted before SIGTERM succeeded: instance 1 drained, exited 0, and its "
                          "replacement took over");
    else if (!held_ok)
        gr_fig_caption(f, "The call held on instance 1 across SIGTERM failed: a call in flight at SIGTERM must be "
                          "let finish");
    else if (l->failed)
        gr_fig_caption(f,
                       "%d of %d calls failed across the restart (red): admitted calls must finish, the rest "
                       "be refused at once",
                       l->failed, l->ok + l->failed);
    else
        gr_fig_caption(f, "No call failed, but instance 1 %s %lld ms after SIGTERM: it must exit 0 once drained",
                       ex->how, (long long)ex->ms);
#undef RMS
}
