/* rl_chancfg_rules: the checker. Walks a loaded config section by section,
 * judging each value on its own (names, types, ranges; the service config is
 * rl_chancfg_sc.c's), then the rules that tie the two sides and the
 * intermediary together (keepalive against ping policy and idle timeouts,
 * connection age against deadlines). A rule that combines values stays
 * silent when one of them is already reported as invalid, so one mistake
 * gives one finding. The catalogue of every rule id is here too. */
#include "rl_chancfg_rules.h"

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
    {"keepalive.pings-without-data", RL_CHANCFG_ERROR,
     "the pinging side stops after max_pings_without_data pings on a quiet connection"},
    {"keepalive.idle-without-calls", RL_CHANCFG_ERROR,
     "nobody pings while no call runs, and the channel outlives the idle timeout"},
    {"keepalive.min-ping-interval", RL_CHANCFG_ERROR,
     "client keepalive_time below the server's min ping interval (warning if max_ping_strikes is 0)"},
    {"keepalive.permit-mismatch", RL_CHANCFG_ERROR,
     "client pings without calls, the server does not permit it (warning if max_ping_strikes is 0)"},
    {"keepalive.timeout-above-time", RL_CHANCFG_ERROR, "keepalive_timeout above keepalive_time"},
    {"keepalive.too-frequent", RL_CHANCFG_WARNING, "client keepalive_time below 10 s"},
    {"age.grace-below-deadline", RL_CHANCFG_ERROR,
     "max_connection_age_grace shorter than the longest declared deadline"},
    {"age.grace-unbounded", RL_CHANCFG_WARNING,
     "max_connection_age without a grace: one stuck call holds the old connection forever"},
    {"age.too-short", RL_CHANCFG_ERROR,
     "max_connection_age below 10 s: reconnects (handshakes) dominate, and the +-10 % jitter spreads them over too "
     "little time"},
    {"reconnect.backoff-order", RL_CHANCFG_ERROR, "initial reconnect backoff above the maximum"},
    {"sc.type", RL_CHANCFG_ERROR, "a service config field has the wrong JSON type"},
    {"sc.unknown-field", RL_CHANCFG_ERROR,
     "a service config field gRPC does not know: ignored silently (did-you-mean)"},
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
    {"retry.risky-code", RL_CHANCFG_WARNING,
     "a status code that is retryable only for idempotent methods or with throttling"},
    {"retry.throttling", RL_CHANCFG_ERROR, "retryThrottling outside gRFC A6's limits"},
    {"retry.per-attempt-ignored", RL_CHANCFG_WARNING,
     "perAttemptRecvTimeout without grpc.experimental.enable_hedging: ignored"},
    {"grpc.rejected", RL_CHANCFG_ERROR, "gRPC itself refused the client args (reported by the CLI)"},
    {"world.ignored", RL_CHANCFG_WARNING,
     "the config declares a world (intermediary, call deadline, a server arg the platform fixes) other than the one it "
     "is judged in: ignored"},
};

const rl_chancfg_rule *rl_chancfg_rules(size_t *n)
{
    *n = sizeof(g_rules) / sizeof(g_rules[0]);
    return g_rules;
}

#define INF_MS INT32_MAX
#define NO_PING_WITHOUT_CALLS_MS                                                                                       \
    7200000 /* a server that does not permit                                                                           \
             * pings without calls allows one                                                                          \
             * per 2 hours then */

/* ---- adding findings (shared with rl_chancfg_sc.c) --------------------- */

void cc_check_add(cc_check *c, rl_chancfg_severity sev, const char *rule, const cc_buf *path, const char *fmt, ...)
{
    cc_buf why;
    cc_buf_init(&why);
    va_list ap;
    va_start(ap, fmt);
    cc_buf_vprintf(&why, fmt, ap);
    va_end(ap);
    if (path->oom || why.oom || rl_chancfg_report_add(c->rep, sev, rule, cc_buf_str(path), cc_buf_str(&why)) != 0)
        c->rc = RL_ENOMEM;
    cc_buf_fini(&why);
}

const char *cc_check_user(cc_buf *b, const char *s)
{
    cc_buf_init(b);
    cc_buf_user(b, s);
    return cc_buf_str(b);
}

void cc_check_path(cc_buf *p, const char *base, const char *key)
{
    cc_buf_init(p);
    cc_buf_puts(p, base);
    if (key)
        cc_buf_path_key(p, key);
}

void cc_check_path_arg(cc_buf *p, unsigned side, const char *name)
{
    cc_check_path(p, side == CC_SIDE_CLIENT ? "$.client" : "$.server", name);
}

const char *cc_json_type(const json_t *v)
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

void cc_check_unknown_key(cc_check *c, const char *rule, const char *base, const char *key, const char *const *known,
                          size_t nknown, const char *what)
{
    cc_buf p, u;
    cc_check_path(&p, base, key);
    cc_check_user(&u, key);
    const char *s = cc_suggest(key, known, nknown, sizeof(known[0]));
    if (s)
        cc_check_add(c, RL_CHANCFG_ERROR, rule, &p, "%s is not %s; did you mean \"%s\"?", cc_buf_str(&u), what, s);
    else
        cc_check_add(c, RL_CHANCFG_ERROR, rule, &p, "%s is not %s", cc_buf_str(&u), what);
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

static bool check_macro_name(cc_check *c, unsigned side, const char *key)
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
    cc_check_path_arg(&p, side, key);
    cc_check_user(&u, key);
    const char *trap = "";
    if (strcmp(hit->name, GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS) == 0)
        trap = "; gRPC ignores unknown names silently, so the server would keep its 5-minute "
               "default and answer faster client pings with GOAWAY too_many_pings";
    else if (strcmp(hit->name, GRPC_ARG_HTTP2_MIN_SENT_PING_INTERVAL_WITHOUT_DATA_MS) == 0)
        trap = " (which has no effect in gRPC 1.51 anyway)";
    if (is_macro)
        cc_check_add(c, RL_CHANCFG_ERROR, "arg.macro-name", &p,
                     "%s is the C macro's name; the string gRPC reads is \"%s\"%s", cc_buf_str(&u), hit->name, trap);
    else
        cc_check_add(c, RL_CHANCFG_ERROR, "arg.macro-name", &p,
                     "%s is spelled after the C macro %s, but that macro's string is \"%s\"%s", cc_buf_str(&u), macro,
                     hit->name, trap);
    cc_buf_fini(&u);
    cc_buf_fini(&p);
    return true;
}

static void check_arg(cc_check *c, unsigned side, const char *key, const json_t *v)
{
    const char *sidename = side == CC_SIDE_CLIENT ? "client" : "server";
    const char *other = side == CC_SIDE_CLIENT ? "server" : "client";
    const cc_argdef *def = cc_argdef_find(key);
    cc_buf p, u;
    cc_check_path_arg(&p, side, key);
    cc_buf_init(&u);
    if (!def) {
        if (check_macro_name(c, side, key))
            goto out;
        if (side == CC_SIDE_SERVER && strcmp(key, "service_config") == 0) {
            cc_check_add(c, RL_CHANCFG_ERROR, "arg.wrong-side", &p,
                         "a service config is the client's: gRPC servers do not read one");
            goto out;
        }
        size_t n;
        const cc_argdef *t = cc_argdef_table(&n);
        const char *s = cc_suggest(key, t, n, sizeof(t[0]));
        if (!s && side == CC_SIDE_CLIENT && cc_edit_distance(key, "service_config") <= 3)
            s = "service_config";
        cc_check_user(&u, key);
        if (s)
            cc_check_add(c, RL_CHANCFG_ERROR, "arg.unknown", &p,
                         "%s is not a gRPC channel arg and gRPC ignores unknown names silently; did you "
                         "mean \"%s\"?",
                         cc_buf_str(&u), s);
        else
            cc_check_add(c, RL_CHANCFG_ERROR, "arg.unknown", &p,
                         "%s is not a gRPC 1.51 channel arg; gRPC would ignore it silently", cc_buf_str(&u));
        goto out;
    }
    if (def->type == CC_POINTER) {
        if (strcmp(def->name, GRPC_ARG_SERVICE_CONFIG) == 0)
            cc_check_add(c, RL_CHANCFG_ERROR, "arg.not-configurable", &p,
                         "write the service config as a JSON object under %s.service_config; the tool "
                         "serializes it into this arg",
                         sidename);
        else
            cc_check_add(c, RL_CHANCFG_ERROR, "arg.not-configurable", &p,
                         "%s carries a C object (or is for gRPC's tests): it cannot come from a file", def->name);
        goto out;
    }
    if (!(def->sides & side)) {
        cc_check_add(c, RL_CHANCFG_ERROR, "arg.wrong-side", &p,
                     "only %ss read %s: gRPC ignores it on the %s; move it to \"%s\"", other, def->name, sidename,
                     other);
        goto out;
    }
    int64_t iv;
    if (cc_arg_value_ok(def, v, &iv)) {
        if (strcmp(def->name, GRPC_ARG_HTTP2_MIN_SENT_PING_INTERVAL_WITHOUT_DATA_MS) == 0)
            cc_check_add(c, RL_CHANCFG_WARNING, "arg.deprecated", &p,
                         "%s has no effect in gRPC 1.51 (grpc_types.h): keepalive pings are paced by "
                         "grpc.keepalive_time_ms",
                         def->name);
        goto out;
    }
    switch (def->type) {
    case CC_INT:
        if (!json_is_integer(v)) {
            const char *hint = json_is_string(v) ? " (write 60000, not \"60s\" or \"60000\")" : "";
            cc_check_add(c, RL_CHANCFG_ERROR, "arg.type", &p, "must be an integer, not %s%s", cc_json_type(v), hint);
        } else if (json_integer_value(v) < 0 && def->min >= 0) {
            cc_check_add(c, RL_CHANCFG_ERROR, "arg.range", &p, "%lld is negative; %s takes %lld..%lld%s",
                         (long long)json_integer_value(v), def->name, (long long)def->min, (long long)def->max,
                         def->max == INT32_MAX ? " (2147483647 means infinite)" : "");
        } else if (json_integer_value(v) > INT32_MAX) {
            cc_check_add(c, RL_CHANCFG_ERROR, "arg.range", &p,
                         "%lld does not fit in a C int, which is what gRPC's integer args are "
                         "(2147483647 means infinite)",
                         (long long)json_integer_value(v));
        } else {
            cc_check_add(c, RL_CHANCFG_ERROR, "arg.range", &p, "%lld is outside %lld..%lld for %s",
                         (long long)json_integer_value(v), (long long)def->min, (long long)def->max, def->name);
        }
        break;
    case CC_BOOL:
        if (json_is_integer(v))
            cc_check_add(c, RL_CHANCFG_ERROR, "arg.type", &p,
                         "%lld is not a boolean: gRPC takes 0 or 1 (true/false are accepted here)",
                         (long long)json_integer_value(v));
        else
            cc_check_add(c, RL_CHANCFG_ERROR, "arg.type", &p, "must be 0 or 1 (or true/false), not %s",
                         cc_json_type(v));
        break;
    case CC_STRING:
        if (!json_is_string(v)) {
            cc_check_add(c, RL_CHANCFG_ERROR, "arg.type", &p, "must be a string, not %s", cc_json_type(v));
        } else {
            size_t nc = 0;
            cc_buf list;
            cc_buf_init(&list);
            for (const char *const *ch = def->choices; *ch; ch++, nc++)
                cc_buf_printf(&list, "%s%s", nc ? ", " : "", *ch);
            const char *s = cc_suggest(json_string_value(v), def->choices, nc, sizeof(char *));
            cc_check_user(&u, json_string_value(v));
            cc_check_add(c, RL_CHANCFG_ERROR, "arg.range", &p, "%s is not one of %s%s%s%s", cc_buf_str(&u),
                         cc_buf_str(&list), s ? "; did you mean \"" : "", s ? s : "", s ? "\"?" : "");
            if (list.oom)
                c->rc = RL_ENOMEM;
            cc_buf_fini(&list);
        }
        break;
    case CC_POINTER: break;
    }
out:
    cc_buf_fini(&u);
    cc_buf_fini(&p);
}

/* ---- sections ---------------------------------------------------------- */

static void check_args_section(cc_check *c, unsigned side)
{
    const char *name = side == CC_SIDE_CLIENT ? "client" : "server";
    const json_t *sec = json_object_get(c->cfg->root, name);
    if (!sec)
        return;
    cc_buf p;
    cc_check_path(&p, "$", name);
    if (!json_is_object(sec)) {
        cc_check_add(c, RL_CHANCFG_ERROR, "schema.type", &p, "must be an object of channel args, not %s",
                     cc_json_type(sec));
        cc_buf_fini(&p);
        return;
    }
    cc_buf_fini(&p);
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)sec, key, v)
    {
        if (side == CC_SIDE_CLIENT && strcmp(key, "service_config") == 0)
            cc_check_service_config(c, v);
        else
            check_arg(c, side, key, v);
    }
}

static const char *const intermediary_kinds[] = {"nat", "l4-lb", "l7-proxy", "firewall"};

static void check_positive_ms(cc_check *c, const json_t *obj, const char *base, const char *field, bool required)
{
    const json_t *v = json_object_get(obj, field);
    cc_buf p;
    cc_check_path(&p, base, field);
    if (!v) {
        if (required)
            cc_check_add(c, RL_CHANCFG_ERROR, "schema.required", &p, "%s is required (milliseconds)", field);
    } else if (!json_is_integer(v)) {
        cc_check_add(c, RL_CHANCFG_ERROR, "schema.type", &p, "must be an integer of milliseconds, not %s",
                     cc_json_type(v));
    } else if (json_integer_value(v) <= 0 || json_integer_value(v) > INT32_MAX) {
        cc_check_add(c, RL_CHANCFG_ERROR, "schema.range", &p, "%lld must be in 1..2147483647 ms",
                     (long long)json_integer_value(v));
    }
    cc_buf_fini(&p);
}

static void check_intermediary(cc_check *c, const json_t *im)
{
    static const char *const fields[] = {"idle_timeout_ms", "kind", "description"};
    cc_buf p;
    if (!json_is_object(im)) {
        cc_check_path(&p, "$.intermediary", NULL);
        cc_check_add(c, RL_CHANCFG_ERROR, "schema.type", &p,
                     "must be an object such as {\"idle_timeout_ms\": 350000, \"kind\": \"nat\"}, not %s",
                     cc_json_type(im));
        cc_buf_fini(&p);
        return;
    }
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)im, key, v)
    {
        bool ok = false;
        for (size_t i = 0; i < NELEM(fields); i++)
            ok |= strcmp(key, fields[i]) == 0;
        if (!ok)
            cc_check_unknown_key(c, "schema.unknown-key", "$.intermediary", key, fields, NELEM(fields),
                                 "a field of intermediary");
    }
    check_positive_ms(c, im, "$.intermediary", "idle_timeout_ms", true);
    if ((v = json_object_get(im, "kind"))) {
        cc_check_path(&p, "$.intermediary", "kind");
        bool ok = false;
        for (size_t i = 0; i < NELEM(intermediary_kinds) && json_is_string(v); i++)
            ok |= strcmp(intermediary_kinds[i], json_string_value(v)) == 0;
        if (!json_is_string(v)) {
            cc_check_add(c, RL_CHANCFG_ERROR, "schema.type", &p, "must be a string, not %s", cc_json_type(v));
        } else if (!ok) {
            cc_buf u;
            cc_check_user(&u, json_string_value(v));
            const char *s =
                cc_suggest(json_string_value(v), intermediary_kinds, NELEM(intermediary_kinds), sizeof(char *));
            cc_check_add(c, RL_CHANCFG_ERROR, "schema.enum", &p,
                         "%s is not one of nat, l4-lb, l7-proxy, firewall%s%s%s", cc_buf_str(&u),
                         s ? "; did you mean \"" : "", s ? s : "", s ? "\"?" : "");
            cc_buf_fini(&u);
        }
        cc_buf_fini(&p);
    }
    if ((v = json_object_get(im, "description")) && !json_is_string(v)) {
        cc_check_path(&p, "$.intermediary", "description");
        cc_check_add(c, RL_CHANCFG_ERROR, "schema.type", &p, "must be a string, not %s", cc_json_type(v));
        cc_buf_fini(&p);
    }
}

static void check_calls(cc_check *c, const json_t *calls)
{
    static const char *const fields[] = {"longest_deadline_ms"};
    cc_buf p;
    if (!json_is_object(calls)) {
        cc_check_path(&p, "$.calls", NULL);
        cc_check_add(c, RL_CHANCFG_ERROR, "schema.type", &p,
                     "must be an object such as {\"longest_deadline_ms\": 30000}, not %s", cc_json_type(calls));
        cc_buf_fini(&p);
        return;
    }
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)calls, key, v)
    {
        if (strcmp(key, fields[0]) != 0)
            cc_check_unknown_key(c, "schema.unknown-key", "$.calls", key, fields, NELEM(fields), "a field of calls");
    }
    check_positive_ms(c, calls, "$.calls", "longest_deadline_ms", false);
    v = json_object_get(calls, "longest_deadline_ms");
    if (json_is_integer(v) && json_integer_value(v) > c->longest_deadline_ms && json_integer_value(v) <= INT32_MAX)
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

static void check_timeout_vs_time(cc_check *c, unsigned side, const side_vals *v)
{
    if (v->kt_s == CC_INVALID || v->to_s == CC_INVALID || v->kt >= INF_MS)
        return;
    if (v->kt_s == CC_ABSENT && v->to_s == CC_ABSENT)
        return; /* gRPC's own defaults (2 h / 20 s) */
    if (v->to <= v->kt)
        return;
    cc_buf p;
    cc_check_path_arg(&p, side, GRPC_ARG_KEEPALIVE_TIMEOUT_MS);
    cc_check_add(c, RL_CHANCFG_ERROR, "keepalive.timeout-above-time", &p,
                 "%s keepalive_timeout %lld ms%s is above keepalive_time %lld ms: an unanswered ping "
                 "is already as late as the next one would be, so a dead peer is noticed only after "
                 "%lld ms",
                 side == CC_SIDE_CLIENT ? "client" : "server", (long long)v->to,
                 v->to_s == CC_ABSENT ? " (gRPC's default)" : "", (long long)v->kt, (long long)v->kt + v->to);
    cc_buf_fini(&p);
}

static void check_keepalive(cc_check *c)
{
    side_vals cl, sv;
    read_side(c->cfg, CC_SIDE_CLIENT, &cl);
    read_side(c->cfg, CC_SIDE_SERVER, &sv);
    int64_t min_int, strikes, client_idle;
    cc_state min_s =
        cc_arg_int(c->cfg, CC_SIDE_SERVER, GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, &min_int);
    cc_state strikes_s = cc_arg_int(c->cfg, CC_SIDE_SERVER, GRPC_ARG_HTTP2_MAX_PING_STRIKES, &strikes);
    cc_state idle_s = cc_arg_int(c->cfg, CC_SIDE_CLIENT, GRPC_ARG_CLIENT_IDLE_TIMEOUT_MS, &client_idle);
    cc_buf p;
    char a[32], b[32];

    check_timeout_vs_time(c, CC_SIDE_CLIENT, &cl);
    check_timeout_vs_time(c, CC_SIDE_SERVER, &sv);

    bool client_pings = cl.kt_s == CC_VALID && cl.kt < INF_MS;
    /* A server with max_ping_strikes 0 bears any number of early pings: the
     * mismatch then costs nothing but the server's patience. */
    rl_chancfg_severity strike_sev = strikes_s == CC_VALID && strikes == 0 ? RL_CHANCFG_WARNING : RL_CHANCFG_ERROR;
    if (client_pings && cl.kt < 10000) {
        cc_check_path_arg(&p, CC_SIDE_CLIENT, GRPC_ARG_KEEPALIVE_TIME_MS);
        cc_check_add(c, RL_CHANCFG_WARNING, "keepalive.too-frequent", &p,
                     "a ping every %lld ms from every client loads the servers; gRPC's keepalive guide "
                     "advises no less than 10 s (grpc-java raises anything lower to 10 s)",
                     (long long)cl.kt);
        cc_buf_fini(&p);
    }
    if (client_pings && min_s != CC_INVALID && strikes_s != CC_INVALID && cl.kt < min_int) {
        cc_check_path_arg(&p, CC_SIDE_CLIENT, GRPC_ARG_KEEPALIVE_TIME_MS);
        if (strike_sev == RL_CHANCFG_ERROR)
            cc_check_add(c, strike_sev, "keepalive.min-ping-interval", &p,
                         "client pings every %lld ms but the server allows one ping per %lld ms%s "
                         "(grpc.http2.min_ping_interval_without_data_ms): each early ping is a strike, "
                         "and after more than %lld strikes the server sends GOAWAY ENHANCE_YOUR_CALM "
                         "\"too_many_pings\"",
                         (long long)cl.kt, (long long)min_int, min_s == CC_ABSENT ? " (gRPC's default, 5 min)" : "",
                         (long long)strikes);
        else
            cc_check_add(c, strike_sev, "keepalive.min-ping-interval", &p,
                         "client pings every %lld ms but the server allows one ping per %lld ms%s; "
                         "max_ping_strikes 0 makes the server bear it, but the two sides disagree",
                         (long long)cl.kt, (long long)min_int, min_s == CC_ABSENT ? " (gRPC's default, 5 min)" : "");
        cc_buf_fini(&p);
    }
    if (client_pings && cl.permit_s == CC_VALID && cl.permit == 1 && sv.permit_s != CC_INVALID &&
        strikes_s != CC_INVALID && sv.permit == 0 && cl.kt < NO_PING_WITHOUT_CALLS_MS) {
        cc_check_path_arg(&p, CC_SIDE_SERVER, GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS);
        cc_check_add(c, strike_sev, "keepalive.permit-mismatch", &p,
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
        cc_check_path_arg(&p, CC_SIDE_CLIENT, GRPC_ARG_KEEPALIVE_TIME_MS);
        cc_check_add(c, RL_CHANCFG_ERROR, "keepalive.idle-timeout", &p,
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
        cc_check_path_arg(&p, side, GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA);
        cc_check_add(c, RL_CHANCFG_ERROR, "keepalive.pings-without-data", &p,
                     "after %lld pings with no data sent, gRPC holds further pings back (\"too many "
                     "recent pings\"), so a quiet connection goes silent and the %s drops it after "
                     "%lld ms; set 0 (no limit)%s",
                     (long long)v->mpwd, kind, (long long)idle, v->mpwd_s == CC_ABSENT ? " - 2 is gRPC's default" : "");
        cc_buf_fini(&p);
        return;
    }
    if ((work_c && cl.permit_s == CC_INVALID) || (work_s && sv.permit_s == CC_INVALID) || idle_s == CC_INVALID)
        return;
    bool idle_ok = (work_c && cl.permit == 1) || (work_s && sv.permit == 1) || client_idle < idle;
    if (!idle_ok) {
        unsigned side = work_c ? CC_SIDE_CLIENT : CC_SIDE_SERVER;
        cc_check_path_arg(&p, side, GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS);
        cc_check_add(c, RL_CHANCFG_ERROR, "keepalive.idle-without-calls", &p,
                     "with no call in flight the %s sends no keepalive pings (permit_without_calls 0), "
                     "and the client keeps an idle connection for %lld ms (grpc.client_idle_timeout_ms): "
                     "the %s drops it after %lld ms first; permit pings without calls on both sides, or "
                     "set client_idle_timeout_ms below %lld",
                     side == CC_SIDE_CLIENT ? "client" : "server", (long long)client_idle, kind, (long long)idle,
                     (long long)idle);
        cc_buf_fini(&p);
    }
}

/* Below this an age re-makes connections faster than any load changes: the
 * balance exercise measures it (grader/ex_balance.c, WORLD_MIN_LIFE_MS). */
#define AGE_MIN_MS 10000

static void check_age(cc_check *c)
{
    int64_t age, grace;
    cc_state age_s = cc_arg_int(c->cfg, CC_SIDE_SERVER, GRPC_ARG_MAX_CONNECTION_AGE_MS, &age);
    cc_state grace_s = cc_arg_int(c->cfg, CC_SIDE_SERVER, GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS, &grace);
    if (age_s != CC_VALID || age >= INF_MS || grace_s == CC_INVALID)
        return;
    cc_buf p;
    if (age < AGE_MIN_MS) {
        cc_check_path_arg(&p, CC_SIDE_SERVER, GRPC_ARG_MAX_CONNECTION_AGE_MS);
        cc_check_add(c, RL_CHANCFG_ERROR, "age.too-short", &p,
                     "every client reconnects every %lld ms (+-10 %% jitter): %.0f TCP and TLS handshakes a "
                     "minute per client, calls waiting for them, and reconnects of clients that connected "
                     "together still come together; an age is for re-spreading load over minutes: %d ms or more",
                     (long long)age, 60000.0 / (double)(age > 0 ? age : 1), AGE_MIN_MS);
        cc_buf_fini(&p);
    }
    cc_check_path_arg(&p, CC_SIDE_SERVER, GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS);
    if (grace_s == CC_ABSENT)
        cc_check_add(c, RL_CHANCFG_WARNING, "age.grace-unbounded", &p,
                     "max_connection_age is %lld ms but no grace is set (gRPC's default is infinite): "
                     "one stuck call keeps the aged connection open forever; set the grace to the "
                     "longest deadline",
                     (long long)age);
    else if (c->longest_deadline_ms > 0 && grace < c->longest_deadline_ms)
        cc_check_add(c, RL_CHANCFG_ERROR, "age.grace-below-deadline", &p,
                     "calls may run %lld ms (the longest declared deadline), but after "
                     "max_connection_age the server waits only %lld ms before closing: calls still "
                     "running then fail UNAVAILABLE",
                     (long long)c->longest_deadline_ms, (long long)grace);
    cc_buf_fini(&p);
}

/* Only initial against max: GRPC_ARG_MIN_RECONNECT_BACKOFF_MS is in fact
 * the minimum connect timeout in gRPC 1.51 (subchannel.cc), so a "min" above
 * the max backoff is legal and common. */
static void check_reconnect(cc_check *c)
{
    int64_t ini, max;
    cc_state ini_s = cc_arg_int(c->cfg, CC_SIDE_CLIENT, GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, &ini);
    cc_state max_s = cc_arg_int(c->cfg, CC_SIDE_CLIENT, GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, &max);
    if (ini_s == CC_INVALID || max_s == CC_INVALID)
        return;
    cc_buf p;
    if ((ini_s == CC_VALID || max_s == CC_VALID) && ini > max) {
        cc_check_path_arg(&p, CC_SIDE_CLIENT, GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS);
        cc_check_add(c, RL_CHANCFG_ERROR, "reconnect.backoff-order", &p,
                     "initial reconnect backoff %lld ms is above the maximum %lld ms%s: the backoff "
                     "can only shrink, which is not what a backoff is for",
                     (long long)ini, (long long)max, max_s == CC_ABSENT ? " (gRPC's default)" : "");
        cc_buf_fini(&p);
    }
}

static void check_retries_enabled(cc_check *c)
{
    int64_t en;
    if (!c->first_retry_path || cc_arg_int(c->cfg, CC_SIDE_CLIENT, GRPC_ARG_ENABLE_RETRIES, &en) != CC_VALID || en != 0)
        return;
    cc_buf p;
    cc_check_path_arg(&p, CC_SIDE_CLIENT, GRPC_ARG_ENABLE_RETRIES);
    cc_check_add(c, RL_CHANCFG_ERROR, "retry.disabled", &p,
                 "grpc.enable_retries is 0, so gRPC ignores the retryPolicy at %s", c->first_retry_path);
    cc_buf_fini(&p);
}

/* ---- entry points ------------------------------------------------------ */

static const char *const top_keys[] = {"client", "server", "intermediary", "calls", "description"};

int rl_chancfg_check(const rl_chancfg *cfg, rl_chancfg_report *report)
{
    cc_check c;
    memset(&c, 0, sizeof(c));
    c.cfg = cfg;
    c.rep = report;
    const json_t *root = cfg->root;
    cc_buf p;
    if (!json_is_object(root)) {
        cc_check_path(&p, "$", NULL);
        cc_check_add(&c, RL_CHANCFG_ERROR, "schema.type", &p,
                     "a channel config is a JSON object with \"client\", \"server\" and \"intermediary\" "
                     "sections, not %s",
                     cc_json_type(root));
        cc_buf_fini(&p);
        return c.rc;
    }
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)root, key, v)
    {
        bool ok = false;
        for (size_t i = 0; i < NELEM(top_keys); i++)
            ok |= strcmp(key, top_keys[i]) == 0;
        if (!ok)
            cc_check_unknown_key(&c, "schema.unknown-key", "$", key, top_keys, NELEM(top_keys),
                                 "a section of a channel config");
    }
    if ((v = json_object_get(root, "description")) && !json_is_string(v)) {
        cc_check_path(&p, "$", "description");
        cc_check_add(&c, RL_CHANCFG_ERROR, "schema.type", &p, "must be a string, not %s", cc_json_type(v));
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
