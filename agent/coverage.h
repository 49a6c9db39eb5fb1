/* coverage: the agent's sizing decision, once a tick, with no I/O.
 *
 * The agent holds long-lived Tunnel streams behind an L7 proxy that places
 * each new stream on a server of its choosing; each stream learns its server
 * from the server's first message. Once a tick the caller describes what it
 * holds per server (streams, calls in flight, its idle streams' ages) and
 * ag_cov_tick says which idle streams to close and how many new streams to
 * open, by the table of lab/exercises/coverage.md with the constants of
 * lib/rl_coverage.h. The agent cannot choose where a new stream lands, so the
 * plan's |open| is one number for the fleet: what each server asked for.
 *
 * The classic mistakes are hooks (ag_cov_rules): a mistake replaces one
 * decision and keeps the rest, so each is tested on its own against the same
 * simulated placement (tests/unit/agent/test_coverage.c). */
#ifndef AG_COVERAGE_H
#define AG_COVERAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum ag_cov_state {
    AG_COV_COVERED,   /* streams >= busy + RL_COV_RESERVE: nothing to do */
    AG_COV_GROWING,   /* short with calls in flight: open greedily, doubling */
    AG_COV_FILLING,   /* short and idle: open toward the reserve, a few a tick */
    AG_COV_OVERDUE,   /* short and idle for RL_COV_OVERDUE_MS: fill, then evacuate */
    AG_COV_EVACUATED, /* for RL_COV_EVACUATED_MS: recycle idle streams, no grow or fill */
} ag_cov_state;

/* "covered", "growing", ...: the word the agent's log lines use. */
const char *ag_cov_state_name(ag_cov_state s);

/* One idle stream (no call unanswered) as the tick sees it. */
typedef struct ag_cov_idle {
    uint64_t id;       /* the caller's name for the stream; not read */
    int64_t age_ms;    /* since it was opened */
    int64_t unused_ms; /* since its last call was answered, or since it opened */
    uint32_t served;   /* calls it answered */
    bool close;        /* out: close it this tick (prune, recycle or retire) */
} ag_cov_idle;

/* One server the agent has streams on (or had: a server stays known). */
typedef struct ag_cov_server {
    /* In, every tick. */
    uint32_t streams;  /* open streams that landed here; busy <= streams */
    uint32_t busy;     /* of them, the ones with a call unanswered: the calls in flight */
    ag_cov_idle *idle; /* the streams - busy idle ones, caller memory; reordered by the tick */
    /* Kept by the tick from one to the next: zero them when the server is first seen. */
    bool short_idle; /* short and idle since short_idle_since_ms */
    int64_t short_idle_since_ms;
    int64_t evacuated_until_ms; /* evacuated while now < this */
    uint32_t last_grow;         /* opened for it the tick before while growing, else 0 */
    /* Out. */
    ag_cov_state state;
    bool paused;      /* growing, but idle streams elsewhere reach RL_COV_PAUSE_FACTOR x demand */
    uint32_t want;    /* new streams it asked for (growth, fill, replacements of recycled ones) */
    uint32_t closing; /* its idle streams marked close */
} ag_cov_server;

typedef struct ag_cov_fleet {
    ag_cov_server *servers; /* caller memory */
    size_t n;
    uint32_t pending;    /* in: opened, not named by a server yet */
    bool evacuated_once; /* kept: an evacuation happened at last_evacuation_ms */
    int64_t last_evacuation_ms;
} ag_cov_fleet;

typedef struct ag_cov_plan {
    uint32_t open;  /* new streams to open now */
    uint32_t close; /* idle streams marked close, over every server */
    int evacuated;  /* the server evacuated this tick, or -1 */
} ag_cov_plan;

typedef struct ag_cov_rules ag_cov_rules;
/* The decisions a mistake may replace; ag_cov_rules_default() holds the
 * right ones. Every hook is pure. */
struct ag_cov_rules {
    const char *name;        /* "none", or the --mistake name */
    const char *description; /* one line, for --mistake list */
    /* Sets each server's state, want and short_idle clock (evacuated servers
     * are already marked and are left alone). Right: per server. */
    void (*classify)(const ag_cov_rules *r, ag_cov_fleet *f, int64_t now_ms);
    /* Whether server |s| counts as "short and idle" for the overdue clock and
     * may be evacuated. Right: short with no call in flight. */
    bool (*overdue_candidate)(const ag_cov_server *s);
    /* The growth server |i| may have this tick given its |want|: the pause
     * and the per-server cap. Sets paused. */
    uint32_t (*bound_growth)(const ag_cov_fleet *f, size_t i, uint32_t want);
    /* The streams to open given |want| in all and |held| streams held or
     * pending after this tick's closes: the total cap. */
    uint32_t (*bound_total)(uint32_t held, uint32_t want);
    /* Whether an idle stream above the reserve may be pruned. */
    bool (*prunable)(const ag_cov_idle *st);
    /* Whether an idle stream is closed and replaced whatever the reserve
     * (right: never; the stream-per-call mistake: once it served a call). */
    bool (*retire)(const ag_cov_idle *st);
};

/* The right rules. */
const ag_cov_rules *ag_cov_rules_default(void);

/* The mistake called |name| ("none" is the right rules), or NULL. */
const ag_cov_rules *ag_cov_rules_find(const char *name);

/* Prints every mistake with its description, one a line, to |out|. */
void ag_cov_rules_print_list(FILE *out);

/* Runs one tick at |now_ms| (any monotonic clock in ms, the same from tick
 * to tick) with |r| (NULL: the right rules): updates every server's kept and
 * out fields, marks the idle streams to close and fills |out|. Returns 0, or
 * RL_EINVAL when a server has busy > streams (nothing is changed then). */
int ag_cov_tick(ag_cov_fleet *f, const ag_cov_rules *r, int64_t now_ms, ag_cov_plan *out);

#endif
