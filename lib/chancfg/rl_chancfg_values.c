/* rl_chancfg_values: reading values out of a loaded config as gRPC 1.51
 * reads them, for the checker and for programs that act on a config (the
 * relay, the baseline, the grader): an arg's effective value, the
 * intermediary, one method's settings from the service config; and the
 * parsers under them (proto3 JSON durations, status code names, numbers
 * that gRPC also takes quoted). Readers judge nothing: a value the checker
 * would refuse reads as absent (or as gRPC's default), never as an error. */
#include "rl_chancfg_int.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <stdlib.h>
#include <string.h>

/* ---- channel args ------------------------------------------------------ */

const json_t *cc_section(const rl_chancfg *cfg, const char *name)
{
    const json_t *s = json_is_object(cfg->root) ? json_object_get(cfg->root, name) : NULL;
    return json_is_object(s) ? s : NULL;
}

bool cc_arg_value_ok(const cc_argdef *def, const json_t *v, int64_t *ival)
{
    switch (def->type) {
    case CC_INT:
        if (!json_is_integer(v) || json_integer_value(v) < def->min || json_integer_value(v) > def->max)
            return false;
        *ival = json_integer_value(v);
        return true;
    case CC_BOOL:
        if (json_is_boolean(v)) {
            *ival = json_is_true(v);
            return true;
        }
        if (!json_is_integer(v) || (json_integer_value(v) != 0 && json_integer_value(v) != 1))
            return false;
        *ival = json_integer_value(v);
        return true;
    case CC_STRING:
        if (!json_is_string(v))
            return false;
        if (def->choices) {
            for (const char *const *c = def->choices; *c; c++)
                if (strcmp(*c, json_string_value(v)) == 0)
                    return true;
            return false;
        }
        return true;
    case CC_POINTER: return false;
    }
    return false;
}

cc_state cc_arg_int(const rl_chancfg *cfg, unsigned side, const char *name, int64_t *value)
{
    const cc_argdef *def = cc_argdef_find(name);
    *value = def ? (side == CC_SIDE_CLIENT ? def->def_client : def->def_server) : CC_NODEFAULT;
    const json_t *sec = cc_section(cfg, side == CC_SIDE_CLIENT ? "client" : "server");
    const json_t *v = sec ? json_object_get(sec, name) : NULL;
    if (!v)
        return CC_ABSENT;
    int64_t iv = 0; /* string args are valid without a number */
    if (!def || !(def->sides & side) || !cc_arg_value_ok(def, v, &iv))
        return CC_INVALID;
    *value = iv;
    return CC_VALID;
}

int rl_chancfg_effective_int(const rl_chancfg *cfg, rl_chancfg_side side, const char *name, int64_t *value,
                             bool *configured)
{
    unsigned s = side == RL_CHANCFG_CLIENT ? CC_SIDE_CLIENT : CC_SIDE_SERVER;
    const cc_argdef *def = cc_argdef_find(name);
    if (!def || !(def->sides & s) || (def->type != CC_INT && def->type != CC_BOOL))
        return RL_ENOTFOUND;
    cc_state st = cc_arg_int(cfg, s, name, value);
    if (configured)
        *configured = st == CC_VALID;
    return 0;
}

/* ---- intermediary ------------------------------------------------------ */

int rl_chancfg_intermediary(const rl_chancfg *cfg, int64_t *idle_timeout_ms, const char **kind)
{
    const json_t *im = cc_section(cfg, "intermediary");
    const json_t *t = im ? json_object_get(im, "idle_timeout_ms") : NULL;
    if (!json_is_integer(t) || json_integer_value(t) <= 0)
        return RL_ENOTFOUND;
    *idle_timeout_ms = json_integer_value(t);
    if (kind) {
        const json_t *k = json_object_get(im, "kind");
        *kind = json_is_string(k) ? json_string_value(k) : "intermediary";
    }
    return 0;
}

/* ---- durations, status codes, numbers --------------------------------- */

bool cc_parse_duration(const char *s, cc_duration *d, const char **why)
{
    const char *p = s;
    int64_t secs = 0;
    int32_t nanos = 0;
    if (!isdigit((unsigned char)*p)) {
        *why = *p == '-' ? "is negative" : "does not start with a digit";
        return false;
    }
    for (; isdigit((unsigned char)*p); p++) {
        if (secs > 315576000000LL) {
            *why = "has more than 315576000000 seconds (the proto3 limit)";
            return false;
        }
        secs = secs * 10 + (*p - '0');
    }
    if (*p == '.') {
        p++;
        int digits = 0;
        for (; isdigit((unsigned char)*p); p++, digits++) {
            if (digits == 9) {
                *why = "has more than 9 digits after the point";
                return false;
            }
            nanos = nanos * 10 + (*p - '0');
        }
        if (digits == 0) {
            *why = "has no digits after the point";
            return false;
        }
        for (; digits < 9; digits++)
            nanos *= 10;
    }
    if (*p != 's' || p[1] != '\0') {
        *why = *p == '\0' ? "has no \"s\" suffix (write \"0.1s\", not \"0.1\")"
                          : "is not digits followed by \"s\" (write \"0.1s\" for 100 ms)";
        return false;
    }
    if (secs > 315576000000LL) {
        *why = "has more than 315576000000 seconds (the proto3 limit)";
        return false;
    }
    d->seconds = secs;
    d->nanos = nanos;
    return true;
}

int64_t cc_duration_ms(const cc_duration *d)
{
    return d->seconds * 1000 + d->nanos / 1000000;
}

const char *const cc_status_names[17] = {
    "OK",        "CANCELLED",       "UNKNOWN",           "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",
    "NOT_FOUND", "ALREADY_EXISTS",  "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED",   "OUT_OF_RANGE",    "UNIMPLEMENTED",     "INTERNAL",           "UNAVAILABLE",
    "DATA_LOSS", "UNAUTHENTICATED",
};

const char *cc_status_name(int code)
{
    return code >= 0 && code <= 16 ? cc_status_names[code] : NULL;
}

int cc_status_from_name(const char *name)
{
    for (int i = 0; i <= 16; i++)
        if (strcmp(cc_status_names[i], name) == 0)
            return i;
    return -1;
}

int cc_sc_number(const json_t *v, double *out)
{
    if (json_is_number(v)) {
        *out = json_number_value(v);
        return 1;
    }
    if (json_is_string(v)) {
        /* gRPC 1.51's JSON loader reads "3" as 3 (proto3 JSON allows quoted
         * numbers); accept what it accepts, the checker warns. */
        const char *s = json_string_value(v);
        char *end;
        if (!*s || isspace((unsigned char)*s))
            return 0;
        errno = 0;
        double d = strtod(s, &end);
        if (*end || errno)
            return 0;
        *out = d;
        return 2;
    }
    return 0;
}

/* ---- one method's settings -------------------------------------------- */

static bool name_matches(const json_t *names, const char *service, const char *method)
{
    size_t i;
    const json_t *n;
    json_array_foreach((json_t *)names, i, n)
    {
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
    if (!cc_sc_number(json_object_get(rp, "maxAttempts"), &ma) || ma < 2 || !cc_is_integral(ma) ||
        !cc_sc_number(json_object_get(rp, "backoffMultiplier"), &mult) || !(mult >= FLT_MIN) || !json_is_string(ib) ||
        !cc_parse_duration(json_string_value(ib), &d, &why))
        return;
    out->initial_backoff_ms = cc_duration_ms(&d);
    if (!json_is_string(mb) || !cc_parse_duration(json_string_value(mb), &d, &why))
        return;
    out->max_backoff_ms = cc_duration_ms(&d);
    uint32_t mask = 0;
    size_t i;
    const json_t *e;
    json_array_foreach((json_t *)codes, i, e)
    {
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

int rl_chancfg_method_config(const rl_chancfg *cfg, const char *service, const char *method, rl_chancfg_method *out)
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
        json_array_foreach((json_t *)mcs, i, mc)
        {
            const json_t *names = json_object_get(mc, "name");
            if (json_is_array(names) && name_matches(names, tries[t][0], tries[t][1])) {
                read_method(mc, out);
                return 0;
            }
        }
    }
    return RL_ENOTFOUND;
}
