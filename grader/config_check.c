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
    else if (first) {
        /* Every broken rule's id, then the first one's path and reason. */
        char ids[256] = "";
        size_t n = 0;
        for (size_t i = 0; i < rep.nfindings; i++)
            if (rep.findings[i].severity == RL_CHANCFG_ERROR && n < sizeof ids)
                n += (size_t)snprintf(ids + n, sizeof ids - n, "%s%s", n ? ", " : "", rep.findings[i].rule);
        rl_grade_result(out, RL_FAIL, "%zu rule%s broken (%s); first at %s: %s (bin/channel-config check says more)",
                        rep.nerrors, rep.nerrors == 1 ? "" : "s", ids, first->path, first->why);
    }
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
