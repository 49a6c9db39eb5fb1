/* config_check: the world of the config exercises and their shared `check`
 * scenario; see config_check.h. */
#include "config_check.h"

#include "rl_err.h"
#include "rl_path.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* The retry exercise waits for a call (its deadline + 2 s) and then for the
 * observer (2 s); a longer deadline would risk the scenario watchdog (60 s). */
#define RETRY_MAX_DEADLINE_MS 30000

int rl_config_world(const char *exercise, const char *world_file, const char *variant, rl_chancfg_world *out,
                    char *err, size_t errlen)
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
        snprintf(err, errlen, "world %s (%s): the retry exercise runs calls in real time; give it a call deadline "
                 "of 100..%d ms, not %lld", out->name, world_file, RETRY_MAX_DEADLINE_MS, (long long)v);
        rc = RL_EINVAL;
    }
    if (rc != RL_OK)
        rl_chancfg_world_fini(out);
    return rc;
}

int rl_config_open(rl_grade_ctx *ctx, const char *exercise, rl_config_env *env, rl_scenario_result *res)
{
    memset(env, 0, sizeof *env);
    rl_chancfg_report_init(&env->notes);
    char err[480];
    const char *variant = rl_grade_variant(ctx);
    if (rl_config_world(exercise, rl_grade_world_path(ctx), variant, &env->world, err, sizeof err) != RL_OK)
        return rl_grade_result(res, RL_ERROR, "%s", err) - 1;
    if (env->world.by_seed) {
        /* Quoted in feedback: printable and short. */
        snprintf(env->variant, sizeof env->variant, "%.40s", variant);
        for (char *p = env->variant; *p; p++)
            if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f || *p == '"')
                *p = '?';
    }
    rl_chancfg *sub;
    rl_chancfg_diag diag;
    memset(&diag, 0, sizeof diag);
    int rc = rl_chancfg_load(rl_grade_config_path(ctx), &sub, &diag);
    if (rc != RL_OK) {
        if (diag.line)
            rl_grade_result(res, RL_FAIL, "the config is not valid JSON: line %d, column %d: %s", diag.line,
                            diag.column, diag.text);
        else
            rl_grade_result(res, RL_FAIL, "the config cannot be loaded: %s", diag.text[0] ? diag.text : rl_strerror(rc));
        return -1;
    }
    rc = rl_chancfg_in_world(sub, &env->world, &env->cfg, &env->notes);
    rl_chancfg_free(sub);
    if (rc != RL_OK)
        return rl_grade_result(res, RL_ERROR, "out of memory putting the config into its world") - 1;
    return 0;
}

void rl_config_close(rl_config_env *env)
{
    rl_chancfg_free(env->cfg);
    env->cfg = NULL;
    rl_chancfg_world_fini(&env->world);
    rl_chancfg_report_fini(&env->notes);
}

const char *rl_config_world_name(const rl_config_env *env, char *buf, size_t len)
{
    if (env->variant[0])
        snprintf(buf, len, "world %.63s (picked by variant \"%.40s\")", env->world.name, env->variant);
    else
        snprintf(buf, len, "world %.63s", env->world.name);
    return buf;
}

const char *rl_config_notes(const rl_config_env *env, char *buf, size_t len)
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

int rl_config_check_run(rl_grade_ctx *ctx, const char *exercise, rl_scenario_result *out)
{
    rl_config_env env;
    if (rl_config_open(ctx, exercise, &env, out)) {
        rl_config_close(&env);
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
    /* The verdict first, then the world it was judged in, then what the
     * file declared in vain: feedback is one line, and its end may be cut. */
    char verdict[400], world[144], notes[200], desc[320];
    rl_verdict res = RL_PASS;
    if (rc != RL_OK) {
        res = RL_ERROR;
        snprintf(verdict, sizeof verdict, "the checker failed: %s", rl_strerror(rc));
    } else if (first) {
        /* Every broken rule's id, then the first one's path and reason. */
        char ids[160] = "";
        size_t n = 0;
        for (size_t i = 0; i < rep.nfindings; i++)
            if (rep.findings[i].severity == RL_CHANCFG_ERROR && n < sizeof ids)
                n += (size_t)snprintf(ids + n, sizeof ids - n, "%s%s", n ? ", " : "", rep.findings[i].rule);
        res = RL_FAIL;
        snprintf(verdict, sizeof verdict, "%zu rule%s broken (%s); first at %s: %s", rep.nerrors,
                 rep.nerrors == 1 ? "" : "s", ids, first->path, first->why);
    } else if (rl_chancfg_grpc_verdict(env.cfg, 1000, &v) != RL_OK) {
        res = RL_ERROR;
        snprintf(verdict, sizeof verdict, "could not get gRPC's own verdict on the client args");
    } else if (!v.accepted) {
        res = RL_FAIL;
        snprintf(verdict, sizeof verdict, "gRPC rejected the client args: %.360s", v.reason);
    } else
        snprintf(verdict, sizeof verdict, "no rule broken (%zu warning%s); gRPC accepts the client args",
                 rep.nwarnings, rep.nwarnings == 1 ? "" : "s");
    /* Feedback is one line of 511 bytes: the world's name, the verdict (cut:
     * bin/channel-config check says more), what the file declared in vain,
     * then the world's numbers, which only a long verdict leaves out. */
    if (strlen(verdict) > 280)
        memcpy(verdict + 277, "...", 4);
    rl_config_notes(&env, notes, sizeof notes);
    rl_chancfg_world_describe(&env.world, desc, sizeof desc);
    rl_config_world_name(&env, world, sizeof world);
    rl_grade_result(out, res, "[%s] %s%s%s. %s", world, verdict, notes[0] ? "; " : "", notes, desc);
    rl_chancfg_report_fini(&rep);
    rl_config_close(&env);
    return 0;
}
