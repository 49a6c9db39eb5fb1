/* agent: the streams, the servers they landed on and the tick; see agent.h. */
#include "agent.h"

#include "rl_alloc.h"
#include "rl_channel.h"
#include "rl_coverage.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_log.h"
#include "rl_server.h"
#include "stream.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* How often SIGTERM is looked for, and the end of the shutdown watched. */
#define WATCH_MS 20

typedef struct server_info {
    char id[AG_SERVER_ID_MAX + 1];
    ag_cov_idle *idle; /* this tick's idle streams */
    size_t capidle;
    uint32_t logged_streams, logged_busy; /* the figures last logged */
    int logged_state;                     /* -1: never logged */
} server_info;

typedef struct agent {
    rl_loop loop;
    grpc_channel *channel;
    const ag_cov_rules *rules;
    bool one_call;   /* the rules retire a stream once it answered a call */
    ag_stream *head; /* every stream from its start to its end */
    uint32_t live;
    server_info *info; /* info[i] and cov[i] are server i */
    ag_cov_server *cov;
    size_t nservers, capinfo, capcov; /* both arrays hold nservers */
    ag_cov_fleet fleet;
    rl_timer tick, watch;
    bool stopping, shut;
    int64_t stop_by_ns;
    uint64_t next_id, opened, answered, lost;
} agent;

static void on_named(ag_stream *s, void *user);
static void on_answered(ag_stream *s, void *user);
static void on_ended(ag_stream *s, void *user);
static const ag_stream_events events = {on_named, on_answered, on_ended};

static void unlink_stream(agent *a, ag_stream *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else
        a->head = s->next;
    if (s->next)
        s->next->prev = s->prev;
    a->live--;
    a->lost += s->lost;
    ag_stream_free(s);
    free(s);
}

static void open_streams(agent *a, uint32_t n)
{
    if (a->stopping)
        return;
    if (a->live + n > AG_STREAMS_MAX) {
        RL_WARN("%u more streams would pass the agent's own bound of %d; opening %u", n, AG_STREAMS_MAX,
                AG_STREAMS_MAX - a->live);
        n = AG_STREAMS_MAX - a->live;
    }
    for (uint32_t k = 0; k < n; k++) {
        ag_stream *s = rl_xcalloc(1, sizeof *s);
        int rc = ag_stream_start(s, a->channel, &a->loop, ++a->next_id, &events, a);
        s->one_call = a->one_call;
        s->next = a->head;
        if (a->head)
            a->head->prev = s;
        a->head = s;
        a->live++;
        a->opened++;
        if (rc != RL_OK && ag_stream_over(s)) {
            unlink_stream(a, s);
            return;
        }
    }
}

static int find_server(agent *a, const char *id)
{
    for (size_t i = 0; i < a->nservers; i++)
        if (strcmp(a->info[i].id, id) == 0)
            return (int)i;
    RL_GROW(a->info, a->nservers, a->capinfo, 8);
    RL_GROW(a->cov, a->nservers, a->capcov, 8);
    size_t i = a->nservers++;
    a->info[i] = (server_info){.logged_state = -1};
    snprintf(a->info[i].id, sizeof a->info[i].id, "%s", id);
    a->cov[i] = (ag_cov_server){0};
    a->fleet.servers = a->cov;
    a->fleet.n = a->nservers;
    if (a->nservers == 1)
        RL_INFO("the first stream reached server %s", id);
    return (int)i;
}

static void on_named(ag_stream *s, void *user)
{
    s->server = find_server(user, s->server_id);
}

static void on_answered(ag_stream *s, void *user)
{
    agent *a = user;
    a->answered++;
    /* Asked at once, before the server can hand the stream another call:
     * only the stream-per-call mistake retires a stream that answered. */
    int64_t now = rl_now_ns();
    ag_cov_idle view = {(uintptr_t)s, (now - s->opened_ns) / RL_NS_PER_MS, 0, s->served, false};
    if (a->rules->retire(&view)) {
        ag_stream_close(s); /* a one-call stream half-closed with its answer already */
        open_streams(a, 1);
    }
}

static void on_ended(ag_stream *s, void *user)
{
    unlink_stream(user, s);
}

static void push_idle(server_info *in, uint32_t nidle, ag_cov_idle v)
{
    RL_GROW(in->idle, nidle, in->capidle, 16);
    in->idle[nidle] = v;
}

static void log_figures(agent *a)
{
    bool changed = false;
    for (size_t i = 0; i < a->nservers && !changed; i++)
        changed = a->info[i].logged_state != (int)a->cov[i].state || a->info[i].logged_streams != a->cov[i].streams ||
                  a->info[i].logged_busy != a->cov[i].busy;
    if (!changed)
        return;
    for (size_t i = 0; i < a->nservers; i++) {
        server_info *in = &a->info[i];
        ag_cov_server *c = &a->cov[i];
        fprintf(stderr, "agent: server %s streams %u busy %u state %s\n", in->id, c->streams, c->busy,
                ag_cov_state_name(c->state));
        in->logged_state = (int)c->state;
        in->logged_streams = c->streams;
        in->logged_busy = c->busy;
    }
}

static void tick(rl_timer *t)
{
    agent *a = RL_CONTAINER_OF(t, agent, tick);
    int64_t now = rl_now_ns();
    for (size_t i = 0; i < a->nservers; i++)
        a->cov[i].streams = a->cov[i].busy = 0;
    a->fleet.pending = 0;
    /* Streams on their way out (closing, or ended by the server) are no
     * longer the agent's to count. */
    for (ag_stream *s = a->head; s; s = s->next) {
        if (s->close_wanted || s->status_in)
            continue;
        if (!s->named) {
            a->fleet.pending++;
            continue;
        }
        ag_cov_server *c = &a->cov[s->server];
        c->streams++;
        if (ag_stream_busy(s)) {
            c->busy++;
            continue;
        }
        ag_cov_idle v = {(uintptr_t)s, (now - s->opened_ns) / RL_NS_PER_MS, (now - s->last_answer_ns) / RL_NS_PER_MS,
                         s->served, false};
        push_idle(&a->info[s->server], c->streams - c->busy - 1, v);
    }
    for (size_t i = 0; i < a->nservers; i++)
        a->cov[i].idle = a->info[i].idle;
    ag_cov_plan plan;
    if (ag_cov_tick(&a->fleet, a->rules, now / RL_NS_PER_MS, &plan) == RL_OK) {
        for (size_t i = 0; i < a->nservers; i++) {
            ag_cov_server *c = &a->cov[i];
            for (uint32_t k = 0; k < c->streams - c->busy; k++)
                if (c->idle[k].close)
                    ag_stream_close((ag_stream *)(uintptr_t)c->idle[k].id);
        }
        if (plan.evacuated >= 0)
            RL_INFO("server %s evacuated: its idle streams recycled for %d ms", a->info[plan.evacuated].id,
                    RL_COV_EVACUATED_MS);
        log_figures(a);
        open_streams(a, plan.open);
    }
    /* Nothing left at all (every stream failed): start over as at start-up. */
    if (a->live == 0)
        open_streams(a, RL_COV_GROW_MIN);
    rl_timer_start(&a->loop, &a->tick, t->due_ns + (int64_t)RL_COV_TICK_MS * RL_NS_PER_MS, tick);
}

static void watch(rl_timer *t)
{
    agent *a = RL_CONTAINER_OF(t, agent, watch);
    int64_t now = rl_now_ns();
    int sig = rl_server_take_signal();
    if (sig && !a->stopping) {
        a->stopping = true;
        a->stop_by_ns = now + (int64_t)AG_STOP_GRACE_MS * RL_NS_PER_MS;
        rl_timer_stop(&a->loop, &a->tick);
        RL_INFO("%s: closing %u streams", sig == SIGTERM ? "SIGTERM" : "SIGINT", a->live);
        for (ag_stream *s = a->head, *next; s; s = next) {
            next = s->next;
            ag_stream_close(s);
        }
    } else if (a->stopping && a->live > 0 && (sig || now >= a->stop_by_ns)) {
        /* A second signal, or the grace is over. Cancelling thousands of
         * streams one by one took seconds on a loaded machine; leaving
         * closes the connection, which ends them all at once. */
        RL_INFO("%u streams still open %lld ms after the signal: leaving without them", a->live,
                (long long)((now - a->stop_by_ns) / RL_NS_PER_MS + AG_STOP_GRACE_MS));
        _exit(AG_EXIT_OK);
    }
    if (a->stopping && a->live == 0) {
        if (!a->shut) {
            a->shut = true;
            grpc_completion_queue_shutdown(a->loop.cq);
        }
        return;
    }
    rl_timer_start(&a->loop, &a->watch, now + (int64_t)WATCH_MS * RL_NS_PER_MS, watch);
}

int ag_agent_run(const ag_options *opt)
{
    agent *a = rl_xcalloc(1, sizeof *a);
    a->rules = opt->rules ? opt->rules : ag_cov_rules_default();
    a->one_call = a->rules->retire(&(ag_cov_idle){.served = 1});
    rl_loop_init(&a->loop);
    a->channel = rl_channel_isolated(opt->tunnel, NULL);
    RL_INFO("dialling the tunnel at %s (rules: %s)", opt->tunnel, a->rules->name);
    /* It knows no server yet: the first streams show where placement goes. */
    open_streams(a, RL_COV_GROW_MIN);
    int64_t now = rl_now_ns();
    rl_timer_start(&a->loop, &a->tick, now + (int64_t)RL_COV_TICK_MS * RL_NS_PER_MS, tick);
    rl_timer_start(&a->loop, &a->watch, now + (int64_t)WATCH_MS * RL_NS_PER_MS, watch);
    rl_loop_run(&a->loop);
    RL_INFO("stopped: %llu streams opened, %llu calls answered, %llu lost to a half-close",
            (unsigned long long)a->opened, (unsigned long long)a->answered, (unsigned long long)a->lost);
    grpc_channel_destroy(a->channel);
    rl_loop_fini(&a->loop);
    for (size_t i = 0; i < a->nservers; i++)
        free(a->info[i].idle);
    free(a->info);
    free(a->cov);
    free(a);
    return AG_EXIT_OK;
}
