/* rl_chancfg_sc: the checker's part for the client's service config, by
 * gRFC A6 as gRPC 1.51 reads it: the fields gRPC knows, methodConfig names
 * (against the services and methods of relaylab.proto, taken from the
 * protobuf-c descriptors so the two cannot drift apart), timeouts, retry
 * policies and their status codes, throttling and load balancing. It feeds
 * the rules across values (rl_chancfg_rules.c) through the check's state:
 * the longest timeout, the first retryPolicy, throttling. */
#include "rl_chancfg_rules.h"

#include "relaylab.pb-c.h"

#include <float.h>
#include <string.h>
#include <strings.h>

/* Every service relaylab.proto defines: generated from relaylab.pb-c.h (see
 * the Makefile). A methodConfig name that matches none of them silently
 * never applies: names are case-sensitive and include the package. The
 * descriptors are static data, so reading them allocates nothing. */
static const ProtobufCServiceDescriptor *const g_services[] = {
#include "relaylab_services.inc"
};

static void sc_type(cc_check *c, const cc_buf *p, const char *want, const json_t *v)
{
    cc_check_add(c, RL_CHANCFG_ERROR, "sc.type", p, "must be %s, not %s", want, cc_json_type(v));
}

static void sc_unknown_fields(cc_check *c, const cc_buf *base, const json_t *obj, const char *const *known,
                              size_t nknown, const char *where)
{
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)obj, key, v)
    {
        bool ok = false;
        for (size_t i = 0; i < nknown && !ok; i++)
            ok = strcmp(key, known[i]) == 0;
        if (ok)
            continue;
        char what[96];
        snprintf(what, sizeof(what), "a field of %s (gRPC ignores unknown fields silently)", where);
        cc_check_unknown_key(c, "sc.unknown-field", cc_buf_str(base), key, known, nknown, what);
    }
}

/* A duration field: returns true with |*ms| set when valid; reports
 * otherwise under |rule|. |required| says whether absence is an error. */
static bool sc_duration(cc_check *c, const json_t *obj, const cc_buf *base, const char *field, const char *rule,
                        bool required, bool positive, int64_t *ms)
{
    const json_t *v = json_object_get(obj, field);
    cc_buf p;
    cc_check_path(&p, cc_buf_str(base), field);
    bool ok = false;
    if (!v) {
        if (required)
            cc_check_add(c, RL_CHANCFG_ERROR, rule, &p, "%s is required (a duration such as \"0.1s\")", field);
    } else if (!json_is_string(v)) {
        cc_check_add(c, RL_CHANCFG_ERROR, rule, &p, "must be a proto3 duration string such as \"0.1s\", not %s",
                     cc_json_type(v));
    } else {
        cc_duration d;
        const char *why;
        cc_buf u;
        cc_check_user(&u, json_string_value(v));
        if (!cc_parse_duration(json_string_value(v), &d, &why)) {
            cc_check_add(c, RL_CHANCFG_ERROR, rule, &p, "%s is not a proto3 duration: it %s", cc_buf_str(&u), why);
        } else if (positive && d.seconds == 0 && d.nanos == 0) {
            cc_check_add(c, RL_CHANCFG_ERROR, rule, &p, "must be greater than 0");
        } else if (positive && cc_duration_ms(&d) == 0) {
            cc_check_add(c, RL_CHANCFG_ERROR, rule, &p,
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
    case 6:
        return "a retry cannot make it not exist, and the earlier attempt may be the one "
               "that created it";
    case 7: return "the caller's permissions do not change between attempts";
    case 9:
        return "the system is not in the state the call needs; it must be fixed first, "
               "not asked again";
    case 11: return "the request is past the valid range: the same request fails the same way";
    case 12: return "the server does not implement the method: no attempt will find it";
    case 15: return "unrecoverable data loss: retrying hides it instead of surfacing it";
    case 16: return "the same missing or bad credentials are sent again";
    default: return NULL;
    }
}

static const char *risky_why(cc_check *c, int code)
{
    switch (code) {
    case 1: return "usually the caller's own cancellation, which ends the call anyway";
    case 2:
        return "an unknown error may come after the server did the work: retry only "
               "idempotent methods";
    case 4:
        return "the deadline covers all attempts, so a retry runs on what is left, and "
               "the first attempt may have done the work";
    case 8:
        return c->has_throttling ? NULL
                                 : "retrying an overloaded server adds load: add "
                                   "retryThrottling to cap it";
    case 10:
        return "a concurrency conflict: retry at the application level (read again, then "
               "write), not the same request";
    case 13:
        return "a server bug or broken invariant: retrying repeats side effects and "
               "rarely helps";
    default: return NULL;
    }
}

/* maxAttempts and backoffMultiplier: numbers, quoted numbers with a warning. */
static bool sc_number(cc_check *c, const json_t *obj, const cc_buf *base, const char *field, const char *rule,
                      double *out)
{
    const json_t *v = json_object_get(obj, field);
    cc_buf p;
    cc_check_path(&p, cc_buf_str(base), field);
    bool ok = false;
    if (!v) {
        cc_check_add(c, RL_CHANCFG_ERROR, rule, &p, "%s is required", field);
    } else {
        int kind = cc_sc_number(v, out);
        if (kind == 0)
            cc_check_add(c, RL_CHANCFG_ERROR, rule, &p, "must be a number, not %s", cc_json_type(v));
        if (kind == 2)
            cc_check_add(c, RL_CHANCFG_WARNING, "sc.quoted-number", &p,
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
    return cc_arg_int(cfg, CC_SIDE_CLIENT, GRPC_ARG_EXPERIMENTAL_ENABLE_HEDGING, &v) == CC_VALID && v == 1;
}

static void check_status_codes(cc_check *c, const json_t *rp, const cc_buf *base, bool may_be_empty)
{
    const json_t *codes = json_object_get(rp, "retryableStatusCodes");
    cc_buf p;
    cc_check_path(&p, cc_buf_str(base), "retryableStatusCodes");
    if (!codes) {
        if (!may_be_empty)
            cc_check_add(c, RL_CHANCFG_ERROR, "retry.status-codes", &p,
                         "retryableStatusCodes is required: without it nothing is retried (gRPC "
                         "rejects the config)");
    } else if (!json_is_array(codes)) {
        cc_check_add(c, RL_CHANCFG_ERROR, "retry.status-codes", &p,
                     "must be an array of status code names such as [\"UNAVAILABLE\"], not %s", cc_json_type(codes));
    } else if (json_array_size(codes) == 0 && !may_be_empty) {
        cc_check_add(c, RL_CHANCFG_ERROR, "retry.status-codes", &p,
                     "is empty: nothing would be retried (gRPC rejects the config)");
    }
    size_t i;
    const json_t *e;
    if (json_is_array(codes)) {
        json_array_foreach((json_t *)codes, i, e)
        {
            cc_buf ep, u;
            cc_buf_init(&ep);
            cc_buf_printf(&ep, "%s[%zu]", cc_buf_str(&p), i);
            cc_buf_init(&u);
            if (json_is_integer(e)) {
                const char *name = cc_status_name((int)json_integer_value(e));
                if (name && json_integer_value(e) >= 0)
                    cc_check_add(c, RL_CHANCFG_ERROR, "retry.status-codes", &ep,
                                 "%lld is %s, but gRPC 1.51 takes only names here: write \"%s\"",
                                 (long long)json_integer_value(e), name, name);
                else
                    cc_check_add(c, RL_CHANCFG_ERROR, "retry.status-codes", &ep,
                                 "%lld is not a status code, and gRPC 1.51 takes only names here",
                                 (long long)json_integer_value(e));
            } else if (!json_is_string(e)) {
                cc_check_add(c, RL_CHANCFG_ERROR, "retry.status-codes", &ep,
                             "must be a status code name such as \"UNAVAILABLE\", not %s", cc_json_type(e));
            } else {
                int code = cc_status_from_name(json_string_value(e));
                cc_check_user(&u, json_string_value(e));
                if (code < 0) {
                    const char *s = cc_suggest(json_string_value(e), cc_status_names, 17, sizeof(char *));
                    cc_check_add(c, RL_CHANCFG_ERROR, "retry.status-codes", &ep,
                                 "%s is not a status code name (they are upper case, e.g. "
                                 "\"UNAVAILABLE\")%s%s%s",
                                 cc_buf_str(&u), s ? "; did you mean \"" : "", s ? s : "", s ? "\"?" : "");
                } else if (non_retryable_why(code)) {
                    cc_check_add(c, RL_CHANCFG_ERROR, "retry.non-retryable-code", &ep, "%s: %s", cc_status_names[code],
                                 non_retryable_why(code));
                } else if (risky_why(c, code)) {
                    cc_check_add(c, RL_CHANCFG_WARNING, "retry.risky-code", &ep, "%s: %s", cc_status_names[code],
                                 risky_why(c, code));
                }
            }
            cc_buf_fini(&u);
            cc_buf_fini(&ep);
        }
    }
    cc_buf_fini(&p);
}

static const char *const retry_fields[] = {"maxAttempts",       "initialBackoff",       "maxBackoff",
                                           "backoffMultiplier", "retryableStatusCodes", "perAttemptRecvTimeout"};

static void check_retry_policy(cc_check *c, const json_t *rp, const cc_buf *base)
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
    cc_check_path(&p, cc_buf_str(base), "maxAttempts");
    if (sc_number(c, rp, base, "maxAttempts", "retry.max-attempts", &d)) {
        if (!cc_is_integral(d))
            cc_check_add(c, RL_CHANCFG_ERROR, "retry.max-attempts", &p,
                         "%g is not an integer: it counts attempts, the first one included", d);
        else if (d < 2)
            cc_check_add(c, RL_CHANCFG_ERROR, "retry.max-attempts", &p,
                         "%g must be at least 2: it counts the first attempt, so 1 means no retry "
                         "(gRPC rejects the config)",
                         d);
        else if (d > 5)
            cc_check_add(c, RL_CHANCFG_WARNING, "retry.max-attempts-clamped", &p,
                         "%g is above 5: gRPC clamps it to 5 (gRFC A6), so the extra attempts never "
                         "happen",
                         d);
    }
    cc_buf_fini(&p);

    int64_t ib = 0, mb = 0;
    bool ib_ok = sc_duration(c, rp, base, "initialBackoff", "retry.initial-backoff", true, true, &ib);
    bool mb_ok = sc_duration(c, rp, base, "maxBackoff", "retry.max-backoff", true, true, &mb);
    if (ib_ok && mb_ok && mb < ib) {
        cc_check_path(&p, cc_buf_str(base), "maxBackoff");
        cc_check_add(c, RL_CHANCFG_WARNING, "retry.backoff-order", &p,
                     "maxBackoff %lld ms is below initialBackoff %lld ms: every wait after the first is "
                     "capped at maxBackoff",
                     (long long)mb, (long long)ib);
        cc_buf_fini(&p);
    }

    cc_check_path(&p, cc_buf_str(base), "backoffMultiplier");
    /* gRPC reads it into a float: 1e-50 is 0 there. */
    if (sc_number(c, rp, base, "backoffMultiplier", "retry.backoff-multiplier", &d) && !(d >= FLT_MIN))
        cc_check_add(c, RL_CHANCFG_ERROR, "retry.backoff-multiplier", &p,
                     "%g must be greater than 0 (as a float): it multiplies the backoff after each "
                     "attempt",
                     d);
    cc_buf_fini(&p);

    int64_t pt;
    bool has_pt = json_object_get(rp, "perAttemptRecvTimeout") != NULL;
    bool hedging = hedging_enabled(c->cfg);
    if (has_pt) {
        cc_check_path(&p, cc_buf_str(base), "perAttemptRecvTimeout");
        if (sc_duration(c, rp, base, "perAttemptRecvTimeout", "sc.duration", false, true, &pt) && !hedging)
            cc_check_add(c, RL_CHANCFG_WARNING, "retry.per-attempt-ignored", &p,
                         "gRPC 1.51 reads perAttemptRecvTimeout only with grpc.experimental.enable_hedging "
                         "= 1 on the client; without it this field is ignored");
        cc_buf_fini(&p);
    }
    check_status_codes(c, rp, base, has_pt && hedging);
}

static void check_throttling(cc_check *c, const json_t *t, const cc_buf *base)
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
    cc_check_path(&p, cc_buf_str(base), "maxTokens");
    if (sc_number(c, t, base, "maxTokens", "retry.throttling", &d)) {
        if (!cc_is_integral(d) || d <= 0 || d > 1000)
            cc_check_add(c, RL_CHANCFG_ERROR, "retry.throttling", &p,
                         "%g must be an integer in 1..1000 (gRFC A6): the token bucket's size", d);
    }
    cc_buf_fini(&p);
    cc_check_path(&p, cc_buf_str(base), "tokenRatio");
    if (sc_number(c, t, base, "tokenRatio", "retry.throttling", &d) && !(d >= 0.001))
        cc_check_add(c, RL_CHANCFG_ERROR, "retry.throttling", &p,
                     "%g must be at least 0.001: gRPC keeps 3 decimals, so smaller ratios become 0 and "
                     "gRPC rejects the config",
                     d);
    cc_buf_fini(&p);
}

static bool remember_name(cc_check *c, const char *key)
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

static void check_known_name(cc_check *c, const cc_buf *p, const char *service, const char *method)
{
    const ProtobufCServiceDescriptor *ks = NULL;
    for (size_t i = 0; i < NELEM(g_services); i++)
        if (strcmp(g_services[i]->name, service) == 0)
            ks = g_services[i];
    cc_buf u;
    cc_check_user(&u, service);
    if (!ks) {
        const char *names[NELEM(g_services)];
        for (size_t i = 0; i < NELEM(g_services); i++)
            names[i] = g_services[i]->name;
        const char *s = cc_suggest(service, names, NELEM(names), sizeof(names[0]));
        /* "Baseline" for "relaylab.Baseline": the package is part of the name. */
        for (size_t i = 0; i < NELEM(g_services) && !s; i++)
            if (strcasecmp(g_services[i]->short_name, service) == 0)
                s = g_services[i]->name;
        cc_check_add(c, RL_CHANCFG_WARNING, "sc.unknown-service", p,
                     "%s is not a service of relaylab.proto (names are case-sensitive and include the "
                     "package), so this config never applies%s%s%s",
                     cc_buf_str(&u), s ? "; did you mean \"" : "", s ? s : "", s ? "\"?" : "");
    } else if (method && *method) {
        bool found = false;
        for (unsigned i = 0; i < ks->n_methods; i++)
            found |= strcmp(ks->methods[i].name, method) == 0;
        if (!found) {
            /* A method descriptor starts with its name, as cc_suggest wants. */
            const char *s = cc_suggest(method, ks->methods, ks->n_methods, sizeof(ks->methods[0]));
            cc_buf_fini(&u);
            cc_check_user(&u, method);
            cc_check_add(c, RL_CHANCFG_WARNING, "sc.unknown-method", p,
                         "%s is not a method of %s, so this config never applies%s%s%s", cc_buf_str(&u), ks->name,
                         s ? "; did you mean \"" : "", s ? s : "", s ? "\"?" : "");
        }
    }
    cc_buf_fini(&u);
}

static void check_names(cc_check *c, const json_t *mc, const cc_buf *base)
{
    static const char *const fields[] = {"service", "method"};
    const json_t *names = json_object_get(mc, "name");
    cc_buf p;
    cc_check_path(&p, cc_buf_str(base), "name");
    if (!names || (json_is_array(names) && json_array_size(names) == 0)) {
        cc_check_add(c, RL_CHANCFG_ERROR, "sc.name-missing", &p,
                     "a methodConfig without names applies to no method (use [{}] for every method)");
    } else if (!json_is_array(names)) {
        sc_type(c, &p, "an array of {\"service\", \"method\"} objects", names);
    } else {
        size_t i;
        const json_t *n;
        json_array_foreach((json_t *)names, i, n)
        {
            cc_buf np;
            cc_buf_init(&np);
            cc_buf_printf(&np, "%s[%zu]", cc_buf_str(&p), i);
            const json_t *sv = json_object_get(n, "service");
            const json_t *mv = json_object_get(n, "method");
            if (!json_is_object(n)) {
                sc_type(c, &np, "an object", n);
            } else if (sv && !json_is_string(sv)) {
                cc_buf sp;
                cc_check_path(&sp, cc_buf_str(&np), "service");
                sc_type(c, &sp, "a string", sv);
                cc_buf_fini(&sp);
            } else if (mv && !json_is_string(mv)) {
                cc_buf mp;
                cc_check_path(&mp, cc_buf_str(&np), "method");
                sc_type(c, &mp, "a string", mv);
                cc_buf_fini(&mp);
            } else {
                sc_unknown_fields(c, &np, n, fields, NELEM(fields), "a methodConfig name");
                const char *s = sv ? json_string_value(sv) : "";
                const char *m = mv ? json_string_value(mv) : "";
                if (!*s && *m) {
                    cc_check_add(c, RL_CHANCFG_ERROR, "sc.name-invalid", &np,
                                 "a method without its service matches nothing (gRPC rejects the config); "
                                 "add \"service\": \"relaylab.Baseline\" or similar");
                } else {
                    cc_buf key;
                    cc_buf_init(&key);
                    cc_buf_printf(&key, "/%s/%s", s, m);
                    if (!key.oom && !remember_name(c, cc_buf_str(&key)))
                        cc_check_add(c, RL_CHANCFG_ERROR, "sc.duplicate-name", &np,
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

static const char *const mc_fields[] = {
    "name",        "timeout",      "waitForReady", "maxRequestMessageBytes", "maxResponseMessageBytes",
    "retryPolicy", "hedgingPolicy"};

static void check_method_config(cc_check *c, const json_t *mc, const cc_buf *base)
{
    if (!json_is_object(mc)) {
        sc_type(c, base, "an object", mc);
        return;
    }
    sc_unknown_fields(c, base, mc, mc_fields, NELEM(mc_fields), "methodConfig");
    check_names(c, mc, base);
    int64_t ms;
    if (sc_duration(c, mc, base, "timeout", "sc.duration", false, true, &ms) && ms > c->longest_deadline_ms)
        c->longest_deadline_ms = ms;
    const json_t *v;
    cc_buf p;
    if ((v = json_object_get(mc, "waitForReady")) && !json_is_boolean(v)) {
        cc_check_path(&p, cc_buf_str(base), "waitForReady");
        sc_type(c, &p, "true or false", v);
        cc_buf_fini(&p);
    }
    static const char *const sizes[] = {"maxRequestMessageBytes", "maxResponseMessageBytes"};
    for (size_t i = 0; i < NELEM(sizes); i++) {
        double d;
        if (!(v = json_object_get(mc, sizes[i])))
            continue;
        cc_check_path(&p, cc_buf_str(base), sizes[i]);
        int kind = cc_sc_number(v, &d);
        if (kind == 0 || d < 0 || !cc_is_integral(d))
            sc_type(c, &p, "a non-negative integer", v);
        else if (kind == 2)
            cc_check_add(c, RL_CHANCFG_WARNING, "sc.quoted-number", &p,
                         "a number written as a string: gRPC 1.51 accepts it, other gRPC implementations "
                         "may not");
        cc_buf_fini(&p);
    }
    if ((v = json_object_get(mc, "retryPolicy"))) {
        cc_check_path(&p, cc_buf_str(base), "retryPolicy");
        check_retry_policy(c, v, &p);
        cc_buf_fini(&p);
    }
    if (json_object_get(mc, "hedgingPolicy")) {
        cc_check_path(&p, cc_buf_str(base), "hedgingPolicy");
        cc_check_add(c, RL_CHANCFG_WARNING, "sc.hedging-ignored", &p,
                     "gRPC 1.51 does not implement hedging: this policy is ignored%s",
                     json_object_get(mc, "retryPolicy") ? " (and gRFC A6 forbids it next to a retryPolicy)" : "");
        cc_buf_fini(&p);
    }
}

static const char *const sc_fields[] = {"methodConfig", "retryThrottling", "loadBalancingPolicy", "loadBalancingConfig",
                                        "healthCheckConfig"};

void cc_check_service_config(cc_check *c, const json_t *sc)
{
    cc_buf base;
    cc_check_path(&base, "$.client.service_config", NULL);
    if (!json_is_object(sc)) {
        if (json_is_string(sc))
            cc_check_add(c, RL_CHANCFG_ERROR, "sc.type", &base,
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
        cc_check_path(&p, cc_buf_str(&base), "retryThrottling");
        check_throttling(c, v, &p);
        cc_buf_fini(&p);
    }
    if ((v = json_object_get(sc, "loadBalancingPolicy"))) {
        cc_check_path(&p, cc_buf_str(&base), "loadBalancingPolicy");
        static const char *const lb[] = {"pick_first", "round_robin", "grpclb"};
        bool ok = false;
        for (size_t i = 0; i < NELEM(lb) && json_is_string(v); i++)
            ok |= strcmp(lb[i], json_string_value(v)) == 0;
        if (!json_is_string(v)) {
            sc_type(c, &p, "a string", v);
        } else if (!ok) {
            cc_buf u;
            cc_check_user(&u, json_string_value(v));
            const char *s = cc_suggest(json_string_value(v), lb, NELEM(lb), sizeof(char *));
            cc_check_add(c, RL_CHANCFG_ERROR, "sc.lb-policy", &p,
                         "%s is not a load-balancing policy of gRPC 1.51 (pick_first, round_robin, "
                         "grpclb)%s%s%s",
                         cc_buf_str(&u), s ? "; did you mean \"" : "", s ? s : "", s ? "\"?" : "");
            cc_buf_fini(&u);
        }
        cc_buf_fini(&p);
    }
    if ((v = json_object_get(sc, "loadBalancingConfig")) && !json_is_array(v)) {
        cc_check_path(&p, cc_buf_str(&base), "loadBalancingConfig");
        sc_type(c, &p, "an array of {policy: config} objects", v);
        cc_buf_fini(&p);
    }
    if ((v = json_object_get(sc, "healthCheckConfig")) && !json_is_object(v)) {
        cc_check_path(&p, cc_buf_str(&base), "healthCheckConfig");
        sc_type(c, &p, "an object", v);
        cc_buf_fini(&p);
    }
    if ((v = json_object_get(sc, "methodConfig"))) {
        cc_check_path(&p, cc_buf_str(&base), "methodConfig");
        if (!json_is_array(v)) {
            sc_type(c, &p, "an array", v);
        } else {
            size_t i;
            const json_t *mc;
            json_array_foreach((json_t *)v, i, mc)
            {
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
