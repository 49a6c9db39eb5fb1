/* rl_chancfg_args: turning a checked config into what gRPC takes: a
 * grpc_channel_args for the C core, the service config as a JSON string, and
 * source text for Python grpcio's and grpc-js's channel options. All of them
 * list the file's args in file order, then the client's service config. */
#include "rl_chancfg_int.h"

#include <string.h>

typedef struct item {
    const char *key; /* points into the config or the catalogue */
    bool is_string;
    int64_t ival;
    char *sval; /* owned when is_string */
} item;

typedef struct items {
    item *v;
    size_t n;
} items;

static void items_fini(items *it)
{
    for (size_t i = 0; i < it->n; i++)
        cc_free(it->v[i].sval);
    cc_free(it->v);
    it->v = NULL;
    it->n = 0;
}

/* Compact JSON text of |j| in memory from cc_malloc (jansson's own dump
 * would use jansson's allocator, which the caller could not free with ours). */
static char *dump_json(const json_t *j, size_t flags)
{
    size_t n = json_dumpb(j, NULL, 0, flags | JSON_ENCODE_ANY);
    if (n == 0)
        return NULL;
    char *s = cc_malloc(n + 1);
    if (!s)
        return NULL;
    json_dumpb(j, s, n, flags | JSON_ENCODE_ANY);
    s[n] = '\0';
    return s;
}

/* Collects the valid args of |side|. With |lenient| the service config goes
 * in whatever it is (gRPC's verdict is wanted exactly when it is wrong).
 * Returns 0 or RL_ENOMEM. */
static int collect(const rl_chancfg *cfg, unsigned side, bool lenient, items *out)
{
    out->v = NULL;
    out->n = 0;
    const json_t *sec = cc_section(cfg, side == CC_SIDE_CLIENT ? "client" : "server");
    if (!sec)
        return 0;
    out->v = cc_malloc((json_object_size(sec) + 1) * sizeof(item));
    if (!out->v)
        return RL_ENOMEM;
    const char *key;
    const json_t *v;
    const json_t *sc = NULL;
    json_object_foreach((json_t *)sec, key, v)
    {
        if (side == CC_SIDE_CLIENT && strcmp(key, "service_config") == 0) {
            sc = v;
            continue;
        }
        const cc_argdef *def = cc_argdef_find(key);
        int64_t iv = 0;
        if (!def || !(def->sides & side) || !cc_arg_value_ok(def, v, &iv))
            continue;
        item *it = &out->v[out->n];
        memset(it, 0, sizeof(*it));
        it->key = def->name;
        if (def->type == CC_STRING) {
            it->is_string = true;
            if (!(it->sval = cc_strdup(json_string_value(v))))
                goto fail;
        } else {
            it->ival = iv;
        }
        out->n++;
    }
    if (sc && (json_is_object(sc) || lenient)) {
        item *it = &out->v[out->n];
        memset(it, 0, sizeof(*it));
        it->key = GRPC_ARG_SERVICE_CONFIG;
        it->is_string = true;
        it->sval = json_is_string(sc) ? cc_strdup(json_string_value(sc))
                                      : dump_json(sc, JSON_COMPACT | JSON_REAL_PRECISION(15));
        if (!it->sval)
            goto fail;
        out->n++;
    }
    return 0;
fail:
    items_fini(out);
    return RL_ENOMEM;
}

/* Refuses configs with errors: args are only ever built from a clean check. */
static int require_clean(const rl_chancfg *cfg)
{
    rl_chancfg_report rep;
    rl_chancfg_report_init(&rep);
    int rc = rl_chancfg_check(cfg, &rep);
    if (rc == 0 && rep.nerrors)
        rc = RL_EINVAL;
    rl_chancfg_report_fini(&rep);
    return rc;
}

void rl_chancfg_args_free(grpc_channel_args *args)
{
    if (!args)
        return;
    for (size_t i = 0; i < args->num_args; i++) {
        cc_free(args->args[i].key);
        if (args->args[i].type == GRPC_ARG_STRING)
            cc_free(args->args[i].value.string);
    }
    cc_free(args->args);
    cc_free(args);
}

static int build_args(const items *it, const grpc_arg *extra, size_t nextra, grpc_channel_args **out)
{
    grpc_channel_args *a = cc_malloc(sizeof(*a));
    if (!a)
        return RL_ENOMEM;
    a->num_args = 0;
    a->args = cc_malloc((it->n + nextra) * sizeof(grpc_arg));
    if (!a->args) {
        cc_free(a);
        return RL_ENOMEM;
    }
    for (size_t i = 0; i < it->n + nextra; i++) {
        grpc_arg *g = &a->args[a->num_args];
        bool is_string = i < it->n ? it->v[i].is_string : extra[i - it->n].type == GRPC_ARG_STRING;
        const char *key = i < it->n ? it->v[i].key : extra[i - it->n].key;
        g->type = is_string ? GRPC_ARG_STRING : GRPC_ARG_INTEGER;
        if (!(g->key = cc_strdup(key)))
            goto fail;
        if (is_string) {
            const char *s = i < it->n ? it->v[i].sval : extra[i - it->n].value.string;
            if (!(g->value.string = cc_strdup(s))) {
                cc_free(g->key);
                goto fail;
            }
        } else {
            g->value.integer = i < it->n ? (int)it->v[i].ival : extra[i - it->n].value.integer;
        }
        a->num_args++;
    }
    *out = a;
    return 0;
fail:
    rl_chancfg_args_free(a);
    return RL_ENOMEM;
}

int rl_chancfg_channel_args(const rl_chancfg *cfg, rl_chancfg_side side, const grpc_arg *extra, size_t nextra,
                            grpc_channel_args **out)
{
    *out = NULL;
    for (size_t i = 0; i < nextra; i++)
        if (extra[i].type == GRPC_ARG_POINTER)
            return RL_EINVAL;
    int rc = require_clean(cfg);
    if (rc)
        return rc;
    items it;
    if ((rc = collect(cfg, side == RL_CHANCFG_CLIENT ? CC_SIDE_CLIENT : CC_SIDE_SERVER, false, &it)))
        return rc;
    rc = build_args(&it, extra, nextra, out);
    items_fini(&it);
    return rc;
}

int cc_client_args_lenient(const rl_chancfg *cfg, grpc_channel_args **out)
{
    items it;
    int rc = collect(cfg, CC_SIDE_CLIENT, true, &it);
    if (rc)
        return rc;
    rc = build_args(&it, NULL, 0, out);
    items_fini(&it);
    return rc;
}

int rl_chancfg_service_config(const rl_chancfg *cfg, char **out)
{
    *out = NULL;
    const json_t *client = cc_section(cfg, "client");
    const json_t *sc = client ? json_object_get(client, "service_config") : NULL;
    if (!json_is_object(sc))
        return 0;
    *out = dump_json(sc, JSON_COMPACT | JSON_REAL_PRECISION(15));
    return *out ? 0 : RL_ENOMEM;
}

/* A JSON string literal, which is also a valid Python and JavaScript string
 * literal: jansson escapes quotes, backslashes and control characters, and
 * leaves other UTF-8 as is (no \u surrogate pairs, which Python would not
 * join back into one character). */
static void add_string_literal(cc_buf *b, const char *s)
{
    json_t *j = json_string(s);
    char *lit = j ? dump_json(j, 0) : NULL;
    json_decref(j);
    if (!lit) {
        b->oom = true;
        return;
    }
    cc_buf_puts(b, lit);
    cc_free(lit);
}

int rl_chancfg_format_args(const rl_chancfg *cfg, rl_chancfg_side side, rl_chancfg_format format, char **out)
{
    *out = NULL;
    int rc = require_clean(cfg);
    if (rc)
        return rc;
    items it;
    if ((rc = collect(cfg, side == RL_CHANCFG_CLIENT ? CC_SIDE_CLIENT : CC_SIDE_SERVER, false, &it)))
        return rc;
    cc_buf b;
    cc_buf_init(&b);
    bool py = format == RL_CHANCFG_FORMAT_PYTHON;
    cc_buf_puts(&b, py ? "options=[\n" : "{\n");
    for (size_t i = 0; i < it.n; i++) {
        cc_buf_puts(&b, py ? "    (" : "  ");
        add_string_literal(&b, it.v[i].key);
        cc_buf_puts(&b, py ? ", " : ": ");
        if (it.v[i].is_string)
            add_string_literal(&b, it.v[i].sval);
        else
            cc_buf_printf(&b, "%lld", (long long)it.v[i].ival);
        cc_buf_puts(&b, py ? "),\n" : i + 1 < it.n ? ",\n" : "\n");
    }
    cc_buf_puts(&b, py ? "]\n" : "}\n");
    items_fini(&it);
    *out = cc_buf_take(&b);
    return *out ? 0 : RL_ENOMEM;
}

int rl_chancfg_load_args(const char *path, rl_chancfg_side side, grpc_channel_args **out, char *err, size_t errlen)
{
    rl_chancfg *cfg = NULL;
    rl_chancfg_diag diag;
    memset(&diag, 0, sizeof diag);
    int rc = rl_chancfg_load(path, &cfg, &diag);
    if (rc != RL_OK) {
        if (diag.line)
            snprintf(err, errlen, "%s:%d:%d: %s", path, diag.line, diag.column, diag.text);
        else
            snprintf(err, errlen, "%s: %s", path, diag.text[0] ? diag.text : rl_strerror(rc));
        return rc;
    }
    rc = rl_chancfg_channel_args(cfg, side, NULL, 0, out);
    if (rc == RL_EINVAL) {
        rl_chancfg_report rep;
        rl_chancfg_report_init(&rep);
        rl_chancfg_check(cfg, &rep);
        const rl_chancfg_finding *f = NULL;
        for (size_t i = 0; i < rep.nfindings && !f; i++)
            if (rep.findings[i].severity == RL_CHANCFG_ERROR)
                f = &rep.findings[i];
        snprintf(err, errlen, "%s breaks %zu rule%s, first [%s] %s: %s (see bin/channel-config check)", path,
                 rep.nerrors, rep.nerrors == 1 ? "" : "s", f ? f->rule : "?", f ? f->path : "", f ? f->why : "");
        rl_chancfg_report_fini(&rep);
    } else if (rc != RL_OK) {
        snprintf(err, errlen, "%s: %s", path, rl_strerror(rc));
    }
    rl_chancfg_free(cfg);
    return rc;
}
