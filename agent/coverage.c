/* coverage: the sizing tick and the table of mistakes; see coverage.h. */
#include "coverage.h"

#include "rl_coverage.h"
#include "rl_err.h"

#include <stdlib.h>
#include <string.h>

static const char *const state_names[] = {"covered", "growing", "filling", "overdue", "evacuated"};

const char *ag_cov_state_name(ag_cov_state s)
{
    return (unsigned)s < sizeof state_names / sizeof state_names[0] ? state_names[s] : "?";
}

static uint32_t max_u32(uint32_t a, uint32_t b)
{
    return a > b ? a : b;
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
    return a < b ? a : b;
}

static bool evacuated(const ag_cov_server *s, int64_t now_ms)
{
    return now_ms < s->evacuated_until_ms;
}

/* Growth for a server short with |busy| calls in flight: at least the
 * minimum, the calls in flight and the shortfall, and twice what it got the
 * tick before, so that a server that stays all busy doubles its streams
 * each tick (the calls queued at the server are invisible to the agent:
 * its busy streams are all the demand it can see). */
static uint32_t growth(const ag_cov_server *s, uint32_t shortfall)
{
    uint32_t w = max_u32(RL_COV_GROW_MIN, max_u32(s->busy, shortfall));
    return max_u32(w, s->last_grow > UINT32_MAX / 2 ? UINT32_MAX : 2 * s->last_grow);
}

/* Right: each server against its own calls in flight. */
static void classify_per_server(const ag_cov_rules *r, ag_cov_fleet *f, int64_t now_ms)
{
    for (size_t i = 0; i < f->n; i++) {
        ag_cov_server *s = &f->servers[i];
        if (evacuated(s, now_ms))
            continue;
        /* The overdue clock first: the rules' own test says what "short
         * and idle" is (right: it implies short, so a covered server's
         * clock stops here). */
        if (r->overdue_candidate(s)) {
            if (!s->short_idle) {
                s->short_idle = true;
                s->short_idle_since_ms = now_ms;
            }
        } else {
            s->short_idle = false;
        }
        uint32_t need = s->busy + RL_COV_RESERVE;
        uint32_t shortfall = s->streams >= need ? 0 : need - s->streams;
        if (s->short_idle && now_ms - s->short_idle_since_ms >= RL_COV_OVERDUE_MS) {
            s->state = AG_COV_OVERDUE;
            s->want = min_u32(shortfall, RL_COV_FILL_PER_TICK);
        } else if (shortfall == 0) {
            s->state = AG_COV_COVERED;
        } else if (s->busy > 0) {
            s->state = AG_COV_GROWING;
            s->want = growth(s, shortfall);
        } else {
            s->state = AG_COV_FILLING;
            s->want = min_u32(shortfall, RL_COV_FILL_PER_TICK);
        }
    }
}

/* The incident: the fleet's streams against the fleet's calls in flight, as
 * if placement did not exist. Idle streams on one server hide the one busy
 * stream on another, so the server receiving the calls never grows. */
static void classify_total(const ag_cov_rules *r, ag_cov_fleet *f, int64_t now_ms)
{
    (void)r;
    uint32_t streams = 0, busy = 0;
    size_t busiest = f->n;
    for (size_t i = 0; i < f->n; i++) {
        ag_cov_server *s = &f->servers[i];
        if (evacuated(s, now_ms))
            continue;
        streams += s->streams;
        busy += s->busy;
        if (busiest == f->n || s->busy > f->servers[busiest].busy)
            busiest = i;
    }
    uint32_t need = busy + RL_COV_RESERVE;
    ag_cov_state state = streams >= need ? AG_COV_COVERED : busy > 0 ? AG_COV_GROWING : AG_COV_FILLING;
    for (size_t i = 0; i < f->n; i++) {
        ag_cov_server *s = &f->servers[i];
        if (evacuated(s, now_ms))
            continue;
        s->state = state;
        s->short_idle = false;
    }
    if (state == AG_COV_COVERED || busiest == f->n)
        return;
    ag_cov_server *b = &f->servers[busiest];
    if (state == AG_COV_GROWING) {
        uint32_t w = max_u32(RL_COV_GROW_MIN, max_u32(busy, need - streams));
        b->want = max_u32(w, b->last_grow > UINT32_MAX / 2 ? UINT32_MAX : 2 * b->last_grow);
    } else {
        b->want = min_u32(need - streams, RL_COV_FILL_PER_TICK);
    }
}

static bool short_and_idle(const ag_cov_server *s)
{
    return s->streams < s->busy + RL_COV_RESERVE && s->busy == 0;
}

/* The mistake: demand counted as the streams used recently rather than the
 * calls in flight, and "idle" left out. A server hands each call to its
 * newest idle stream, so a quiet server with a call a second keeps one
 * stream in use and looks short for good (2 streams < 1 used + 2): it goes
 * overdue and is evacuated with its calls in flight. */
static bool short_by_streams_used(const ag_cov_server *s)
{
    uint32_t used = s->busy, idle = s->streams - s->busy;
    for (uint32_t k = 0; k < idle; k++)
        used += s->idle[k].served > 0 && s->idle[k].unused_ms < RL_COV_OVERDUE_MS;
    return s->streams < used + RL_COV_RESERVE;
}

static uint32_t pause_and_cap(const ag_cov_fleet *f, size_t i, uint32_t want)
{
    ag_cov_server *s = &f->servers[i];
    uint64_t idle_elsewhere = 0;
    for (size_t j = 0; j < f->n; j++)
        if (j != i && f->servers[j].state != AG_COV_EVACUATED)
            idle_elsewhere += f->servers[j].streams - f->servers[j].busy;
    /* Streams opened for this server keep landing elsewhere: stop feeding
     * the others until pruning brings them back under the bound. */
    if (s->busy > 0 && idle_elsewhere >= (uint64_t)RL_COV_PAUSE_FACTOR * s->busy) {
        s->paused = true;
        return 0;
    }
    if (s->streams >= RL_COV_CAP_PER_SERVER)
        return 0;
    return min_u32(want, RL_COV_CAP_PER_SERVER - s->streams);
}

static uint32_t unbounded_growth(const ag_cov_fleet *f, size_t i, uint32_t want)
{
    (void)f, (void)i;
    return want;
}

static uint32_t cap_total(uint32_t held, uint32_t want)
{
    return held >= RL_COV_CAP_TOTAL ? 0 : min_u32(want, RL_COV_CAP_TOTAL - held);
}

static uint32_t no_total_cap(uint32_t held, uint32_t want)
{
    (void)held;
    return want;
}

static bool old_and_unused(const ag_cov_idle *st)
{
    return st->age_ms >= RL_COV_PRUNE_AGE_MS && st->unused_ms >= RL_COV_PRUNE_UNUSED_MS;
}

static bool never(const ag_cov_idle *st)
{
    (void)st;
    return false;
}

static bool served_once(const ag_cov_idle *st)
{
    return st->served > 0;
}

#define RIGHT_HOOKS classify_per_server, short_and_idle, pause_and_cap, cap_total, old_and_unused, never

static const ag_cov_rules table[] = {
    {"none", "the reference: streams sized per server by the coverage table", RIGHT_HOOKS},
    {"total",
     "streams sized as a total across servers (the incident): idle streams on one server hide a "
     "busy one elsewhere",
     classify_total, short_and_idle, pause_and_cap, cap_total, old_and_unused, never},
    {"no-prune", "idle streams are never pruned: after a burst the agent keeps every stream it opened",
     classify_per_server, short_and_idle, pause_and_cap, cap_total, never, never},
    {"evacuate-busy",
     "the overdue clock counts streams used recently, not calls in flight: a quiet server "
     "with a call at a time looks short for good and is evacuated with calls in flight",
     classify_per_server, short_by_streams_used, pause_and_cap, cap_total, old_and_unused, never},
    {"no-cap",
     "growth has no pause and no cap: with nothing landing on the busy server the agent "
     "doubles its streams elsewhere every tick",
     classify_per_server, short_and_idle, unbounded_growth, no_total_cap, old_and_unused, never},
    {"stream-per-call",
     "a new stream for every call: a stream that answered a call is closed and "
     "replaced",
     classify_per_server, short_and_idle, pause_and_cap, cap_total, old_and_unused, served_once},
};

const ag_cov_rules *ag_cov_rules_default(void)
{
    return &table[0];
}

const ag_cov_rules *ag_cov_rules_find(const char *name)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].name, name) == 0)
            return &table[i];
    return NULL;
}

void ag_cov_rules_print_list(FILE *out)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        fprintf(out, "  %-16s %s\n", table[i].name, table[i].description);
}

/* Longest unused first: the server hands calls to its newest idle stream,
 * so the oldest idle ones are the ones nothing uses. */
static int by_unused_desc(const void *a, const void *b)
{
    const ag_cov_idle *x = a, *y = b;
    return (x->unused_ms < y->unused_ms) - (x->unused_ms > y->unused_ms);
}

/* Closes every idle stream of |s| and asks for as many new ones, which the
 * proxy places somewhere: the newest stream leaves |s|, so the dispatcher
 * drops it. */
static void recycle(ag_cov_server *s)
{
    uint32_t idle = s->streams - s->busy;
    for (uint32_t k = 0; k < idle; k++)
        if (!s->idle[k].close) {
            s->idle[k].close = true;
            s->closing++;
            s->want++;
        }
}

/* One overdue server to evacuate now, or -1: none with calls in flight (by
 * the rules' own test), only while another server is covered, at most one
 * per RL_COV_EVACUATE_EVERY_MS, the one overdue longest first. */
static int pick_evacuation(const ag_cov_rules *r, const ag_cov_fleet *f, int64_t now_ms)
{
    if (f->evacuated_once && now_ms - f->last_evacuation_ms < RL_COV_EVACUATE_EVERY_MS)
        return -1;
    int pick = -1;
    for (size_t i = 0; i < f->n; i++) {
        const ag_cov_server *s = &f->servers[i];
        if (s->state != AG_COV_OVERDUE || !r->overdue_candidate(s))
            continue;
        bool other_covered = false;
        for (size_t j = 0; j < f->n && !other_covered; j++)
            other_covered = j != i && f->servers[j].state == AG_COV_COVERED;
        if (other_covered && (pick < 0 || s->short_idle_since_ms < f->servers[pick].short_idle_since_ms))
            pick = (int)i;
    }
    return pick;
}

int ag_cov_tick(ag_cov_fleet *f, const ag_cov_rules *r, int64_t now_ms, ag_cov_plan *out)
{
    if (!r)
        r = ag_cov_rules_default();
    for (size_t i = 0; i < f->n; i++)
        if (f->servers[i].busy > f->servers[i].streams)
            return RL_EINVAL;
    *out = (ag_cov_plan){0, 0, -1};
    for (size_t i = 0; i < f->n; i++) {
        ag_cov_server *s = &f->servers[i];
        s->want = 0;
        s->closing = 0;
        s->paused = false;
        uint32_t idle = s->streams - s->busy;
        for (uint32_t k = 0; k < idle; k++)
            s->idle[k].close = false;
        if (evacuated(s, now_ms)) {
            s->state = AG_COV_EVACUATED;
            s->short_idle = false;
        }
    }
    r->classify(r, f, now_ms);

    for (size_t i = 0; i < f->n; i++) {
        ag_cov_server *s = &f->servers[i];
        if (s->state == AG_COV_GROWING && s->want > 0)
            s->want = r->bound_growth(f, i, s->want);
        s->last_grow = s->state == AG_COV_GROWING ? s->want : 0;
    }

    int e = pick_evacuation(r, f, now_ms);
    if (e >= 0) {
        ag_cov_server *s = &f->servers[e];
        s->state = AG_COV_EVACUATED;
        s->evacuated_until_ms = now_ms + RL_COV_EVACUATED_MS;
        s->short_idle = false;
        s->want = 0;
        f->evacuated_once = true;
        f->last_evacuation_ms = now_ms;
        out->evacuated = e;
    }

    uint64_t want = 0, held = f->pending;
    for (size_t i = 0; i < f->n; i++) {
        ag_cov_server *s = &f->servers[i];
        uint32_t idle = s->streams - s->busy;
        if (s->state == AG_COV_EVACUATED) {
            recycle(s);
        } else {
            if (idle > 1)
                qsort(s->idle, idle, sizeof *s->idle, by_unused_desc);
            uint32_t keep = s->busy + RL_COV_RESERVE;
            uint32_t excess = s->streams > keep ? s->streams - keep : 0;
            for (uint32_t k = 0; k < idle; k++) {
                ag_cov_idle *st = &s->idle[k];
                if (r->retire(st)) {
                    st->close = true;
                    s->closing++;
                    s->want++;
                } else if (excess > 0 && r->prunable(st)) {
                    st->close = true;
                    s->closing++;
                    excess--;
                }
            }
        }
        want += s->want;
        held += s->streams - s->closing;
        out->close += s->closing;
    }
    /* Streams opened earlier and still on their way count toward this
     * tick's asks: a slow proxy must not make the agent open twice. */
    want = want > f->pending ? want - f->pending : 0;
    if (want > UINT32_MAX)
        want = UINT32_MAX;
    if (held > UINT32_MAX)
        held = UINT32_MAX;
    out->open = r->bound_total((uint32_t)held, (uint32_t)want);
    return RL_OK;
}
