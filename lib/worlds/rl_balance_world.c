/* rl_balance_world: the connection-age lab's world; see rl_balance_world.h. One
 * thread drives every call from one completion queue: short calls on each
 * client's schedule, a long call per client re-started as each ends, and
 * the backend's join at its instant. */
#include "rl_balance_world.h"

#include "relaylab.pb-c.h"
#include "rl_alloc.h"
#include "rl_channel.h"
#include "rl_client.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_probe.h"

#include <grpc/support/alloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the Observer may take to hand over a few thousand records. */
#define OBSERVE_MS 5000
/* How long after the last deadline the run still waits for a status: gRPC's
 * own timer gives it at the deadline; this covers a loaded machine. */
#define STATUS_SLACK_MS 2000

typedef struct lcall {
    rl_client_batch batch; /* its tag is the lcall */
    int client;
    bool is_long;
    int64_t start_ns, deadline_ns;
    struct lcall *prev, *next; /* the calls in flight */
} lcall;

typedef struct world {
    const rl_bw_options *opt;
    rl_bw_result *out;
    grpc_completion_queue *cq;
    grpc_channel *ch[RL_BW_MAX_CLIENTS];
    int inflight;
    lcall *head; /* the calls in flight, to cancel any left at the end */
} world;

static int start_call(world *w, int client, bool is_long)
{
    const rl_bw_options *o = w->opt;
    lcall *c = rl_xcalloc(1, sizeof *c);
    c->client = client;
    c->is_long = is_long;
    rl_client_batch_init(&c->batch);
    char tag[160];
    snprintf(tag, sizeof tag, "%s.c%d.%c", o->tag, client, is_long ? 'l' : 's');
    Relaylab__LookupRequest req = RELAYLAB__LOOKUP_REQUEST__INIT;
    req.tag = tag;
    req.delay_ms = is_long ? (uint32_t)o->long_ms : 0;
    c->start_ns = rl_now_ns();
    int64_t dl = c->start_ns + (is_long ? o->long_deadline_ms : o->deadline_ms) * RL_NS_PER_MS;
    c->deadline_ns = dl;
    grpc_call *call = grpc_channel_create_call(w->ch[client], NULL, GRPC_PROPAGATE_DEFAULTS, w->cq,
                                               grpc_slice_from_static_string("/relaylab.Baseline/Lookup"), NULL,
                                               rl_ns_to_deadline(dl), NULL);
    if (rl_client_batch_start(&c->batch, call, &req.base, 0, c) != RL_OK) {
        rl_client_batch_fini(&c->batch);
        free(c);
        return RL_EGRPC;
    }
    w->inflight++;
    c->next = w->head;
    if (w->head)
        w->head->prev = c;
    w->head = c;
    w->out->sent++;
    if (is_long)
        w->out->long_sent++;
    return RL_OK;
}

/* Counts call |c|'s ending and frees it. */
static void end_call(world *w, lcall *c, bool success)
{
    rl_bw_result *r = w->out;
    w->inflight--;
    if (c->prev)
        c->prev->next = c->next;
    else
        w->head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    rl_client_batch_done(&c->batch, success);
    grpc_status_code status = c->batch.status;
    if (status == GRPC_STATUS_DEADLINE_EXCEEDED) {
        int64_t late = (rl_now_ns() - c->deadline_ns) / RL_NS_PER_MS;
        if (late > r->lag_ms)
            r->lag_ms = late;
    }
    if (status == GRPC_STATUS_OK && !c->is_long) {
        int64_t us = (rl_now_ns() - c->start_ns) / 1000;
        if (us > r->short_max_us)
            r->short_max_us = us;
        r->short_slow += us > RL_BW_SLOW_MS * INT64_C(1000);
    }
    int64_t took_ms = (rl_now_ns() - c->start_ns) / RL_NS_PER_MS;
    if (status == GRPC_STATUS_UNAVAILABLE && !c->is_long && (w->opt->grace_ms < 0 || took_ms < w->opt->grace_ms)) {
        /* A call that answers at once, failed sooner than the grace could
         * cut it: it met a GOAWAY on its way (grpc/grpc#31733). */
        if (!r->raced++) {
            char *d = grpc_slice_to_c_string(c->batch.details);
            snprintf(r->first_race, sizeof r->first_race, "UNAVAILABLE (%.80s) after %lld ms", d, (long long)took_ms);
            gpr_free(d);
        }
    } else if (status != GRPC_STATUS_OK) {
        if (!r->failed++) {
            char *d = grpc_slice_to_c_string(c->batch.details);
            snprintf(r->first_failure, sizeof r->first_failure,
                     "%s (%.100s) on a %s call of client %d started %lld ms into the run, after %lld ms",
                     rl_status_name(status), d, c->is_long ? "long" : "short", c->client + 1,
                     (long long)((c->start_ns - r->start_ns) / RL_NS_PER_MS),
                     (long long)((rl_now_ns() - c->start_ns) / RL_NS_PER_MS));
            gpr_free(d);
        }
        if (c->is_long)
            r->failed_long++;
        else if (status == GRPC_STATUS_DEADLINE_EXCEEDED && rl_now_ns() >= c->deadline_ns - 5 * RL_NS_PER_MS)
            r->short_timed_out++; /* at the run's own deadline, not a service config's shorter one */
    }
    rl_client_batch_fini(&c->batch);
    free(c);
}

static int check_options(const rl_bw_options *o, char *err, size_t errlen)
{
    if (o->nbackends < 1 || o->nbackends > RL_BW_MAX_BACKENDS || o->initial < 1 || o->initial > o->nbackends ||
        o->nclients < 1 || o->nclients > RL_BW_MAX_CLIENTS || o->window_ms < 10 || o->run_ms < o->window_ms ||
        o->run_ms / o->window_ms > RL_BW_MAX_WINDOWS || o->deadline_ms < 1 || o->long_ms < 0 ||
        (o->long_ms > 0 && o->long_deadline_ms <= o->long_ms) || !o->tag) {
        snprintf(err, errlen, "balance world: invalid options");
        return RL_EINVAL;
    }
    for (int i = 0; i < o->nclients; i++)
        if (o->rate[i] < 1 || o->rate[i] > 2000) {
            snprintf(err, errlen, "balance world: client %d's rate %d is not 1..2000 calls/s", i, o->rate[i]);
            return RL_EINVAL;
        }
    return RL_OK;
}

/* Drives the calls from now until the end, then collects every status. */
static void drive(world *w, rl_intermediary *lb)
{
    const rl_bw_options *o = w->opt;
    rl_bw_result *r = w->out;
    int64_t next[RL_BW_MAX_CLIENTS] = {0}, period[RL_BW_MAX_CLIENTS] = {0};
    r->start_ns = rl_now_ns();
    r->add_ns = r->start_ns + o->add_at_ms * RL_NS_PER_MS;
    r->end_ns = r->start_ns + o->run_ms * RL_NS_PER_MS;
    bool added = o->initial == o->nbackends;
    for (int i = 0; i < o->nclients; i++) {
        period[i] = RL_NS_PER_SEC / o->rate[i];
        /* Spread over the first period, so clients do not fire together. */
        next[i] = r->start_ns + period[i] * i / o->nclients;
        if (o->long_ms > 0)
            start_call(w, i, true);
    }
    for (;;) {
        int64_t now = rl_now_ns();
        if (!added && now >= r->add_ns) {
            for (size_t b = o->initial; b < o->nbackends; b++)
                rl_intermediary_add_upstream(lb, o->ports[b], NULL);
            added = true;
        }
        /* Every call due before the end is started, late ones too (a stall
         * just before the end must show as lag, not as calls never made). */
        int64_t wake = INT64_MAX;
        for (int i = 0; i < o->nclients; i++) {
            while (next[i] <= now && next[i] < r->end_ns) {
                if ((now - next[i]) / RL_NS_PER_MS > r->lag_ms)
                    r->lag_ms = (now - next[i]) / RL_NS_PER_MS;
                start_call(w, i, false);
                next[i] += period[i];
            }
            if (next[i] < r->end_ns && next[i] < wake)
                wake = next[i];
        }
        if (!added && r->add_ns < wake)
            wake = r->add_ns;
        if (wake == INT64_MAX) { /* nothing more to start */
            if (w->inflight == 0)
                break;
            int64_t longest = o->long_ms > 0 ? o->long_deadline_ms : o->deadline_ms;
            wake = r->end_ns + (longest + STATUS_SLACK_MS) * RL_NS_PER_MS;
            if (now >= wake)
                break; /* a status gRPC never gave: cancelled below */
        }
        grpc_event ev = grpc_completion_queue_next(w->cq, rl_ns_to_deadline(wake), NULL);
        if (ev.type != GRPC_OP_COMPLETE)
            continue;
        lcall *c = ev.tag;
        bool again = c->is_long && rl_now_ns() + o->long_ms * RL_NS_PER_MS < r->end_ns;
        int client = c->client;
        end_call(w, c, ev.success);
        if (again)
            start_call(w, client, true);
    }
}

/* The balancer's on_open: runs on its thread while the run's thread only
 * drives calls; read after rl_intermediary_stop joined it. */
static void on_open(void *user, size_t upstream, int64_t ns)
{
    rl_bw_result *r = user;
    if (r->nopen < RL_BW_MAX_CONNS) {
        r->open_ns[r->nopen] = ns;
        r->open_backend[r->nopen++] = (int)upstream;
    }
}

/* The id of |peer| at backend |b| in r->conn, added when new; -1 when full. */
static int conn_id(rl_bw_result *r, int b, const char *peer, int64_t arrival_ns)
{
    for (size_t i = 0; i < r->nconn; i++)
        if (r->conn[i].backend == b && strcmp(r->conn[i].peer, peer) == 0)
            return (int)i;
    if (r->nconn == RL_BW_MAX_CONNS)
        return -1;
    rl_bw_conn *c = &r->conn[r->nconn];
    snprintf(c->peer, sizeof c->peer, "%s", peer);
    c->backend = b;
    c->first_ns = c->last_ns = arrival_ns;
    return (int)r->nconn++;
}

static int by_first(const void *a, const void *b)
{
    const rl_bw_conn *x = a, *y = b;
    return (x->first_ns > y->first_ns) - (x->first_ns < y->first_ns);
}

/* Reads every backend's records of this run into the counts. */
static int collect(const rl_bw_options *o, rl_bw_result *r, char *err, size_t errlen)
{
    size_t plen = strlen(o->tag);
    /* Which connections had an arrival in which window: a bit per window. */
    static uint64_t seen[RL_BW_MAX_CONNS];
    memset(seen, 0, sizeof seen);
    for (size_t b = 0; b < o->nbackends; b++) {
        Relaylab__ObserveReply *obs = NULL;
        int rc = rl_observe(o->observers[b], "", OBSERVE_MS, &obs);
        if (rc != RL_OK) {
            snprintf(err, errlen, "backend %zu's observer did not answer: %s", b, rl_strerror(rc));
            return rc;
        }
        for (size_t i = 0; i < obs->n_calls; i++) {
            const Relaylab__CallRecord *rec = obs->calls[i];
            if (strncmp(rec->tag, o->tag, plen) != 0 || rec->tag[plen] != '.')
                continue;
            r->recorded++;
            int client = atoi(rec->tag + plen + 2);
            if (client >= 0 && client < RL_BW_MAX_CLIENTS)
                r->client_calls[b][client]++;
            int id = conn_id(r, (int)b, rec->peer ? rec->peer : "", rec->arrival_ns);
            size_t win = rl_bw_window_at(r, rec->arrival_ns);
            r->calls[win][b]++;
            if (id < 0)
                continue;
            rl_bw_conn *c = &r->conn[id];
            c->calls++;
            if (rec->arrival_ns < c->first_ns)
                c->first_ns = rec->arrival_ns;
            if (rec->arrival_ns > c->last_ns)
                c->last_ns = rec->arrival_ns;
            if (!(seen[id] & (1ull << win))) {
                seen[id] |= 1ull << win;
                r->conns[win][b]++;
            }
        }
        relaylab__observe_reply__free_unpacked(obs, NULL);
    }
    qsort(r->conn, r->nconn, sizeof *r->conn, by_first);
    return RL_OK;
}

int rl_bw_run(const rl_bw_options *o, rl_bw_result *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    int rc = check_options(o, err, errlen);
    if (rc != RL_OK)
        return rc;
    r->nbackends = o->nbackends;
    r->window_ms = o->window_ms;
    r->nwindows = (size_t)(o->run_ms / o->window_ms);
    rl_intermediary *lb = NULL;
    char target[256];
    if (o->direct) {
        int n = snprintf(target, sizeof target, "ipv4:");
        for (size_t b = 0; b < o->nbackends; b++)
            n += snprintf(target + n, sizeof target - (size_t)n, "%s127.0.0.1:%d", b ? "," : "", o->ports[b]);
    } else {
        rl_intermediary_options lo = {
            .upstream_ports = o->ports, .nupstreams = o->initial, .on_open = on_open, .user = r};
        rc = rl_intermediary_start(&lo, &lb, err, errlen);
        if (rc != RL_OK)
            return rc;
        snprintf(target, sizeof target, "127.0.0.1:%d", rl_intermediary_port(lb));
    }
    world w = {.opt = o, .out = r, .cq = grpc_completion_queue_create_for_next(NULL)};
    for (int i = 0; i < o->nclients; i++)
        w.ch[i] = rl_channel_isolated(target, o->client_args);
    drive(&w, lb);
    /* A call gRPC never ended (it cannot happen with deadlines set, but the
     * queue must be empty before it goes): cancelled, its status counted. */
    for (lcall *c = w.head; c; c = c->next)
        grpc_call_cancel(c->batch.call, NULL);
    while (w.inflight > 0) {
        grpc_event ev = grpc_completion_queue_next(w.cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
        if (ev.type == GRPC_OP_COMPLETE)
            end_call(&w, ev.tag, ev.success);
    }
    for (int i = 0; i < o->nclients; i++)
        grpc_channel_destroy(w.ch[i]);
    grpc_completion_queue_shutdown(w.cq);
    while (grpc_completion_queue_next(w.cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL).type != GRPC_QUEUE_SHUTDOWN)
        ;
    grpc_completion_queue_destroy(w.cq);
    if (lb) {
        rl_intermediary_stats_get(lb, &r->lb);
        rl_intermediary_stop(lb);
    }
    return collect(o, r, err, errlen);
}

size_t rl_bw_window_at(const rl_bw_result *r, int64_t ns)
{
    if (ns <= r->start_ns || r->nwindows == 0)
        return 0;
    size_t w = (size_t)((ns - r->start_ns) / (r->window_ms * RL_NS_PER_MS));
    return w < r->nwindows ? w : r->nwindows - 1;
}

double rl_bw_share(const rl_bw_result *r, size_t b, size_t from, size_t to)
{
    long mine = 0, all = 0;
    for (size_t w = from; w < to && w < r->nwindows; w++)
        for (size_t k = 0; k < r->nbackends; k++) {
            all += r->calls[w][k];
            if (k == b)
                mine += r->calls[w][k];
        }
    return all ? (double)mine / (double)all : 0.0;
}

int64_t rl_bw_fill_ms(const rl_bw_result *r, size_t b, size_t span, double fair_min, double *share_after)
{
    *share_after = 0;
    int64_t win_ns = r->window_ms * RL_NS_PER_MS;
    size_t first = r->add_ns <= r->start_ns ? 0 : (size_t)((r->add_ns - r->start_ns + win_ns - 1) / win_ns);
    for (size_t w = first; w + span <= r->nwindows; w++) {
        if (rl_bw_share(r, b, w, w + span) >= fair_min) {
            int64_t end_ns = r->start_ns + (int64_t)(w + span) * win_ns;
            *share_after = rl_bw_share(r, b, w, r->nwindows);
            return (end_ns - r->add_ns) / RL_NS_PER_MS;
        }
    }
    return -1;
}

int rl_bw_bunches(const rl_bw_result *r, size_t skip, int64_t window_ns, int need, int *most, int64_t *most_at_ns)
{
    *most = 0;
    *most_at_ns = 0;
    for (size_t i = skip, j = skip; i < r->nopen; i++) {
        while (r->open_ns[i] - r->open_ns[j] > window_ns)
            j++;
        if ((int)(i - j + 1) > *most) {
            *most = (int)(i - j + 1);
            *most_at_ns = r->open_ns[j];
        }
    }
    int count = 0;
    for (size_t j = skip; j < r->nopen;) {
        size_t i = j;
        while (i < r->nopen && r->open_ns[i] - r->open_ns[j] <= window_ns)
            i++;
        if ((int)(i - j) >= need) {
            count++;
            j = i;
        } else {
            j++;
        }
    }
    return count;
}
