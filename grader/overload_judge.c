/* overload_judge: the overload exercise's rules and verdicts; see
 * overload_judge.h. The wording is the scenarios' own: each verdict
 * function is the chain a scenario ran on what it measured. */
#include "overload_judge.h"

#include "rl_alloc.h"
#include "rl_deadline.h"
#include "rl_probe.h"
#include "rl_stats.h"

#include <grpc/status.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int64_t ms_between(int64_t from_ns, int64_t to_ns)
{
    return (to_ns - from_ns) / RL_NS_PER_MS;
}

int64_t gr_overload_client_lag_ms(const rl_load_call *calls, size_t n)
{
    int64_t lag = 0;
    for (size_t i = 0; i < n; i++) {
        if (calls[i].status != GRPC_STATUS_DEADLINE_EXCEEDED || !calls[i].end_ns)
            continue;
        int64_t past = (calls[i].end_ns - calls[i].deadline_ns) / RL_NS_PER_MS;
        lag = past > lag ? past : lag;
    }
    return lag;
}

/* The attempts come at most INITIAL x MULTIPLIER^k (1 + JITTER) apart, and
 * the k-th one starts at the earliest after the sum of the shortest gaps
 * before it, so by the end of the outage at most the gap in progress is
 * left. */
int64_t gr_overload_backoff_bound_ms(int64_t outage_ms)
{
    double t = 0, gap = GR_OVERLOAD_BACKOFF_INITIAL_MS;
    while (t + gap * (1 - GR_OVERLOAD_BACKOFF_JITTER) <= (double)outage_ms && gap < GR_OVERLOAD_BACKOFF_MAX_MS) {
        t += gap * (1 - GR_OVERLOAD_BACKOFF_JITTER);
        gap = fmin(gap * GR_OVERLOAD_BACKOFF_MULTIPLIER, GR_OVERLOAD_BACKOFF_MAX_MS);
    }
    return (int64_t)ceil(gap * (1 + GR_OVERLOAD_BACKOFF_JITTER));
}

void gr_overload_look(const char *prefix, const rl_load_call *calls, size_t n, const Relaylab__ObserveReply *obs,
                      int64_t now_ns, gr_overload_seen *s)
{
    memset(s, 0, sizeof *s);
    for (size_t k = 0; obs && k < obs->n_calls; k++) {
        const Relaylab__CallRecord *r = obs->calls[k];
        long i = rl_load_index(prefix, r->tag);
        if (i >= (long)n)
            i = -1;
        if (i < 0 && strstr(r->tag, ".warm"))
            continue; /* the grader's own warm-up */
        s->reached++;
        if (r->wasted)
            s->wasted++;
        /* Forwarded after its caller's deadline: with no time left by the
         * relay's own clock, or past the caller's deadline with a deadline
         * longer than the caller ever had (or none). A relay starved on a
         * loaded machine reads a call's headers late and counts its timeout
         * from then, so a correct one may forward a call the caller has
         * already given up on, but never with more time than it was given. */
        int64_t late_ms = i >= 0 ? ms_between(calls[i].deadline_ns, r->arrival_ns) : 0;
        int64_t given_ms = i >= 0 ? ms_between(calls[i].start_ns, calls[i].deadline_ns) : 0;
        bool longer = !r->has_deadline || r->deadline_ms > given_ms + GR_OVERLOAD_LATE_TOL_MS;
        if (r->no_time_left || (late_ms > GR_OVERLOAD_LATE_TOL_MS && longer)) {
            s->late++;
            s->late_max_ms = late_ms > s->late_max_ms ? late_ms : s->late_max_ms;
        }
        /* Open long after the caller's deadline because the relay gave
         * it more time than the caller had (or none) and did not cancel it
         * when the caller went; not because a starved relay or baseline
         * ran late, which a deadline within the caller's timeout shows. */
        if (i >= 0 && longer) {
            int64_t open_until = r->ended ? r->end_ns : now_ns;
            if (ms_between(calls[i].deadline_ns, open_until) > GR_OVERLOAD_LINGER_MS)
                s->linger++;
        }
    }
}

void gr_overload_refused_add(gr_overload_refused_facts *f, int64_t ms, int status, const char *status_text)
{
    f->made++;
    f->worst_ms = ms > f->worst_ms ? ms : f->worst_ms;
    if (ms > GR_OVERLOAD_FAST_MS) {
        if (!f->slow++)
            snprintf(f->slow_st, sizeof f->slow_st, "%s", status_text);
    } else if (status != GRPC_STATUS_UNAVAILABLE) {
        if (!f->wrong++)
            snprintf(f->wrong_st, sizeof f->wrong_st, "%s", status_text);
    }
}

gr_verdict gr_overload_judge_refused(const gr_overload_refused_facts *f, int calls, char *buf, size_t len)
{
    if (f->slow) {
        snprintf(buf, len,
                 "%d of %d calls took over %d ms (up to %lld ms, e.g. %s) while the backend's port was closed: "
                 "the relay waits for the backend (wait_for_ready, or a retry loop until the deadline) instead "
                 "of failing fast with UNAVAILABLE",
                 f->slow, f->made, GR_OVERLOAD_FAST_MS, (long long)f->worst_ms, f->slow_st);
        return GR_FAIL;
    }
    if (f->wrong) {
        snprintf(buf, len,
                 "%d of %d calls failed fast but not with UNAVAILABLE (e.g. %s) while the backend's port was "
                 "closed: pass the backend's UNAVAILABLE on, so that clients know to try elsewhere",
                 f->wrong, f->made, f->wrong_st);
        return GR_FAIL;
    }
    snprintf(buf, len, "with the backend's port closed, all %d calls failed UNAVAILABLE within %lld ms", calls,
             (long long)f->worst_ms);
    return GR_PASS;
}

void gr_overload_blackhole_count(const rl_load_call *calls, size_t n, gr_overload_blackhole_facts *f)
{
    f->n = n;
    f->ok = f->fast = f->unended = 0;
    for (size_t i = 0; i < n; i++) {
        if (!calls[i].end_ns)
            f->unended++;
        else if (calls[i].status == GRPC_STATUS_OK)
            f->ok++;
        else if (ms_between(calls[i].start_ns, calls[i].end_ns) <= GR_OVERLOAD_FAST_MS / 4)
            f->fast++;
    }
}

gr_verdict gr_overload_judge_blackhole(const gr_overload_blackhole_facts *f, char *buf, size_t len)
{
    const gr_overload_seen *s = &f->seen;
    if (f->unended) {
        snprintf(buf, len, "%d of %zu calls had no status %d ms after their deadline", f->unended, f->n, f->grace_ms);
        return GR_FAIL;
    }
    if (s->late) {
        snprintf(buf, len,
                 "%d calls reached the baseline after their caller's deadline had passed (up to %lld ms after): "
                 "the relay forwards calls whose deadline has already passed; a call that waited in the relay "
                 "until its client gave up must be dropped, not forwarded",
                 s->late, (long long)s->late_max_ms);
        return GR_FAIL;
    }
    if (s->linger) {
        snprintf(buf, len,
                 "%d downstream calls were still open %d ms after their caller's deadline: the relay neither "
                 "passes the deadline on nor cancels the downstream call when its caller goes",
                 s->linger, GR_OVERLOAD_LINGER_MS);
        return GR_FAIL;
    }
    snprintf(buf, len,
             "with the backend blackholed, all %zu calls ended by their deadlines (%d refused at once), %d "
             "reached the backend, none after its caller's deadline%s",
             f->n, f->fast, s->reached, f->ok ? " (some even succeeded: a cache?)" : "");
    return GR_PASS;
}

gr_verdict gr_overload_judge_recovers(const gr_overload_recovers_facts *f, char *buf, size_t len)
{
    if (f->recovered) {
        snprintf(buf, len,
                 "after a %lld ms outage, calls succeeded again %lld ms after the backend came back (bound "
                 "%lld ms: gRPC's reconnect backoff, plus %d ms)",
                 (long long)f->outage_ms, (long long)f->ok_after_ms, (long long)f->bound_ms,
                 GR_OVERLOAD_RECOVER_SLACK_MS);
        return GR_PASS;
    }
    snprintf(buf, len,
             "no call succeeded in the %lld ms after the backend came back (after a %lld ms outage, gRPC's "
             "reconnect backoff tries again within %lld ms; the last call: %s): the relay does not reconnect "
             "to a backend that returns",
             (long long)f->bound_ms, (long long)f->outage_ms, (long long)(f->bound_ms - GR_OVERLOAD_RECOVER_SLACK_MS),
             f->last);
    return GR_FAIL;
}

void gr_overload_outcomes_count(const rl_load_call *calls, size_t n, int64_t half_ns, gr_overload_outcomes *c)
{
    memset(c, 0, sizeof *c);
    c->wrong_code = GRPC_STATUS_OK;
    c->lat = rl_xcalloc(n ? n : 1, sizeof *c->lat);
    for (size_t i = 0; i < n; i++) {
        const rl_load_call *k = &calls[i];
        int64_t ms = ms_between(k->start_ns, k->end_ns);
        if (!k->end_ns) {
            c->unended++;
        } else if (k->status == GRPC_STATUS_OK) {
            c->ok++;
            c->ok_late_half += k->start_ns >= half_ns;
            c->lat[c->nlat++] = ms;
        } else if (k->status == GRPC_STATUS_DEADLINE_EXCEEDED) {
            c->waited++;
            c->waited_max = ms > c->waited_max ? ms : c->waited_max;
        } else if (k->status == GRPC_STATUS_RESOURCE_EXHAUSTED || k->status == GRPC_STATUS_UNAVAILABLE) {
            c->fast++;
            c->fast_max = ms > c->fast_max ? ms : c->fast_max;
        } else {
            c->wrong++;
            c->wrong_code = k->status;
        }
    }
    rl_stats_sort_i64(c->lat, c->nlat);
}

/* Quadratic, over a load's few hundred calls. The feedback quotes the
 * message, since it is the relay's own word on why it refused (a starter's
 * names its TODO). */
const char *gr_overload_common_refusal(const rl_load_call *calls, size_t n, int *count)
{
    const char *best = "";
    *count = 0;
    for (size_t i = 0; i < n; i++) {
        grpc_status_code st = calls[i].status;
        if (!calls[i].end_ns || !calls[i].details[0] ||
            (st != GRPC_STATUS_RESOURCE_EXHAUSTED && st != GRPC_STATUS_UNAVAILABLE))
            continue;
        int same = 0;
        for (size_t j = i; j < n; j++)
            same += calls[j].end_ns && calls[j].status == st && strcmp(calls[j].details, calls[i].details) == 0;
        if (same > *count) {
            *count = same;
            best = calls[i].details;
        }
    }
    return best;
}

/* The reasons the overload fails, in the order they are found. */
typedef struct judged {
    gr_verdict v;
    char why[1024]; /* "; reason; reason": the first two bytes are dropped when shown */
    size_t wl;
} judged;

static void fail_because(judged *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail_because(judged *j, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    j->wl += (size_t)vsnprintf(j->why + j->wl, j->wl < sizeof j->why ? sizeof j->why - j->wl : 0, fmt, ap);
    va_end(ap);
    j->v = GR_FAIL;
}

/* What reached the baseline: calls forwarded past their deadline, or
 * without the time to be served, and downstream calls left open. */
static void judge_forwarding(judged *j, const gr_overload_seen *s)
{
    if (s->late > GR_OVERLOAD_WASTE_TOL) {
        fail_because(j,
                     "; %d calls reached the baseline with no time left (up to %lld ms after their caller's deadline): "
                     "the relay forwards calls whose deadline has already passed",
                     s->late, (long long)s->late_max_ms);
    } else if (s->wasted > GR_OVERLOAD_WASTE_TOL) {
        fail_because(j,
                     "; %d calls reached the baseline without the time to be served (their deadline ended them there): "
                     "the relay forwards calls whose remaining deadline cannot cover the wait and the work",
                     s->wasted);
    }
    if (s->linger > GR_OVERLOAD_WASTE_TOL) /* the same allowance: it is the same delay */
        fail_because(j,
                     "; %d downstream calls were still open %d ms after their caller's deadline: the relay neither "
                     "passes the deadline on nor cancels the downstream call when its caller goes, so the backend "
                     "works for nobody",
                     s->linger, GR_OVERLOAD_LINGER_MS);
}

/* Whether the relay shed what it could not serve: calls that waited their
 * whole deadline, and the goodput left. */
static void judge_shedding(judged *j, const gr_overload_load_facts *f)
{
    const gr_overload_outcomes *c = f->c;
    if (c->waited > GR_OVERLOAD_LATE_TOL)
        fail_because(j,
                     "; %d of %zu calls waited their whole deadline (DEADLINE_EXCEEDED after up to %lld ms): a queue "
                     "with no bound, or no check of the remaining deadline, keeps calls it cannot serve in time "
                     "instead of refusing them at once (RESOURCE_EXHAUSTED)",
                     c->waited, f->n, (long long)c->waited_max);
    if (f->goodput < GR_OVERLOAD_GOODPUT_SHARE * f->capacity_per_s)
        fail_because(j,
                     "; goodput collapsed: %.1f calls/s succeeded in the second half, under %.0f %% of the %.0f/s "
                     "the backend can serve",
                     f->goodput, GR_OVERLOAD_GOODPUT_SHARE * 100, f->capacity_per_s);
}

/* What does not rest on timing: the refusals' status and the RSS budget.
 * Returns true when one of them failed. */
static bool judge_refusals_and_memory(judged *j, const gr_overload_outcomes *c, double peak_mib)
{
    bool failed = false;
    if (c->wrong) {
        failed = true;
        fail_because(j, "; %d calls were refused with %s: refuse with RESOURCE_EXHAUSTED (overloaded) or UNAVAILABLE",
                     c->wrong, rl_status_name(c->wrong_code));
    }
    if (peak_mib > GR_OVERLOAD_RSS_BUDGET_MIB) {
        failed = true;
        fail_because(j,
                     "; its RSS reached %.1f MiB, over the %.0f MiB budget: what it holds per waiting call is not "
                     "bounded",
                     peak_mib, GR_OVERLOAD_RSS_BUDGET_MIB);
    }
    return failed;
}

/* What the load met, which every verdict carries. */
static void describe_load(const gr_overload_load_facts *f, char *fb, size_t len)
{
    const gr_overload_outcomes *c = f->c;
    int said_by = 0;
    const char *said = gr_overload_common_refusal(f->calls, f->n, &said_by);
    char refusals[RL_LOAD_DETAILS_MAX + 64] = "";
    if (said_by)
        snprintf(refusals, sizeof refusals, ", %d of them with \"%s\"", said_by, said);
    snprintf(fb, len,
             "at %.0f calls/s, ten times the backend's capacity of %.0f/s, for %d ms (%d ms deadlines): "
             "%d OK (p50 %lld ms, p99 %lld ms), goodput %.1f/s in the second half; %d refused "
             "(within %lld ms%s), %d waited their deadline; the baseline saw %d calls, %d of them wasted; relay "
             "RSS peak %.1f MiB",
             f->rate, f->capacity_per_s, f->duration_ms, f->deadline_ms, c->ok,
             (long long)rl_stats_pct_i64(c->lat, c->nlat, 50), (long long)rl_stats_pct_i64(c->lat, c->nlat, 99),
             f->goodput, c->fast, (long long)c->fast_max, refusals, c->waited, f->s->reached, f->s->wasted,
             f->peak_mib);
}

/* Whether the chain waited a deadline's length for a CPU during the load
 * and every timing reason touched a minority of its calls (overload_judge.h,
 * "a starved chain"). A collapsed goodput is never excused: the starters'
 * gate, one call at a time, refuses 493 of 500 within 89 ms and collapses
 * it on any machine (seen with 2054 ms of wait in a make test), and a wait
 * for a CPU says nothing of calls refused at once. */
static bool starved_minority(const gr_overload_load_facts *f)
{
    if (f->chain_wait_ms < f->deadline_ms || f->deadline_ms <= 0)
        return false;
    if (f->goodput < GR_OVERLOAD_GOODPUT_SHARE * f->capacity_per_s)
        return false;
    double bar = GR_OVERLOAD_STARVED_SHARE * (double)f->n;
    const gr_overload_outcomes *c = f->c;
    const gr_overload_seen *s = f->s;
    return c->unended < bar && c->waited < bar && s->late < bar && s->wasted < bar && s->linger < bar;
}

gr_verdict gr_overload_judge_load(const gr_overload_load_facts *f, char *buf, size_t len)
{
    char fb[GR_FEEDBACK_MAX];
    describe_load(f, fb, sizeof fb);
    judged j = {.v = GR_PASS};
    if (f->c->unended)
        fail_because(&j, "; %d calls had no status %d ms after their deadline", f->c->unended, f->grace_ms);
    judge_forwarding(&j, f->s);
    judge_shedding(&j, f);
    bool timing_only = j.v == GR_FAIL;
    if (judge_refusals_and_memory(&j, f->c, f->peak_mib))
        timing_only = false;
    if (j.v == GR_PASS) {
        snprintf(buf, len, "%s", fb);
        return GR_PASS;
    }
    int64_t lag = gr_overload_client_lag_ms(f->calls, f->n);
    if (timing_only && lag > GR_OVERLOAD_STALL_MS) {
        /* Wrong status codes and the RSS budget do not rest on timing. */
        snprintf(buf, len,
                 "grade again: the machine stalled. The grader's own client saw calls end up to %lld ms after "
                 "their deadline (its timer fires at the deadline), so neither it nor the relay ran for that "
                 "long, and what looked wrong (%s) may be the stall's; %s",
                 (long long)lag, j.why + 2, fb);
        return GR_ERROR;
    }
    if (timing_only && starved_minority(f)) {
        snprintf(buf, len,
                 "grade again: the machine was too busy. During the load the relay and the baseline waited %lld ms "
                 "for a CPU, at least a %d ms deadline, so a call could wait its deadline for want of one; what "
                 "looked wrong (%s) touched under half of the calls, which such a wait can explain; %s",
                 (long long)f->chain_wait_ms, f->deadline_ms, j.why + 2, fb);
        return GR_ERROR;
    }
    snprintf(buf, len, "%s; %s", j.why + 2, fb);
    return j.v;
}
