/* config_check: the shared `check` scenario of the config exercises; see
 * config_check.h. */
#include "config_check.h"

#include "rl_err.h"

#include <stdio.h>
#include <string.h>

int rl_config_load(rl_grade_ctx *ctx, rl_chancfg **out, rl_scenario_result *res)
{
    rl_chancfg_diag diag;
    memset(&diag, 0, sizeof diag);
    int rc = rl_chancfg_load(rl_grade_config_path(ctx), out, &diag);
    if (rc == RL_OK)
        return 0;
    if (diag.line)
        rl_grade_result(res, RL_FAIL, "the config is not valid JSON: line %d, column %d: %s", diag.line,
                        diag.column, diag.text);
    else
        rl_grade_result(res, RL_FAIL, "the config cannot be loaded: %s", diag.text[0] ? diag.text : rl_strerror(rc));
    return -1;
}

/* FAIL feedback naming every broken rule with its path and reason. Each
 * takes ~300 bytes and the feedback has room for a dozen or more; if a config
 * breaks even more, the last words say how many are not shown and where to
 * see them, so no rule is lost without a word. */
static void broken_rules(const rl_chancfg_report *rep, rl_scenario_result *out)
{
    /* Room kept for the closing remark. */
    char tail[160];
    const size_t reserve = sizeof tail;
    rl_grade_result(out, RL_FAIL, "%zu rule%s broken", rep->nerrors, rep->nerrors == 1 ? "" : "s");
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
}

int rl_config_check_run(rl_grade_ctx *ctx, rl_scenario_result *out)
{
    rl_chancfg *cfg;
    if (rl_config_load(ctx, &cfg, out))
        return 0;
    rl_chancfg_report rep;
    rl_chancfg_report_init(&rep);
    int rc = rl_chancfg_check(cfg, &rep);
    const rl_chancfg_finding *first = NULL;
    for (size_t i = 0; i < rep.nfindings && !first; i++)
        if (rep.findings[i].severity == RL_CHANCFG_ERROR)
            first = &rep.findings[i];
    rl_chancfg_verdict v;
    memset(&v, 0, sizeof v);
    if (rc != RL_OK)
        rl_grade_result(out, RL_ERROR, "the checker failed: %s", rl_strerror(rc));
    else if (first)
        broken_rules(&rep, out);
    else if (rl_chancfg_grpc_verdict(cfg, 1000, &v) != RL_OK)
        rl_grade_result(out, RL_ERROR, "could not get gRPC's own verdict on the client args");
    else if (!v.accepted)
        rl_grade_result(out, RL_FAIL, "gRPC rejected the client args: %s", v.reason);
    else
        rl_grade_result(out, RL_PASS, "no rule broken (%zu warning%s); gRPC accepts the client args", rep.nwarnings,
                        rep.nwarnings == 1 ? "" : "s");
    rl_chancfg_report_fini(&rep);
    rl_chancfg_free(cfg);
    return 0;
}
