/* config_figure: the config exercises' check pictures; see config_figure.h. */
#include "config_figure.h"

#include "rl_err.h"

#include <grpc/grpc.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* gRPC's "off" or "infinite", as rl_chancfg_effective_int reports it. */
#define OFF_MS INT32_MAX
/* The retry filter's jitter on every backoff after the first (gRPC 1.51,
 * docs/grpc-facts.md). */
#define RETRY_JITTER 0.2
/* The age below which lib/chancfg's age.too-short rule fails a config. */
#define AGE_MIN_MS 10000
/* max_connection_age's jitter in gRPC 1.51: about +-10 %. */
#define AGE_JITTER 0.1

/* |ms| as people read a period: "1.5 s", "240 s", "off". */
static const char *secs(char *buf, size_t len, int64_t ms)
{
    if (ms >= OFF_MS)
        snprintf(buf, len, "off");
    else
        snprintf(buf, len, "%g s", (double)ms / 1000.0);
    return buf;
}

static double clip(int64_t ms, double hi)
{
    double s = (double)ms / 1000.0;
    return s < hi ? s : hi;
}

static bool server_int(const rl_chancfg *cfg, const char *name, int64_t *v)
{
    return rl_chancfg_effective_int(cfg, RL_CHANCFG_SERVER, name, v, NULL) == RL_OK && *v >= 0;
}

static bool client_int(const rl_chancfg *cfg, const char *name, int64_t *v)
{
    return rl_chancfg_effective_int(cfg, RL_CHANCFG_CLIENT, name, v, NULL) == RL_OK && *v >= 0;
}

/* ---- keepalive -------------------------------------------------------- */

typedef struct ka_vals {
    int64_t idle, min_ping, strikes, client_kt, server_kt, client_idle;
    const char *kind;
} ka_vals;

static bool ka_read(const rl_chancfg *cfg, ka_vals *v)
{
    v->kind = "intermediary";
    return rl_chancfg_intermediary(cfg, &v->idle, &v->kind) == RL_OK &&
           server_int(cfg, GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, &v->min_ping) &&
           server_int(cfg, GRPC_ARG_HTTP2_MAX_PING_STRIKES, &v->strikes) &&
           client_int(cfg, GRPC_ARG_KEEPALIVE_TIME_MS, &v->client_kt) &&
           server_int(cfg, GRPC_ARG_KEEPALIVE_TIME_MS, &v->server_kt) &&
           client_int(cfg, GRPC_ARG_CLIENT_IDLE_TIMEOUT_MS, &v->client_idle);
}

static void keepalive_caption(gr_figure *f, const ka_vals *v, const char *broken)
{
    char a[32], b[32], c[32];
    bool client_pings = v->client_kt < OFF_MS;
    bool early = client_pings && v->client_kt < v->min_ping && v->strikes > 0;
    bool kept = (client_pings && v->client_kt < v->idle) || v->server_kt < v->idle || v->client_idle < v->idle;
    if (early)
        gr_fig_caption(f,
                       "The client pings every %s; the server allows one per %s: strikes, then GOAWAY too_many_pings",
                       secs(a, sizeof a, v->client_kt), secs(b, sizeof b, v->min_ping));
    else if (!kept)
        gr_fig_caption(f, "Nothing pings within the %.12s's %s: it drops the quiet connection, the next call hangs",
                       v->kind, secs(a, sizeof a, v->idle));
    else if (broken)
        gr_fig_caption(f, "The periods fit; %.40s is broken all the same (the feedback says why)", broken);
    else if (client_pings && v->client_kt < v->idle)
        gr_fig_caption(f, "The client pings every %s: no sooner than the server's %s, before the %.12s's %s cut-off",
                       secs(a, sizeof a, v->client_kt), secs(b, sizeof b, v->min_ping), v->kind,
                       secs(c, sizeof c, v->idle));
    else if (v->server_kt < v->idle)
        gr_fig_caption(f, "The server's pings every %s keep the connection before the %.12s's %s cut-off",
                       secs(a, sizeof a, v->server_kt), v->kind, secs(b, sizeof b, v->idle));
    else
        gr_fig_caption(f, "The client closes an idle connection at %s, before the %.12s forgets it at %s",
                       secs(a, sizeof a, v->client_idle), v->kind, secs(b, sizeof b, v->idle));
}

/* One side's period as a bar from 0: blue when it keeps the connection
 * and breaks nothing, red when it is what breaks the rule, grey when it
 * neither helps nor harms. */
static void ka_period(gr_figure *f, const char *row, int64_t kt, double hi, gr_fig_bar bar)
{
    char a[32];
    int r = gr_fig_row(f, row);
    if (kt >= OFF_MS)
        gr_fig_span_add(f, r, 0, hi, bar, "never: keepalive is off (cut here)");
    else if ((double)kt / 1000.0 > hi)
        gr_fig_span_add(f, r, 0, hi, bar, "every %s (cut here)", secs(a, sizeof a, kt));
    else
        gr_fig_span_add(f, r, 0, clip(kt, hi), bar, "every %s", secs(a, sizeof a, kt));
}

static void keepalive_figure(gr_figure *f, const gr_config_fig_in *in)
{
    ka_vals v;
    if (!ka_read(in->cfg, &v))
        return;
    char a[32], b[32];
    double hi = 1.25 * (double)(v.idle > v.min_ping ? v.idle : v.min_ping) / 1000.0;
    gr_fig_timeline(f, "Keepalive against the world's bounds", "seconds of silence on the connection");
    gr_fig_event(f, clip(v.min_ping, hi), "the server allows a ping every %s", secs(a, sizeof a, v.min_ping));
    gr_fig_event(f, clip(v.idle, hi), "the %.12s forgets an idle connection at %s", v.kind, secs(b, sizeof b, v.idle));
    int w = gr_fig_row(f, "client pings that fit");
    if (v.min_ping < v.idle)
        gr_fig_span_add(f, w, clip(v.min_ping, hi), clip(v.idle, hi), GR_FIG_TRUTH, "from %s to under %s",
                        secs(a, sizeof a, v.min_ping), secs(b, sizeof b, v.idle));
    else
        gr_fig_span_add(f, w, clip(v.idle, hi), clip(v.min_ping, hi), GR_FIG_WRONG,
                        "none: the server's minimum is past the cut-off");

    bool client_pings = v.client_kt < OFF_MS;
    bool early = client_pings && v.client_kt < v.min_ping && v.strikes > 0;
    bool client_keeps = client_pings && v.client_kt < v.idle;
    bool server_keeps = v.server_kt < v.idle;
    bool idle_closes = v.client_idle < v.idle;
    bool none_keeps = !client_keeps && !server_keeps && !idle_closes;
    ka_period(f, "client: keepalive_time", v.client_kt, hi,
              early || none_keeps ? GR_FIG_WRONG
              : client_keeps      ? GR_FIG_GIVEN
                                  : GR_FIG_RAN);
    ka_period(f, "server: keepalive_time", v.server_kt, hi, server_keeps ? GR_FIG_GIVEN : GR_FIG_RAN);
    if (v.client_idle < OFF_MS && (double)v.client_idle / 1000.0 <= hi)
        gr_fig_span_add(f, gr_fig_row(f, "client: idle close"), 0, clip(v.client_idle, hi),
                        idle_closes ? GR_FIG_GIVEN : GR_FIG_RAN, "after %s", secs(a, sizeof a, v.client_idle));
    keepalive_caption(f, &v, in->broken);
}

/* ---- retry ------------------------------------------------------------ */

int64_t gr_retry_longest_wait_ms(const rl_chancfg_method *m, int retry)
{
    if (retry < 1)
        return 0;
    if (retry == 1)
        return m->initial_backoff_ms;
    double b = (double)m->initial_backoff_ms;
    for (int n = 1; n < retry && b < (double)m->max_backoff_ms; n++)
        b *= m->backoff_multiplier;
    if (b > (double)m->max_backoff_ms)
        b = (double)m->max_backoff_ms;
    return (int64_t)ceil(b * (1.0 + RETRY_JITTER));
}

/* Lookup without a retry policy gRPC would use: one attempt. */
static void retry_none(gr_figure *f, const gr_config_fig_in *in, int fails)
{
    gr_fig_span_add(f, gr_fig_row(f, "attempt 1"), 0, 0, fails ? GR_FIG_WRONG : GR_FIG_RAN,
                    fails ? "UNAVAILABLE: the caller sees it" : "the only attempt");
    if (in->broken)
        gr_fig_caption(f, "gRPC makes one attempt: %.40s leaves Lookup without a retryPolicy it uses", in->broken);
    else
        gr_fig_caption(f, "Lookup has no retryPolicy: one attempt, and a restarting backend's UNAVAILABLE reaches the "
                          "caller");
}

static void retry_figure(gr_figure *f, const gr_config_fig_in *in)
{
    int64_t dl = 0;
    bool has_dl = rl_chancfg_calls_deadline(in->cfg, &dl) == RL_OK;
    int fails = in->unavailable_in_a_row;
    rl_chancfg_method m;
    int64_t enabled = 1;
    bool has = rl_chancfg_method_config(in->cfg, "relaylab.Baseline", "Lookup", &m) == RL_OK && m.has_retry &&
               (!client_int(in->cfg, GRPC_ARG_ENABLE_RETRIES, &enabled) || enabled != 0);
    gr_fig_timeline(f, "Lookup's attempts against the call's deadline", "ms since the call began");
    if (has_dl)
        gr_fig_event(f, (double)dl, "the call's deadline (%lld ms)", (long long)dl);
    if (!has) {
        retry_none(f, in, fails);
        return;
    }
    bool retries_unavailable = m.retryable_codes & (1u << GRPC_STATUS_UNAVAILABLE);
    int last = m.max_attempts;
    if (fails > 0 && fails + 1 < last)
        last = fails + 1; /* the attempt the backend answers: none is made after it */
    if (!retries_unavailable)
        last = 1;
    double t = 0;
    for (int k = 1; k <= last && k <= GR_FIG_MAX_ROWS; k++) {
        char row[24], waited[48] = "";
        snprintf(row, sizeof row, "attempt %d", k);
        int r = gr_fig_row(f, row);
        if (k > 1) {
            int64_t w = gr_retry_longest_wait_ms(&m, k - 1);
            gr_fig_span_add(f, r, t, t + (double)w, GR_FIG_RAN, NULL);
            snprintf(waited, sizeof waited, " after up to %lld ms", (long long)w);
            t += (double)w;
        }
        bool late = has_dl && t > (double)dl;
        bool answers = fails > 0 && k == fails + 1;
        bool gives_up = fails > 0 && k == last && k <= fails;
        gr_fig_span_add(f, r, t, t,
                        late || gives_up ? GR_FIG_WRONG
                        : answers        ? GR_FIG_GIVEN
                                         : GR_FIG_RAN,
                        "%s%s",
                        late      ? "past the deadline"
                        : answers ? "OK"
                        : fails   ? "UNAVAILABLE"
                                  : "an attempt",
                        waited);
    }
    if (!retries_unavailable)
        gr_fig_caption(f, "UNAVAILABLE is not in Lookup's retryableStatusCodes: a restarting backend's first failure "
                          "reaches the caller");
    else if (fails > 0 && last <= fails)
        gr_fig_caption(f, "Lookup gives up after %d attempts, but the restarting backend fails %d in a row", last,
                       fails);
    else if (has_dl && t > (double)dl)
        gr_fig_caption(f, "The waits add up to %.0f ms, past the %lld ms deadline: the last attempt may never start", t,
                       (long long)dl);
    else if (in->broken)
        gr_fig_caption(f, "The attempts fit; %.40s is broken all the same (the feedback says why)", in->broken);
    else if (fails > 0)
        gr_fig_caption(f, "The backend fails %d in a row; attempt %d answers, at the latest %.0f ms into the call",
                       fails, last, t);
    else
        gr_fig_caption(f, "Lookup is tried up to %d times, the last at the latest %.0f ms into the call", last, t);
}

/* ---- balance ---------------------------------------------------------- */

static void balance_caption(gr_figure *f, int64_t age, int64_t grace, int64_t longest, const char *broken)
{
    char a[32], b[32], c[32];
    if (age >= OFF_MS)
        gr_fig_caption(f, "Connections never age out: a backend that joins later gets no calls from them");
    else if (age < AGE_MIN_MS)
        gr_fig_caption(f, "Connections age every %s: each client reconnects about %.0f times a minute",
                       secs(a, sizeof a, age), 60000.0 / (double)(age > 0 ? age : 1));
    else if (grace >= OFF_MS)
        gr_fig_caption(f, "No grace: after the age one stuck call keeps the old connection open for ever");
    else if (longest > 0 && grace < longest)
        gr_fig_caption(f, "The %s grace ends before the longest call (%s): calls still running fail UNAVAILABLE",
                       secs(a, sizeof a, grace), secs(b, sizeof b, longest));
    else if (broken)
        gr_fig_caption(f, "The age and grace fit; %.40s is broken all the same (the feedback says why)", broken);
    else
        gr_fig_caption(f, "Connections age at %s and the %s grace outlasts the longest call (%s)",
                       secs(a, sizeof a, age), secs(b, sizeof b, grace), secs(c, sizeof c, longest));
}

static void balance_figure(gr_figure *f, const gr_config_fig_in *in)
{
    int64_t age, grace, longest = 0;
    if (!server_int(in->cfg, GRPC_ARG_MAX_CONNECTION_AGE_MS, &age) ||
        !server_int(in->cfg, GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS, &grace))
        return;
    (void)rl_chancfg_calls_deadline(in->cfg, &longest);
    char a[32];
    gr_fig_timeline(f, "A connection's life against the longest call", "seconds since the connection opened");
    int64_t tail = grace < OFF_MS && grace > longest ? grace : longest;
    double hi = age < OFF_MS ? 1.15 * ((double)age * (1 + AGE_JITTER) + (double)tail) / 1000.0
                             : 2.0 * (double)(longest > 0 ? longest : 60000) / 1000.0;
    if (hi < 2.0 * AGE_MIN_MS / 1000.0)
        hi = 2.0 * AGE_MIN_MS / 1000.0;
    gr_fig_event(f, AGE_MIN_MS / 1000.0, "the shortest age worth having: %s", secs(a, sizeof a, AGE_MIN_MS));
    int r = gr_fig_row(f, "the connection");
    if (age >= OFF_MS) {
        gr_fig_span_add(f, r, 0, hi, GR_FIG_WRONG, "for ever: no max_connection_age (cut here)");
        balance_caption(f, age, grace, longest, in->broken);
        return;
    }
    double at = (double)age / 1000.0;
    gr_fig_span_add(f, r, 0, at * (1 - AGE_JITTER), age < AGE_MIN_MS ? GR_FIG_WRONG : GR_FIG_GIVEN,
                    "max_connection_age %s", secs(a, sizeof a, age));
    gr_fig_span_add(f, r, at * (1 - AGE_JITTER), at * (1 + AGE_JITTER), GR_FIG_RAN, "+-10 %%");
    int g = gr_fig_row(f, "then its grace");
    if (grace >= OFF_MS)
        gr_fig_span_add(f, g, at, hi, GR_FIG_RAN, "infinite (cut here)");
    else
        gr_fig_span_add(f, g, at, at + (double)grace / 1000.0,
                        longest > 0 && grace < longest ? GR_FIG_WRONG : GR_FIG_GIVEN, "grace %s",
                        secs(a, sizeof a, grace));
    if (longest > 0)
        gr_fig_span_add(f, gr_fig_row(f, "the longest call"), at, at + (double)longest / 1000.0, GR_FIG_TRUTH,
                        "runs up to %s", secs(a, sizeof a, longest));
    balance_caption(f, age, grace, longest, in->broken);
}

void gr_config_figure(gr_figure *f, const char *exercise, const gr_config_fig_in *in)
{
    memset(f, 0, sizeof *f);
    if (!in->cfg)
        return;
    if (strcmp(exercise, "keepalive") == 0)
        keepalive_figure(f, in);
    else if (strcmp(exercise, "retry") == 0)
        retry_figure(f, in);
    else if (strcmp(exercise, "balance") == 0)
        balance_figure(f, in);
}
