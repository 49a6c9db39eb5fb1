/* config_check: the world of the config exercises and their shared `check`
 * scenario; see config_check.h. */
#include "config_check.h"

#include "config_figure.h"

#include "rl_err.h"
#include "rl_file.h"
#include "rl_marker.h"
#include "rl_path.h"
#include "rl_text.h"
#include "scenario.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The retry exercise waits for a call (its deadline + 2 s) and then for the
 * observer (2 s); a longer deadline would risk the scenario watchdog (60 s). */
#define RETRY_MAX_DEADLINE_MS 30000
/* The balance exercise runs at 1:30 and waits for its long calls after the
 * run: 60 s of the world is 2 s of the lab. */
#define BALANCE_MAX_DEADLINE_MS 60000

int gr_config_world(const char *exercise, const char *world_file, const char *variant, rl_chancfg_world *out, char *err,
                    size_t errlen)
{
    memset(out, 0, sizeof *out);
    char path[PATH_MAX + 64];
    if (!world_file) {
        char rel[96];
        snprintf(rel, sizeof rel, "grader/worlds/%s.json", exercise);
        if (rl_path_find_data(rel, path, sizeof path) != RL_OK) {
            snprintf(err, errlen, "cannot find the %s exercise's world file %s", exercise, rel);
            return RL_ENOTFOUND;
        }
        world_file = path;
    }
    char why[400];
    int rc = rl_chancfg_world_load(world_file, variant, out, why, sizeof why);
    if (rc != RL_OK) {
        snprintf(err, errlen, "world: %s", why);
        return rc;
    }
    int64_t v;
    if (strcmp(exercise, "keepalive") == 0 && rl_chancfg_intermediary(out->deployment, &v, NULL) != RL_OK) {
        snprintf(err, errlen, "world %s (%s): the keepalive exercise needs an intermediary", out->name, world_file);
        rc = RL_EINVAL;
    } else if (strcmp(exercise, "retry") == 0 && rl_chancfg_calls_deadline(out->deployment, &v) == RL_OK &&
               (v < 100 || v > RETRY_MAX_DEADLINE_MS)) {
        snprintf(err, errlen,
                 "world %s (%s): the retry exercise runs calls in real time; give it a call deadline "
                 "of 100..%d ms, not %lld",
                 out->name, world_file, RETRY_MAX_DEADLINE_MS, (long long)v);
        rc = RL_EINVAL;
    } else if (strcmp(exercise, "balance") == 0 && rl_chancfg_calls_deadline(out->deployment, &v) == RL_OK &&
               (v < 100 || v > BALANCE_MAX_DEADLINE_MS)) {
        snprintf(err, errlen,
                 "world %s (%s): the balance exercise keeps a longest call in flight on every client; "
                 "give it a call deadline of 100..%d ms, not %lld",
                 out->name, world_file, BALANCE_MAX_DEADLINE_MS, (long long)v);
        rc = RL_EINVAL;
    }
    if (rc != RL_OK)
        rl_chancfg_world_fini(out);
    return rc;
}

/* FAIL feedback naming every broken rule with its path and reason. Each
 * takes ~300 bytes and the feedback has room for a dozen or more; if a config
 * breaks even more, the last words say how many are not shown and where to
 * see them, so no rule is lost without a word. |reserve| bytes are kept for
 * what the caller appends. */
static void broken_rules(const rl_chancfg_report *rep, const char *world, size_t reserve, gr_scenario_result *out)
{
    char tail[160];
    reserve += sizeof tail; /* room kept for the closing remark and the caller's */
    gr_result(out, GR_FAIL, "[%s] %zu rule%s broken", world, rep->nerrors, rep->nerrors == 1 ? "" : "s");
    size_t shown = 0;
    for (size_t i = 0; i < rep->nfindings; i++) {
        const rl_chancfg_finding *f = &rep->findings[i];
        if (f->severity != RL_CHANCFG_ERROR)
            continue;
        size_t n = strlen(out->feedback);
        size_t need = strlen(f->rule) + strlen(f->path) + strlen(f->why) + 16;
        if (n + need + reserve > sizeof out->feedback)
            break;
        snprintf(out->feedback + n, sizeof out->feedback - n, "%s%zu. %s at %s: %s", shown ? "; " : ": ", shown + 1,
                 f->rule, f->path, f->why);
        shown++;
    }
    if (shown < rep->nerrors)
        snprintf(tail, sizeof tail, "; and %zu more not shown here: `bin/channel-config check FILE` lists them all",
                 rep->nerrors - shown);
    else
        snprintf(tail, sizeof tail, " (`bin/channel-config check FILE` says the same)");
    size_t n = strlen(out->feedback);
    snprintf(out->feedback + n, sizeof out->feedback - n, "%s", tail);
    /* Paths and reasons name the submission's own keys: make them printable
     * like all feedback (gr_result). */
    rl_text_printable_inplace(out->feedback, sizeof out->feedback, 0);
}

int gr_config_load(gr_ctx *ctx, rl_chancfg **out, char *err, size_t errlen)
{
    *out = NULL;
    /* Read as the student could (rl_file.h): the grader runs as root, and a
     * link to a root-only file, or a FIFO no one writes, is the submission's
     * doing: a FAIL that says so, never the file's words or a hang. */
    char *buf, why[200];
    size_t len;
    /* Beneath the folder the grader checked, held open: a folder swapped
     * for a link to a classmate's since then is not read. */
    const char *rel = gr_config_rel(ctx);
    /* Named so that it cannot be placed beneath the held folder (it lies
     * elsewhere, or the name led elsewhere at the check): by its path, but
     * still judged against the held folder, through its handle. */
    char held[64];
    const char *root = gr_submission_dir(ctx);
    if (gr_submission_dir_fd(ctx) > 0) {
        snprintf(held, sizeof held, "/proc/self/fd/%d", gr_submission_dir_fd(ctx));
        root = held;
    }
    int rc = rel ? rl_file_read_untrusted_at(gr_submission_dir_fd(ctx), rel, RL_CHANCFG_MAX_BYTES, &buf, &len, why,
                                             sizeof why)
                 : rl_file_read_untrusted(gr_config_path(ctx), root, RL_CHANCFG_MAX_BYTES, &buf, &len, why, sizeof why);
    if (rc != RL_OK) {
        snprintf(err, errlen, "the config cannot be loaded: the file %s", why);
        return rc;
    }
    rl_chancfg_diag diag;
    memset(&diag, 0, sizeof diag);
    rc = rl_chancfg_parse(buf, len, out, &diag);
    free(buf);
    if (rc == RL_EPARSE && diag.line)
        snprintf(err, errlen, "the config is not valid JSON: line %d, column %d: %s", diag.line, diag.column,
                 diag.text);
    else if (rc != RL_OK)
        snprintf(err, errlen, "the config cannot be loaded: %s", diag.text[0] ? diag.text : rl_strerror(rc));
    return rc;
}

int gr_config_open(gr_ctx *ctx, const char *exercise, gr_config_env *env, gr_scenario_result *res)
{
    memset(env, 0, sizeof *env);
    rl_chancfg_report_init(&env->notes);
    char err[480];
    const char *variant = gr_variant(ctx);
    if (gr_config_world(exercise, gr_world_path(ctx), variant, &env->world, err, sizeof err) != RL_OK)
        return gr_result(res, GR_ERROR, "%s", err);
    if (env->world.by_seed) {
        /* Quoted in feedback: printable and short. */
        char v[41];
        snprintf(v, sizeof v, "%s", variant);
        rl_printable(v, env->variant, sizeof env->variant);
    }
    if (gr_made_for(ctx)) {
        env->other_identity = true;
        rl_printable(gr_made_for(ctx), env->made_for, sizeof env->made_for);
    }
    rl_chancfg *sub;
    int rc = gr_config_load(ctx, &sub, err, sizeof err);
    if (rc != RL_OK)
        return gr_result(res, GR_FAIL, "%s", err);
    rc = rl_chancfg_in_world(sub, &env->world, &env->cfg, &env->notes);
    rl_chancfg_free(sub);
    if (rc != RL_OK)
        return gr_result(res, GR_ERROR, "out of memory putting the config into its world");
    return 0;
}

void gr_config_close(gr_config_env *env)
{
    rl_chancfg_free(env->cfg);
    env->cfg = NULL;
    rl_chancfg_world_fini(&env->world);
    rl_chancfg_report_fini(&env->notes);
}

const char *gr_config_world_name(const gr_config_env *env, char *buf, size_t len)
{
    char other[80] = "";
    if (env->other_identity)
        snprintf(other, sizeof other, "%s the folder's \"%.40s\"", env->variant[0] ? ", not" : " (not",
                 env->made_for[0] ? env->made_for : "(none)");
    if (env->variant[0])
        snprintf(buf, len, "world %.63s (picked by variant \"%.40s\"%s)", env->world.name, env->variant, other);
    else
        snprintf(buf, len, "world %.63s%s%s", env->world.name, other, other[0] ? ")" : "");
    return buf;
}

const char *gr_config_notes(const gr_config_env *env, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < env->notes.nfindings && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "your ", env->notes.findings[i].path);
    if (n && n < len)
        snprintf(buf + n, len - n, " %s ignored: the exercise sets the world",
                 env->notes.nfindings == 1 ? "is" : "are");
    return buf;
}

/* A folder made for another identity: that comes first in check's
 * feedback (rl_marker.h), whatever the verdict. */
static void identity_first(gr_ctx *ctx, gr_scenario_result *out)
{
    const char *note = gr_identity_note(ctx);
    if (!note)
        return;
    char was[GR_FEEDBACK_MAX];
    snprintf(was, sizeof was, "%s", out->feedback);
    gr_result(out, out->verdict, "%s. %s", note, was);
}

bool gr_config_sets(const rl_chancfg *cfg, rl_chancfg_side side, const char *name, const char *what, char *why,
                    size_t len)
{
    int64_t v;
    bool configured = false;
    if (rl_chancfg_effective_int(cfg, side, name, &v, &configured) == RL_OK && configured && v != INT32_MAX)
        return true;
    snprintf(why, len, "the %s sets no %s%s: %s", side == RL_CHANCFG_CLIENT ? "client" : "server", name,
             configured ? " other than off" : "", what);
    return false;
}

/* A config that leaves the lesson's setting out FAILs the check whatever
 * else it gets right: an empty one breaks no rule, and would otherwise
 * score for knowing nothing. What is left out comes first. */
static void lesson_left_out(gr_scenario_result *out, const char *left_out)
{
    char was[GR_FEEDBACK_MAX];
    snprintf(was, sizeof was, "%s", out->feedback);
    gr_result(out, out->verdict == GR_PASS ? GR_FAIL : out->verdict, "the lesson's setting is left out: %s. %s",
              left_out, was);
}

int gr_config_check_run(gr_ctx *ctx, const char *exercise, gr_config_lesson lesson, gr_scenario_result *out)
{
    gr_config_env env;
    if (gr_config_open(ctx, exercise, &env, out)) {
        gr_config_close(&env);
        identity_first(ctx, out);
        return 0;
    }
    rl_chancfg_report rep;
    rl_chancfg_report_init(&rep);
    int rc = rl_chancfg_check(env.cfg, &rep);
    const rl_chancfg_finding *first = NULL;
    for (size_t i = 0; i < rep.nfindings && !first; i++)
        if (rep.findings[i].severity == RL_CHANCFG_ERROR)
            first = &rep.findings[i];
    rl_chancfg_verdict v;
    memset(&v, 0, sizeof v);
    bool rejected = false;
    /* The world's name first, then the verdict with every broken rule, then
     * what the file declared in vain and the world's numbers. */
    char world[144], notes[200], desc[320], more[540];
    gr_config_notes(&env, notes, sizeof notes);
    rl_chancfg_world_describe(&env.world, desc, sizeof desc);
    gr_config_world_name(&env, world, sizeof world);
    snprintf(more, sizeof more, "%s%s%s", notes, notes[0] ? ". " : "", desc);
    if (rc != RL_OK)
        gr_result(out, GR_ERROR, "[%s] the checker failed: %s", world, rl_strerror(rc));
    else if (first)
        broken_rules(&rep, world, strlen(more) + 1, out);
    else if (rl_chancfg_grpc_verdict(env.cfg, 1000, &v) != RL_OK)
        gr_result(out, GR_ERROR, "[%s] could not get gRPC's own verdict on the client args", world);
    else if (!v.accepted) {
        gr_result(out, GR_FAIL, "[%s] gRPC rejected the client args: %s", world, v.reason);
        rejected = true;
    } else
        gr_result(out, GR_PASS, "[%s] no rule broken (%zu warning%s); gRPC accepts the client args", world,
                  rep.nwarnings, rep.nwarnings == 1 ? "" : "s");
    char left_out[400];
    if (rc == RL_OK && !lesson(env.cfg, left_out, sizeof left_out))
        lesson_left_out(out, left_out);
    gr_feedback_append(out, more);
    identity_first(ctx, out);
    /* The config's numbers against the world's, on one axis. */
    gr_config_fig_in fig = {
        .cfg = env.cfg,
        .unavailable_in_a_row = env.world.unavailable_in_a_row,
        .broken = first      ? first->rule
                  : rejected ? "grpc.rejected"
                             : NULL,
    };
    if (rc == RL_OK)
        gr_config_figure(&out->figure, exercise, &fig);
    rl_chancfg_report_fini(&rep);
    gr_config_close(&env);
    return 0;
}
