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
 * Time runs 30 times faster than the world's (every duration of the config
 * and the world is divided by LAB_SCALE), so a run that stands for three
 * minutes takes six seconds. Only the machine's own latencies are not
 * scaled: every deadline gets SLACK_MS more, so that a loaded machine's
 * scheduling is never read as the config's fault.
 *
 * One live run feeds the four live scenarios, each judging one aspect of it
 * (it is the run that costs the time); under --runs N each run index gets
 * its own live run. The run happens in whichever scenario needs it first,
 * on that scenario's fresh baselines. */
#include "worlds/rl_balance_world.h"
#include "balance_figure.h"
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

#define LAB_SCALE     30     /* world ms per lab ms */
#define WORLD_ADD_MS  30000  /* the third backend joins this long after the clients connected */
#define WORLD_FILL_MS 120000 /* ...and must take its share within this */
#define WORLD_MIN_LIFE_MS                                                                                              \
    10000                       /* a connection living shorter on average churns: each reconnect is a                  \
                                 * TCP and TLS handshake and, for pick_first, a call that waits for it */
#define WORLD_STORM_MS     1500 /* every client reconnecting within this is a storm */
#define WINDOW_MS          500  /* lab: the counting window */
#define TAIL_MS            1000 /* lab: run on this long after the fill-up bound */
#define NCLIENTS           6
#define RATE               50    /* calls per second of each client, lab time */
#define SLACK_MS           2000  /* added to every lab deadline, unscaled */
#define DEFAULT_LONGEST_MS 20000 /* when the world states no call deadline */
/* A run whose own thread was this late (a call started after its instant,
 * a status delivered after its deadline) saw the machine stall, not the
 * config: calls time out because nobody ran. It is made again, up to
 * ATTEMPTS times in all; the lag of a run on two cores with every core
 * busy stays far below it (bench/results/balance.md). */
#define STALL_MS 300
#define ATTEMPTS 3
/* The joining backend's fair share is a third. Six connections over three
 * backends move in sixths: holding one connection gives 17 %, two 33 %.
 * "Its share" is therefore at least 25 % of the calls over two windows (1 s,
 * half an age of the reference config): two of six connections, with room
 * for a reconnect in flight; one connection never reaches it. */
#define FAIR_MIN 0.25

#define ADD_MS   (WORLD_ADD_MS / LAB_SCALE)
#define FILL_MS  (WORLD_FILL_MS / LAB_SCALE)
#define RUN_MS   (ADD_MS + FILL_MS + TAIL_MS)
#define STORM_MS (WORLD_STORM_MS / LAB_SCALE)

/* The server args the live run gives the baselines: the ones that end
 * connections. Keepalive args stay out: the balance world has no idle
 * cut-off to keep connections from, and scaled pings would only add noise. */
static const char *const server_keys[] = {
    "grpc.max_connection_age_ms",
    "grpc.max_connection_age_grace_ms",
    "grpc.max_connection_idle_ms",
};
#define NSERVER (sizeof server_keys / sizeof *server_keys)

/* What one live run measured, as the scenarios judge it. */
typedef struct live {
    bool done;
    bool error;                /* the grader could not run it: ERROR */
    char why[GR_FEEDBACK_MAX]; /* the error, or the config's load failure */
    gr_verdict load_verdict;   /* FAIL when the config could not be loaded */
    int64_t age_ms, grace_ms;  /* the config's own (INT_MAX: infinite) */
    char age[32], grace[32];   /* the same in words: "600 ms", "infinite" */
    char note[200];            /* " (world relay-fleet; the run's time is ...)",
                                * closing every scenario's feedback */
    int64_t longest_ms;        /* the world's longest call */
    bool has_lb;               /* the client service config names a policy */
    char lb[48];
    /* fills */
    int64_t fill_ms;    /* lab ms from the join to the end of the first 1 s
                         * span with FAIR_MIN; -1: never */
    double share_after; /* the joining backend's share from then to the end */
    double share_tail;  /* ... over the last second */
    int tail_rate[RL_BW_MAX_BACKENDS];
    int tail_conns[RL_BW_MAX_BACKENDS];
    double share_x[RL_BW_MAX_WINDOWS]; /* world s: the middle of each window */
    double share_y[RL_BW_MAX_WINDOWS]; /* the joining backend's share, % */
    size_t nshare;
    /* no-failures */
    int sent, failed, failed_long, long_sent, raced;
    char first_race[200];
    char first_failure[320];
    /* churn and storm */
    int attempts;          /* runs made: more than 1 after a stall */
    int64_t lag_ms;        /* the judged run's (rl_bw_result.lag_ms) */
    int64_t lb_turn_ms;    /* and its balancer's longest turn */
    int reconnects;        /* connections beyond each client's first */
    double per_client_min; /* reconnects per client per world minute */
    int storm;             /* most reconnects within STORM_MS */
    int64_t storm_at_ms;   /* world ms from the start where it began */
    int storms;            /* disjoint STORM_MS spans with a reconnect of
                            * every client: the rounds that were storms */
    /* For the --html pictures of churn and no-storm (world s): the
     * reconnect rate so far at each window's end, and the reconnects
     * within STORM_MS of each one (balance_figure.h). */
    double rate_x[RL_BW_MAX_WINDOWS], rate_y[RL_BW_MAX_WINDOWS];
    size_t nrate;
    double bunch_x[RL_BW_MAX_CONNS], bunch_y[RL_BW_MAX_CONNS];
    size_t nbunch;
    bool open_log_full; /* more connections than the log holds */
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
    int64_t v = world_ms / LAB_SCALE;
    return v < 1 ? 1 : v;
}

static void judge_fill(const rl_bw_result *r, live *l)
{
    l->fill_ms = rl_bw_fill_ms(r, 2, 2, FAIR_MIN, &l->share_after);
    size_t tail = r->nwindows >= 2 ? r->nwindows - 2 : 0;
    l->share_tail = rl_bw_share(r, 2, tail, r->nwindows);
    /* For the --html picture (fills_figure). */
    l->nshare = r->nwindows < RL_BW_MAX_WINDOWS ? r->nwindows : RL_BW_MAX_WINDOWS;
    for (size_t w = 0; w < l->nshare; w++) {
        l->share_x[w] = ((double)w + 0.5) * (double)r->window_ms * LAB_SCALE / 1000.0;
        l->share_y[w] = 100.0 * rl_bw_share(r, 2, w, w + 1);
    }
    for (size_t b = 0; b < r->nbackends; b++) {
        int n = 0, c = 0;
        for (size_t w = tail; w < r->nwindows; w++) {
            n += r->calls[w][b];
            c = r->conns[w][b] > c ? r->conns[w][b] : c;
        }
        /* NOLINTNEXTLINE(clang-analyzer-core.DivideZero): rl_bw_run ran at least one window */
        l->tail_rate[b] = (int)((int64_t)n * 1000 / ((int64_t)(r->nwindows - tail) * r->window_ms));
        l->tail_conns[b] = c;
    }
}

static void judge_churn(const rl_bw_result *r, live *l)
{
    /* The balancer's own count: the open log may be full on a churning run. */
    l->reconnects = r->lb.connections > NCLIENTS ? r->lb.connections - NCLIENTS : 0;
    /* NOLINTNEXTLINE(bugprone-integer-division): RUN_MS is whole lab ms, as the run is timed */
    double world_min = (double)RUN_MS * LAB_SCALE / 60000.0;
    l->per_client_min = l->reconnects / (double)NCLIENTS / world_min;
    int64_t at_ns;
    l->storms = rl_bw_bunches(r, NCLIENTS, STORM_MS * RL_NS_PER_MS, NCLIENTS, &l->storm, &at_ns);
    l->storm_at_ms = l->storm ? (at_ns - r->start_ns) / RL_NS_PER_MS * LAB_SCALE : 0;
    int64_t window_ns = WINDOW_MS * RL_NS_PER_MS;
    l->nrate = gr_bal_rate_so_far(r->open_ns, r->nopen, NCLIENTS, r->start_ns, window_ns, (size_t)(RUN_MS / WINDOW_MS),
                                  NCLIENTS, LAB_SCALE, l->rate_x, l->rate_y);
    l->nbunch = gr_bal_bunch_sizes(r->open_ns, r->nopen, NCLIENTS, r->start_ns, STORM_MS * RL_NS_PER_MS, LAB_SCALE,
                                   l->bunch_x, l->bunch_y, RL_BW_MAX_CONNS);
    l->open_log_full = r->nopen >= RL_BW_MAX_CONNS;
}

/* A short call answers at once, and no config of this world can hold one
 * back for seconds: one that ran out of its SLACK_MS means a process of the
 * run (the grader, its balancer thread, a baseline) did not run for that
 * long. Like a late thread (the run's own, or the balancer's: its sockets
 * block), it is the machine's doing, not the config's. */
static bool stalled(const rl_bw_result *r)
{
    return r->lag_ms > STALL_MS || r->lb.longest_turn_ms > STALL_MS || r->short_timed_out > 0;
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
    snprintf(l->note, sizeof l->note, " (%s; the run's time is the world's at 1:%d)", world, LAB_SCALE);
    if (rl_chancfg_calls_deadline(ce->cfg, &l->longest_ms) != RL_OK)
        l->longest_ms = DEFAULT_LONGEST_MS;
    l->age_ms = l->grace_ms = INT_MAX;
    configured(ce->cfg, "grpc.max_connection_age_ms", &l->age_ms);
    configured(ce->cfg, "grpc.max_connection_age_grace_ms", &l->grace_ms);
    ms_text(l->age_ms, l->age, sizeof l->age);
    ms_text(l->grace_ms, l->grace, sizeof l->grace);
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
 * run's lag into |lags|, l->attempts counts them. Returns rl_bw_run's code
 * (|err| its message) for the last run, in |r|. */
static int run_until_steady(gr_ctx *ctx, rl_bw_options *o, rl_bw_result *r, live *l, int64_t lags[ATTEMPTS], char *err,
                            size_t errlen)
{
    char tag[256];
    int rc = RL_OK;
    for (l->attempts = 0; l->attempts < ATTEMPTS && !gr_interrupted(ctx);) {
        /* Each attempt's calls under a tag of their own: the baselines keep
         * the records of the one before. */
        snprintf(tag, sizeof tag, "%s.a%d", gr_tag(ctx), l->attempts + 1);
        o->tag = tag;
        rc = rl_bw_run(o, r, err, errlen);
        lags[l->attempts++] = r->lag_ms;
        if (rc != RL_OK || !stalled(r))
            break;
    }
    return rc;
}

/* Whether the runs give something to judge: not when none ran, the last
 * failed, or every one stalled (l->error and l->why then say which). */
static bool runs_judgeable(const rl_bw_result *r, int rc, const int64_t lags[ATTEMPTS], const char *err, live *l)
{
    if (l->attempts == 0) {
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
        snprintf(l->why, sizeof l->why,
                 "the machine stalled in each of %d runs (the grader's own calls up to %lld, %lld%s ms late, "
                 "%d ms the limit; its balancer %lld ms in the last; or a call that answers at once ran out of "
                 "its %d ms: %d in the last run): grade again on a less loaded machine",
                 l->attempts, (long long)lags[0], (long long)lags[l->attempts > 1 ? 1 : 0],
                 l->attempts > 2 ? ", ..." : "", STALL_MS, (long long)r->lb.longest_turn_ms, SLACK_MS,
                 r->short_timed_out);
        return false;
    }
    return true;
}

/* What the judged run measured, into |l|. */
static void keep_measures(const rl_bw_result *r, live *l)
{
    l->lag_ms = r->lag_ms;
    l->lb_turn_ms = r->lb.longest_turn_ms;
    judge_fill(r, l);
    l->sent = r->sent;
    l->failed = r->failed;
    l->failed_long = r->failed_long;
    l->long_sent = r->long_sent;
    l->raced = r->raced;
    snprintf(l->first_race, sizeof l->first_race, "%s", r->first_race);
    snprintf(l->first_failure, sizeof l->first_failure, "%s", r->first_failure);
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
        l->has_lb = true;
        snprintf(l->lb, sizeof l->lb, "%s", strstr(sc, "round_robin") ? "round_robin" : "pick_first or other");
    }
    int rate[NCLIENTS];
    for (int i = 0; i < NCLIENTS; i++)
        rate[i] = RATE;
    /* Long calls of 90 % of the longest deadline, so that the one in flight
     * at a GOAWAY has up to that long still to run. */
    int64_t longest_lab = lab_ms(l->longest_ms);
    rl_bw_options o = {
        .ports = ports,
        .observers = obs,
        .nbackends = 3,
        .initial = 2,
        .add_at_ms = ADD_MS,
        .run_ms = RUN_MS,
        .window_ms = WINDOW_MS,
        .nclients = NCLIENTS,
        .rate = rate,
        .deadline_ms = SLACK_MS,
        .long_ms = longest_lab * 9 / 10,
        .long_deadline_ms = longest_lab + SLACK_MS,
        .grace_ms = l->grace_ms >= INT_MAX ? -1 : l->grace_ms / LAB_SCALE,
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

/* The grader's lag, and the runs made when one before stalled. */
static const char *stall_note(const live *l)
{
    static char buf[160];
    if (l->attempts > 1)
        snprintf(buf, sizeof buf, "; judged on run %d (the machine stalled in the one before; this one lagged %lld ms)",
                 l->attempts, (long long)l->lag_ms);
    else
        snprintf(buf, sizeof buf, "; the grader lagged at most %lld ms, its balancer %lld ms", (long long)l->lag_ms,
                 (long long)l->lb_turn_ms);
    return buf;
}

/* A run in which no call succeeded measured nothing of the config's
 * connections: no connection carried a call, so "no reconnects" and "no
 * storm" would be points for a config gRPC refused outright (all 836,090
 * calls of a run failed, and churn and no-storm passed, issue 21). Such a
 * run fails every scenario that judges connections, and says why. Returns
 * true with |out| decided. */
static bool nothing_answered(const live *l, gr_scenario_result *out)
{
    if (l->sent > 0 && l->failed + l->raced < l->sent)
        return false;
    if (l->sent == 0)
        gr_result(out, GR_FAIL, "the clients made no call: with this config nothing could be measured%s", l->note);
    else
        gr_result(out, GR_FAIL,
                  "all %d calls failed (first %s), so no connection carried a call and there is nothing to judge: "
                  "the check scenario says what gRPC refuses%s",
                  l->sent, l->first_failure[0] ? l->first_failure : "with no status", l->note);
    return true;
}

/* A run in which no connection was re-made exercised nothing that
 * no-failures and no-storm judge: with max_connection_age unset (or longer
 * than the run) no GOAWAY was sent, so "no call cut" and "no storm" hold of
 * any config, an empty one included. Such a run scores nothing there, and
 * says why. Returns true with |out| decided. */
static bool nothing_reconnected(const live *l, gr_scenario_result *out)
{
    if (l->reconnects > 0)
        return false;
    gr_result(out, GR_FAIL,
              "nothing reconnected (%d calls on the clients' first %d connections, max_connection_age %s): nothing "
              "to judge until max_connection_age is set short enough to re-make connections%s",
              l->sent, NCLIENTS, l->age, l->note);
    return true;
}

/* The picture of fills: the joining backend's share of the calls over
 * (world) time, against the fair share and the judged minimum, with the
 * instant it joined and the bound for taking its share. */
static void fills_figure(gr_scenario_result *out, const live *l)
{
    if (!l->nshare)
        return;
    gr_figure *f = &out->figure;
    gr_fig_plot(f, "The joining backend's share of the calls", "seconds of world time (the lab runs 30x faster)",
                "backend 3's share of the calls (%)");
    gr_fig_series_add(f, "backend 3 of 3", l->share_x, l->share_y, l->nshare);
    gr_fig_ref(f, 100.0 / 3, "fair share: 33 %%");
    gr_fig_ref(f, 100 * FAIR_MIN, "judged: %.0f %% or more", 100 * FAIR_MIN);
    gr_fig_event(f, WORLD_ADD_MS / 1000.0, "backend 3 joins");
    gr_fig_event(f, (WORLD_ADD_MS + WORLD_FILL_MS) / 1000.0, "bound: %d s later", WORLD_FILL_MS / 1000);
    if (l->fill_ms >= 0 && l->fill_ms <= FILL_MS)
        gr_fig_caption(f,
                       "The new backend reached its share %lld s after it joined: connections were re-made "
                       "through the balancer",
                       (long long)(l->fill_ms * LAB_SCALE / 1000));
    else
        gr_fig_caption(f, "The new backend did not reach its share in time: connections made once stay where they "
                          "are");
}

static int fills(gr_ctx *ctx, gr_scenario_result *out)
{
    const live *l = get_live(ctx, out);
    if (!l || nothing_answered(l, out))
        return 0;
    int64_t fill_world = l->fill_ms * LAB_SCALE;
    fills_figure(out, l);
    if (l->fill_ms >= 0 && l->fill_ms <= FILL_MS && l->share_after >= FAIR_MIN)
        return gr_result(out, GR_PASS,
                         "the joining backend took its share (%.0f %% or more over 30 s) %lld s after it joined "
                         "(bound %d s), %.0f %% of the calls from then on; at the end calls/s [%d %d %d] over "
                         "connections [%d %d %d]; max_connection_age %s%s",
                         100 * FAIR_MIN, (long long)(fill_world / 1000), WORLD_FILL_MS / 1000, 100 * l->share_after,
                         l->tail_rate[0], l->tail_rate[1], l->tail_rate[2], l->tail_conns[0], l->tail_conns[1],
                         l->tail_conns[2], l->age, l->note);
    char why[300];
    if (l->age_ms >= INT_MAX)
        snprintf(why, sizeof why,
                 "no grpc.max_connection_age_ms on the server: the clients' connections are made "
                 "once, and an L4 balancer places connections, not calls");
    else if (l->age_ms * 11 / 10 > WORLD_ADD_MS + WORLD_FILL_MS)
        snprintf(why, sizeof why,
                 "max_connection_age %s (+10 %% jitter) is longer than the %d s the backend may "
                 "wait after joining %d s in: connections are re-made too late",
                 l->age, WORLD_FILL_MS / 1000, WORLD_ADD_MS / 1000);
    else if (l->has_lb && strcmp(l->lb, "round_robin") != 0)
        snprintf(why, sizeof why, "connections were re-made, yet the calls did not follow (client policy %s)", l->lb);
    else
        snprintf(why, sizeof why, "connections were re-made (%d reconnects) but the backend did not get its share",
                 l->reconnects);
    if (l->fill_ms < 0)
        return gr_result(out, GR_FAIL,
                         "the joining backend never took %.0f %% of the calls within %d s (at the end it had %.0f %%; "
                         "calls/s [%d %d %d]): %s%s",
                         100 * FAIR_MIN, WORLD_FILL_MS / 1000, 100 * l->share_tail, l->tail_rate[0], l->tail_rate[1],
                         l->tail_rate[2], why, l->note);
    return gr_result(out, GR_FAIL,
                     "the joining backend took its share only %lld s after it joined (bound %d s), %.0f %% from then "
                     "on: %s%s",
                     (long long)(fill_world / 1000), WORLD_FILL_MS / 1000, 100 * l->share_after, why, l->note);
}

/* The picture of no-failures, in world seconds from a GOAWAY: the long
 * call the run kept in flight (90 % of the world's longest deadline)
 * against the grace the config gives it before the connection closes,
 * red when long calls were cut. */
static void no_failures_figure(gr_scenario_result *out, const live *l)
{
    gr_figure *f = &out->figure;
    double call_s = (double)l->longest_ms * 0.9 / 1000, grace_s = (double)l->grace_ms / 1000;
    bool infinite = l->grace_ms >= INT_MAX;
    if (l->reconnects == 0) {
        /* No connection was re-made: no GOAWAY came, and none is drawn. */
        gr_fig_timeline(f, "No GOAWAY came: the long call never met a connection's end",
                        "seconds of world time after the call starts");
        gr_fig_span_add(f, gr_fig_row(f, "long call in flight"), 0, call_s, GR_FIG_RAN, "runs up to %.0f s", call_s);
        gr_fig_caption(f, "No connection was re-made (0 reconnects): no GOAWAY, so no grace was put to the test");
        return;
    }
    gr_fig_timeline(f, "A GOAWAY with a long call in flight: the grace against the call",
                    "seconds of world time after the GOAWAY");
    gr_fig_event(f, 0, "GOAWAY (max_connection_age %s)", l->age);
    gr_fig_span_add(f, gr_fig_row(f, "long call in flight"), 0, call_s, GR_FIG_RAN, "runs up to %.0f s", call_s);
    gr_fig_span_add(f, gr_fig_row(f, "the grace"), 0, infinite ? call_s * 1.2 : grace_s,
                    l->failed_long ? GR_FIG_WRONG : GR_FIG_GIVEN, "%s", l->grace);
    if (!infinite)
        gr_fig_event(f, grace_s, "connection closed");
    if (l->failed == 0)
        gr_fig_caption(f, "None of %d calls failed across %d reconnects: the grace outlasts the longest call", l->sent,
                       l->reconnects);
    else if (l->failed_long && l->grace_ms < l->longest_ms)
        gr_fig_caption(f, "%d long calls were cut: the connection closes %s after the GOAWAY, before they end",
                       l->failed_long, l->grace);
    else
        gr_fig_caption(f, "%d of %d calls failed as connections were re-made (%d of them long)", l->failed, l->sent,
                       l->failed_long);
}

/* The picture of churn: reconnects per client per world minute so far,
 * at the end of each window, against the most allowed. */
static void churn_figure(gr_scenario_result *out, const live *l, double limit)
{
    if (!l->nrate)
        return;
    gr_figure *f = &out->figure;
    gr_fig_plot(f, "How often each client reconnects", "seconds of world time (the lab runs 30x faster)",
                "reconnects per client per minute, so far");
    gr_fig_series_add(f, l->open_log_full ? "reconnects so far (the log filled)" : "reconnects so far", l->rate_x,
                      l->rate_y, l->nrate);
    gr_fig_ref(f, limit, "at most %.0f: a connection lives %d s or more", limit, WORLD_MIN_LIFE_MS / 1000);
    gr_fig_event(f, WORLD_ADD_MS / 1000.0, "backend 3 joins");
    if (l->per_client_min <= limit)
        gr_fig_caption(f, "%.1f reconnects per client per minute, under %.0f: connections live long enough",
                       l->per_client_min, limit);
    else
        gr_fig_caption(f, "%.1f reconnects per client per minute, over %.0f: max_connection_age %s is too short",
                       l->per_client_min, limit, l->age);
}

/* The picture of no-storm: for each reconnect, how many came within
 * STORM_MS of it, against every client at once. */
static void storm_figure(gr_scenario_result *out, const live *l)
{
    gr_figure *f = &out->figure;
    char label[GR_FIG_LABEL];
    snprintf(label, sizeof label, "reconnects within %.1f s of each", WORLD_STORM_MS / 1000.0);
    gr_fig_plot(f, "Do the clients reconnect all at once?", "seconds of world time (the lab runs 30x faster)",
                "reconnects within the span");
    if (l->nbunch) {
        gr_fig_series_add(f, label, l->bunch_x, l->bunch_y, l->nbunch);
    } else if (l->nrate) { /* no reconnect at all: a flat zero over the run */
        double x[2] = {0, l->rate_x[l->nrate - 1]}, y[2] = {0, 0};
        gr_fig_series_add(f, "no reconnect", x, y, 2);
    }
    gr_fig_ref(f, NCLIENTS, "every client (%d) at once: a storm", NCLIENTS);
    if (l->storms < 2)
        gr_fig_caption(f, "At most %d reconnects within %.1f s, %d round%s of all %d: the jitter spreads them",
                       l->storm, WORLD_STORM_MS / 1000.0, l->storms, l->storms == 1 ? "" : "s", NCLIENTS);
    else
        gr_fig_caption(f, "%d rounds in which all %d clients reconnected within %.1f s: GOAWAY storms", l->storms,
                       NCLIENTS, WORLD_STORM_MS / 1000.0);
}

static int no_failures(gr_ctx *ctx, gr_scenario_result *out)
{
    const live *l = get_live(ctx, out);
    if (!l)
        return 0;
    no_failures_figure(out, l);
    char race[480] = "";
    if (l->raced)
        snprintf(race, sizeof race,
                 "; %d call%s that answer%s at once met a GOAWAY on the way and failed %s, gRPC 1.51's own race "
                 "(grpc/grpc#31733; not cut by the grace: a client retry on UNAVAILABLE absorbs it)",
                 l->raced, l->raced == 1 ? "" : "s", l->raced == 1 ? "s" : "", l->first_race);
    if (l->failed == 0 && nothing_reconnected(l, out))
        return 0;
    if (l->failed == 0)
        return gr_result(out, GR_PASS,
                         "%d calls, %d of them long (%lld ms), %d reconnects: none cut; max_connection_age %s, "
                         "grace %s%s%s%s",
                         l->sent, l->long_sent, (long long)(l->longest_ms * 9 / 10), l->reconnects, l->age, l->grace,
                         race, l->note, stall_note(l));
    char why[300] = "";
    if (l->failed_long && l->grace_ms < l->longest_ms)
        snprintf(why, sizeof why,
                 ": after the GOAWAY the server closes the connection %s later, but calls run up to "
                 "%lld ms: set grpc.max_connection_age_grace_ms to the longest deadline or more",
                 l->grace, (long long)l->longest_ms);
    return gr_result(out, GR_FAIL, "%d of %d calls failed (%d of %d long ones), first %s%s%s%s", l->failed, l->sent,
                     l->failed_long, l->long_sent, l->first_failure, why, l->note, stall_note(l));
}

static int churn(gr_ctx *ctx, gr_scenario_result *out)
{
    const live *l = get_live(ctx, out);
    if (!l || nothing_answered(l, out))
        return 0;
    double limit = 60000.0 / WORLD_MIN_LIFE_MS;
    int calls_per = l->reconnects ? l->sent / (l->reconnects + NCLIENTS) : l->sent / NCLIENTS;
    churn_figure(out, l, limit);
    if (l->per_client_min <= limit)
        return gr_result(out, GR_PASS,
                         "%.1f reconnects per client per minute (at most %.0f), about %d calls per "
                         "connection; max_connection_age %s%s",
                         l->per_client_min, limit, calls_per, l->age, l->note);
    return gr_result(out, GR_FAIL,
                     "reconnects dominate: %.1f per client per minute (at most %.0f: a connection should live %d s "
                     "or more), %d connections for %d calls, about %d calls each; every reconnect is a TCP and TLS "
                     "handshake and a call waiting for it: max_connection_age %s is too short%s",
                     l->per_client_min, limit, WORLD_MIN_LIFE_MS / 1000, l->reconnects + NCLIENTS, l->sent, calls_per,
                     l->age, l->note);
}

static int no_storm(gr_ctx *ctx, gr_scenario_result *out)
{
    const live *l = get_live(ctx, out);
    if (!l || nothing_answered(l, out))
        return 0;
    /* One round in which every client happened to reconnect together is a
     * coincidence (and likelier than the jitter suggests: gRPC 1.51 draws it
     * from rand(), never seeded, so two servers give their k-th connections
     * the same age); a storm that comes back is the config's. */
    storm_figure(out, l);
    if (nothing_reconnected(l, out))
        return 0;
    if (l->storms < 2)
        return gr_result(out, GR_PASS,
                         "%d reconnects, at most %d within %.1f s (%d clients), %d such round%s: spread "
                         "by gRPC's +-10 %% jitter on max_connection_age %s%s",
                         l->reconnects, l->storm, WORLD_STORM_MS / 1000.0, NCLIENTS, l->storms,
                         l->storms == 1 ? "" : "s", l->age, l->note);
    return gr_result(out, GR_FAIL,
                     "GOAWAY storms: %d times every client (%d) reconnected within %.1f s, up to %d reconnects at "
                     "%.1f s: gRPC's +-10 %% jitter on max_connection_age %s spreads them over too little time%s",
                     l->storms, NCLIENTS, WORLD_STORM_MS / 1000.0, l->storm, l->storm_at_ms / 1000.0, l->age, l->note);
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

static const gr_scenario scenarios[] = {
    {"check", "the config's rules in the exercise's world, and gRPC accepts it", check, 0},
    {"fills", "a backend that joins takes its share within 2 minutes", fills, 0},
    {"no-failures", "no call fails as connections are re-made, long calls included", no_failures, 0},
    {"churn", "connections live long enough: reconnects do not dominate", churn, 0},
    {"no-storm", "reconnects are spread, not all clients at once, round after round", no_storm, 0},
};

const gr_exercise gr_ex_balance = {
    .name = "balance",
    .summary = "max connection age re-spreads connections behind an L4 balancer",
    .kind = GR_SUBMISSION_CONFIG,
    .baselines = 3,
    .scenarios = scenarios,
    .nscenarios = sizeof scenarios / sizeof scenarios[0],
};
