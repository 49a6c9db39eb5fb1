/* rl_chancfg_rules: the checker. Walks a loaded config section by section,
 * judging each value on its own (names, types, ranges, the service config per
 * gRFC A6), then the rules that tie the two sides and the intermediary
 * together (keepalive against ping policy and idle timeouts, connection age
 * against deadlines). A rule that combines values stays silent when one of
 * them is already reported as invalid, so one mistake gives one finding. */
#include "rl_chancfg_int.h"

#include <float.h>
#include <string.h>
#include <strings.h>

/* The catalogue. Ids are stable: tests, the README and students' notes use
 * them. The severity is the usual one; a few rules downgrade to a warning
 * when the server's settings defuse them (stated in their summaries). */
static const rl_chancfg_rule g_rules[] = {
    {"schema.type", RL_CHANCFG_ERROR, "a section or field has the wrong JSON type"},
    {"schema.unknown-key", RL_CHANCFG_ERROR, "a key this format does not have (did-you-mean)"},
    {"schema.required", RL_CHANCFG_ERROR, "a required field is missing"},
    {"schema.range", RL_CHANCFG_ERROR, "a value of the intermediary or calls section is out of range"},
    {"schema.enum", RL_CHANCFG_ERROR, "a value is not one of the accepted words"},
    {"arg.unknown", RL_CHANCFG_ERROR, "not a gRPC 1.51 channel arg: gRPC would ignore it silently"},
    {"arg.macro-name", RL_CHANCFG_ERROR, "a C macro's name (or a guess from it) instead of the string gRPC reads"},
    {"arg.wrong-side", RL_CHANCFG_ERROR, "an arg only the other side reads: ignored where it is"},
    {"arg.not-configurable", RL_CHANCFG_ERROR, "an arg that carries a C object, or the service config as a string"},
    {"arg.type", RL_CHANCFG_ERROR, "an arg value of the wrong type (integers; booleans are 0 or 1)"},
    {"arg.range", RL_CHANCFG_ERROR, "an arg value outside what gRPC accepts (negative, beyond a C int)"},
    {"arg.deprecated", RL_CHANCFG_WARNING, "an arg that has no effect in gRPC 1.51"},
    {"keepalive.idle-timeout", RL_CHANCFG_ERROR, "no side pings more often than the intermediary's idle timeout"},
    {"keepalive.pings-without-data", RL_CHANCFG_ERROR, "the pinging side stops after max_pings_without_data pings on a quiet connection"},
    {"keepalive.idle-without-calls", RL_CHANCFG_ERROR, "nobody pings while no call runs, and the channel outlives the idle timeout"},
    {"keepalive.min-ping-interval", RL_CHANCFG_ERROR, "client keepalive_time below the server's min ping interval (warning if max_ping_strikes is 0)"},
    {"keepalive.permit-mismatch", RL_CHANCFG_ERROR, "client pings without calls, the server does not permit it (warning if max_ping_strikes is 0)"},
    {"keepalive.timeout-above-time", RL_CHANCFG_ERROR, "keepalive_timeout above keepalive_time"},
    {"keepalive.too-frequent", RL_CHANCFG_WARNING, "client keepalive_time below 10 s"},
    {"age.grace-below-deadline", RL_CHANCFG_ERROR, "max_connection_age_grace shorter than the longest declared deadline"},
    {"age.grace-unbounded", RL_CHANCFG_WARNING, "max_connection_age without a grace: one stuck call holds the old connection forever"},
    {"reconnect.backoff-order", RL_CHANCFG_ERROR, "initial reconnect backoff above the maximum"},
    {"sc.type", RL_CHANCFG_ERROR, "a service config field has the wrong JSON type"},
    {"sc.unknown-field", RL_CHANCFG_ERROR, "a service config field gRPC does not know: ignored silently (did-you-mean)"},
    {"sc.name-missing", RL_CHANCFG_ERROR, "a methodConfig without names applies to nothing"},
    {"sc.name-invalid", RL_CHANCFG_ERROR, "a name with a method but no service"},
    {"sc.duplicate-name", RL_CHANCFG_ERROR, "two method configs for the same name (gRPC rejects the config)"},
    {"sc.unknown-service", RL_CHANCFG_WARNING, "a service that relaylab.proto does not define"},
    {"sc.unknown-method", RL_CHANCFG_WARNING, "a method its relaylab.proto service does not have"},
    {"sc.duration", RL_CHANCFG_ERROR, "timeout or perAttemptRecvTimeout is not a proto3 duration > 0"},
    {"sc.quoted-number", RL_CHANCFG_WARNING, "a number written as a string (gRPC 1.51 takes it, others may not)"},
    {"sc.hedging-ignored", RL_CHANCFG_WARNING, "hedgingPolicy is not implemented by gRPC 1.51"},
    {"sc.lb-policy", RL_CHANCFG_ERROR, "an unknown loadBalancingPolicy (gRPC rejects the config)"},
    {"retry.disabled", RL_CHANCFG_ERROR, "a retryPolicy while grpc.enable_retries is 0: ignored"},
    {"retry.max-attempts", RL_CHANCFG_ERROR, "maxAttempts missing, not an integer, or below 2"},
    {"retry.max-attempts-clamped", RL_CHANCFG_WARNING, "maxAttempts above 5: gRPC clamps it to 5"},
    {"retry.initial-backoff", RL_CHANCFG_ERROR, "initialBackoff missing or not a duration >= 1 ms"},
    {"retry.max-backoff", RL_CHANCFG_ERROR, "maxBackoff missing or not a duration >= 1 ms"},
    {"retry.backoff-multiplier", RL_CHANCFG_ERROR, "backoffMultiplier missing or not > 0"},
    {"retry.backoff-order", RL_CHANCFG_WARNING, "maxBackoff below initialBackoff"},
    {"retry.status-codes", RL_CHANCFG_ERROR, "retryableStatusCodes missing, empty, or not status code names"},
    {"retry.non-retryable-code", RL_CHANCFG_ERROR, "a status code no retry can turn into success"},
    {"retry.risky-code", RL_CHANCFG_WARNING, "a status code that is retryable only for idempotent methods or with throttling"},
    {"retry.throttling", RL_CHANCFG_ERROR, "retryThrottling outside gRFC A6's limits"},
    {"retry.per-attempt-ignored", RL_CHANCFG_WARNING, "perAttemptRecvTimeout without grpc.experimental.enable_hedging: ignored"},
    {"grpc.rejected", RL_CHANCFG_ERROR, "gRPC itself refused the client args (reported by the CLI)"},
    {"world.ignored", RL_CHANCFG_WARNING, "the config declares a world (intermediary, call deadline, a server arg the platform fixes) other than the one it is judged in: ignored"},
};

const rl_chancfg_rule *rl_chancfg_rules(size_t *n)
{
    *n = sizeof(g_rules) / sizeof(g_rules[0]);
    return g_rules;
}

/* relaylab.proto's services and methods, to catch a name that silently never
 * matches (they are case-sensitive and need the package). */
typedef struct known_service {
    const char *name;
    const char *const *methods;
} known_service;
static const char *const baseline_methods[] = {"Lookup", "Work", "Fetch", NULL};
static const char *const relay_methods[] = {"Process", NULL};
static const char *const streamer_methods[] = {"Produce", NULL};
static const char *const observer_methods[] = {"Observe", "Reset", "SetFault", NULL};
static const known_service g_services[] = {
    {"relaylab.Baseline", baseline_methods},
    {"relaylab.Relay", relay_methods},
    {"relaylab.Streamer", streamer_methods},
    {"relaylab.Observer", observer_methods},
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define INF_MS INT32_MAX
#define NO_PING_WITHOUT_CALLS_MS 7200000 /* a server that does not permit
                                          * pings without calls allows one
                                          * per 2 hours then */

typedef struct ctx {
    const rl_chancfg *cfg;
    rl_chancfg_report *rep;
    int rc;                       /* first RL_ENOMEM, sticky */
    int64_t longest_deadline_ms;  /* from methodConfig timeouts and calls; 0 = none */
    char *first_retry_path;       /* path of the first retryPolicy, or NULL */
    bool has_throttling;
    char **names;                 /* "service/method" of methodConfig names seen */
    size_t nnames, capnames;
} ctx;

static void add(ctx *c, rl_chancfg_severity sev, const char *rule, const cc_buf *path,
                const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void add(ctx *c, rl_chancfg_severity sev, const char *rule, const cc_buf *path,
                const char *fmt, ...)
{
    cc_buf why;
    cc_buf_init(&why);
    va_list ap;
    va_start(ap, fmt);
    cc_buf_vprintf(&why, fmt, ap);
    va_end(ap);
    if (path->oom || why.oom || rl_chancfg_report_add(c->rep, sev, rule, cc_buf_str(path),
                                                      cc_buf_str(&why)) != 0)
        c->rc = RL_ENOMEM;
    cc_buf_fini(&why);
}

/* The same, with a user string quoted into the message at %s positions via
 * a pre-rendered buffer: callers render user text with cc_buf_user first. */
static const char *user(cc_buf *b, const char *s)
{
    cc_buf_init(b);
    cc_buf_user(b, s);
    return cc_buf_str(b);
}

static void path_set(cc_buf *p, const char *base, const char *key)
{
    cc_buf_init(p);
    cc_buf_puts(p, base);
    if (key)
        cc_buf_path_key(p, key);
}

static void path_arg(cc_buf *p, unsigned side, const char *name)
{
    path_set(p, side == CC_SIDE_CLIENT ? "$.client" : "$.server", name);
}

static const char *json_type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a fractional number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "?";
}

/* Reports |key| of an object at |base| as unknown, suggesting one of |known|. */
static void unknown_key(ctx *c, const char *rule, const char *base, const char *key,
                        const char *const *known, size_t nknown, const char *what)
{
    cc_buf p, u;
    path_set(&p, base, key);
    user(&u, key);
    const char *s = cc_suggest(key, known, nknown, sizeof(known[0]));
    if (s)
        add(c, RL_CHANCFG_ERROR, rule, &p, "%s is not %s; did you mean \"%s\"?", cc_buf_str(&u),
            what, s);
    else
        add(c, RL_CHANCFG_ERROR, rule, &p, "%s is not %s", cc_buf_str(&u), what);
    cc_buf_fini(&u);
    cc_buf_fini(&p);
}

/* ---- per-arg checks --------------------------------------------------- */

/* "GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS" ->
 * "grpc.http2.min_recv_ping_interval_without_data_ms": what people guess
 * the string is from the macro. */
static void guess_from_macro(const char *macro, char *out, size_t len)
{
    const char *m = macro;
    if (strncmp(m, "GRPC_ARG_", 9) == 0)
        m += 9;
    else if (strncmp(m, "GRPC_", 5) == 0)
        m += 5;
    size_t o = (size_t)snprintf(out, len, "grpc.");
    if (strncmp(m, "HTTP2_", 6) == 0) {
        o += (size_t)snprintf(out + o, len - o, "http2.");
        m += 6;
    }
    for (; *m && o + 1 < len; m++)
        out[o++] = (char)(*m >= 'A' && *m <= 'Z' ? *m - 'A' + 'a' : *m);
    out[o] = '\0';
}

/* Aliases people write that name a real arg under another string. */
static const struct {
    const char *wrong, *macro, *right;
} g_aliases[] = {
    {"grpc.max_message_length", "GRPC_ARG_MAX_MESSAGE_LENGTH", GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH},
};

static bool check_macro_name(ctx *c, unsigned side, const char *key)
{
    size_t n;
    const cc_argdef *t = cc_argdef_table(&n);
    const cc_argdef *hit = NULL;
    const char *macro = NULL;
    bool is_macro = false;
    for (size_t i = 0; i < n && !hit; i++) {
        char g[160];
        guess_from_macro(t[i].macro, g, sizeof(g));
        if (strcmp(key, t[i].macro) == 0) {
            hit = &t[i], macro = t[i].macro, is_macro = true;
        } else if (strcasecmp(key, g) == 0) {
            hit = &t[i], macro = t[i].macro;
        }
    }
    for (size_t i = 0; i < NELEM(g_aliases) && !hit; i++) {
        if (strcmp(key, g_aliases[i].wrong) == 0 || strcmp(key, g_aliases[i].macro) == 0) {
            hit = cc_argdef_find(g_aliases[i].right);
            macro = g_aliases[i].macro;
            is_macro = strcmp(key, g_aliases[i].macro) == 0;
        }
    }
    if (!hit)
        return false;
    cc_buf p, u;
    path_arg(&p, side, key);
    user(&u, key);
    const char *trap = "";
    if (strcmp(hit->name, GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS) == 0)
        trap = "; gRPC ignores unknown names silently, so the server would keep its 5-minute "
               "default and answer faster client pings with GOAWAY too_many_pings";
    else if (strcmp(hit->name, GRPC_ARG_HTTP2_MIN_SENT_PING_INTERVAL_WITHOUT_DATA_MS) == 0)
        trap = " (which has no effect in gRPC 1.51 anyway)";
    if (is_macro)
        add(c, RL_CHANCFG_ERROR, "arg.macro-name", &p,
            "%s is the C macro's name; the string gRPC reads is \"%s\"%s", cc_buf_str(&u),
            hit->name, trap);
    else
        add(c, RL_CHANCFG_ERROR, "arg.macro-name", &p,
            "%s is spelled after the C macro %s, but that macro's string is \"%s\"%s",
            cc_buf_str(&u), macro, hit->name, trap);
    cc_buf_fini(&u);
    cc_buf_fini(&p);
    return true;
}

static void check_arg(ctx *c, unsigned side, const char *key, const json_t *v)
{
    const char *sidename = side == CC_SIDE_CLIENT ? "client" : "server";
    const char *other = side == CC_SIDE_CLIENT ? "server" : "client";
    const cc_argdef *def = cc_argdef_find(key);
    cc_buf p, u;
    path_arg(&p, side, key);
    cc_buf_init(&u);
    if (!def) {
        if (check_macro_name(c, side, key))
            goto out;
        if (side == CC_SIDE_SERVER && strcmp(key, "service_config") == 0) {
            add(c, RL_CHANCFG_ERROR, "arg.wrong-side", &p,
                "a service config is the client's: gRPC servers do not read one");
            goto out;
        }
        size_t n;
        const cc_argdef *t = cc_argdef_table(&n);
        const char *s = cc_suggest(key, t, n, sizeof(t[0]));
        if (!s && side == CC_SIDE_CLIENT && cc_edit_distance(key, "service_config") <= 3)
            s = "service_config";
        user(&u, key);
        if (s)
            add(c, RL_CHANCFG_ERROR, "arg.unknown", &p,
                "%s is not a gRPC channel arg and gRPC ignores unknown names silently; did you "
                "mean \"%s\"?",
                cc_buf_str(&u), s);
        else
            add(c, RL_CHANCFG_ERROR, "arg.unknown", &p,
                "%s is not a gRPC 1.51 channel arg; gRPC would ignore it silently",
                cc_buf_str(&u));
        goto out;
    }
    if (def->type == CC_POINTER) {
        if (strcmp(def->name, GRPC_ARG_SERVICE_CONFIG) == 0)
            add(c, RL_CHANCFG_ERROR, "arg.not-configurable", &p,
                "write the service config as a JSON object under %s.service_config; the tool "
                "serializes it into this arg",
                sidename);
        else
            add(c, RL_CHANCFG_ERROR, "arg.not-configurable", &p,
                "%s carries a C object (or is for gRPC's tests): it cannot come from a file",
                def->name);
        goto out;
    }
    if (!(def->sides & side)) {
        add(c, RL_CHANCFG_ERROR, "arg.wrong-side", &p,
            "only %ss read %s: gRPC ignores it on the %s; move it to \"%s\"", other, def->name,
            sidename, other);
        goto out;
    }
    int64_t iv;
    if (cc_arg_value_ok(def, v, &iv)) {
        if (strcmp(def->name, GRPC_ARG_HTTP2_MIN_SENT_PING_INTERVAL_WITHOUT_DATA_MS) == 0)
            add(c, RL_CHANCFG_WARNING, "arg.deprecated", &p,
                "%s has no effect in gRPC 1.51 (grpc_types.h): keepalive pings are paced by "
                "grpc.keepalive_time_ms",
                def->name);
        goto out;
    }
    switch (def->type) {
    case CC_INT:
        if (!json_is_integer(v)) {
            const char *hint = json_is_string(v) ? " (write 60000, not \"60s\" or \"60000\")" : "";
            add(c, RL_CHANCFG_ERROR, "arg.type", &p, "must be an integer, not %s%s",
                json_type_name(v), hint);
        } else if (json_integer_value(v) < 0 && def->min >= 0) {
            add(c, RL_CHANCFG_ERROR, "arg.range", &p,
                "%lld is negative; %s takes %lld..%lld%s", (long long)json_integer_value(v),
                def->name, (long long)def->min, (long long)def->max,
                def->max == INT32_MAX ? " (2147483647 means infinite)" : "");
        } else if (json_integer_value(v) > INT32_MAX) {
            add(c, RL_CHANCFG_ERROR, "arg.range", &p,
                "%lld does not fit in a C int, which is what gRPC's integer args are "
                "(2147483647 means infinite)",
                (long long)json_integer_value(v));
        } else {
            add(c, RL_CHANCFG_ERROR, "arg.range", &p, "%lld is outside %lld..%lld for %s",
                (long long)json_integer_value(v), (long long)def->min, (long long)def->max,
                def->name);
        }
        break;
    case CC_BOOL:
        if (json_is_integer(v))
            add(c, RL_CHANCFG_ERROR, "arg.type", &p,
                "%lld is not a boolean: gRPC takes 0 or 1 (true/false are accepted here)",
                (long long)json_integer_value(v));
        else
            add(c, RL_CHANCFG_ERROR, "arg.type", &p, "must be 0 or 1 (or true/false), not %s",
                json_type_name(v));
        break;
    case CC_STRING:
        if (!json_is_string(v)) {
            add(c, RL_CHANCFG_ERROR, "arg.type", &p, "must be a string, not %s", json_type_name(v));
        } else {
            size_t nc = 0;
            cc_buf list;
            cc_buf_init(&list);
            for (const char *const *ch = def->choices; *ch; ch++, nc++)
                cc_buf_printf(&list, "%s%s", nc ? ", " : "", *ch);
            const char *s = cc_suggest(json_string_value(v), def->choices, nc, sizeof(char *));
            user(&u, json_string_value(v));
            add(c, RL_CHANCFG_ERROR, "arg.range", &p, "%s is not one of %s%s%s%s", cc_buf_str(&u),
                cc_buf_str(&list), s ? "; did you mean \"" : "", s ? s : "", s ? "\"?" : "");
            if (list.oom)
                c->rc = RL_ENOMEM;
            cc_buf_fini(&list);
        }
        break;
    case CC_POINTER:
        break;
    }
out:
    cc_buf_fini(&u);
    cc_buf_fini(&p);
}

/* ---- service config --------------------------------------------------- */

static void sc_type(ctx *c, const cc_buf *p, const char *want, const json_t *v)
{
    add(c, RL_CHANCFG_ERROR, "sc.type", p, "must be %s, not %s", want, json_type_name(v));
}

static void sc_unknown_fields(ctx *c, const cc_buf *base, const json_t *obj,
                              const char *const *known, size_t nknown, const char *where)
{
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)obj, key, v) {
        bool ok = false;
        for (size_t i = 0; i < nknown && !ok; i++)
            ok = strcmp(key, known[i]) == 0;
        if (ok)
            continue;
        char what[96];
        snprintf(what, sizeof(what), "a field of %s (gRPC ignores unknown fields silently)", where);
        unknown_key(c, "sc.unknown-field", cc_buf_str(base), key, known, nknown, what);
    }
}

/* A duration field: returns true with |*ms| set when valid; reports
 * otherwise under |rule|. |required| says whether absence is an error. */
static bool sc_duration(ctx *c, const json_t *obj, const cc_buf *base, const char *field,
                        const char *rule, bool required, bool positive, int64_t *ms)
{
    const json_t *v = json_object_get(obj, field);
    cc_buf p;
    path_set(&p, cc_buf_str(base), field);
    bool ok = false;
    if (!v) {
        if (required)
            add(c, RL_CHANCFG_ERROR, rule, &p, "%s is required (a duration such as \"0.1s\")",
                field);
    } else if (!json_is_string(v)) {
        add(c, RL_CHANCFG_ERROR, rule, &p,
            "must be a proto3 duration string such as \"0.1s\", not %s", json_type_name(v));
    } else {
        cc_duration d;
        const char *why;
        cc_buf u;
        user(&u, json_string_value(v));
        if (!cc_parse_duration(json_string_value(v), &d, &why)) {
            add(c, RL_CHANCFG_ERROR, rule, &p, "%s is not a proto3 duration: it %s",
                cc_buf_str(&u), why);
        } else if (positive && d.seconds == 0 && d.nanos == 0) {
            add(c, RL_CHANCFG_ERROR, rule, &p, "must be greater than 0");
        } else if (positive && cc_duration_ms(&d) == 0) {
            add(c, RL_CHANCFG_ERROR, rule, &p,
                "%s is below 1 ms: gRPC 1.51 keeps whole milliseconds, so it becomes 0 and "
                "gRPC rejects the config",
                cc_buf_str(&u));
        } else {
            *ms = cc_duration_ms(&d);
            ok = true;
        }
        cc_buf_fini(&u);
    }
    cc_buf_fini(&p);
    return ok;
}

/* Why each refused code cannot succeed on a retry (README has the table). */
static const char *non_retryable_why(int code)
{
    switch (code) {
    case 0: return "OK is success: there is nothing to retry";
    case 3: return "the request itself is invalid: every attempt gets the same answer";
    case 5: return "the entity does not exist: an attempt a few ms later finds the same";
    case 6: return "a retry cannot make it not exist, and the earlier attempt may be the one "
                   "that created it";
    case 7: return "the caller's permissions do not change between attempts";
    case 9: return "the system is not in the state the call needs; it must be fixed first, "
                   "not asked again";
    case 11: return "the request is past the valid range: the same request fails the same way";
    case 12: return "the server does not implement the method: no attempt will find it";
    case 15: return "unrecoverable data loss: retrying hides it instead of surfacing it";
    case 16: return "the same missing or bad credentials are sent again";
    default: return NULL;
    }
}

static const char *risky_why(ctx *c, int code)
{
    switch (code) {
    case 1: return "usually the caller's own cancellation, which ends the call anyway";
    case 2: return "an unknown error may come after the server did the work: retry only "
                   "idempotent methods";
    case 4: return "the deadline covers all attempts, so a retry runs on what is left, and "
                   "the first attempt may have done the work";
    case 8: return c->has_throttling ? NULL
                                     : "retrying an overloaded server adds load: add "
                                       "retryThrottling to cap it";
    case 10: return "a concurrency conflict: retry at the application level (read again, then "
                    "write), not the same request";
    case 13: return "a server bug or broken invariant: retrying repeats side effects and "
                    "rarely helps";
    default: return NULL;
    }
}

/* maxAttempts and backoffMultiplier: numbers, quoted numbers with a warning. */
static bool sc_number(ctx *c, const json_t *obj, const cc_buf *base, const char *field,
                      const char *rule, double *out)
{
    const json_t *v = json_object_get(obj, field);
    cc_buf p;
    path_set(&p, cc_buf_str(base), field);
    bool ok = false;
    if (!v) {
        add(c, RL_CHANCFG_ERROR, rule, &p, "%s is required", field);
    } else {
        int kind = cc_sc_number(v, out);
        if (kind == 0)
            add(c, RL_CHANCFG_ERROR, rule, &p, "must be a number, not %s", json_type_name(v));
        if (kind == 2)
            add(c, RL_CHANCFG_WARNING, "sc.quoted-number", &p,
                "a number written as a string: gRPC 1.51 accepts it, gRFC A6 and other gRPC "
                "implementations want a JSON number");
        ok = kind != 0;
    }
    cc_buf_fini(&p);
    return ok;
}

static bool hedging_enabled(const rl_chancfg *cfg)
{
    int64_t v;
    return cc_arg_int(cfg, CC_SIDE_CLIENT, GRPC_ARG_EXPERIMENTAL_ENABLE_HEDGING, &v) == CC_VALID &&
           v == 1;
}

static void check_status_codes(ctx *c, const json_t *rp, const cc_buf *base, bool may_be_empty)
{
    const json_t *codes = json_object_get(rp, "retryableStatusCodes");
    cc_buf p;
    path_set(&p, cc_buf_str(base), "retryableStatusCodes");
    if (!codes) {
        if (!may_be_empty)
            add(c, RL_CHANCFG_ERROR, "retry.status-codes", &p,
                "retryableStatusCodes is required: without it nothing is retried (gRPC "
                "rejects the config)");
    } else if (!json_is_array(codes)) {
        add(c, RL_CHANCFG_ERROR, "retry.status-codes", &p,
            "must be an array of status code names such as [\"UNAVAILABLE\"], not %s",
            json_type_name(codes));
    } else if (json_array_size(codes) == 0 && !may_be_empty) {
        add(c, RL_CHANCFG_ERROR, "retry.status-codes", &p,
            "is empty: nothing would be retried (gRPC rejects the config)");
    }
    size_t i;
    const json_t *e;
    if (json_is_array(codes)) {
        json_array_foreach((json_t *)codes, i, e) {
            cc_buf ep, u;
            cc_buf_init(&ep);
            cc_buf_printf(&ep, "%s[%zu]", cc_buf_str(&p), i);
            cc_buf_init(&u);
            if (json_is_integer(e)) {
                const char *name = cc_status_name((int)json_integer_value(e));
                if (name && json_integer_value(e) >= 0)
                    add(c, RL_CHANCFG_ERROR, "retry.status-codes", &ep,
                        "%lld is %s, but gRPC 1.51 takes only names here: write \"%s\"",
                        (long long)json_integer_value(e), name, name);
                else
                    add(c, RL_CHANCFG_ERROR, "retry.status-codes", &ep,
                        "%lld is not a status code, and gRPC 1.51 takes only names here",
                        (long long)json_integer_value(e));
            } else if (!json_is_string(e)) {
                add(c, RL_CHANCFG_ERROR, "retry.status-codes", &ep,
                    "must be a status code name such as \"UNAVAILABLE\", not %s",
                    json_type_name(e));
            } else {
                int code = cc_status_from_name(json_string_value(e));
                user(&u, json_string_value(e));
                if (code < 0) {
                    const char *s =
                        cc_suggest(json_string_value(e), cc_status_names, 17, sizeof(char *));
                    add(c, RL_CHANCFG_ERROR, "retry.status-codes", &ep,
                        "%s is not a status code name (they are upper case, e.g. "
                        "\"UNAVAILABLE\")%s%s%s",
                        cc_buf_str(&u), s ? "; did you mean \"" : "", s ? s : "",
                        s ? "\"?" : "");
                } else if (non_retryable_why(code)) {
                    add(c, RL_CHANCFG_ERROR, "retry.non-retryable-code", &ep, "%s: %s",
                        cc_status_names[code], non_retryable_why(code));
                } else if (risky_why(c, code)) {
                    add(c, RL_CHANCFG_WARNING, "retry.risky-code", &ep, "%s: %s",
                        cc_status_names[code], risky_why(c, code));
                }
            }
            cc_buf_fini(&u);
            cc_buf_fini(&ep);
        }
    }
    cc_buf_fini(&p);
}

static const char *const retry_fields[] = {"maxAttempts", "initialBackoff", "maxBackoff",
                                           "backoffMultiplier", "retryableStatusCodes",
                                           "perAttemptRecvTimeout"};

static void check_retry_policy(ctx *c, const json_t *rp, const cc_buf *base)
{
    if (!json_is_object(rp)) {
        sc_type(c, base, "an object", rp);
        return;
    }
    if (!c->first_retry_path) {
        c->first_retry_path = cc_strdup(cc_buf_str(base));
        if (!c->first_retry_path)
            c->rc = RL_ENOMEM;
    }
    sc_unknown_fields(c, base, rp, retry_fields, NELEM(retry_fields), "retryPolicy");

    double d;
    cc_buf p;
    path_set(&p, cc_buf_str(base), "maxAttempts");
    if (sc_number(c, rp, base, "maxAttempts", "retry.max-attempts", &d)) {
        if (!cc_is_integral(d))
            add(c, RL_CHANCFG_ERROR, "retry.max-attempts", &p,
                "%g is not an integer: it counts attempts, the first one included", d);
        else if (d < 2)
            add(c, RL_CHANCFG_ERROR, "retry.max-attempts", &p,
                "%g must be at least 2: it counts the first attempt, so 1 means no retry "
                "(gRPC rejects the config)",
                d);
        else if (d > 5)
            add(c, RL_CHANCFG_WARNING, "retry.max-attempts-clamped", &p,
                "%g is above 5: gRPC clamps it to 5 (gRFC A6), so the extra attempts never "
                "happen",
                d);
    }
    cc_buf_fini(&p);

    int64_t ib = 0, mb = 0;
    bool ib_ok = sc_duration(c, rp, base, "initialBackoff", "retry.initial-backoff", true, true, &ib);
    bool mb_ok = sc_duration(c, rp, base, "maxBackoff", "retry.max-backoff", true, true, &mb);
    if (ib_ok && mb_ok && mb < ib) {
        path_set(&p, cc_buf_str(base), "maxBackoff");
        add(c, RL_CHANCFG_WARNING, "retry.backoff-order", &p,
            "maxBackoff %lld ms is below initialBackoff %lld ms: every wait after the first is "
            "capped at maxBackoff",
            (long long)mb, (long long)ib);
        cc_buf_fini(&p);
    }

    path_set(&p, cc_buf_str(base), "backoffMultiplier");
    /* gRPC reads it into a float: 1e-50 is 0 there. */
    if (sc_number(c, rp, base, "backoffMultiplier", "retry.backoff-multiplier", &d) &&
        !(d >= FLT_MIN))
        add(c, RL_CHANCFG_ERROR, "retry.backoff-multiplier", &p,
            "%g must be greater than 0 (as a float): it multiplies the backoff after each "
            "attempt",
            d);
    cc_buf_fini(&p);

    int64_t pt;
    bool has_pt = json_object_get(rp, "perAttemptRecvTimeout") != NULL;
    bool hedging = hedging_enabled(c->cfg);
    if (has_pt) {
        path_set(&p, cc_buf_str(base), "perAttemptRecvTimeout");
        if (sc_duration(c, rp, base, "perAttemptRecvTimeout", "sc.duration", false, true, &pt) &&
            !hedging)
            add(c, RL_CHANCFG_WARNING, "retry.per-attempt-ignored", &p,
                "gRPC 1.51 reads perAttemptRecvTimeout only with grpc.experimental.enable_hedging "
                "= 1 on the client; without it this field is ignored");
        cc_buf_fini(&p);
    }
    check_status_codes(c, rp, base, has_pt && hedging);
}

static void check_throttling(ctx *c, const json_t *t, const cc_buf *base)
{
    static const char *const fields[] = {"maxTokens", "tokenRatio"};
    if (!json_is_object(t)) {
        sc_type(c, base, "an object", t);
        return;
    }
    c->has_throttling = true;
    sc_unknown_fields(c, base, t, fields, NELEM(fields), "retryThrottling");
    double d;
    cc_buf p;
    path_set(&p, cc_buf_str(base), "maxTokens");
    if (sc_number(c, t, base, "maxTokens", "retry.throttling", &d)) {
        if (!cc_is_integral(d) || d <= 0 || d > 1000)
            add(c, RL_CHANCFG_ERROR, "retry.throttling", &p,
                "%g must be an integer in 1..1000 (gRFC A6): the token bucket's size", d);
    }
    cc_buf_fini(&p);
    path_set(&p, cc_buf_str(base), "tokenRatio");
    if (sc_number(c, t, base, "tokenRatio", "retry.throttling", &d) && !(d >= 0.001))
        add(c, RL_CHANCFG_ERROR, "retry.throttling", &p,
            "%g must be at least 0.001: gRPC keeps 3 decimals, so smaller ratios become 0 and "
            "gRPC rejects the config",
            d);
    cc_buf_fini(&p);
}

static bool remember_name(ctx *c, const char *key)
{
    for (size_t i = 0; i < c->nnames; i++)
        if (strcmp(c->names[i], key) == 0)
            return false;
    if (c->nnames == c->capnames) {
        size_t cap = c->capnames ? c->capnames * 2 : 8;
        char **n = cc_malloc(cap * sizeof(*n));
        if (!n) {
            c->rc = RL_ENOMEM;
            return true;
        }
        if (c->nnames)
            memcpy(n, c->names, c->nnames * sizeof(*n));
        cc_free(c->names);
        c->names = n;
        c->capnames = cap;
    }
    char *k = cc_strdup(key);
    if (!k) {
        c->rc = RL_ENOMEM;
        return true;
    }
    c->names[c->nnames++] = k;
    return true;
}

static void check_known_name(ctx *c, const cc_buf *p, const char *service, const char *method)
{
    const known_service *ks = NULL;
    for (size_t i = 0; i < NELEM(g_services); i++)
        if (strcmp(g_services[i].name, service) == 0)
            ks = &g_services[i];
    cc_buf u;
    user(&u, service);
    if (!ks) {
        const char *s = cc_suggest(service, g_services, NELEM(g_services), sizeof(g_services[0]));
        /* "Baseline" for "relaylab.Baseline": the package is part of the name. */
        for (size_t i = 0; i < NELEM(g_services) && !s; i++)
            if (strcasecmp(g_services[i].name + 9, service) == 0)
                s = g_services[i].name;
        add(c, RL_CHANCFG_WARNING, "sc.unknown-service", p,
            "%s is not a service of relaylab.proto (names are case-sensitive and include the "
            "package), so this config never applies%s%s%s",
            cc_buf_str(&u), s ? "; did you mean \"" : "", s ? s : "", s ? "\"?" : "");
    } else if (method && *method) {
        size_t n = 0;
        bool found = false;
        for (; ks->methods[n]; n++)
            found |= strcmp(ks->methods[n], method) == 0;
        if (!found) {
            const char *s = cc_suggest(method, ks->methods, n, sizeof(char *));
            cc_buf_fini(&u);
            user(&u, method);
            add(c, RL_CHANCFG_WARNING, "sc.unknown-method", p,
                "%s is not a method of %s, so this config never applies%s%s%s", cc_buf_str(&u),
                ks->name, s ? "; did you mean \"" : "", s ? s : "", s ? "\"?" : "");
        }
    }
    cc_buf_fini(&u);
}

static void check_names(ctx *c, const json_t *mc, const cc_buf *base)
{
    static const char *const fields[] = {"service", "method"};
    const json_t *names = json_object_get(mc, "name");
    cc_buf p;
    path_set(&p, cc_buf_str(base), "name");
    if (!names || (json_is_array(names) && json_array_size(names) == 0)) {
        add(c, RL_CHANCFG_ERROR, "sc.name-missing", &p,
            "a methodConfig without names applies to no method (use [{}] for every method)");
    } else if (!json_is_array(names)) {
        sc_type(c, &p, "an array of {\"service\", \"method\"} objects", names);
    } else {
        size_t i;
        const json_t *n;
        json_array_foreach((json_t *)names, i, n) {
            cc_buf np;
            cc_buf_init(&np);
            cc_buf_printf(&np, "%s[%zu]", cc_buf_str(&p), i);
            const json_t *sv = json_object_get(n, "service");
            const json_t *mv = json_object_get(n, "method");
            if (!json_is_object(n)) {
                sc_type(c, &np, "an object", n);
            } else if (sv && !json_is_string(sv)) {
                cc_buf sp;
                path_set(&sp, cc_buf_str(&np), "service");
                sc_type(c, &sp, "a string", sv);
                cc_buf_fini(&sp);
            } else if (mv && !json_is_string(mv)) {
                cc_buf mp;
                path_set(&mp, cc_buf_str(&np), "method");
                sc_type(c, &mp, "a string", mv);
                cc_buf_fini(&mp);
            } else {
                sc_unknown_fields(c, &np, n, fields, NELEM(fields), "a methodConfig name");
                const char *s = sv ? json_string_value(sv) : "";
                const char *m = mv ? json_string_value(mv) : "";
                if (!*s && *m) {
                    add(c, RL_CHANCFG_ERROR, "sc.name-invalid", &np,
                        "a method without its service matches nothing (gRPC rejects the config); "
                        "add \"service\": \"relaylab.Baseline\" or similar");
                } else {
                    cc_buf key;
                    cc_buf_init(&key);
                    cc_buf_printf(&key, "/%s/%s", s, m);
                    if (!key.oom && !remember_name(c, cc_buf_str(&key)))
                        add(c, RL_CHANCFG_ERROR, "sc.duplicate-name", &np,
                            "%s is named by an earlier methodConfig too (gRPC rejects the "
                            "config: which one applies would be ambiguous)",
                            *s ? "this service/method" : "the default {}");
                    if (key.oom)
                        c->rc = RL_ENOMEM;
                    cc_buf_fini(&key);
                    if (*s)
                        check_known_name(c, &np, s, m);
                }
            }
            cc_buf_fini(&np);
        }
    }
    cc_buf_fini(&p);
}

static const char *const mc_fields[] = {"name", "timeout", "waitForReady", "maxRequestMessageBytes",
                                        "maxResponseMessageBytes", "retryPolicy", "hedgingPolicy"};

static void check_method_config(ctx *c, const json_t *mc, const cc_buf *base)
{
    if (!json_is_object(mc)) {
        sc_type(c, base, "an object", mc);
        return;
    }
    sc_unknown_fields(c, base, mc, mc_fields, NELEM(mc_fields), "methodConfig");
    check_names(c, mc, base);
    int64_t ms;
    if (sc_duration(c, mc, base, "timeout", "sc.duration", false, true, &ms) &&
        ms > c->longest_deadline_ms)
        c->longest_deadline_ms = ms;
    const json_t *v;
    cc_buf p;
    if ((v = json_object_get(mc, "waitForReady")) && !json_is_boolean(v)) {
        path_set(&p, cc_buf_str(base), "waitForReady");
        sc_type(c, &p, "true or false", v);
        cc_buf_fini(&p);
    }
    static const char *const sizes[] = {"maxRequestMessageBytes", "maxResponseMessageBytes"};
    for (size_t i = 0; i < NELEM(sizes); i++) {
        double d;
        if (!(v = json_object_get(mc, sizes[i])))
            continue;
        path_set(&p, cc_buf_str(base), sizes[i]);
        int kind = cc_sc_number(v, &d);
        if (kind == 0 || d < 0 || !cc_is_integral(d))
            sc_type(c, &p, "a non-negative integer", v);
        else if (kind == 2)
            add(c, RL_CHANCFG_WARNING, "sc.quoted-number", &p,
                "a number written as a string: gRPC 1.51 accepts it, other gRPC implementations "
                "may not");
        cc_buf_fini(&p);
    }
    if ((v = json_object_get(mc, "retryPolicy"))) {
        path_set(&p, cc_buf_str(base), "retryPolicy");
        check_retry_policy(c, v, &p);
        cc_buf_fini(&p);
    }
    if ((v = json_object_get(mc, "hedgingPolicy"))) {
        path_set(&p, cc_buf_str(base), "hedgingPolicy");
        add(c, RL_CHANCFG_WARNING, "sc.hedging-ignored", &p,
            "gRPC 1.51 does not implement hedging: this policy is ignored%s",
            json_object_get(mc, "retryPolicy") ? " (and gRFC A6 forbids it next to a retryPolicy)"
                                               : "");
        cc_buf_fini(&p);
    }
}

static const char *const sc_fields[] = {"methodConfig", "retryThrottling", "loadBalancingPolicy",
                                        "loadBalancingConfig", "healthCheckConfig"};

static void check_service_config(ctx *c, const json_t *sc)
{
    cc_buf base;
    path_set(&base, "$.client.service_config", NULL);
    if (!json_is_object(sc)) {
        if (json_is_string(sc))
            add(c, RL_CHANCFG_ERROR, "sc.type", &base,
                "write the service config as a JSON object, not a string; the tool serializes "
                "it for gRPC");
        else
            sc_type(c, &base, "an object", sc);
        cc_buf_fini(&base);
        return;
    }
    sc_unknown_fields(c, &base, sc, sc_fields, NELEM(sc_fields), "a service config");
    const json_t *v;
    cc_buf p;
    /* Throttling first: it decides whether RESOURCE_EXHAUSTED is risky. */
    if ((v = json_object_get(sc, "retryThrottling"))) {
        path_set(&p, cc_buf_str(&base), "retryThrottling");
        check_throttling(c, v, &p);
        cc_buf_fini(&p);
    }
    if ((v = json_object_get(sc, "loadBalancingPolicy"))) {
        path_set(&p, cc_buf_str(&base), "loadBalancingPolicy");
        static const char *const lb[] = {"pick_first", "round_robin", "grpclb"};
        bool ok = false;
        for (size_t i = 0; i < NELEM(lb) && json_is_string(v); i++)
            ok |= strcmp(lb[i], json_string_value(v)) == 0;
        if (!json_is_string(v)) {
            sc_type(c, &p, "a string", v);
        } else if (!ok) {
            cc_buf u;
            user(&u, json_string_value(v));
            const char *s = cc_suggest(json_string_value(v), lb, NELEM(lb), sizeof(char *));
            add(c, RL_CHANCFG_ERROR, "sc.lb-policy", &p,
                "%s is not a load-balancing policy of gRPC 1.51 (pick_first, round_robin, "
                "grpclb)%s%s%s",
                cc_buf_str(&u), s ? "; did you mean \"" : "", s ? s : "", s ? "\"?" : "");
            cc_buf_fini(&u);
        }
        cc_buf_fini(&p);
    }
    if ((v = json_object_get(sc, "loadBalancingConfig")) && !json_is_array(v)) {
        path_set(&p, cc_buf_str(&base), "loadBalancingConfig");
        sc_type(c, &p, "an array of {policy: config} objects", v);
        cc_buf_fini(&p);
    }
    if ((v = json_object_get(sc, "healthCheckConfig")) && !json_is_object(v)) {
        path_set(&p, cc_buf_str(&base), "healthCheckConfig");
        sc_type(c, &p, "an object", v);
        cc_buf_fini(&p);
    }
    if ((v = json_object_get(sc, "methodConfig"))) {
        path_set(&p, cc_buf_str(&base), "methodConfig");
        if (!json_is_array(v)) {
            sc_type(c, &p, "an array", v);
        } else {
            size_t i;
            const json_t *mc;
            json_array_foreach((json_t *)v, i, mc) {
                cc_buf mp;
                cc_buf_init(&mp);
                cc_buf_printf(&mp, "%s[%zu]", cc_buf_str(&p), i);
                check_method_config(c, mc, &mp);
                cc_buf_fini(&mp);
            }
        }
        cc_buf_fini(&p);
    }
    cc_buf_fini(&base);
}

/* ---- sections ---------------------------------------------------------- */

static void check_args_section(ctx *c, unsigned side)
{
    const char *name = side == CC_SIDE_CLIENT ? "client" : "server";
    const json_t *sec = json_object_get(c->cfg->root, name);
    if (!sec)
        return;
    cc_buf p;
    path_set(&p, "$", name);
    if (!json_is_object(sec)) {
        add(c, RL_CHANCFG_ERROR, "schema.type", &p,
            "must be an object of channel args, not %s", json_type_name(sec));
        cc_buf_fini(&p);
        return;
    }
    cc_buf_fini(&p);
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)sec, key, v) {
        if (side == CC_SIDE_CLIENT && strcmp(key, "service_config") == 0)
            check_service_config(c, v);
        else
            check_arg(c, side, key, v);
    }
}

static const char *const intermediary_kinds[] = {"nat", "l4-lb", "l7-proxy", "firewall"};

static void check_positive_ms(ctx *c, const json_t *obj, const char *base, const char *field,
                              bool required)
{
    const json_t *v = json_object_get(obj, field);
    cc_buf p;
    path_set(&p, base, field);
    if (!v) {
        if (required)
            add(c, RL_CHANCFG_ERROR, "schema.required", &p, "%s is required (milliseconds)",
                field);
    } else if (!json_is_integer(v)) {
        add(c, RL_CHANCFG_ERROR, "schema.type", &p, "must be an integer of milliseconds, not %s",
            json_type_name(v));
    } else if (json_integer_value(v) <= 0 || json_integer_value(v) > INT32_MAX) {
        add(c, RL_CHANCFG_ERROR, "schema.range", &p, "%lld must be in 1..2147483647 ms",
            (long long)json_integer_value(v));
    }
    cc_buf_fini(&p);
}

static void check_intermediary(ctx *c, const json_t *im)
{
    static const char *const fields[] = {"idle_timeout_ms", "kind", "description"};
    cc_buf p;
    if (!json_is_object(im)) {
        path_set(&p, "$.intermediary", NULL);
        add(c, RL_CHANCFG_ERROR, "schema.type", &p,
            "must be an object such as {\"idle_timeout_ms\": 350000, \"kind\": \"nat\"}, not %s",
            json_type_name(im));
        cc_buf_fini(&p);
        return;
    }
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)im, key, v) {
        bool ok = false;
        for (size_t i = 0; i < NELEM(fields); i++)
            ok |= strcmp(key, fields[i]) == 0;
        if (!ok)
            unknown_key(c, "schema.unknown-key", "$.intermediary", key, fields, NELEM(fields),
                        "a field of intermediary");
    }
    check_positive_ms(c, im, "$.intermediary", "idle_timeout_ms", true);
    if ((v = json_object_get(im, "kind"))) {
        path_set(&p, "$.intermediary", "kind");
        bool ok = false;
        for (size_t i = 0; i < NELEM(intermediary_kinds) && json_is_string(v); i++)
            ok |= strcmp(intermediary_kinds[i], json_string_value(v)) == 0;
        if (!json_is_string(v)) {
            add(c, RL_CHANCFG_ERROR, "schema.type", &p, "must be a string, not %s",
                json_type_name(v));
        } else if (!ok) {
            cc_buf u;
            user(&u, json_string_value(v));
            const char *s = cc_suggest(json_string_value(v), intermediary_kinds,
                                       NELEM(intermediary_kinds), sizeof(char *));
            add(c, RL_CHANCFG_ERROR, "schema.enum", &p,
                "%s is not one of nat, l4-lb, l7-proxy, firewall%s%s%s", cc_buf_str(&u),
                s ? "; did you mean \"" : "", s ? s : "", s ? "\"?" : "");
            cc_buf_fini(&u);
        }
        cc_buf_fini(&p);
    }
    if ((v = json_object_get(im, "description")) && !json_is_string(v)) {
        path_set(&p, "$.intermediary", "description");
        add(c, RL_CHANCFG_ERROR, "schema.type", &p, "must be a string, not %s", json_type_name(v));
        cc_buf_fini(&p);
    }
}

static void check_calls(ctx *c, const json_t *calls)
{
    static const char *const fields[] = {"longest_deadline_ms"};
    cc_buf p;
    if (!json_is_object(calls)) {
        path_set(&p, "$.calls", NULL);
        add(c, RL_CHANCFG_ERROR, "schema.type", &p,
            "must be an object such as {\"longest_deadline_ms\": 30000}, not %s",
            json_type_name(calls));
        cc_buf_fini(&p);
        return;
    }
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)calls, key, v) {
        if (strcmp(key, fields[0]) != 0)
            unknown_key(c, "schema.unknown-key", "$.calls", key, fields, NELEM(fields),
                        "a field of calls");
    }
    check_positive_ms(c, calls, "$.calls", "longest_deadline_ms", false);
    v = json_object_get(calls, "longest_deadline_ms");
    if (json_is_integer(v) && json_integer_value(v) > c->longest_deadline_ms &&
        json_integer_value(v) <= INT32_MAX)
        c->longest_deadline_ms = json_integer_value(v);
}

/* ---- rules across values ---------------------------------------------- */

typedef struct side_vals {
    cc_state kt_s, to_s, permit_s, mpwd_s;
    int64_t kt, to, permit, mpwd;
} side_vals;

static void read_side(const rl_chancfg *cfg, unsigned side, side_vals *v)
{
    v->kt_s = cc_arg_int(cfg, side, GRPC_ARG_KEEPALIVE_TIME_MS, &v->kt);
    v->to_s = cc_arg_int(cfg, side, GRPC_ARG_KEEPALIVE_TIMEOUT_MS, &v->to);
    v->permit_s = cc_arg_int(cfg, side, GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, &v->permit);
    v->mpwd_s = cc_arg_int(cfg, side, GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, &v->mpwd);
}

static void ms_text(char *buf, size_t len, int64_t ms)
{
    if (ms >= INF_MS)
        snprintf(buf, len, "off");
    else
        snprintf(buf, len, "%lld ms", (long long)ms);
}

static void check_timeout_vs_time(ctx *c, unsigned side, const side_vals *v)
{
    if (v->kt_s == CC_INVALID || v->to_s == CC_INVALID || v->kt >= INF_MS)
        return;
    if (v->kt_s == CC_ABSENT && v->to_s == CC_ABSENT)
        return; /* gRPC's own defaults (2 h / 20 s) */
    if (v->to <= v->kt)
        return;
    cc_buf p;
    path_arg(&p, side, GRPC_ARG_KEEPALIVE_TIMEOUT_MS);
    add(c, RL_CHANCFG_ERROR, "keepalive.timeout-above-time", &p,
        "%s keepalive_timeout %lld ms%s is above keepalive_time %lld ms: an unanswered ping "
        "is already as late as the next one would be, so a dead peer is noticed only after "
        "%lld ms",
        side == CC_SIDE_CLIENT ? "client" : "server", (long long)v->to,
        v->to_s == CC_ABSENT ? " (gRPC's default)" : "", (long long)v->kt,
        (long long)(v->kt + v->to));
    cc_buf_fini(&p);
}

static void check_keepalive(ctx *c)
{
    side_vals cl, sv;
    read_side(c->cfg, CC_SIDE_CLIENT, &cl);
    read_side(c->cfg, CC_SIDE_SERVER, &sv);
    int64_t min_int, strikes, client_idle;
    cc_state min_s = cc_arg_int(c->cfg, CC_SIDE_SERVER,
                                GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, &min_int);
    cc_state strikes_s = cc_arg_int(c->cfg, CC_SIDE_SERVER, GRPC_ARG_HTTP2_MAX_PING_STRIKES, &strikes);
    cc_state idle_s = cc_arg_int(c->cfg, CC_SIDE_CLIENT, GRPC_ARG_CLIENT_IDLE_TIMEOUT_MS, &client_idle);
    cc_buf p;
    char a[32], b[32];

    check_timeout_vs_time(c, CC_SIDE_CLIENT, &cl);
    check_timeout_vs_time(c, CC_SIDE_SERVER, &sv);

    bool client_pings = cl.kt_s == CC_VALID && cl.kt < INF_MS;
    /* A server with max_ping_strikes 0 bears any number of early pings: the
     * mismatch then costs nothing but the server's patience. */
    rl_chancfg_severity strike_sev = strikes_s == CC_VALID && strikes == 0 ? RL_CHANCFG_WARNING
                                                                           : RL_CHANCFG_ERROR;
    if (client_pings && cl.kt < 10000) {
        path_arg(&p, CC_SIDE_CLIENT, GRPC_ARG_KEEPALIVE_TIME_MS);
        add(c, RL_CHANCFG_WARNING, "keepalive.too-frequent", &p,
            "a ping every %lld ms from every client loads the servers; gRPC's keepalive guide "
            "advises no less than 10 s (grpc-java raises anything lower to 10 s)",
            (long long)cl.kt);
        cc_buf_fini(&p);
    }
    if (client_pings && min_s != CC_INVALID && strikes_s != CC_INVALID && cl.kt < min_int) {
        path_arg(&p, CC_SIDE_CLIENT, GRPC_ARG_KEEPALIVE_TIME_MS);
        if (strike_sev == RL_CHANCFG_ERROR)
            add(c, strike_sev, "keepalive.min-ping-interval", &p,
                "client pings every %lld ms but the server allows one ping per %lld ms%s "
                "(grpc.http2.min_ping_interval_without_data_ms): each early ping is a strike, "
                "and after more than %lld strikes the server sends GOAWAY ENHANCE_YOUR_CALM "
                "\"too_many_pings\"",
                (long long)cl.kt, (long long)min_int,
                min_s == CC_ABSENT ? " (gRPC's default, 5 min)" : "", (long long)strikes);
        else
            add(c, strike_sev, "keepalive.min-ping-interval", &p,
                "client pings every %lld ms but the server allows one ping per %lld ms%s; "
                "max_ping_strikes 0 makes the server bear it, but the two sides disagree",
                (long long)cl.kt, (long long)min_int,
                min_s == CC_ABSENT ? " (gRPC's default, 5 min)" : "");
        cc_buf_fini(&p);
    }
    if (client_pings && cl.permit_s == CC_VALID && cl.permit == 1 && sv.permit_s != CC_INVALID &&
        strikes_s != CC_INVALID && sv.permit == 0 && cl.kt < NO_PING_WITHOUT_CALLS_MS) {
        path_arg(&p, CC_SIDE_SERVER, GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS);
        add(c, strike_sev, "keepalive.permit-mismatch", &p,
            "the client pings every %lld ms even with no call (permit_without_calls 1), but the "
            "server does not permit that%s: with no call it allows one ping per 2 hours, so "
            "these pings are strikes and end in GOAWAY \"too_many_pings\"",
            (long long)cl.kt, sv.permit_s == CC_ABSENT ? " (gRPC's default)" : "");
        cc_buf_fini(&p);
    }

    int64_t idle;
    const char *kind;
    if (rl_chancfg_intermediary(c->cfg, &idle, &kind) != 0 || idle > INT32_MAX)
        return;
    if (cl.kt_s == CC_INVALID || sv.kt_s == CC_INVALID)
        return;
    bool cand_c = cl.kt < idle, cand_s = sv.kt < idle;
    if (!cand_c && !cand_s) {
        ms_text(a, sizeof(a), cl.kt);
        ms_text(b, sizeof(b), sv.kt);
        path_arg(&p, CC_SIDE_CLIENT, GRPC_ARG_KEEPALIVE_TIME_MS);
        add(c, RL_CHANCFG_ERROR, "keepalive.idle-timeout", &p,
            "client keepalive_time is %s%s and the server's %s: neither is below the %s's idle "
            "timeout %lld ms, so it drops a quiet connection without a word and the next call "
            "waits on a dead connection",
            a, cl.kt_s == CC_ABSENT ? " (gRPC's default)" : "", b, kind, (long long)idle);
        cc_buf_fini(&p);
        return;
    }
    if ((cand_c && cl.mpwd_s == CC_INVALID) || (cand_s && sv.mpwd_s == CC_INVALID))
        return;
    bool work_c = cand_c && cl.mpwd == 0, work_s = cand_s && sv.mpwd == 0;
    if (!work_c && !work_s) {
        unsigned side = cand_c ? CC_SIDE_CLIENT : CC_SIDE_SERVER;
        const side_vals *v = cand_c ? &cl : &sv;
        path_arg(&p, side, GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA);
        add(c, RL_CHANCFG_ERROR, "keepalive.pings-without-data", &p,
            "after %lld pings with no data sent, gRPC holds further pings back (\"too many "
            "recent pings\"), so a quiet connection goes silent and the %s drops it after "
            "%lld ms; set 0 (no limit)%s",
            (long long)v->mpwd, kind, (long long)idle,
            v->mpwd_s == CC_ABSENT ? " - 2 is gRPC's default" : "");
        cc_buf_fini(&p);
        return;
    }
    if ((work_c && cl.permit_s == CC_INVALID) || (work_s && sv.permit_s == CC_INVALID) ||
        idle_s == CC_INVALID)
        return;
    bool idle_ok = (work_c && cl.permit == 1) || (work_s && sv.permit == 1) || client_idle < idle;
    if (!idle_ok) {
        unsigned side = work_c ? CC_SIDE_CLIENT : CC_SIDE_SERVER;
        path_arg(&p, side, GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS);
        add(c, RL_CHANCFG_ERROR, "keepalive.idle-without-calls", &p,
            "with no call in flight the %s sends no keepalive pings (permit_without_calls 0), "
            "and the client keeps an idle connection for %lld ms (grpc.client_idle_timeout_ms): "
            "the %s drops it after %lld ms first; permit pings without calls on both sides, or "
            "set client_idle_timeout_ms below %lld",
            side == CC_SIDE_CLIENT ? "client" : "server", (long long)client_idle, kind,
            (long long)idle, (long long)idle);
        cc_buf_fini(&p);
    }
}

static void check_age(ctx *c)
{
    int64_t age, grace;
    cc_state age_s = cc_arg_int(c->cfg, CC_SIDE_SERVER, GRPC_ARG_MAX_CONNECTION_AGE_MS, &age);
    cc_state grace_s =
        cc_arg_int(c->cfg, CC_SIDE_SERVER, GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS, &grace);
    if (age_s != CC_VALID || age >= INF_MS || grace_s == CC_INVALID)
        return;
    cc_buf p;
    path_arg(&p, CC_SIDE_SERVER, GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS);
    if (grace_s == CC_ABSENT)
        add(c, RL_CHANCFG_WARNING, "age.grace-unbounded", &p,
            "max_connection_age is %lld ms but no grace is set (gRPC's default is infinite): "
            "one stuck call keeps the aged connection open forever; set the grace to the "
            "longest deadline",
            (long long)age);
    else if (c->longest_deadline_ms > 0 && grace < c->longest_deadline_ms)
        add(c, RL_CHANCFG_ERROR, "age.grace-below-deadline", &p,
            "calls may run %lld ms (the longest declared deadline), but after "
            "max_connection_age the server waits only %lld ms before closing: calls still "
            "running then fail UNAVAILABLE",
            (long long)c->longest_deadline_ms, (long long)grace);
    cc_buf_fini(&p);
}

/* Only initial against max: GRPC_ARG_MIN_RECONNECT_BACKOFF_MS is in fact
 * the minimum connect timeout in gRPC 1.51 (subchannel.cc), so a "min" above
 * the max backoff is legal and common. */
static void check_reconnect(ctx *c)
{
    int64_t ini, max;
    cc_state ini_s = cc_arg_int(c->cfg, CC_SIDE_CLIENT, GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, &ini);
    cc_state max_s = cc_arg_int(c->cfg, CC_SIDE_CLIENT, GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, &max);
    if (ini_s == CC_INVALID || max_s == CC_INVALID)
        return;
    cc_buf p;
    if ((ini_s == CC_VALID || max_s == CC_VALID) && ini > max) {
        path_arg(&p, CC_SIDE_CLIENT, GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS);
        add(c, RL_CHANCFG_ERROR, "reconnect.backoff-order", &p,
            "initial reconnect backoff %lld ms is above the maximum %lld ms%s: the backoff "
            "can only shrink, which is not what a backoff is for",
            (long long)ini, (long long)max, max_s == CC_ABSENT ? " (gRPC's default)" : "");
        cc_buf_fini(&p);
    }
}

static void check_retries_enabled(ctx *c)
{
    int64_t en;
    if (!c->first_retry_path ||
        cc_arg_int(c->cfg, CC_SIDE_CLIENT, GRPC_ARG_ENABLE_RETRIES, &en) != CC_VALID || en != 0)
        return;
    cc_buf p;
    path_arg(&p, CC_SIDE_CLIENT, GRPC_ARG_ENABLE_RETRIES);
    add(c, RL_CHANCFG_ERROR, "retry.disabled", &p,
        "grpc.enable_retries is 0, so gRPC ignores the retryPolicy at %s", c->first_retry_path);
    cc_buf_fini(&p);
}

/* ---- entry points ------------------------------------------------------ */

static const char *const top_keys[] = {"client", "server", "intermediary", "calls", "description"};

int rl_chancfg_check(const rl_chancfg *cfg, rl_chancfg_report *report)
{
    ctx c;
    memset(&c, 0, sizeof(c));
    c.cfg = cfg;
    c.rep = report;
    const json_t *root = cfg->root;
    cc_buf p;
    if (!json_is_object(root)) {
        path_set(&p, "$", NULL);
        add(&c, RL_CHANCFG_ERROR, "schema.type", &p,
            "a channel config is a JSON object with \"client\", \"server\" and \"intermediary\" "
            "sections, not %s",
            json_type_name(root));
        cc_buf_fini(&p);
        return c.rc;
    }
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)root, key, v) {
        bool ok = false;
        for (size_t i = 0; i < NELEM(top_keys); i++)
            ok |= strcmp(key, top_keys[i]) == 0;
        if (!ok)
            unknown_key(&c, "schema.unknown-key", "$", key, top_keys, NELEM(top_keys),
                        "a section of a channel config");
    }
    if ((v = json_object_get(root, "description")) && !json_is_string(v)) {
        path_set(&p, "$", "description");
        add(&c, RL_CHANCFG_ERROR, "schema.type", &p, "must be a string, not %s", json_type_name(v));
        cc_buf_fini(&p);
    }
    if ((v = json_object_get(root, "calls")))
        check_calls(&c, v);
    check_args_section(&c, CC_SIDE_CLIENT);
    check_args_section(&c, CC_SIDE_SERVER);
    if ((v = json_object_get(root, "intermediary")))
        check_intermediary(&c, v);
    check_keepalive(&c);
    check_age(&c);
    check_reconnect(&c);
    check_retries_enabled(&c);

    cc_free(c.first_retry_path);
    for (size_t i = 0; i < c.nnames; i++)
        cc_free(c.names[i]);
    cc_free(c.names);
    return c.rc;
}

/* ---- method lookup for callers ---------------------------------------- */

static bool name_matches(const json_t *names, const char *service, const char *method)
{
    size_t i;
    const json_t *n;
    json_array_foreach((json_t *)names, i, n) {
        const json_t *sv = json_object_get(n, "service");
        const json_t *mv = json_object_get(n, "method");
        const char *s = json_is_string(sv) ? json_string_value(sv) : "";
        const char *m = json_is_string(mv) ? json_string_value(mv) : "";
        if (strcmp(s, service ? service : "") == 0 && strcmp(m, method ? method : "") == 0)
            return true;
    }
    return false;
}

static void read_method(const json_t *mc, rl_chancfg_method *out)
{
    memset(out, 0, sizeof(*out));
    const json_t *t = json_object_get(mc, "timeout");
    cc_duration d;
    const char *why;
    if (json_is_string(t) && cc_parse_duration(json_string_value(t), &d, &why)) {
        out->has_timeout = true;
        out->timeout_ms = cc_duration_ms(&d);
    }
    const json_t *rp = json_object_get(mc, "retryPolicy");
    if (!json_is_object(rp))
        return;
    double ma, mult;
    const json_t *ib = json_object_get(rp, "initialBackoff");
    const json_t *mb = json_object_get(rp, "maxBackoff");
    const json_t *codes = json_object_get(rp, "retryableStatusCodes");
    if (!cc_sc_number(json_object_get(rp, "maxAttempts"), &ma) || ma < 2 ||
        !cc_is_integral(ma) ||
        !cc_sc_number(json_object_get(rp, "backoffMultiplier"), &mult) || !(mult >= FLT_MIN) ||
        !json_is_string(ib) || !cc_parse_duration(json_string_value(ib), &d, &why))
        return;
    out->initial_backoff_ms = cc_duration_ms(&d);
    if (!json_is_string(mb) || !cc_parse_duration(json_string_value(mb), &d, &why))
        return;
    out->max_backoff_ms = cc_duration_ms(&d);
    uint32_t mask = 0;
    size_t i;
    const json_t *e;
    json_array_foreach((json_t *)codes, i, e) {
        int code = json_is_string(e) ? cc_status_from_name(json_string_value(e)) : -1;
        if (code >= 0)
            mask |= 1u << code;
    }
    if (!mask || out->initial_backoff_ms == 0 || out->max_backoff_ms == 0)
        return;
    out->has_retry = true;
    out->max_attempts = ma > 5 ? 5 : (int)ma;
    out->backoff_multiplier = mult;
    out->retryable_codes = mask;
}

int rl_chancfg_method_config(const rl_chancfg *cfg, const char *service, const char *method,
                             rl_chancfg_method *out)
{
    const json_t *client = cc_section(cfg, "client");
    const json_t *sc = client ? json_object_get(client, "service_config") : NULL;
    const json_t *mcs = json_is_object(sc) ? json_object_get(sc, "methodConfig") : NULL;
    if (!json_is_array(mcs))
        return RL_ENOTFOUND;
    /* gRPC's order: exact method, then the whole service, then the default. */
    const char *tries[3][2] = {{service, method}, {service, ""}, {"", ""}};
    for (size_t t = 0; t < 3; t++) {
        size_t i;
        const json_t *mc;
        json_array_foreach((json_t *)mcs, i, mc) {
            const json_t *names = json_object_get(mc, "name");
            if (json_is_array(names) && name_matches(names, tries[t][0], tries[t][1])) {
                read_method(mc, out);
                return 0;
            }
        }
    }
    return RL_ENOTFOUND;
}
