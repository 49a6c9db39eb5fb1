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
        snprintf(where + k, sizeof where - k, "%s%s %llu", total ? ", " : "", names[i],
                 (unsigned long long)refused[i]);
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
