/* rl_chancfg_world: the deployment a channel config is judged in.
 *
 * An exercise states the world (intermediary, call deadline, server args a
 * platform fixes) in a world file and judges every submission in it, so a
 * submission cannot make the exercise easier by describing a gentler world.
 * This module loads world files, picks one deployment by name or seed, and
 * puts a config into it; the checker then runs unchanged on the result.
 * Contracts are in rl_chancfg.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rl_chancfg_int.h"
#include "rl_err.h"

#define MAX_DEPLOYMENTS 64

static const char *const file_keys[] = {"description", "default", "deployments"};
static const char *const deployment_keys[] = {"name", "description", "intermediary", "calls", "server", "backend"};
/* The sections of a deployment that are also sections of a channel config. */
static const char *const world_sections[] = {"intermediary", "calls", "server"};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static int fail(char *err, size_t errlen, int rc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t errlen, int rc, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return rc;
}

static bool one_of(const char *key, const char *const *set, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(key, set[i]) == 0)
            return true;
    return false;
}

static bool name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 63)
        return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' || *p == '-'))
            return false;
    return true;
}

/* FNV-1a, 64 bits: simple enough to recompute anywhere (an instructor's
 * spreadsheet, the tests), and it spreads short ids well. */
static uint64_t fnv1a64(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        h ^= *p;
        h *= 0x100000001b3ull;
    }
    return h;
}

/* A config holding only the world sections of |d|. NULL on out-of-memory. */
static rl_chancfg *sections_of(const json_t *d)
{
    rl_chancfg *c = cc_malloc(sizeof(*c));
    if (!c)
        return NULL;
    c->root = json_object();
    if (!c->root) {
        cc_free(c);
        return NULL;
    }
    for (size_t i = 0; i < NELEM(world_sections); i++) {
        json_t *v = json_object_get(d, world_sections[i]);
        json_t *copy = v ? json_deep_copy(v) : NULL;
        if (v && (!copy || json_object_set_new(c->root, world_sections[i], copy) != 0)) {
            rl_chancfg_free(c);
            return NULL;
        }
    }
    return c;
}

/* Judges one deployment: its own keys, then its sections by the channel
 * config's format and arg rules (a world with a misspelt arg would fix
 * nothing). */
static int deployment_check(const json_t *d, const char *where, bool need_name, char *err, size_t errlen)
{
    if (!json_is_object(d))
        return fail(err, errlen, RL_EINVAL, "%s must be an object", where);
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)d, key, v)
    {
        if (!one_of(key, deployment_keys, NELEM(deployment_keys)))
            return fail(err, errlen, RL_EINVAL,
                        "%s has a field \"%.60s\"; a deployment has name, description, intermediary, calls, server, "
                        "backend",
                        where, key);
    }
    v = json_object_get(d, "name");
    if ((v || need_name) && !(json_is_string(v) && name_ok(json_string_value(v))))
        return fail(err, errlen, RL_EINVAL, "%s needs a \"name\" of 1..63 characters a-z 0-9 . _ -", where);
    v = json_object_get(d, "description");
    if (v && !json_is_string(v))
        return fail(err, errlen, RL_EINVAL, "%s: description must be a string", where);
    v = json_object_get(d, "backend");
    if (v) {
        const json_t *run = json_object_get(v, "unavailable_in_a_row");
        /* At most 4: gRPC clamps maxAttempts to 5, so a fifth failure in a
         * row could not be outlasted by any config. */
        if (!json_is_object(v) || json_object_size(v) != 1 || !json_is_integer(run) || json_integer_value(run) < 1 ||
            json_integer_value(run) > 4)
            return fail(err, errlen, RL_EINVAL, "%s: backend must be {\"unavailable_in_a_row\": 1..4}", where);
    }
    rl_chancfg *c = sections_of(d);
    if (!c)
        return fail(err, errlen, RL_ENOMEM, "out of memory");
    rl_chancfg_report rep;
    rl_chancfg_report_init(&rep);
    int rc = rl_chancfg_check(c, &rep);
    if (rc != 0)
        fail(err, errlen, rc, "out of memory");
    /* Only the format's and the args' own rules: the rules that combine
     * values judge choices, and a world alone has made none. */
    for (size_t i = 0; rc == 0 && i < rep.nfindings; i++)
        if (rep.findings[i].severity == RL_CHANCFG_ERROR &&
            (strncmp(rep.findings[i].rule, "schema.", 7) == 0 || strncmp(rep.findings[i].rule, "arg.", 4) == 0))
            rc = fail(err, errlen, RL_EINVAL, "%s: error[%s] %s: %s", where, rep.findings[i].rule, rep.findings[i].path,
                      rep.findings[i].why);
    rl_chancfg_report_fini(&rep);
    rl_chancfg_free(c);
    return rc;
}

static void copy_line(char *dst, size_t len, const char *src)
{
    snprintf(dst, len, "%s", src);
    for (char *p = dst; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = ' ';
}

int rl_chancfg_world_load(const char *path, const char *variant, rl_chancfg_world *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    rl_chancfg *file;
    rl_chancfg_diag diag;
    int rc = rl_chancfg_load(path, &file, &diag);
    if (rc == RL_EPARSE)
        return fail(err, errlen, rc, "%s:%d:%d: invalid JSON: %s", path, diag.line, diag.column, diag.text);
    if (rc != 0)
        return fail(err, errlen, rc, "%s: %s", path, diag.text);
    const json_t *root = file->root;
    const json_t *deps = json_object_get(root, "deployments");
    char where[96];
    const json_t *picked = NULL;
    if (!json_is_object(root)) {
        rc = fail(err, errlen, RL_EINVAL, "%s: a world file is a JSON object", path);
        goto out;
    }
    if (!deps) {
        /* One deployment, the file itself. */
        snprintf(where, sizeof where, "%s", path);
        if ((rc = deployment_check(root, where, false, err, errlen)) != 0)
            goto out;
        picked = root;
        out->count = 1;
    } else {
        const char *key;
        const json_t *v;
        json_object_foreach((json_t *)root, key, v)
        {
            if (!one_of(key, file_keys, NELEM(file_keys))) {
                rc = fail(err, errlen, RL_EINVAL,
                          "%s: a world file with deployments has description, default and deployments, not \"%.60s\"",
                          path, key);
                goto out;
            }
        }
        size_t n = json_is_array(deps) ? json_array_size(deps) : 0;
        if (n == 0 || n > MAX_DEPLOYMENTS) {
            rc = fail(err, errlen, RL_EINVAL, "%s: deployments must be an array of 1..%d deployments", path,
                      MAX_DEPLOYMENTS);
            goto out;
        }
        for (size_t i = 0; i < n; i++) {
            snprintf(where, sizeof where, "%s: deployments[%zu]", path, i);
            if ((rc = deployment_check(json_array_get(deps, i), where, true, err, errlen)) != 0)
                goto out;
            for (size_t j = 0; j < i; j++)
                if (json_equal(json_object_get(json_array_get(deps, i), "name"),
                               json_object_get(json_array_get(deps, j), "name"))) {
                    rc = fail(err, errlen, RL_EINVAL, "%s repeats the name of deployments[%zu]", where, j);
                    goto out;
                }
        }
        const json_t *def = json_object_get(root, "default");
        if (def && !json_is_string(def)) {
            rc = fail(err, errlen, RL_EINVAL, "%s: default must be a deployment's name", path);
            goto out;
        }
        const char *want = variant && *variant ? variant : def ? json_string_value(def) : NULL;
        size_t idx = n;
        for (size_t i = 0; want && i < n; i++)
            if (strcmp(json_string_value(json_object_get(json_array_get(deps, i), "name")), want) == 0)
                idx = i;
        if (idx == n && variant && *variant) {
            idx = (size_t)(fnv1a64(variant) % n);
            out->by_seed = n > 1;
        } else if (idx == n && want) {
            rc = fail(err, errlen, RL_EINVAL, "%s: default \"%.60s\" names no deployment", path, want);
            goto out;
        } else if (idx == n)
            idx = 0;
        picked = json_array_get(deps, idx);
        out->index = idx;
        out->count = n;
    }
    const json_t *name = json_object_get(picked, "name");
    const json_t *desc = json_object_get(picked, "description");
    copy_line(out->name, sizeof out->name, json_is_string(name) ? json_string_value(name) : "world");
    copy_line(out->description, sizeof out->description, json_is_string(desc) ? json_string_value(desc) : "");
    const json_t *run = json_object_get(json_object_get(picked, "backend"), "unavailable_in_a_row");
    out->unavailable_in_a_row = json_is_integer(run) ? (int)json_integer_value(run) : 0;
    out->deployment = sections_of(picked);
    if (!out->deployment)
        rc = fail(err, errlen, RL_ENOMEM, "out of memory");
out:
    rl_chancfg_free(file);
    if (rc != 0)
        rl_chancfg_world_fini(out);
    return rc;
}

void rl_chancfg_world_fini(rl_chancfg_world *w)
{
    rl_chancfg_free(w->deployment);
    memset(w, 0, sizeof(*w));
}

/* "120000", "1", or "true": a JSON scalar as a person reads it. */
static void scalar_text(cc_buf *b, const json_t *v)
{
    if (json_is_integer(v))
        cc_buf_printf(b, "%lld", (long long)json_integer_value(v));
    else if (json_is_boolean(v))
        cc_buf_puts(b, json_is_true(v) ? "true" : "false");
    else if (json_is_string(v))
        cc_buf_user(b, json_string_value(v));
    else
        cc_buf_puts(b, "a non-scalar value");
}

static const char *kind_of(const json_t *im)
{
    const json_t *k = json_object_get(im, "kind");
    return json_is_string(k) ? json_string_value(k) : "intermediary";
}

/* "an l4-lb", "a nat": the article as the kind is read aloud. */
static const char *article(const char *kind)
{
    return strchr("aeiol", kind[0]) && kind[0] ? "an" : "a";
}

void rl_chancfg_world_describe(const rl_chancfg_world *w, char *buf, size_t len)
{
    if (!len)
        return;
    buf[0] = '\0';
    if (!w->deployment)
        return;
    cc_buf b;
    cc_buf_init(&b);
    int64_t idle, deadline;
    const char *kind;
    cc_buf_printf(&b, "%s: ", w->name);
    if (rl_chancfg_intermediary(w->deployment, &idle, &kind) == 0)
        cc_buf_printf(&b, "%s %s that drops connections idle for %lld ms", article(kind), kind, (long long)idle);
    else
        cc_buf_puts(&b, "no intermediary on the path");
    if (rl_chancfg_calls_deadline(w->deployment, &deadline) == 0)
        cc_buf_printf(&b, "; calls run up to %lld ms", (long long)deadline);
    if (w->unavailable_in_a_row)
        cc_buf_printf(&b, "; a restarting backend fails up to %d attempt%s in a row UNAVAILABLE",
                      w->unavailable_in_a_row, w->unavailable_in_a_row == 1 ? "" : "s");
    const json_t *srv = cc_section(w->deployment, "server");
    if (srv && json_object_size(srv)) {
        cc_buf_puts(&b, "; the platform fixes the servers'");
        const char *key;
        const json_t *v;
        const char *sep = " ";
        json_object_foreach((json_t *)srv, key, v)
        {
            cc_buf_printf(&b, "%s%s ", sep, key);
            scalar_text(&b, v);
            sep = ", ";
        }
    }
    snprintf(buf, len, "%s", b.oom ? w->name : cc_buf_str(&b));
    cc_buf_fini(&b);
}

/* Whether two values of server arg |key| are the same to gRPC (1 and true
 * are). */
static bool same_arg(const char *key, const json_t *a, const json_t *b)
{
    const cc_argdef *def = cc_argdef_find(key);
    int64_t x, y;
    if (def && (def->type == CC_INT || def->type == CC_BOOL) && cc_arg_value_ok(def, a, &x) &&
        cc_arg_value_ok(def, b, &y))
        return x == y;
    return json_equal(a, b);
}

static int64_t int_field(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    return json_is_integer(v) ? json_integer_value(v) : -1;
}

static int note(rl_chancfg_report *notes, const cc_buf *path, const cc_buf *why)
{
    if (!notes)
        return 0;
    if (path->oom || why->oom)
        return RL_ENOMEM;
    return rl_chancfg_report_add(notes, RL_CHANCFG_WARNING, "world.ignored", cc_buf_str(path), cc_buf_str(why));
}

/* Puts |theirs| (may be NULL: none) in place of |root|'s section |name|,
 * noting |mine| when it said something else. */
static int replace_section(json_t *root, const char *name, const json_t *theirs, bool differs, const cc_buf *why,
                           rl_chancfg_report *notes)
{
    int rc = 0;
    if (differs) {
        cc_buf p;
        cc_buf_init(&p);
        cc_buf_printf(&p, "$.%s", name);
        rc = note(notes, &p, why);
        cc_buf_fini(&p);
    }
    if (rc == 0 && theirs) {
        json_t *copy = json_deep_copy(theirs);
        if (!copy || json_object_set_new(root, name, copy) != 0)
            rc = RL_ENOMEM;
    } else if (rc == 0)
        json_object_del(root, name);
    return rc;
}

static int put_intermediary(json_t *root, const rl_chancfg_world *w, rl_chancfg_report *notes)
{
    const json_t *mine = json_object_get(root, "intermediary");
    const json_t *theirs = cc_section(w->deployment, "intermediary");
    if (!mine && !theirs)
        return 0;
    bool differs = mine && (!theirs || !json_is_object(mine) ||
                            int_field(mine, "idle_timeout_ms") != int_field(theirs, "idle_timeout_ms") ||
                            strcmp(kind_of(mine), kind_of(theirs)) != 0);
    cc_buf why;
    cc_buf_init(&why);
    if (differs) {
        if (theirs)
            cc_buf_printf(&why, "the exercise's world \"%s\" has %s %s that drops connections idle for %lld ms",
                          w->name, article(kind_of(theirs)), kind_of(theirs),
                          (long long)int_field(theirs, "idle_timeout_ms"));
        else
            cc_buf_printf(&why, "the exercise's world \"%s\" has no intermediary on the path", w->name);
        if (json_is_object(mine) && int_field(mine, "idle_timeout_ms") > 0)
            cc_buf_printf(&why, "; the %s declared here (%lld ms) is ignored", kind_of(mine),
                          (long long)int_field(mine, "idle_timeout_ms"));
        else
            cc_buf_puts(&why, "; the intermediary declared here is ignored");
    }
    int rc = replace_section(root, "intermediary", theirs, differs, &why, notes);
    cc_buf_fini(&why);
    return rc;
}

static int put_calls(json_t *root, const rl_chancfg_world *w, rl_chancfg_report *notes)
{
    const json_t *mine = json_object_get(root, "calls");
    const json_t *theirs = cc_section(w->deployment, "calls");
    if (!mine && !theirs)
        return 0;
    int64_t m = json_is_object(mine) ? int_field(mine, "longest_deadline_ms") : -1;
    int64_t t = theirs ? int_field(theirs, "longest_deadline_ms") : -1;
    bool differs = mine && (!json_is_object(mine) || m != t);
    cc_buf why;
    cc_buf_init(&why);
    if (differs) {
        if (t > 0)
            cc_buf_printf(&why, "calls in the exercise's world \"%s\" run up to %lld ms", w->name, (long long)t);
        else
            cc_buf_printf(&why, "the exercise's world \"%s\" states no call deadline", w->name);
        if (m > 0)
            cc_buf_printf(&why, "; the %lld ms declared here is ignored", (long long)m);
        else
            cc_buf_puts(&why, "; the calls section here is ignored");
    }
    int rc = replace_section(root, "calls", theirs, differs, &why, notes);
    cc_buf_fini(&why);
    return rc;
}

static int put_server(json_t *root, const rl_chancfg_world *w, rl_chancfg_report *notes)
{
    const json_t *theirs = cc_section(w->deployment, "server");
    if (!theirs || !json_object_size(theirs))
        return 0;
    json_t *mine = json_object_get(root, "server");
    if (!mine) {
        json_t *copy = json_deep_copy(theirs);
        return copy && json_object_set_new(root, "server", copy) == 0 ? 0 : RL_ENOMEM;
    }
    if (!json_is_object(mine))
        return 0; /* schema.type reports it; nothing to merge into */
    const char *key;
    const json_t *v;
    int rc = 0;
    json_object_foreach((json_t *)theirs, key, v)
    {
        const json_t *m = json_object_get(mine, key);
        if (m && !same_arg(key, m, v)) {
            cc_buf p, why;
            cc_buf_init(&p);
            cc_buf_init(&why);
            cc_buf_puts(&p, "$.server");
            cc_buf_path_key(&p, key);
            cc_buf_printf(&why, "the platform fixes this server arg at ");
            scalar_text(&why, v);
            cc_buf_printf(&why, " in the exercise's world \"%s\"; the ", w->name);
            scalar_text(&why, m);
            cc_buf_puts(&why, " here is ignored");
            rc = note(notes, &p, &why);
            cc_buf_fini(&p);
            cc_buf_fini(&why);
        }
        json_t *copy = rc == 0 ? json_deep_copy(v) : NULL;
        if (rc == 0 && (!copy || json_object_set_new(mine, key, copy) != 0))
            rc = RL_ENOMEM;
        if (rc)
            break;
    }
    return rc;
}

int rl_chancfg_in_world(const rl_chancfg *cfg, const rl_chancfg_world *w, rl_chancfg **out, rl_chancfg_report *notes)
{
    *out = NULL;
    rl_chancfg *res = cc_malloc(sizeof(*res));
    if (!res)
        return RL_ENOMEM;
    res->root = json_deep_copy(cfg->root);
    if (!res->root) {
        cc_free(res);
        return RL_ENOMEM;
    }
    int rc = 0;
    if (json_is_object(res->root) && w->deployment) {
        rc = put_intermediary(res->root, w, notes);
        if (rc == 0)
            rc = put_calls(res->root, w, notes);
        if (rc == 0)
            rc = put_server(res->root, w, notes);
    }
    if (rc != 0) {
        rl_chancfg_free(res);
        return rc;
    }
    *out = res;
    return 0;
}

int rl_chancfg_calls_deadline(const rl_chancfg *cfg, int64_t *ms)
{
    const json_t *calls = cc_section(cfg, "calls");
    int64_t v = calls ? int_field(calls, "longest_deadline_ms") : -1;
    if (v <= 0 || v > INT32_MAX)
        return RL_ENOTFOUND;
    *ms = v;
    return 0;
}
