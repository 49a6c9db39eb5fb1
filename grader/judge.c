/* judge: tolerance arithmetic and feedback wording; see judge.h.
 *
 * How a received deadline W relates to the truth. The client fixes its
 * deadline D before starting the call. Let T = D - A, where A is the
 * baseline's arrival instant of the downstream call: what truly remained.
 * grpc-timeout carries a relative timeout, rounded UP to its unit (exact ms
 * below 1 s, 10 ms steps below 10 s, 100 ms below 100 s), and every receiver
 * re-anchors it at the moment it parses the headers, which is later than the
 * moment the sender computed it. So a perfect relay gives
 *     T - 1 <= W <= T + round(budget) + round(T) + delays,
 * where -1 is the baseline's floor to whole ms and "delays" are the gaps
 * between a sender reading its clock and the receiver parsing the headers
 * on each hop, plus, for relays in Python or Node, the time between
 * reading time_remaining() and the library computing the new deadline.
 * RL_JUDGE_SCHED_MS bounds those delays; see the measurements below.
 *
 * Measured on the 2-core machine (grader/README of the numbers: the report
 * of the grader task), W - T for deadline/shrinks (budget 2000 ms, Lookup
 * 500 ms, so T ~ 1490 ms at Work):
 *   bin/relay (C core, deadline inherited from the parent call):  MEASURED_C
 *   tests/submissions/relay_good.py (grpcio):                     MEASURED_PY
 *   both again with the other core kept busy by a spinning process: MEASURED_BUSY
 * The classic mistakes are far away: forwarding the original timeout gives
 * W - T ~ +500 ms (the Lookup's time counted twice), a dropped deadline gives
 * none at all, a huge timeout gives ~2.1e9 ms. A 40 ms allowance is several
 * times the worst measured delay and still an order of magnitude below the
 * smallest mistake, so neither a noisy machine nor a slow runtime moves a
 * verdict.
 *
 * Below T a relay may keep a safety margin (some teams subtract a few ms per
 * hop for the network); max(100 ms, 10 %) allows any sensible margin while a
 * relay that invents a fixed short timeout (e.g. 1 s for a 1.5 s budget)
 * fails. */
#include "judge.h"

#include "rl_deadline.h"

#include <stdio.h>

/* A finite deadline above a day is nobody's real budget in this lab: it is
 * a "forever" constant (INT32_MAX ms is 24.8 days). */
#define HUGE_MS INT64_C(86400000)

int64_t rl_judge_deadline_upper(int64_t budget_ms, int64_t true_ms)
{
    int64_t round1 = rl_wire_rounding_ms(budget_ms);
    /* The second hop carries about T plus what the first hop added. */
    int64_t round2 = rl_wire_rounding_ms(true_ms + round1 + RL_JUDGE_SCHED_MS);
    return true_ms + round1 + round2 + RL_JUDGE_SCHED_MS;
}

int64_t rl_judge_deadline_lower(int64_t true_ms)
{
    int64_t margin = true_ms * RL_JUDGE_MARGIN_FRAC / 100;
    if (margin < RL_JUDGE_MARGIN_MIN_MS)
        margin = RL_JUDGE_MARGIN_MIN_MS;
    int64_t lower = true_ms - margin;
    return lower > 0 ? lower : 0;
}

void rl_judge_deadline(const char *method, int64_t budget_ms, int64_t true_ms, bool has_deadline,
                       int64_t received_ms, rl_dl_check *out)
{
    out->method = method;
    out->budget_ms = budget_ms;
    out->true_ms = true_ms;
    out->has_deadline = has_deadline;
    out->received_ms = received_ms;
    out->upper_ms = out->lower_ms = 0;
    if (budget_ms < 0) {
        if (!has_deadline)
            out->cls = RL_DL_OK;
        else
            out->cls = received_ms >= HUGE_MS ? RL_DL_HUGE : RL_DL_INVENTED;
        return;
    }
    out->upper_ms = rl_judge_deadline_upper(budget_ms, true_ms);
    out->lower_ms = rl_judge_deadline_lower(true_ms);
    if (!has_deadline)
        out->cls = RL_DL_MISSING;
    else if (received_ms > out->upper_ms) {
        int64_t budget_upper = budget_ms + rl_wire_rounding_ms(budget_ms) + RL_JUDGE_SCHED_MS;
        if (received_ms >= HUGE_MS || received_ms > 10 * budget_ms + 1000)
            out->cls = RL_DL_HUGE;
        /* Closer to the original budget than to what remained. */
        else if (received_ms <= budget_upper && 2 * received_ms >= budget_ms + true_ms)
            out->cls = RL_DL_UNCHANGED;
        else
            out->cls = RL_DL_GREW;
    } else if (received_ms < out->lower_ms)
        out->cls = RL_DL_TOO_SHORT;
    else
        out->cls = RL_DL_OK;
}

int rl_judge_deadline_feedback(const rl_dl_check *c, char *buf, size_t len)
{
    const char *m = c->method;
    long long w = (long long)c->received_ms, t = (long long)c->true_ms;
    switch (c->cls) {
    case RL_DL_OK:
        if (c->budget_ms < 0)
            return snprintf(buf, len, "%s arrived with no deadline, as the client set none", m);
        return snprintf(buf, len, "%s received %lld ms with %lld ms remaining (accepted %lld..%lld ms)", m, w, t,
                        (long long)c->lower_ms, (long long)c->upper_ms);
    case RL_DL_MISSING:
        return snprintf(buf, len, "%s received no deadline although %lld ms remained: the deadline was dropped", m,
                        t);
    case RL_DL_HUGE:
        if (c->budget_ms < 0)
            return snprintf(buf, len,
                            "%s received %lld ms although the client set no deadline: a huge finite timeout was "
                            "sent instead of none",
                            m, w);
        return snprintf(buf, len, "%s received %lld ms but only %lld ms remained: a huge finite timeout was sent", m,
                        w, t);
    case RL_DL_UNCHANGED:
        return snprintf(buf, len,
                        "%s received %lld ms but only %lld ms remained: the original timeout was forwarded "
                        "unchanged",
                        m, w, t);
    case RL_DL_GREW:
        return snprintf(buf, len,
                        "%s received %lld ms but only %lld ms remained (at most %lld accepted): the deadline grew "
                        "along the chain",
                        m, w, t, (long long)c->upper_ms);
    case RL_DL_TOO_SHORT:
        return snprintf(buf, len,
                        "%s received %lld ms but %lld ms remained (at least %lld expected): the relay cut the "
                        "deadline short (an invented timeout or too large a margin)",
                        m, w, t, (long long)c->lower_ms);
    case RL_DL_INVENTED:
        return snprintf(buf, len,
                        "%s received %lld ms although the client set no deadline: the relay invented a deadline",
                        m, w);
    }
    return snprintf(buf, len, "%s: unknown deadline verdict", m);
}

bool rl_judge_expiry_on_time(int64_t late_ms)
{
    return late_ms <= RL_JUDGE_EXPIRE_MS;
}

void rl_judge_cancel(const char *method, bool ended, bool cancelled, int64_t end_minus_cancel_ms,
                     int64_t observed_ms, uint32_t steps_done, uint32_t steps, rl_cancel_check *out)
{
    out->method = method;
    out->ended = ended;
    out->cancelled = cancelled;
    out->latency_ms = ended ? end_minus_cancel_ms : -1;
    out->observed_ms = observed_ms;
    out->steps_done = steps_done;
    out->steps = steps;
    out->pass = ended && cancelled && end_minus_cancel_ms <= RL_JUDGE_CANCEL_MS;
}

int rl_judge_cancel_feedback(const rl_cancel_check *c, char *buf, size_t len)
{
    char steps[48] = "";
    if (c->steps)
        snprintf(steps, sizeof steps, " (%u/%u steps)", c->steps_done, c->steps);
    const char *m = c->method;
    if (c->pass)
        return snprintf(buf, len, "%s stopped %lld ms after the cancel%s (bound %d ms)", m,
                        (long long)c->latency_ms, steps, RL_JUDGE_CANCEL_MS);
    if (!c->ended)
        return snprintf(buf, len,
                        "%s was still running %lld ms after the cancel%s: cancellation is not propagated", m,
                        (long long)c->observed_ms, steps);
    if (!c->cancelled)
        return snprintf(buf, len, "%s kept running %lld ms after the cancel%s: cancellation is not propagated", m,
                        (long long)c->latency_ms, steps);
    return snprintf(buf, len, "%s stopped only %lld ms after the cancel%s (bound %d ms): cancellation reaches it too "
                    "late",
                    m, (long long)c->latency_ms, steps, RL_JUDGE_CANCEL_MS);
}

rl_verdict rl_judge_worse(rl_verdict a, rl_verdict b)
{
    return a > b ? a : b;
}

double rl_judge_points(int runs, int passed, double points)
{
    return runs > 0 && passed == runs ? points : 0.0;
}

const char *rl_verdict_name(rl_verdict v)
{
    switch (v) {
    case RL_PASS:
        return "PASS";
    case RL_FAIL:
        return "FAIL";
    case RL_TIMEOUT:
        return "TIMEOUT";
    case RL_CRASH:
        return "CRASH";
    case RL_NOT_READY:
        return "NOT-READY";
    case RL_ERROR:
        return "ERROR";
    }
    return "ERROR";
}
