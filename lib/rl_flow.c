/* rl_flow: group RSS watching and the stalled-reader run; see rl_flow.h. */
#include "rl_flow.h"

#include "rl_alloc.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_proc.h"
#include "rl_proc_spawn.h"
#include "rl_probe.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rl_memwatch_start(rl_memwatch *w, pid_t pgid, uint64_t flat_tol, bool keep_series)
{
    memset(w, 0, sizeof *w);
    w->pgid = pgid;
    w->keep_series = keep_series;
    w->flat_tol = flat_tol;
    w->t0_ns = rl_now_ns();
    rl_proc_sample ps;
    if (rl_proc_group_sample(pgid, &ps) != RL_OK)
        return RL_ENOTFOUND;
    w->base_rss = w->peak_rss = w->last_rss = ps.rss_bytes;
    w->base_cpu_ns = w->last_cpu_ns = ps.cpu_ns;
    w->flat_since_ns = w->t0_ns;
    w->flat_lo = w->flat_hi = ps.rss_bytes;
    w->recent[0].t_ns = w->t0_ns;
    w->recent[0].peak = ps.rss_bytes;
    w->recent_head = w->recent_n = 1;
    if (keep_series) {
        w->cappoints = 256;
        w->points = rl_xmalloc(w->cappoints * sizeof *w->points);
        w->points[w->npoints++] = (rl_memwatch_point){0, ps.rss_bytes, ps.cpu_ns};
    }
    return RL_OK;
}

int rl_memwatch_sample(rl_memwatch *w)
{
    rl_proc_sample ps;
    if (rl_proc_group_sample(w->pgid, &ps) != RL_OK)
        return RL_ENOTFOUND;
    int64_t now = rl_now_ns();
    w->last_rss = ps.rss_bytes;
    w->last_cpu_ns = ps.cpu_ns;
    if (ps.rss_bytes > w->peak_rss)
        w->peak_rss = ps.rss_bytes;
    uint64_t lo = ps.rss_bytes < w->flat_lo ? ps.rss_bytes : w->flat_lo;
    uint64_t hi = ps.rss_bytes > w->flat_hi ? ps.rss_bytes : w->flat_hi;
    if (hi - lo > w->flat_tol) { /* the run is broken: a new one starts here */
        w->flat_since_ns = now;
        lo = hi = ps.rss_bytes;
    }
    w->flat_lo = lo;
    w->flat_hi = hi;
    w->recent[w->recent_head].t_ns = now;
    w->recent[w->recent_head].peak = w->peak_rss;
    w->recent_head = (w->recent_head + 1) % RL_MEMWATCH_RECENT;
    if (w->recent_n < RL_MEMWATCH_RECENT)
        w->recent_n++;
    if (w->keep_series) {
        RL_GROW(w->points, w->npoints, w->cappoints, 64);
        w->points[w->npoints++] = (rl_memwatch_point){now - w->t0_ns, ps.rss_bytes, ps.cpu_ns};
    }
    return RL_OK;
}

uint64_t rl_memwatch_growth(const rl_memwatch *w)
{
    return w->peak_rss > w->base_rss ? w->peak_rss - w->base_rss : 0;
}

int64_t rl_memwatch_flat_ns(const rl_memwatch *w)
{
    return rl_now_ns() - w->flat_since_ns;
}

uint64_t rl_memwatch_rise(const rl_memwatch *w, int64_t over_ns)
{
    if (w->recent_n == 0)
        return 0;
    size_t newest = (w->recent_head + RL_MEMWATCH_RECENT - 1) % RL_MEMWATCH_RECENT;
    int64_t since = w->recent[newest].t_ns - over_ns;
    size_t from = newest;
    for (size_t i = 1; i < w->recent_n; i++) {
        from = (newest + RL_MEMWATCH_RECENT - i) % RL_MEMWATCH_RECENT;
        if (w->recent[from].t_ns <= since)
            break;
    }
    return w->peak_rss - w->recent[from].peak;
}

void rl_memwatch_fini(rl_memwatch *w)
{
    free(w->points);
    w->points = NULL;
    w->npoints = w->cappoints = 0;
}

void rl_flow_stall_defaults(rl_flow_stall_opts *o)
{
    memset(o, 0, sizeof *o);
    o->count = 3000;
    o->size = 65536;
    o->read_first = 1;
    o->read_every_ms = 0;
    o->period_ms = 50;
    o->min_ms = 1500;
    o->flat_ms = 1000;
    o->max_ms = 8000;
    o->give_up_growth = UINT64_C(1) << 30;
    o->first_timeout_ms = 10000;
}

static void describe_end(rl_stream *s, char *err, size_t errlen, const char *when)
{
    char details[160];
    rl_stream_details(s, details, sizeof details);
    if (s->status_done)
        snprintf(err, errlen, "the stream ended %s after %llu chunks of %u with %s \"%s\"", when,
                 (unsigned long long)s->received, s->count, rl_status_name(s->status), details);
    else
        snprintf(err, errlen, "the stream ended %s after %llu chunks of %u", when, (unsigned long long)s->received,
                 s->count);
}

/* Reads one chunk by |until_ns|, sampling |w| at most every |period_ns|
 * while waiting. Returns like rl_flow_stall. */
static int read_one(rl_stream *s, rl_memwatch *w, int64_t period_ns, int64_t until_ns, char *err, size_t errlen)
{
    for (;;) {
        int64_t step = rl_now_ns() + period_ns;
        bool end = false;
        int rc = rl_stream_next(s, step < until_ns ? step : until_ns, &end);
        if (rc == RL_OK && !end)
            return RL_OK;
        if (rc == RL_OK && end) {
            rl_stream_wait_status(s, rl_now_ns() + 2 * RL_NS_PER_SEC);
            describe_end(s, err, errlen, "early");
            return RL_EGRPC;
        }
        if (rc == RL_EINVAL) {
            snprintf(err, errlen, "wrong data: %s", s->error);
            return RL_EINVAL;
        }
        if (rc != RL_ETIMEOUT) {
            snprintf(err, errlen, "the grader could not read: %s", s->error);
            return rc;
        }
        if (rl_memwatch_sample(w) != RL_OK) {
            snprintf(err, errlen, "the producer's processes are gone");
            return RL_ENOTFOUND;
        }
        if (rl_now_ns() >= until_ns) {
            snprintf(err, errlen, "chunk %llu did not arrive within the time allowed", (unsigned long long)s->received);
            return RL_ETIMEOUT;
        }
    }
}

rl_flow_step rl_flow_stall_step(const rl_flow_stall_opts *o, int64_t watched_ns, uint64_t growth, int64_t flat_ns,
                                uint64_t rise_1s, uint64_t rise_trend, int wait_pct)
{
    if (o->give_up_growth && growth > o->give_up_growth)
        return RL_FLOW_GAVE_UP;
    /* A peak still climbing over the trend's span is not settled, however
     * flat its last |flat_ms|: a starved producer's RSS can sit within the
     * flat tolerance for a second and then go on (a timer-paced unbounded
     * one, 3.1 MiB/s when it has the CPU, "settled" at 2 MiB in 1.7 s on a
     * loaded machine). */
    bool climbing = o->trend_min && o->trend_ms > 0 && rise_trend > o->trend_min;
    /* Nor is one whose group was waiting for a CPU: it made nothing then,
     * whatever it would have made given one. */
    bool starved = o->undecided_hi && o->starved_pct > 0 && wait_pct > o->starved_pct;
    if (watched_ns >= o->min_ms * RL_NS_PER_MS && flat_ns >= o->flat_ms * RL_NS_PER_MS && !climbing && !starved)
        return RL_FLOW_SETTLED;
    if (watched_ns < o->max_ms * RL_NS_PER_MS)
        return RL_FLOW_GO_ON;
    if (!o->undecided_hi || growth > o->undecided_hi)
        return RL_FLOW_ENDED;
    bool rising = (o->rising_per_s && rise_1s > o->rising_per_s) || climbing || starved;
    if (watched_ns >= o->undecided_max_ms * RL_NS_PER_MS)
        return rising ? RL_FLOW_RISING : RL_FLOW_ENDED;
    return rising || growth > o->undecided_lo ? RL_FLOW_GO_ON : RL_FLOW_ENDED;
}

/* The group's time waiting for a CPU at the latest instants (a ring,
 * newest at |head - 1|), for the starved rule: one reading in SCHED_EVERY
 * RSS samples, as each walks /proc. */
#define SCHED_RING  32
#define SCHED_EVERY 4
typedef struct sched_ring {
    int64_t t_ns[SCHED_RING], wait_ns[SCHED_RING];
    size_t head, n;
    bool unknown; /* no schedstat (or no group): the rule is off */
} sched_ring;

static void sched_sample(sched_ring *r, pid_t pgid)
{
    int64_t run, wait;
    if (r->unknown || rl_proc_group_sched(pgid, &run, &wait) != RL_OK) {
        r->unknown = true;
        return;
    }
    r->t_ns[r->head] = rl_now_ns();
    r->wait_ns[r->head] = wait;
    r->head = (r->head + 1) % SCHED_RING;
    if (r->n < SCHED_RING)
        r->n++;
}

/* The share (%) of the last |over_ns| the group waited for a CPU: from the
 * newest reading back to the newest one at least |over_ns| older (or the
 * oldest kept). -1 when unknown or under two readings. A thread that ended
 * takes its wait with it: never below 0. */
static int sched_wait_pct(const sched_ring *r, int64_t over_ns)
{
    if (r->unknown || r->n < 2)
        return -1;
    size_t newest = (r->head + SCHED_RING - 1) % SCHED_RING, from = newest;
    for (size_t i = 1; i < r->n; i++) {
        from = (newest + SCHED_RING - i) % SCHED_RING;
        if (r->t_ns[from] <= r->t_ns[newest] - over_ns)
            break;
    }
    int64_t span = r->t_ns[newest] - r->t_ns[from], waited = r->wait_ns[newest] - r->wait_ns[from];
    if (span <= 0)
        return -1;
    return waited <= 0 ? 0 : (int)(waited * 100 / span);
}

int rl_flow_stall(grpc_channel *ch, const char *tag, const rl_flow_stall_opts *o, rl_memwatch *w, rl_stream *s,
                  rl_flow_stall_result *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    err[0] = '\0';
    int64_t period = o->period_ms * RL_NS_PER_MS;
    if (rl_stream_open(s, ch, tag, o->count, o->size, INT64_MAX) != RL_OK) {
        snprintf(err, errlen, "the grader could not start Produce");
        return RL_EGRPC;
    }
    int64_t first_until = s->open_ns + o->first_timeout_ms * RL_NS_PER_MS;
    for (uint32_t i = 0; i < o->read_first; i++) {
        int rc = read_one(s, w, period, first_until, err, errlen);
        if (rc != RL_OK)
            return rc;
        if (i == 0)
            out->first_chunk_ms = (s->first_ns - s->open_ns) / RL_NS_PER_MS;
    }
    int64_t t0 = rl_now_ns();
    int64_t next_read = t0 + o->read_every_ms * RL_NS_PER_MS;
    int64_t next_sample = t0;
    sched_ring sched = {.unknown = !(o->undecided_hi && o->starved_pct > 0)};
    sched_sample(&sched, w->pgid);
    for (unsigned nsample = 1;;) {
        int64_t now = rl_now_ns();
        out->wait_pct = sched_wait_pct(&sched, o->flat_ms * RL_NS_PER_MS);
        rl_flow_step step = rl_flow_stall_step(
            o, now - t0, rl_memwatch_growth(w), rl_memwatch_flat_ns(w), rl_memwatch_rise(w, RL_NS_PER_SEC),
            o->trend_ms > 0 ? rl_memwatch_rise(w, o->trend_ms * RL_NS_PER_MS) : 0, out->wait_pct);
        if (step != RL_FLOW_GO_ON) {
            out->settled = step == RL_FLOW_SETTLED;
            out->gave_up = step == RL_FLOW_GAVE_UP;
            out->rising = step == RL_FLOW_RISING;
            break;
        }
        if (o->read_every_ms > 0 && s->received < s->count && now >= next_read) {
            int rc = read_one(s, w, period, now + o->first_timeout_ms * RL_NS_PER_MS, err, errlen);
            if (rc != RL_OK)
                return rc;
            next_read += o->read_every_ms * RL_NS_PER_MS;
            if (next_read < rl_now_ns())
                next_read = rl_now_ns(); /* a slow server: do not read in bursts */
        }
        int64_t until = next_sample;
        if (o->read_every_ms > 0 && next_read < until)
            until = next_read;
        rl_stream_idle(s, until);
        if (rl_now_ns() >= next_sample) {
            if (rl_memwatch_sample(w) != RL_OK) {
                snprintf(err, errlen, "the producer's processes are gone");
                return RL_ENOTFOUND;
            }
            if (nsample++ % SCHED_EVERY == 0)
                sched_sample(&sched, w->pgid);
            next_sample += period;
            if (next_sample < rl_now_ns())
                next_sample = rl_now_ns() + period;
        }
        if (s->status_done && !s->ended) {
            describe_end(s, err, errlen, "during the stall");
            return RL_EGRPC;
        }
    }
    out->watched_ms = (rl_now_ns() - t0) / RL_NS_PER_MS;
    out->read = s->received;
    return RL_OK;
}

int rl_flow_read_rest(rl_stream *s, int64_t until_ns, char *err, size_t errlen)
{
    for (;;) {
        bool end = false;
        int rc = rl_stream_next(s, until_ns, &end);
        if (rc == RL_EINVAL) {
            snprintf(err, errlen, "wrong data: %s", s->error);
            return rc;
        }
        if (rc == RL_ETIMEOUT) {
            snprintf(err, errlen, "only %llu of %u chunks arrived in time", (unsigned long long)s->received, s->count);
            return rc;
        }
        if (rc != RL_OK) {
            snprintf(err, errlen, "the grader could not read: %s", s->error);
            return rc;
        }
        if (end)
            break;
    }
    if (rl_stream_wait_status(s, until_ns) != RL_OK) {
        snprintf(err, errlen, "all %llu chunks arrived but the status did not", (unsigned long long)s->received);
        return RL_ETIMEOUT;
    }
    if (s->status != GRPC_STATUS_OK || s->received != s->count) {
        describe_end(s, err, errlen, s->received == s->count ? "with every chunk" : "short");
        return s->status == GRPC_STATUS_OK ? RL_EINVAL : RL_EGRPC;
    }
    return RL_OK;
}

/* A producer picks its own port and says which in its readiness line. */
static const char *const server_env[] = {"RELAYLAB_LISTEN=127.0.0.1:0", NULL};

int rl_flow_server_start(rl_flow_server *fs, const char *const *argv, int64_t ready_ms, char *err, size_t errlen)
{
    memset(fs, 0, sizeof *fs);
    rl_proc_options po = {.argv = argv, .setenv = server_env, .limits = NULL, .kill_with_parent = true};
    return rl_proc_start_server(&fs->proc, &po, ready_ms, fs->addr, sizeof fs->addr, err, errlen);
}

int rl_flow_server_start_command(rl_flow_server *fs, const char *line, int64_t ready_ms, char *err, size_t errlen)
{
    memset(fs, 0, sizeof *fs);
    rl_proc_command c = {.line = line, .opt = {.setenv = server_env, .kill_with_parent = true}};
    int rc = rl_proc_spawn_command(&fs->proc, &c);
    if (rc != RL_OK) {
        snprintf(err, errlen, "cannot start `%s`: %s", line ? line : "",
                 rc == RL_ESYS ? strerror(errno) : "an empty command");
        return rc;
    }
    return rl_proc_await_server(&fs->proc, line, ready_ms, fs->addr, sizeof fs->addr, err, errlen);
}

void rl_flow_server_stop(rl_flow_server *fs)
{
    if (fs->proc.pid)
        rl_proc_stop(&fs->proc, 2000);
    rl_proc_fini(&fs->proc);
}
