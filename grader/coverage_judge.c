/* coverage_judge: the coverage exercise's arithmetic on the tunnel servers'
 * records; see coverage_judge.h. Records are a few thousand at most, so
 * everything is a plain scan. */
#include "coverage_judge.h"

#include "rl_alloc.h"
#include "rl_coverage.h"
#include "rl_stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool open_at(const Relaylab__TunnelStreamRecord *r, int64_t t)
{
    return r->opened_ns <= t && (!r->closed_ns || r->closed_ns > t);
}

int gr_cov_streams_at(const gr_cov_server *s, int64_t t)
{
    int n = 0;
    for (size_t i = 0; i < s->n_streams; i++)
        n += open_at(s->streams[i], t);
    return n;
}

int gr_cov_busy_at(const gr_cov_server *s, int64_t t)
{
    int n = 0;
    for (size_t i = 0; i < s->n_calls; i++) {
        const Relaylab__TunnelCallRecord *c = s->calls[i];
        if (!c->handed_ns || c->handed_ns > t)
            continue;
        if (c->answered_ns && c->answered_ns <= t)
            continue;
        if (c->lost) {
            /* Lost with its stream: busy until the stream closed. */
            bool still = false;
            for (size_t k = 0; k < s->n_streams; k++)
                if (s->streams[k]->id == c->stream_id)
                    still = open_at(s->streams[k], t);
            if (!still)
                continue;
        }
        n++;
    }
    return n;
}

/* Every instant where a count of |servers| can change in [t0, t1]: t0 and
 * each open within it (closes only lower it). */
int gr_cov_peak_total(const gr_cov_server *const *servers, size_t n, int64_t t0, int64_t t1, int64_t *at)
{
    int best = 0;
    int64_t best_at = t0;
    for (size_t k = 0; k <= n; k++) {
        /* k == n: the window's start; else each stream opened in it */
        size_t m = k < n ? servers[k]->n_streams : 1;
        for (size_t i = 0; i < m; i++) {
            int64_t t = k < n ? servers[k]->streams[i]->opened_ns : t0;
            if (t < t0 || t > t1)
                continue;
            int total = 0;
            for (size_t j = 0; j < n; j++)
                total += gr_cov_streams_at(servers[j], t);
            if (total > best) {
                best = total;
                best_at = t;
            }
        }
    }
    if (at)
        *at = best_at;
    return best;
}

int gr_cov_peak(const gr_cov_server *s, int64_t t0, int64_t t1)
{
    const gr_cov_server *one[] = {s};
    return gr_cov_peak_total(one, 1, t0, t1, NULL);
}

void gr_cov_wait_stats(const gr_cov_server *s, int64_t t0, int64_t t1, int64_t now, gr_cov_waits *out)
{
    out->calls = out->queued = out->unanswered = out->lost = 0;
    out->max_ns = out->max_at_ns = out->p50_ns = 0;
    int64_t *w = rl_xcalloc(s->n_calls + 1, sizeof *w);
    for (size_t i = 0; i < s->n_calls; i++) {
        const Relaylab__TunnelCallRecord *c = s->calls[i];
        if (c->dispatched_ns < t0 || c->dispatched_ns > t1)
            continue;
        int64_t wait = c->handed_ns ? c->handed_ns - c->dispatched_ns : now - c->dispatched_ns;
        if (wait < 0)
            wait = 0;
        w[out->calls++] = wait;
        if (!c->handed_ns)
            out->queued++;
        else if (!c->answered_ns)
            out->unanswered++;
        out->lost += c->lost;
        if (wait > out->max_ns) {
            out->max_ns = wait;
            out->max_at_ns = c->dispatched_ns;
        }
    }
    if (out->calls) {
        rl_stats_sort_i64(w, out->calls);
        out->p50_ns = w[(out->calls - 1) / 2];
    }
    free(w);
}

int gr_cov_closed_in(const gr_cov_server *s, int64_t t0, int64_t t1)
{
    int n = 0;
    for (size_t i = 0; i < s->n_streams; i++) {
        const Relaylab__TunnelStreamRecord *r = s->streams[i];
        n += r->closed_ns && r->closed_ns >= t0 && r->closed_ns <= t1;
    }
    return n;
}

int gr_cov_young_closes(const gr_cov_server *s, int64_t t0, int64_t t1, int64_t age_ns)
{
    int n = 0;
    for (size_t i = 0; i < s->n_streams; i++) {
        const Relaylab__TunnelStreamRecord *r = s->streams[i];
        n += r->closed_ns && r->closed_ns >= t0 && r->closed_ns <= t1 && r->calls > 0 &&
             r->closed_ns - r->opened_ns < age_ns;
    }
    return n;
}

int64_t gr_cov_emptied_at(const gr_cov_server *s, int64_t t0, int64_t t1)
{
    if (gr_cov_streams_at(s, t1) > 0)
        return 0;
    /* The last close at or before t1 emptied it; nothing opened after it. */
    int64_t last = 0;
    for (size_t i = 0; i < s->n_streams; i++) {
        const Relaylab__TunnelStreamRecord *r = s->streams[i];
        if (r->closed_ns && r->closed_ns <= t1 && r->closed_ns > last)
            last = r->closed_ns;
    }
    return last >= t0 ? last : 0;
}

int64_t gr_cov_first_open(const gr_cov_server *s)
{
    int64_t first = 0;
    for (size_t i = 0; i < s->n_streams; i++)
        if (!first || s->streams[i]->opened_ns < first)
            first = s->streams[i]->opened_ns;
    return first;
}

int64_t gr_cov_last_answer(const gr_cov_server *s)
{
    int64_t last = 0;
    for (size_t i = 0; i < s->n_calls; i++)
        if (s->calls[i]->answered_ns > last)
            last = s->calls[i]->answered_ns;
    return last;
}

int64_t gr_cov_opened_in(int ticks)
{
    return (int64_t)RL_COV_GROW_MIN * ((INT64_C(1) << ticks) - 1);
}

int gr_cov_ticks_to_cover(int demand, int have, double share)
{
    for (int t = 0; t <= 30; t++)
        if (have + share * (double)gr_cov_opened_in(t) >= demand + RL_COV_RESERVE)
            return t;
    return -1;
}

int gr_cov_idle_elsewhere(const gr_cov_server *const *servers, int n, int b, int64_t t)
{
    int idle = 0;
    for (int i = 0; i < n; i++)
        if (i != b)
            idle += gr_cov_streams_at(servers[i], t) - gr_cov_busy_at(servers[i], t);
    return idle;
}

int gr_cov_churn(const gr_cov_server *const *servers, int n, int64_t t0, int64_t t1, bool with_call_only)
{
    const int64_t age = (int64_t)RL_COV_PRUNE_AGE_MS * 1000000;
    int closes = 0;
    for (int i = 0; i < n; i++) {
        if (with_call_only) {
            closes += gr_cov_young_closes(servers[i], t0, t1, age);
            continue;
        }
        for (size_t k = 0; k < servers[i]->n_streams; k++) {
            const Relaylab__TunnelStreamRecord *r = servers[i]->streams[k];
            closes += r->closed_ns && r->closed_ns >= t0 && r->closed_ns <= t1 && r->closed_ns - r->opened_ns < age;
        }
    }
    return closes;
}

int gr_cov_lost(const gr_cov_server *const *servers, int n, int64_t t0)
{
    int lost = 0;
    for (int i = 0; i < n; i++)
        for (size_t k = 0; k < servers[i]->n_calls; k++)
            lost += servers[i]->calls[k]->lost && servers[i]->calls[k]->dispatched_ns >= t0;
    return lost;
}

void gr_cov_others(const char *const *names, int n, int b, char *buf, size_t len)
{
    buf[0] = '\0';
    for (int i = 0, k = 0; i < n; i++)
        if (i != b)
            snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", k++ ? " and " : "", names[i]);
}

void gr_cov_early_add(gr_cov_early *acc, const gr_cov_server *s, int server, int64_t t0)
{
    for (size_t i = 0; i < s->n_calls; i++) {
        const Relaylab__TunnelCallRecord *c = s->calls[i];
        if (c->dispatched_ns < t0 || !c->handed_ns || !c->answered_ns)
            continue;
        acc->answered++;
        int64_t took = c->answered_ns - c->handed_ns;
        if (took >= ((int64_t)c->work_ms - GR_COV_WORK_SLACK_MS) * 1000000)
            continue;
        /* The worst: the biggest share of its work skipped. */
        if (!acc->early || took * (int64_t)acc->worst_work < acc->worst_ns * (int64_t)c->work_ms) {
            acc->worst_ns = took;
            acc->worst_work = c->work_ms;
            acc->worst_server = server;
        }
        acc->early++;
    }
}

bool gr_cov_judge_work(const gr_cov_early *e, const char *const *names, char *buf, size_t len)
{
    if (!e->early)
        return false;
    snprintf(buf, len,
             "%zu of the %zu calls answered came back sooner than their work after the server handed them (one "
             "of %u ms on server %s was answered %.1f ms after): answered before the work? Work each call its "
             "work_ms, then answer it; a stream carrying a call is busy until then",
             e->early, e->answered, e->worst_work, names[e->worst_server], (double)e->worst_ns / 1e6);
    return true;
}

bool gr_cov_judge_direct(const uint64_t *refused, const char *const *names, int n, char *buf, size_t len)
{
    uint64_t total = 0;
    char where[64] = "";
    for (int i = 0; i < n; i++) {
        if (!refused[i])
            continue;
        size_t k = strlen(where);
        snprintf(where + k, sizeof where - k, "%s%s %llu", total ? ", " : "", names[i], (unsigned long long)refused[i]);
        total += refused[i];
    }
    if (!total)
        return false;
    snprintf(buf, len,
             "%llu stream%s opened straight to the tunnel servers' own ports (%s), around the L7 balancer: the "
             "servers accept streams from the balancer alone and refused %s (streams around the proxy?). Dial "
             "only RELAYLAB_TUNNEL: the balancer places each stream, and the server's first message says where",
             (unsigned long long)total, total == 1 ? " was" : "s were", where, total == 1 ? "it" : "them");
    return true;
}

bool gr_cov_judge_caps(const gr_cov_caps_facts *f, char *buf, size_t len)
{
    char flood[160] = "";
    if (f->refused)
        snprintf(flood, sizeof flood, "; the balancer refused %llu more beyond its limit of %d open (a flood)",
                 (unsigned long long)f->refused, f->limit);
    for (int i = 0; i < f->n; i++)
        if (f->peak[i] > RL_COV_CAP_PER_SERVER) {
            snprintf(buf, len,
                     "%d of your streams were open at once on server %s (%d in all at the peak%s): the caps are "
                     "%d per server and %d in all, and growth pauses while idle streams elsewhere reach %dx the "
                     "demand (growing without a cap?)",
                     f->peak[i], f->names[i], f->peak_open, flood, RL_COV_CAP_PER_SERVER, RL_COV_CAP_TOTAL,
                     RL_COV_PAUSE_FACTOR);
            return true;
        }
    if (f->total > (uint64_t)f->limit) {
        /* More opened in one scenario than the world holds at once: a flood
         * (most of it refused or reset before it stayed open). */
        snprintf(buf, len,
                 "%llu streams were opened through the balancer in this scenario (%d open at once at the peak%s), "
                 "more than the world holds at once (%d): a flood. The caps are %d per server and %d in all "
                 "(growing without a cap?)",
                 (unsigned long long)f->total, f->peak_open, flood, f->limit, RL_COV_CAP_PER_SERVER, RL_COV_CAP_TOTAL);
        return true;
    }
    if (f->peak_open > RL_COV_CAP_TOTAL || f->refused) {
        snprintf(buf, len,
                 "%d of your streams were open at once%s: the caps are %d per server and %d in all (growing "
                 "without a cap?)",
                 f->peak_open, flood, RL_COV_CAP_PER_SERVER, RL_COV_CAP_TOTAL);
        return true;
    }
    return false;
}

bool gr_cov_judge_churn(int young, const char *where, char *buf, size_t len)
{
    if (young <= GR_COV_CHURN_MAX)
        return false;
    gr_cov_per_call_feedback(young, where, buf, len);
    return true;
}

bool gr_cov_judge_settled(int newest_open, int settle_ms, char *buf, size_t len)
{
    if (newest_open >= 0)
        return false;
    snprintf(buf, len,
             "the agent holds no open stream %d ms after its first one: it must keep its "
             "streams open (open %d at start)",
             settle_ms, RL_COV_GROW_MIN);
    return true;
}

void gr_cov_per_call_feedback(int young, const char *where, char *buf, size_t len)
{
    snprintf(buf, len,
             "%d stream%s closed younger than %d ms right after carrying a call%s: a stream per call? Streams are "
             "long-lived: keep them, and prune only idle ones (%d ms old and %d ms unused)",
             young, young == 1 ? " was" : "s were", RL_COV_PRUNE_AGE_MS, where, RL_COV_PRUNE_AGE_MS,
             RL_COV_PRUNE_UNUSED_MS);
}

gr_verdict gr_cov_judge_unfillable(const gr_cov_unfill_facts *f, char *buf, size_t len)
{
    if (f->closed && f->closed_used == f->closed) {
        char where[96];
        snprintf(where, sizeof where, " on busy server %s, where no new stream could land", f->server);
        gr_cov_per_call_feedback(f->closed_used, where, buf, len);
        return GR_FAIL;
    }
    if (f->closed || f->lost) {
        snprintf(buf, len,
                 "the agent closed %d of its streams on server %s (%d call%s lost) while %s had calls in flight and "
                 "queued and no new stream could land there: never evacuate or prune a server with calls in flight "
                 "(evacuating a busy server?)",
                 f->closed, f->server, f->lost, f->lost == 1 ? "" : "s", f->server);
        return GR_FAIL;
    }
    if (f->peak > f->bound) {
        snprintf(buf, len,
                 "%d streams open at once (%lld ms in) while no new stream could land on busy server %s (%d of yours "
                 "there): growth must pause once idle streams elsewhere reach %dx its demand, and stay under the "
                 "caps; bound %d (growing without a cap?)",
                 f->peak, (long long)f->peak_after_ms, f->server, f->have, RL_COV_PAUSE_FACTOR, f->bound);
        return GR_FAIL;
    }
    if (f->thrash > GR_COV_CHURN_MAX) {
        snprintf(buf, len,
                 "%d streams were closed younger than %d ms while server %s was unfillable: opening and closing in a "
                 "loop (thrash) does not move placement; keep the busy server and pause",
                 f->thrash, RL_COV_PRUNE_AGE_MS, f->server);
        return GR_FAIL;
    }
    snprintf(buf, len,
             "kept its %d stream%s on unfillable server %s through %lld ms of calls; at most %d streams open (bound "
             "%d), %d closed young",
             f->have, f->have == 1 ? "" : "s", f->server, (long long)f->ran_ms, f->peak, f->bound, f->thrash);
    return GR_PASS;
}

gr_verdict gr_cov_judge_rest(const gr_cov_rest_facts *f, char *buf, size_t len)
{
    if (f->below >= 0) {
        snprintf(buf, len,
                 "the agent pruned server %s down to %d stream%s at rest: never below the reserve (%d per server), or "
                 "the next call there waits for a new stream",
                 f->names[f->below], f->below_n, f->below_n == 1 ? "" : "s", RL_COV_RESERVE);
        return GR_FAIL;
    }
    if (f->worst >= 0) {
        snprintf(buf, len,
                 "%lld ms after the burst's last answer the agent still held %d streams on server %s (%s; %d at the "
                 "peak): idle streams older than %d ms and unused for %d ms must be pruned back to the reserve (%d "
                 "per server): never pruning?",
                 (long long)f->after_ms, f->worst_n, f->names[f->worst], f->figures, f->peak, RL_COV_PRUNE_AGE_MS,
                 RL_COV_PRUNE_UNUSED_MS, RL_COV_RESERVE);
        return GR_FAIL;
    }
    snprintf(buf, len, "back to %s streams %lld ms after the burst (peak %d); never below the reserve", f->figures,
             (long long)f->after_ms, f->peak);
    return GR_PASS;
}

gr_verdict gr_cov_judge_rest_burst(const gr_cov_rest_burst_facts *f, char *buf, size_t len)
{
    if (f->lost) {
        snprintf(buf, len,
                 "%d call%s lost during the burst on server %s: the agent closed streams that carried them (%d "
                 "stream%s of yours left there): never evacuate or prune a server with calls in flight "
                 "(evacuating a busy server?)",
                 f->lost, f->lost == 1 ? " was" : "s were", f->server, f->held, f->held == 1 ? "" : "s");
        return GR_FAIL;
    }
    if (f->queued || f->unanswered) {
        snprintf(buf, len,
                 "%zu of the burst's %d calls on server %s were still unanswered %d ms after it began (%zu "
                 "queued; %d stream%s of yours there): cover the burst first (see burst-uniform), then prune",
                 f->queued + f->unanswered, f->calls, f->server, (int)f->after_ms, f->queued, f->held,
                 f->held == 1 ? "" : "s");
        return GR_FAIL;
    }
    if (len)
        buf[0] = '\0';
    return GR_PASS;
}

bool gr_cov_judge_evac_start(const char *busy, int busy_n, const char *idle, int idle_n, char *buf, size_t len)
{
    if (busy_n > 0 && idle_n > 0)
        return false;
    snprintf(buf, len,
             "when the evacuation began server %s held %d streams and %s %d: every server keeps at "
             "least the reserve (%d idle streams) and an agent opens %d at start, so there was nothing "
             "to evacuate. Open streams on every server the proxy places them on",
             busy, busy_n, idle, idle_n, RL_COV_RESERVE, RL_COV_GROW_MIN);
    return true;
}

gr_verdict gr_cov_judge_evacuation(const gr_cov_evac_facts *f, char *buf, size_t len)
{
    if (f->closed && f->closed_used == f->closed) {
        char where[64];
        snprintf(where, sizeof where, " on server %s", f->busy);
        gr_cov_per_call_feedback(f->closed_used, where, buf, len);
        return GR_FAIL;
    }
    if (f->closed || f->lost) {
        snprintf(buf, len,
                 "the agent closed %d of its streams on server %s (%d call%s lost) while it had calls in flight (one "
                 "every %d ms) or within %lld ms of the last one, sooner than the %d ms a server must stay short and "
                 "idle to be overdue: a server with calls in flight is never overdue, so never evacuated (evacuating "
                 "a busy server?)",
                 f->closed, f->busy, f->lost, f->lost == 1 ? "" : "s", f->interval_ms, (long long)f->early_ms,
                 RL_COV_OVERDUE_MS);
        return GR_FAIL;
    }
    if (f->emptied_ms < 0) {
        snprintf(buf, len,
                 "server %s was short and idle for %lld ms (1 stream of yours, none could land) and still held %d "
                 "stream%s: once short and idle for %d ms it is overdue and must be evacuated (its idle streams "
                 "closed) while another server is covered",
                 f->idle, (long long)f->idle_ms, f->left, f->left == 1 ? "" : "s", RL_COV_OVERDUE_MS);
        return GR_FAIL;
    }
    if (f->emptied_ms < f->early_ms) {
        snprintf(buf, len,
                 "server %s was evacuated %lld ms after it became short and idle: only once overdue (%d ms); before "
                 "that, fill it toward the reserve",
                 f->idle, (long long)f->emptied_ms, RL_COV_OVERDUE_MS);
        return GR_FAIL;
    }
    snprintf(buf, len,
             "server %s evacuated %lld ms after it became short and idle (overdue at %d ms); server %s, with calls in "
             "flight, kept its streams",
             f->idle, (long long)f->emptied_ms, RL_COV_OVERDUE_MS, f->busy);
    return GR_PASS;
}

/* Sorts |v| (n small) ascending. */
static void sort_i64(int64_t *v, size_t n)
{
    rl_stats_sort_i64(v, n);
}

int gr_cov_steps(const gr_cov_server *const *servers, size_t n, int64_t t0, int64_t t1, int *steps, int max)
{
    size_t total = 0;
    for (size_t k = 0; k < n; k++)
        total += servers[k]->n_streams;
    int64_t *at = rl_xcalloc(total + 1, sizeof *at);
    size_t m = 0;
    for (size_t k = 0; k < n; k++)
        for (size_t i = 0; i < servers[k]->n_streams; i++) {
            int64_t t = servers[k]->streams[i]->opened_ns;
            if (t >= t0 && t <= t1)
                at[m++] = t;
        }
    sort_i64(at, m);
    int nsteps = 0;
    for (size_t i = 0; i < m; i++) {
        bool fresh = i == 0 || at[i] - at[i - 1] >= (int64_t)GR_COV_STEP_GAP_MS * 1000000;
        if (fresh)
            nsteps++;
        if (nsteps <= max) {
            if (fresh)
                steps[nsteps - 1] = 0;
            steps[nsteps - 1]++;
        }
    }
    free(at);
    return nsteps;
}

gr_cov_growth gr_cov_growth_kind(const int *steps, int n)
{
    if (n <= 0)
        return GR_COV_GREW_NONE;
    int small = 0;
    bool doubled = false;
    for (int i = 0; i < n; i++) {
        small += steps[i] < RL_COV_GROW_MIN;
        doubled |= steps[i] >= 2 * steps[0] && steps[i] >= 2 * RL_COV_GROW_MIN;
    }
    if (2 * small >= n)
        return GR_COV_GREW_SHORTFALL;
    if (doubled)
        return GR_COV_GREW_DOUBLING;
    return n == 1 ? GR_COV_GREW_STALLED : GR_COV_GREW_LINEAR;
}

/* "8, 8, 8, 8, 8 ..." (at most six) into |buf|. */
static void step_list(const gr_cov_burst_facts *f, char *buf, size_t len)
{
    buf[0] = '\0';
    int shown = f->nstored < 6 ? f->nstored : 6;
    for (int i = 0; i < shown; i++) {
        size_t k = strlen(buf);
        snprintf(buf + k, len - k, "%s%d", i ? ", " : "", f->steps[i]);
    }
    if (f->nsteps > shown) {
        size_t k = strlen(buf);
        snprintf(buf + k, len - k, " ... %d steps", f->nsteps);
    }
}

/* The median step. */
static int median_step(const gr_cov_burst_facts *f)
{
    int64_t v[64];
    int n = f->nstored < 64 ? f->nstored : 64;
    for (int i = 0; i < n; i++)
        v[i] = f->steps[i];
    sort_i64(v, (size_t)n);
    return n ? (int)v[(n - 1) / 2] : 0;
}

/* Why the burst was late, by what the steps show. */
static void diagnosis(const gr_cov_burst_facts *f, char *buf, size_t len)
{
    char list[96];
    step_list(f, list, sizeof list);
    int opened = 0;
    for (int i = 0; i < f->nstored; i++)
        opened += f->steps[i];
    gr_cov_growth g = gr_cov_growth_kind(f->steps, f->nstored);
    if (g == GR_COV_GREW_NONE && f->todo)
        snprintf(buf, len,
                 ": the agent opened no stream while they waited, and its output says TODO: its sizing tick is still "
                 "the starter's TODO, which keeps the first streams. Fill it in by the handout's table");
    else if (f->idle_elsewhere >= RL_COV_RESERVE && opened < RL_COV_GROW_MIN)
        snprintf(buf, len,
                 ": it opened %d stream%s while they waited: streams sized as a total? Group them by the server "
                 "named in their first message and size each server",
                 opened, opened == 1 ? "" : "s");
    else if (g == GR_COV_GREW_NONE)
        snprintf(buf, len,
                 ": it opened no stream while they waited: grow greedily (8, then doubling each tick) "
                 "while a server is short");
    else if (g == GR_COV_GREW_SHORTFALL)
        snprintf(buf, len,
                 ": it opened only about %d stream%s a tick (%s), the shortfall it could see: shortfall-only "
                 "growth? The calls queued at the server are invisible to you: open max(8, busy, shortfall) and "
                 "double it each tick the server stays short",
                 median_step(f), median_step(f) == 1 ? "" : "s", list);
    else if (g == GR_COV_GREW_LINEAR)
        snprintf(buf, len,
                 ": it opened about %d streams a tick (%s) and never doubled: linear growth? Only a share of new "
                 "streams lands on the busy server: double what you open each tick it stays short (8, 16, 32 ...)",
                 median_step(f), list);
    else if (g == GR_COV_GREW_STALLED)
        snprintf(buf, len,
                 ": it opened %d streams once (%s) and then no more while calls still waited: keep growing, doubling "
                 "each tick the server stays short",
                 opened, list);
    else
        snprintf(buf, len,
                 ": it grew (%s) but covered too late: open max(8, busy, shortfall) at once and double it each tick "
                 "the server stays short",
                 list);
}

gr_verdict gr_cov_judge_burst(const gr_cov_burst_facts *f, bool *starved, char *buf, size_t len)
{
    *starved = false;
    if (f->max_wait_ms <= f->bound_ms && (f->closed || f->lost)) {
        /* Nothing prunes a server with calls in flight, and none of its
         * streams is old and unused enough within the burst. */
        snprintf(buf, len,
                 "the agent closed %d of its streams on server %s during the burst (%d call%s lost) while %s had "
                 "calls in flight: never evacuate or prune a server with calls in flight (evacuating a busy "
                 "server?)",
                 f->closed, f->server, f->lost, f->lost == 1 ? "" : "s", f->server);
        return GR_FAIL;
    }
    if (f->max_wait_ms <= f->bound_ms) {
        snprintf(buf, len,
                 "%d calls on server %s: longest queue wait %lld ms (bound %lld ms: %d ticks to cover %d in flight + "
                 "%d), median %lld ms; at most %d streams open",
                 f->calls, f->server, (long long)f->max_wait_ms, (long long)f->bound_ms, f->ticks, f->demand,
                 GR_COV_SLACK_TICKS, (long long)f->p50_ms, f->peak);
        return GR_PASS;
    }
    char why[400];
    diagnosis(f, why, sizeof why);
    int n = snprintf(buf, len,
                     "calls waited %lld ms on server %s (%zu of %d still queued at the end), which held %d stream%s "
                     "of yours (%d busy) while %d idle stream%s sat on %s; the rule covers %d calls in flight within "
                     "%d ticks (%lld ms with the margin of %d)",
                     (long long)f->max_wait_ms, f->server, f->queued, f->calls, f->held, f->held == 1 ? "" : "s",
                     f->busy, f->idle_elsewhere, f->idle_elsewhere == 1 ? "" : "s", f->others, f->demand, f->ticks,
                     (long long)f->bound_ms, GR_COV_SLACK_TICKS);
    size_t k = n > 0 && (size_t)n < len ? (size_t)n : len ? len - 1 : 0;
    /* Late only by the wait for a CPU: not judged (re-run, then ERROR),
     * unless the steps themselves show the mistake: three or more steps of
     * linear or shortfall-only growth are the rule broken however busy the
     * machine was (a starved doubling agent still doubles, late). */
    gr_cov_growth g = gr_cov_growth_kind(f->steps, f->nstored);
    bool shown = (g == GR_COV_GREW_LINEAR || g == GR_COV_GREW_SHORTFALL) && f->nsteps >= 3;
    if (!shown && f->waited_ms >= 0 && f->max_wait_ms - f->waited_ms <= f->bound_ms) {
        *starved = true;
        snprintf(buf + k, len - k,
                 ", while the agent and the world waited %lld ms for a CPU: the machine was too busy to tell a late "
                 "cover from a starved one -- grade again on a less busy machine",
                 (long long)f->waited_ms);
        return GR_ERROR;
    }
    snprintf(buf + k, len - k, "%s", why);
    return GR_FAIL;
}
