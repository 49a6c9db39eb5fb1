/* ex_balance: the connection-age exercise. The submission is a channel
 * config; what matters is its server section's grpc.max_connection_age_ms
 * and _grace_ms (and max_connection_idle_ms), and its client service config
 * (the load-balancing policy). The world (grader/worlds/balance.json, or
 * --world) gives the longest call; the rest of the world is this file's:
 * six client channels calling at a steady rate through an L4 balancer that
 * picks a backend per connection (round robin), two backends at first, a
 * third joining 30 s in, and the rule that a joining backend must take its
 * share within two minutes (autoscaling adds it because of load).
 *
 * Time runs 30 times faster than the world's (balance_judge.h, with the
 * world's numbers the rules are stated in and every verdict).
 *
 * One live run feeds the four live scenarios, each judging one aspect of it
 * (it is the run that costs the time); under --runs N each run index gets
 * its own live run. The run happens in whichever scenario needs it first,
 * on that scenario's fresh baselines. */
#include "worlds/rl_balance_world.h"
#include "balance_figure.h"
#include "balance_judge.h"
#include "config_check.h"
#include "exercise.h"
#include "chancfg/rl_chancfg.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "run.h"
#include "scenario.h"

#include <grpc/grpc.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW_MS          500   /* lab: the counting window */
#define TAIL_MS            1000  /* lab: run on this long after the fill-up bound */
#define RATE               50    /* calls per second of each client, lab time */
#define DEFAULT_LONGEST_MS 20000 /* when the world states no call deadline */
/* A run that stalled (gr_bal_stalled) is made again, up to ATTEMPTS times
 * in all. */
#define ATTEMPTS 3

#define ADD_MS   (GR_BAL_WORLD_ADD_MS / GR_BAL_LAB_SCALE)
#define FILL_MS  (GR_BAL_WORLD_FILL_MS / GR_BAL_LAB_SCALE)
#define RUN_MS   (ADD_MS + FILL_MS + TAIL_MS)
#define STORM_MS (GR_BAL_WORLD_STORM_MS / GR_BAL_LAB_SCALE)

/* The server args the live run gives the baselines: the ones that end
 * connections. Keepalive args stay out: the balance world has no idle
 * cut-off to keep connections from, and scaled pings would only add noise. */
static const char *const server_keys[] = {
    "grpc.max_connection_age_ms",
    "grpc.max_connection_age_grace_ms",
    "grpc.max_connection_idle_ms",
};
#define NSERVER (sizeof server_keys / sizeof *server_keys)

/* One live run: what it measured (the judges' facts), or why there is
 * nothing to judge. */
typedef struct live {
    bool done;
    bool error;                /* the grader could not run it: ERROR */
    char why[GR_FEEDBACK_MAX]; /* the error, or the config's load failure */
    gr_verdict load_verdict;   /* FAIL when the config could not be loaded */
    gr_bal_live m;             /* what it measured */
} live;

static live *runs; /* one per run index, --runs of them */
static int nruns;

static bool configured(const rl_chancfg *cfg, const char *key, int64_t *v)
{
    bool is = false;
    return rl_chancfg_effective_int(cfg, RL_CHANCFG_SERVER, key, v, &is) == RL_OK && is;
}

/* The world's ms as lab ms: scaled, at least 1. */
static int64_t lab_ms(int64_t world_ms)
{
    int64_t v = world_ms / GR_BAL_LAB_SCALE;
    return v < 1 ? 1 : v;
}

static void judge_fill(const rl_bw_result *r, live *l)
{
    l->m.fill_ms = rl_bw_fill_ms(r, 2, 2, GR_BAL_FAIR_MIN, &l->m.share_after);
    size_t tail = r->nwindows >= 2 ? r->nwindows - 2 : 0;
    l->m.share_tail = rl_bw_share(r, 2, tail, r->nwindows);
    /* For the --html picture (fills_figure). */
    l->m.nshare = r->nwindows < RL_BW_MAX_WINDOWS ? r->nwindows : RL_BW_MAX_WINDOWS;
    for (size_t w = 0; w < l->m.nshare; w++) {
        l->m.share_x[w] = ((double)w + 0.5) * (double)r->window_ms * GR_BAL_LAB_SCALE / 1000.0;
        l->m.share_y[w] = 100.0 * rl_bw_share(r, 2, w, w + 1);
    }
    for (size_t b = 0; b < r->nbackends; b++) {
        int n = 0, c = 0;
        for (size_t w = tail; w < r->nwindows; w++) {
            n += r->calls[w][b];
            c = r->conns[w][b] > c ? r->conns[w][b] : c;
        }
        /* NOLINTNEXTLINE(clang-analyzer-core.DivideZero): rl_bw_run ran at least one window */
        l->m.tail_rate[b] = (int)((int64_t)n * 1000 / ((int64_t)(r->nwindows - tail) * r->window_ms));
        l->m.tail_conns[b] = c;
    }
}

static void judge_churn(const rl_bw_result *r, live *l)
{
    /* The balancer's own count: the open log may be full on a churning run. */
    l->m.reconnects = r->lb.connections > GR_BAL_NCLIENTS ? r->lb.connections - GR_BAL_NCLIENTS : 0;
    /* NOLINTNEXTLINE(bugprone-integer-division): RUN_MS is whole lab ms, as the run is timed */
    double world_min = (double)RUN_MS * GR_BAL_LAB_SCALE / 60000.0;
    l->m.per_client_min = l->m.reconnects / (double)GR_BAL_NCLIENTS / world_min;
    int64_t at_ns;
    l->m.storms = rl_bw_bunches(r, GR_BAL_NCLIENTS, STORM_MS * RL_NS_PER_MS, GR_BAL_NCLIENTS, &l->m.storm, &at_ns);
    l->m.storm_at_ms = l->m.storm ? (at_ns - r->start_ns) / RL_NS_PER_MS * GR_BAL_LAB_SCALE : 0;
    int64_t window_ns = WINDOW_MS * RL_NS_PER_MS;
    l->m.nrate =
        gr_bal_rate_so_far(r->open_ns, r->nopen, GR_BAL_NCLIENTS, r->start_ns, window_ns, (size_t)(RUN_MS / WINDOW_MS),
                           GR_BAL_NCLIENTS, GR_BAL_LAB_SCALE, l->m.rate_x, l->m.rate_y);
    l->m.nbunch = gr_bal_bunch_sizes(r->open_ns, r->nopen, GR_BAL_NCLIENTS, r->start_ns, STORM_MS * RL_NS_PER_MS,
                                     GR_BAL_LAB_SCALE, l->m.bunch_x, l->m.bunch_y, RL_BW_MAX_CONNS);
    l->m.open_log_full = r->nopen >= RL_BW_MAX_CONNS;
}

/* gr_bal_stalled, on a run's result. */
static bool stalled(const rl_bw_result *r)
{
    return gr_bal_stalled(r->lag_ms, r->lb.longest_turn_ms, r->short_timed_out);
}

/* A config's duration in words: "600 ms", or "infinite" (INT_MAX). */
static void ms_text(int64_t ms, char *buf, size_t len)
{
    if (ms >= INT_MAX)
        snprintf(buf, len, "infinite");
    else
        snprintf(buf, len, "%lld ms", (long long)ms);
}

/* What the config says that the scenarios quote: its world, its longest
 * call deadline, its max_connection_age and grace. */
static void read_config(const gr_config_env *ce, live *l)
{
    char world[144]; /* "world relay-fleet" */
    gr_config_world_name(ce, world, sizeof world);
    snprintf(l->m.note, sizeof l->m.note, " (%s; the run's time is the world's at 1:%d)", world, GR_BAL_LAB_SCALE);
    if (rl_chancfg_calls_deadline(ce->cfg, &l->m.longest_ms) != RL_OK)
        l->m.longest_ms = DEFAULT_LONGEST_MS;
    l->m.age_ms = l->m.grace_ms = INT_MAX;
    configured(ce->cfg, "grpc.max_connection_age_ms", &l->m.age_ms);
    configured(ce->cfg, "grpc.max_connection_age_grace_ms", &l->m.grace_ms);
    ms_text(l->m.age_ms, l->m.age, sizeof l->m.age);
    ms_text(l->m.grace_ms, l->m.grace, sizeof l->m.grace);
}

/* Restarts the three baselines with the config's server args, scaled;
 * their ports and observer channels into |ports| and |obs|. Returns 0, or
 * RL_ESYS with l->error and l->why set. */
static int restart_baselines(gr_ctx *ctx, const gr_config_env *ce, live *l, int ports[3], grpc_channel *obs[3])
{
    char argbuf[NSERVER][128];
    const char *argv[2 * NSERVER + 1];
    size_t na = 0;
    for (size_t i = 0; i < NSERVER; i++) {
        int64_t v;
        if (configured(ce->cfg, server_keys[i], &v) && v < INT_MAX) {
            snprintf(argbuf[i], sizeof argbuf[i], "%s=%lld", server_keys[i], (long long)lab_ms(v));
            argv[na++] = "--arg";
            argv[na++] = argbuf[i];
        }
    }
    argv[na] = NULL;
    for (int i = 0; i < 3; i++) {
        char err[256];
        if (gr_restart_baseline(ctx, i, argv, err, sizeof err) != RL_OK) {
            l->error = true;
            snprintf(l->why, sizeof l->why, "cannot restart baseline %d with the server args: %s", i + 1, err);
            return RL_ESYS;
        }
        ports[i] = atoi(strrchr(gr_baseline_addr(ctx, i), ':') + 1);
        obs[i] = gr_baseline_channel(ctx, i);
    }
    return RL_OK;
}

/* Runs the world until a run did not stall, at most ATTEMPTS times; each
 * run's lag into |lags|, l->m.attempts counts them. Returns rl_bw_run's code
 * (|err| its message) for the last run, in |r|. */
static int run_until_steady(gr_ctx *ctx, rl_bw_options *o, rl_bw_result *r, live *l, int64_t lags[ATTEMPTS], char *err,
                            size_t errlen)
{
    char tag[256];
    int rc = RL_OK;
    for (l->m.attempts = 0; l->m.attempts < ATTEMPTS && !gr_interrupted(ctx);) {
        /* Each attempt's calls under a tag of their own: the baselines keep
         * the records of the one before. */
        snprintf(tag, sizeof tag, "%s.a%d", gr_tag(ctx), l->m.attempts + 1);
        o->tag = tag;
        rc = rl_bw_run(o, r, err, errlen);
        lags[l->m.attempts++] = r->lag_ms;
        if (rc != RL_OK || !stalled(r))
            break;
    }
    return rc;
}

/* Whether the runs give something to judge: not when none ran, the last
 * failed, or every one stalled (l->error and l->why then say which). */
static bool runs_judgeable(const rl_bw_result *r, int rc, const int64_t lags[ATTEMPTS], const char *err, live *l)
{
    if (l->m.attempts == 0) {
        l->error = true;
        snprintf(l->why, sizeof l->why, "interrupted");
        return false;
    }
    if (rc != RL_OK) {
        l->error = true;
        snprintf(l->why, sizeof l->why, "the live run failed: %s", err);
        return false;
    }
    if (stalled(r)) {
        l->error = true;
        gr_bal_stall_feedback(l->m.attempts, lags, r->lb.longest_turn_ms, r->short_timed_out, l->why, sizeof l->why);
        return false;
    }
    return true;
}

/* What the judged run measured, into |l|. */
static void keep_measures(const rl_bw_result *r, live *l)
{
    l->m.lag_ms = r->lag_ms;
    l->m.lb_turn_ms = r->lb.longest_turn_ms;
    judge_fill(r, l);
    l->m.sent = r->sent;
    l->m.failed = r->failed;
    l->m.failed_long = r->failed_long;
    l->m.long_sent = r->long_sent;
    l->m.raced = r->raced;
    snprintf(l->m.first_race, sizeof l->m.first_race, "%s", r->first_race);
    snprintf(l->m.first_failure, sizeof l->m.first_failure, "%s", r->first_failure);
    judge_churn(r, l);
}

/* Restarts the three baselines with the config's server args, scaled, and
 * runs the world. Fills |l| (l->error when the grader failed). */
static void live_run(gr_ctx *ctx, live *l)
{
    memset(l, 0, sizeof *l);
    l->done = true;
    gr_config_env ce;
    gr_scenario_result res;
    if (gr_config_open(ctx, "balance", &ce, &res)) {
        l->error = res.verdict == GR_ERROR;
        l->load_verdict = res.verdict;
        snprintf(l->why, sizeof l->why, "%s", res.feedback);
        gr_config_close(&ce);
        return;
    }
    read_config(&ce, l);
    int ports[3];
    grpc_channel *obs[3];
    if (restart_baselines(ctx, &ce, l, ports, obs) != RL_OK) {
        gr_config_close(&ce);
        return;
    }
    char *sc = NULL;
    rl_chancfg_service_config(ce.cfg, &sc);
    grpc_arg arg = {.type = GRPC_ARG_STRING, .key = (char *)GRPC_ARG_SERVICE_CONFIG, .value.string = sc};
    grpc_channel_args args = {sc ? 1 : 0, &arg};
    if (sc && strstr(sc, "loadBalancing")) {
        l->m.has_lb = true;
        snprintf(l->m.lb, sizeof l->m.lb, "%s", strstr(sc, "round_robin") ? "round_robin" : "pick_first or other");
    }
    int rate[GR_BAL_NCLIENTS];
    for (int i = 0; i < GR_BAL_NCLIENTS; i++)
        rate[i] = RATE;
    /* Long calls of 90 % of the longest deadline, so that the one in flight
     * at a GOAWAY has up to that long still to run. */
    int64_t longest_lab = lab_ms(l->m.longest_ms);
    rl_bw_options o = {
        .ports = ports,
        .observers = obs,
        .nbackends = 3,
        .initial = 2,
        .add_at_ms = ADD_MS,
        .run_ms = RUN_MS,
        .window_ms = WINDOW_MS,
        .nclients = GR_BAL_NCLIENTS,
        .rate = rate,
        .deadline_ms = GR_BAL_SLACK_MS,
        .long_ms = longest_lab * 9 / 10,
        .long_deadline_ms = longest_lab + GR_BAL_SLACK_MS,
        .grace_ms = l->m.grace_ms >= INT_MAX ? -1 : l->m.grace_ms / GR_BAL_LAB_SCALE,
        .client_args = sc ? &args : NULL,
    };
    static rl_bw_result r; /* large; one run at a time */
    char err[300];
    int64_t lags[ATTEMPTS];
    int rc = run_until_steady(ctx, &o, &r, l, lags, err, sizeof err);
    free(sc);
    gr_config_close(&ce);
    if (runs_judgeable(&r, rc, lags, err, l))
        keep_measures(&r, l);
}

/* The live run of this run index, made on first use. Returns it, or NULL
 * with |out| decided (ERROR, or FAIL for a config that does not load). */
static const live *get_live(gr_ctx *ctx, gr_scenario_result *out)
{
    int k = gr_run_index(ctx), n = gr_run_count(ctx);
    if (!runs || nruns != n) {
        free(runs);
        runs = calloc((size_t)n, sizeof *runs);
        nruns = runs ? n : 0;
    }
    static live spare;
    live *l = runs && k >= 1 && k <= nruns ? &runs[k - 1] : &spare;
    if (!l->done || l == &spare)
        live_run(ctx, l);
    if (l->error || l->load_verdict != GR_PASS) {
        gr_result(out, l->error ? GR_ERROR : l->load_verdict, "%s", l->why);
        return NULL;
    }
    return l;
}

/* Asks gr_bal_judge_answered: true with |out| decided when the run
 * measured nothing of the config's connections. */
static bool nothing_answered(const live *l, gr_scenario_result *out)
{
    char fb[GR_FEEDBACK_MAX];
    gr_verdict v = gr_bal_judge_answered(&l->m, fb, sizeof fb);
    if (v == GR_PASS)
        return false;
    gr_result(out, v, "%s", fb);
    return true;
}

static int fills(gr_ctx *ctx, gr_scenario_result *out)
{
    const live *l = get_live(ctx, out);
    if (!l || nothing_answered(l, out))
        return 0;
    gr_bal_fills_figure(out, &l->m);
    char fb[GR_FEEDBACK_MAX];
    return gr_result(out, gr_bal_judge_fills(&l->m, fb, sizeof fb), "%s", fb);
}

static int no_failures(gr_ctx *ctx, gr_scenario_result *out)
{
    const live *l = get_live(ctx, out);
    if (!l)
        return 0;
    gr_bal_no_failures_figure(out, &l->m);
    char fb[GR_FEEDBACK_MAX];
    return gr_result(out, gr_bal_judge_no_failures(&l->m, fb, sizeof fb), "%s", fb);
}

static int churn(gr_ctx *ctx, gr_scenario_result *out)
{
    const live *l = get_live(ctx, out);
    if (!l || nothing_answered(l, out))
        return 0;
    gr_bal_churn_figure(out, &l->m, gr_bal_churn_limit());
    char fb[GR_FEEDBACK_MAX];
    return gr_result(out, gr_bal_judge_churn(&l->m, fb, sizeof fb), "%s", fb);
}

static int no_storm(gr_ctx *ctx, gr_scenario_result *out)
{
    const live *l = get_live(ctx, out);
    if (!l || nothing_answered(l, out))
        return 0;
    gr_bal_storm_figure(out, &l->m);
    char fb[GR_FEEDBACK_MAX];
    return gr_result(out, gr_bal_judge_no_storm(&l->m, fb, sizeof fb), "%s", fb);
}

/* The lesson: a server max connection age, without which a connection made
 * once stays on its backend forever. */
static bool sets_age(const rl_chancfg *cfg, char *why, size_t len)
{
    return gr_config_sets(cfg, RL_CHANCFG_SERVER, "grpc.max_connection_age_ms",
                          "connections are never re-made, so a backend that joins gets none (lab show balance)", why,
                          len);
}

static int check(gr_ctx *ctx, gr_scenario_result *out)
{
    return gr_config_check_run(ctx, "balance", sets_age, out);
}

/* One lane (lanes.h): one live run, cached in this process, feeds the four
 * live scenarios. */
static const gr_scenario scenarios[] = {
    {"check", "the config's rules in the exercise's world, and gRPC accepts it", check, 0, 0},
    {"fills", "a backend that joins takes its share within 2 minutes", fills, 0, 0},
    {"no-failures", "no call fails as connections are re-made, long calls included", no_failures, 0, 0},
    {"churn", "connections live long enough: reconnects do not dominate", churn, 0, 0},
    {"no-storm", "reconnects are spread, not all clients at once, round after round", no_storm, 0, 0},
};

const gr_exercise gr_ex_balance = {
    .name = "balance",
    .summary = "max connection age re-spreads connections behind an L4 balancer",
    .kind = GR_SUBMISSION_CONFIG,
    .baselines = 3,
    .baselines_by_scenario = true, /* the live run restarts them with the config's server args */
    .scenarios = scenarios,
    .nscenarios = sizeof scenarios / sizeof scenarios[0],
};
