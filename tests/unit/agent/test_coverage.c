/* test_coverage: the agent's sizing tick (agent/coverage.c) against simulated
 * placement, as the fix was tested: three servers A, B, C; calls
 * pinned to B; each new stream placed by a policy (every one on B, uniform,
 * 80 % on B, none on B); a server hands each call to its newest idle stream,
 * or queues it. Every rule has a test, and every mistake a test that shows it
 * going wrong where the right rules do not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "coverage.h"
#include "rl_coverage.h"
#include "rl_err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { A, B, C, NSERVERS };
#define MAXSTREAMS 20000

typedef int (*placement_fn)(uint64_t nth);

typedef struct sim_stream {
    int server;
    int64_t opened, last_used;
    uint32_t served;
    bool open, busy;
    int64_t busy_until;
} sim_stream;

typedef struct sim {
    const ag_cov_rules *rules;
    placement_fn place;
    int64_t now, work_ms;
    sim_stream st[MAXSTREAMS];
    size_t nst;
    uint32_t queued[NSERVERS];
    int fleet_of[NSERVERS]; /* -1 until a stream landed there */
    int server_at[NSERVERS];
    ag_cov_server srv[NSERVERS];
    ag_cov_idle idle[NSERVERS][MAXSTREAMS];
    ag_cov_fleet fleet;
    ag_cov_plan plan;
    uint64_t opened, closed, answered;
    uint32_t closed_on_short_busy_b; /* streams closed on B while B had calls and was short */
    uint32_t min_b_after_first;      /* the fewest streams B held once it had RL_COV_RESERVE */
    bool b_evacuated;
    bool trickle; /* B always has one call in flight or queued */
    int every;    /* or: a call on B every this many ticks */
    uint64_t ticks;
} sim;

static sim S;

static int all_on_b(uint64_t nth)
{
    (void)nth;
    return B;
}

static int uniform(uint64_t nth)
{
    return (int)(nth % NSERVERS);
}

static int skewed(uint64_t nth) /* 80 % to B */
{
    return nth % 5 == 4 ? (int)(nth / 5 % 2 ? A : C) : B;
}

static int none_on_b(uint64_t nth) /* the first two land on B, then never */
{
    return nth < 2 ? B : (nth % 2 ? A : C);
}

static uint32_t streams_on(int server, bool busy_only)
{
    uint32_t n = 0;
    for (size_t i = 0; i < S.nst; i++)
        if (S.st[i].open && S.st[i].server == server && (!busy_only || S.st[i].busy))
            n++;
    return n;
}

static uint32_t total_streams(void)
{
    return streams_on(A, false) + streams_on(B, false) + streams_on(C, false);
}

static uint32_t in_flight(int server)
{
    return streams_on(server, true);
}

static void open_stream(void)
{
    assert_true(S.nst < MAXSTREAMS);
    int server = S.place(S.opened++);
    S.st[S.nst++] = (sim_stream){server, S.now, S.now, 0, true, false, 0};
    if (S.fleet_of[server] < 0) {
        S.fleet_of[server] = (int)S.fleet.n;
        S.server_at[S.fleet.n] = server;
        S.srv[S.fleet.n] = (ag_cov_server){0};
        S.fleet.n++;
    }
}

/* The server's side: answers whose work is done, then each queued call to
 * the newest idle stream. */
static void serve(void)
{
    size_t n = S.nst;
    for (size_t i = 0; i < n; i++) {
        sim_stream *st = &S.st[i];
        if (!st->open || !st->busy || st->busy_until > S.now)
            continue;
        st->busy = false;
        st->last_used = st->busy_until;
        st->served++;
        S.answered++;
        /* The agent's stream layer asks the rules right after an answer,
         * before the server can hand the stream another call. */
        ag_cov_idle view = {i, S.now - st->opened, 0, st->served, false};
        if (S.rules->retire(&view)) {
            st->open = false;
            S.closed++;
            open_stream();
        }
    }
    if (S.trickle && in_flight(B) == 0 && S.queued[B] == 0)
        S.queued[B] = 1;
    for (int s = 0; s < NSERVERS; s++)
        for (size_t i = S.nst; i-- > 0 && S.queued[s] > 0;)
            if (S.st[i].open && S.st[i].server == s && !S.st[i].busy) {
                S.st[i].busy = true;
                S.st[i].busy_until = S.now + S.work_ms;
                S.queued[s]--;
            }
}

static void sim_start(const char *rules, placement_fn place, int64_t work_ms)
{
    memset(&S, 0, sizeof S);
    S.rules = ag_cov_rules_find(rules);
    assert_non_null(S.rules);
    S.place = place;
    S.work_ms = work_ms;
    S.now = 1000000; /* any monotonic origin */
    for (int s = 0; s < NSERVERS; s++)
        S.fleet_of[s] = -1;
    S.fleet.servers = S.srv;
    S.min_b_after_first = UINT32_MAX;
    for (int k = 0; k < RL_COV_GROW_MIN; k++) /* the agent's start, knowing no server */
        open_stream();
}

/* One tick: the world moves, the agent sizes, closes and opens, and the
 * servers hand out calls to the streams that just landed. */
static void sim_tick(void)
{
    S.now += RL_COV_TICK_MS;
    if (S.every && S.ticks++ % S.every == 0)
        S.queued[B]++;
    serve();
    for (size_t f = 0; f < S.fleet.n; f++) {
        int server = S.server_at[f];
        ag_cov_server *s = &S.srv[f];
        s->streams = s->busy = 0;
        s->idle = S.idle[f];
        for (size_t i = 0; i < S.nst; i++) {
            sim_stream *st = &S.st[i];
            if (!st->open || st->server != server)
                continue;
            s->streams++;
            if (st->busy)
                s->busy++;
            else
                S.idle[f][s->streams - s->busy - 1] =
                    (ag_cov_idle){i, S.now - st->opened, S.now - st->last_used, st->served, false};
        }
    }
    uint32_t b_busy = in_flight(B), b_streams = streams_on(B, false);
    bool b_short = b_streams < b_busy + RL_COV_RESERVE;
    assert_int_equal(ag_cov_tick(&S.fleet, S.rules, S.now, &S.plan), RL_OK);
    for (size_t f = 0; f < S.fleet.n; f++) {
        ag_cov_server *s = &S.srv[f];
        if (S.server_at[f] == B && s->state == AG_COV_EVACUATED)
            S.b_evacuated = true;
        for (uint32_t k = 0; k < s->streams - s->busy; k++)
            if (s->idle[k].close) {
                sim_stream *st = &S.st[s->idle[k].id];
                assert_true(st->open && !st->busy);
                st->open = false;
                S.closed++;
                if (st->server == B && (b_busy > 0 || S.queued[B] > 0) && b_short)
                    S.closed_on_short_busy_b++;
            }
    }
    for (uint32_t k = 0; k < S.plan.open; k++)
        open_stream();
    serve();
    if (getenv("COV_TRACE"))
        fprintf(stderr, "t=%lld A %u/%u B %u/%u C %u/%u qB %u open %u close %u opened %llu\n",
                (long long)(S.now - 1000000), streams_on(A, false), in_flight(A), streams_on(B, false), in_flight(B),
                streams_on(C, false), in_flight(C), S.queued[B], S.plan.open, S.plan.close,
                (unsigned long long)S.opened);
    uint32_t nb = streams_on(B, false);
    if (nb >= RL_COV_RESERVE || S.min_b_after_first != UINT32_MAX)
        S.min_b_after_first = nb < S.min_b_after_first ? nb : S.min_b_after_first;
}

/* Ticks until every call queued at B is in flight; returns how many, or
 * |limit| + 1. */
static int ticks_until_in_flight(int limit)
{
    for (int t = 1; t <= limit; t++) {
        sim_tick();
        if (S.queued[B] == 0)
            return t;
    }
    return limit + 1;
}

static void settle(int ticks)
{
    for (int t = 0; t < ticks; t++)
        sim_tick();
}

/* Starts the simulation with |rules|, |place| and |work_ms|, lets it settle
 * 4 ticks, then queues |calls| on B and serves them: the burst most tests
 * start from. */
static void burst(const char *rules, placement_fn place, int64_t work_ms, uint32_t calls)
{
    sim_start(rules, place, work_ms);
    settle(4);
    S.queued[B] = calls;
    serve();
}

/* ---- growth ---- */

static void burst_with_every_stream_on_b_is_in_flight_within_8_ticks(void **state)
{
    (void)state;
    burst("none", all_on_b, 3000, 1000);
    assert_true(ticks_until_in_flight(8) <= 8);
    assert_int_equal(in_flight(B), 1000);
    assert_true(total_streams() <= RL_COV_CAP_PER_SERVER);
}

static void growth_doubles_while_the_server_stays_all_busy(void **state)
{
    (void)state;
    burst("none", all_on_b, 3000, 1000);
    uint32_t before = streams_on(B, false);
    for (int t = 0; t < 4; t++) {
        sim_tick();
        uint32_t now = streams_on(B, false);
        assert_int_equal(now, 2 * before); /* 8, 16, 32, 64, 128 */
        before = now;
    }
}

static void burst_with_uniform_placement_is_in_flight_in_bounded_ticks(void **state)
{
    (void)state;
    burst("none", uniform, 3000, 200);
    /* A third of every stream lands on B, and growth doubles: 8 + 16 + ...
     * reaches 200 on B within 8 ticks. */
    assert_true(ticks_until_in_flight(8) <= 8);
    assert_true(total_streams() <= RL_COV_CAP_TOTAL);
}

static void burst_with_skewed_placement_is_in_flight_and_bounded(void **state)
{
    (void)state;
    burst("none", skewed, 3000, 1000);
    assert_true(ticks_until_in_flight(9) <= 9);
    /* What landed elsewhere stays a fraction of what B holds. */
    assert_true(total_streams() <= 2 * streams_on(B, false));
    assert_true(total_streams() <= RL_COV_CAP_TOTAL);
}

/* ---- unfillable ---- */

static void unfillable_stays_bounded_and_keeps_the_busy_server(void **state)
{
    (void)state;
    burst("none", none_on_b, 3000, 1000);
    uint32_t most = 0;
    for (int t = 0; t < 240; t++) { /* a minute of ticks */
        sim_tick();
        uint32_t n = total_streams();
        most = n > most ? n : most;
        assert_true(S.plan.open <= 2 * RL_COV_GROW_MIN);
    }
    /* Bounded by the pause: idle streams elsewhere stop growth at 4x B's
     * two calls in flight, plus one tick's growth and the reserves. */
    assert_true(most <= RL_COV_PAUSE_FACTOR * 2 + 2 * RL_COV_GROW_MIN + NSERVERS * RL_COV_RESERVE);
    assert_int_equal(streams_on(B, false), 2);
    assert_int_equal(S.closed_on_short_busy_b, 0);
    assert_false(S.b_evacuated);
    /* No thrash: one growth (and its pause) per pruning period, not one a tick. */
    assert_true(S.opened <= RL_COV_GROW_MIN * (2 + UINT64_C(240) * RL_COV_TICK_MS / RL_COV_PRUNE_UNUSED_MS));
}

/* ---- rest ---- */

static void after_a_burst_it_prunes_back_to_the_reserve(void **state)
{
    (void)state;
    burst("none", all_on_b, 1000, 1000);
    assert_true(ticks_until_in_flight(8) <= 8);
    assert_true(streams_on(B, false) >= 1000);
    int64_t end = 0;
    for (int t = 0; t < 200 && streams_on(B, false) > RL_COV_RESERVE; t++) {
        sim_tick();
        if (in_flight(B) == 0 && end == 0)
            end = S.now;
        assert_true(streams_on(B, false) >= in_flight(B) + RL_COV_RESERVE || in_flight(B) > 0);
    }
    assert_int_equal(streams_on(B, false), RL_COV_RESERVE);
    /* Pruned once unused for RL_COV_PRUNE_UNUSED_MS after the last answer, within a tick or two. */
    assert_true(S.now - end <= RL_COV_PRUNE_UNUSED_MS + 2 * RL_COV_TICK_MS);
    settle(60);
    assert_int_equal(streams_on(B, false), RL_COV_RESERVE);
    assert_int_equal(S.min_b_after_first, RL_COV_RESERVE);
}

static void nothing_is_pruned_before_it_is_old_and_unused(void **state)
{
    (void)state;
    sim_start("none", all_on_b, 1000);
    /* 8 idle streams on B from the start: 6 over the reserve, never used. */
    int64_t t0 = S.now;
    while (S.now - t0 < RL_COV_PRUNE_UNUSED_MS - RL_COV_TICK_MS) {
        sim_tick();
        assert_int_equal(S.closed, 0);
    }
    settle(2);
    assert_int_equal(streams_on(B, false), RL_COV_RESERVE);
}

/* ---- evacuation, on a fleet set by hand ---- */

static ag_cov_idle idle_pool[4][64];
static ag_cov_server hand[4];

static void fleet_of(ag_cov_fleet *f, size_t n, const uint32_t *streams, const uint32_t *busy)
{
    *f = (ag_cov_fleet){hand, n, 0, false, 0};
    for (size_t i = 0; i < n; i++) {
        hand[i] = (ag_cov_server){0};
        hand[i].streams = streams[i];
        hand[i].busy = busy[i];
        hand[i].idle = idle_pool[i];
        for (uint32_t k = 0; k < streams[i] - busy[i]; k++)
            idle_pool[i][k] = (ag_cov_idle){k, 100, 100, 1, false};
    }
}

/* Keeps the hand fleet's figures as the test set them (the tick reorders
 * and marks, a real agent would close): resets the marks. */
static void tick_hand(ag_cov_fleet *f, const char *rules, int64_t now, ag_cov_plan *p)
{
    assert_int_equal(ag_cov_tick(f, ag_cov_rules_find(rules), now, p), RL_OK);
}

static void an_idle_short_server_fills_then_is_evacuated_when_overdue(void **state)
{
    (void)state;
    ag_cov_fleet f;
    ag_cov_plan p;
    fleet_of(&f, 2, (uint32_t[]){4, 1}, (uint32_t[]){0, 0}); /* A covered, B short and idle */
    int64_t t = 0;
    tick_hand(&f, "none", t, &p);
    assert_int_equal(hand[1].state, AG_COV_FILLING);
    assert_int_equal(hand[1].want, 1);
    for (t = RL_COV_TICK_MS; t < RL_COV_OVERDUE_MS; t += RL_COV_TICK_MS) {
        tick_hand(&f, "none", t, &p);
        assert_int_equal(hand[1].state, AG_COV_FILLING);
        assert_int_equal(p.evacuated, -1);
    }
    tick_hand(&f, "none", t, &p);
    assert_int_equal(p.evacuated, 1);
    assert_int_equal(hand[1].state, AG_COV_EVACUATED);
    assert_true(hand[1].idle[0].close); /* recycled: closed and replaced */
    assert_int_equal(hand[1].want, 1);
    /* Evacuated for RL_COV_EVACUATED_MS: recycle, no fill. */
    tick_hand(&f, "none", t + RL_COV_EVACUATED_MS - 1, &p);
    assert_int_equal(hand[1].state, AG_COV_EVACUATED);
    tick_hand(&f, "none", t + RL_COV_EVACUATED_MS, &p);
    assert_int_equal(hand[1].state, AG_COV_FILLING);
}

static void a_short_server_with_calls_in_flight_is_never_evacuated(void **state)
{
    (void)state;
    ag_cov_fleet f;
    ag_cov_plan p;
    fleet_of(&f, 2, (uint32_t[]){40, 2}, (uint32_t[]){0, 1}); /* B: 1 call, 2 streams, short */
    for (int64_t t = 0; t < INT64_C(4) * RL_COV_OVERDUE_MS; t += RL_COV_TICK_MS) {
        tick_hand(&f, "none", t, &p);
        assert_int_not_equal(hand[1].state, AG_COV_EVACUATED);
        assert_int_not_equal(hand[1].state, AG_COV_OVERDUE);
        assert_false(hand[1].idle[0].close);
    }
}

static void no_evacuation_unless_another_server_is_covered(void **state)
{
    (void)state;
    ag_cov_fleet f;
    ag_cov_plan p;
    fleet_of(&f, 2, (uint32_t[]){1, 0}, (uint32_t[]){0, 0}); /* both short and idle */
    for (int64_t t = 0; t < INT64_C(4) * RL_COV_OVERDUE_MS; t += RL_COV_TICK_MS) {
        tick_hand(&f, "none", t, &p);
        assert_int_equal(p.evacuated, -1);
    }
    assert_int_equal(hand[0].state, AG_COV_OVERDUE);
    assert_int_equal(hand[0].want, 1); /* overdue still fills */
}

static void at_most_one_evacuation_per_period(void **state)
{
    (void)state;
    ag_cov_fleet f;
    ag_cov_plan p;
    fleet_of(&f, 3, (uint32_t[]){8, 1, 1}, (uint32_t[]){0, 0, 0});
    int64_t first = -1, second = -1;
    for (int64_t t = 0; t < INT64_C(4) * RL_COV_OVERDUE_MS; t += RL_COV_TICK_MS) {
        tick_hand(&f, "none", t, &p);
        if (p.evacuated >= 0 && first < 0)
            first = t;
        else if (p.evacuated >= 0 && second < 0)
            second = t;
    }
    assert_int_equal(first, RL_COV_OVERDUE_MS);
    assert_int_equal(second, RL_COV_OVERDUE_MS + RL_COV_EVACUATE_EVERY_MS);
}

/* ---- caps and the pause, by hand ---- */

static void growth_is_capped_per_server_and_in_total(void **state)
{
    (void)state;
    ag_cov_fleet f;
    ag_cov_plan p;
    fleet_of(&f, 1, (uint32_t[]){4}, (uint32_t[]){4});
    hand[0].streams = hand[0].busy = RL_COV_CAP_PER_SERVER - 10;
    tick_hand(&f, "none", 0, &p);
    assert_int_equal(hand[0].state, AG_COV_GROWING);
    assert_int_equal(p.open, 10);
    hand[0].streams = hand[0].busy = RL_COV_CAP_PER_SERVER;
    tick_hand(&f, "none", RL_COV_TICK_MS, &p);
    assert_int_equal(p.open, 0);
    /* The total: 3000 on A (over its own cap) and 900 on B, all busy,
     * leave 100 of the 300 B may still grow by. */
    fleet_of(&f, 2, (uint32_t[]){4, 4}, (uint32_t[]){4, 4});
    hand[0].streams = hand[0].busy = 3000;
    hand[1].streams = hand[1].busy = RL_COV_CAP_TOTAL - 3100;
    tick_hand(&f, "none", 0, &p);
    assert_int_equal(hand[0].want, 0);
    assert_int_equal(hand[1].want, RL_COV_CAP_PER_SERVER - (RL_COV_CAP_TOTAL - 3100));
    assert_int_equal(p.open, 100);
}

static void growth_pauses_while_idle_streams_elsewhere_reach_four_times_demand(void **state)
{
    (void)state;
    ag_cov_fleet f;
    ag_cov_plan p;
    fleet_of(&f, 2, (uint32_t[]){4 * 2, 2}, (uint32_t[]){0, 2});
    tick_hand(&f, "none", 0, &p);
    assert_int_equal(hand[1].state, AG_COV_GROWING);
    assert_true(hand[1].paused);
    assert_int_equal(p.open, 0);
    fleet_of(&f, 2, (uint32_t[]){4 * 2 - 1, 2}, (uint32_t[]){0, 2});
    tick_hand(&f, "none", 0, &p);
    assert_false(hand[1].paused);
    assert_int_equal(p.open, RL_COV_GROW_MIN);
}

static void pending_streams_count_toward_the_ask(void **state)
{
    (void)state;
    ag_cov_fleet f;
    ag_cov_plan p;
    fleet_of(&f, 1, (uint32_t[]){8}, (uint32_t[]){8});
    f.pending = 5;
    tick_hand(&f, "none", 0, &p);
    assert_int_equal(p.open, 3);
}

static void busy_above_streams_is_refused(void **state)
{
    (void)state;
    ag_cov_fleet f;
    ag_cov_plan p;
    fleet_of(&f, 1, (uint32_t[]){2}, (uint32_t[]){2});
    hand[0].busy = 3;
    assert_int_equal(ag_cov_tick(&f, NULL, 0, &p), RL_EINVAL);
}

/* ---- the mistakes ---- */

static void mistake_total_leaves_the_busy_server_with_its_few_streams(void **state)
{
    (void)state;
    /* Uniform placement: B holds 3 of the first 8 streams. */
    burst("none", uniform, 3000, 200);
    assert_true(ticks_until_in_flight(8) <= 8);
    burst("total", uniform, 3000, 200);
    assert_true(ticks_until_in_flight(40) > 40);
    assert_int_equal(in_flight(B), 3); /* while idle streams sat on A and C */
    assert_true(streams_on(A, false) - in_flight(A) + streams_on(C, false) - in_flight(C) >= RL_COV_RESERVE);
    assert_int_equal(S.srv[S.fleet_of[B]].state, AG_COV_COVERED);
}

static void mistake_no_prune_keeps_every_stream_after_a_burst(void **state)
{
    (void)state;
    burst("no-prune", all_on_b, 1000, 1000);
    assert_true(ticks_until_in_flight(8) <= 8);
    uint32_t peak = streams_on(B, false);
    settle(4 * (RL_COV_PRUNE_UNUSED_MS + 4000) / 1000);
    assert_int_equal(in_flight(B), 0);
    assert_int_equal(streams_on(B, false), peak);
    assert_int_equal(S.closed, 0);
}

/* One call at a time on B, which holds two streams and gets no new one:
 * short (2 < 1 + 2) with a call in flight. */
static void trickle(int ticks)
{
    S.trickle = true;
    serve();
    settle(ticks);
}

static void mistake_evacuate_busy_evacuates_a_server_with_calls_in_flight(void **state)
{
    (void)state;
    sim_start("none", none_on_b, 1000);
    trickle(4 * 20);
    assert_false(S.b_evacuated);
    assert_int_equal(S.closed_on_short_busy_b, 0);
    sim_start("evacuate-busy", none_on_b, 1000);
    trickle(4 * 20);
    assert_true(S.b_evacuated);
    assert_true(S.closed_on_short_busy_b > 0);
}

/* A quiet server: a call of 400 ms every second on B's two streams, so B is
 * covered between calls and short during each (the grader's evacuation
 * scenario). Its newest stream is always the one used. */
static void mistake_evacuate_busy_takes_a_quiet_server_for_an_idle_one(void **state)
{
    (void)state;
    uint32_t closed_b[2];
    bool evacuated[2];
    for (int m = 0; m < 2; m++) {
        sim_start(m ? "evacuate-busy" : "none", none_on_b, 400);
        S.every = 1000 / RL_COV_TICK_MS;
        settle(4 * 12);
        closed_b[m] = 0;
        for (size_t i = 0; i < S.nst; i++)
            closed_b[m] += S.st[i].server == B && !S.st[i].open;
        evacuated[m] = S.b_evacuated;
    }
    assert_false(evacuated[0]);
    assert_int_equal(closed_b[0], 0);
    assert_true(evacuated[1]);
    assert_true(closed_b[1] > 0);
}

static void mistake_no_cap_grows_without_bound_when_nothing_lands(void **state)
{
    (void)state;
    burst("no-cap", none_on_b, 3000, 1000);
    settle(10);
    /* Doubling every tick: 8 + 16 + ... + 4096 streams in 10 ticks. */
    assert_true(total_streams() > RL_COV_CAP_TOTAL);
    assert_int_equal(in_flight(B), 2);
}

static void mistake_stream_per_call_opens_a_stream_for_every_call(void **state)
{
    (void)state;
    burst("none", all_on_b, 1000, 100);
    settle(40);
    assert_int_equal(S.answered, 100);
    uint64_t right = S.opened;
    burst("stream-per-call", all_on_b, 1000, 100);
    settle(40);
    assert_int_equal(S.answered, 100);
    assert_true(S.opened >= right + 100);
    assert_true(S.closed >= 100);
}

static void every_mistake_is_listed_and_found(void **state)
{
    (void)state;
    const char *names[] = {"none", "total", "no-prune", "evacuate-busy", "no-cap", "stream-per-call"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const ag_cov_rules *r = ag_cov_rules_find(names[i]);
        assert_non_null(r);
        assert_string_equal(r->name, names[i]);
    }
    assert_ptr_equal(ag_cov_rules_find("none"), ag_cov_rules_default());
    assert_null(ag_cov_rules_find("list"));
    assert_string_equal(ag_cov_state_name(AG_COV_OVERDUE), "overdue");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(burst_with_every_stream_on_b_is_in_flight_within_8_ticks),
        cmocka_unit_test(growth_doubles_while_the_server_stays_all_busy),
        cmocka_unit_test(burst_with_uniform_placement_is_in_flight_in_bounded_ticks),
        cmocka_unit_test(burst_with_skewed_placement_is_in_flight_and_bounded),
        cmocka_unit_test(unfillable_stays_bounded_and_keeps_the_busy_server),
        cmocka_unit_test(after_a_burst_it_prunes_back_to_the_reserve),
        cmocka_unit_test(nothing_is_pruned_before_it_is_old_and_unused),
        cmocka_unit_test(an_idle_short_server_fills_then_is_evacuated_when_overdue),
        cmocka_unit_test(a_short_server_with_calls_in_flight_is_never_evacuated),
        cmocka_unit_test(no_evacuation_unless_another_server_is_covered),
        cmocka_unit_test(at_most_one_evacuation_per_period),
        cmocka_unit_test(growth_is_capped_per_server_and_in_total),
        cmocka_unit_test(growth_pauses_while_idle_streams_elsewhere_reach_four_times_demand),
        cmocka_unit_test(pending_streams_count_toward_the_ask),
        cmocka_unit_test(busy_above_streams_is_refused),
        cmocka_unit_test(mistake_total_leaves_the_busy_server_with_its_few_streams),
        cmocka_unit_test(mistake_no_prune_keeps_every_stream_after_a_burst),
        cmocka_unit_test(mistake_evacuate_busy_evacuates_a_server_with_calls_in_flight),
        cmocka_unit_test(mistake_evacuate_busy_takes_a_quiet_server_for_an_idle_one),
        cmocka_unit_test(mistake_no_cap_grows_without_bound_when_nothing_lands),
        cmocka_unit_test(mistake_stream_per_call_opens_a_stream_for_every_call),
        cmocka_unit_test(every_mistake_is_listed_and_found),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
