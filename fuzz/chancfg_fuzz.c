/* libFuzzer target for the channel-config library: any bytes go through
 * parse, check, the arg builders and the value lookups, and the results must
 * keep the library's promises (known rule ids, one-line findings, counts
 * that add up, args only from a clean config, JSON that is JSON). gRPC's
 * verdict is left out: it is global state and network, not parsing.
 * Build and run: make fuzz (FUZZ_TIME=60 by default). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "chancfg/rl_chancfg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int known_rule(const char *id)
{
    size_t n;
    const rl_chancfg_rule *r = rl_chancfg_rules(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(r[i].id, id) == 0)
            return 1;
    return 0;
}

static void must(int cond)
{
    if (!cond)
        abort();
}

static void json_must_parse(const char *text)
{
    json_error_t err;
    json_t *j = json_loads(text, JSON_DECODE_ANY, &err);
    must(j != NULL);
    json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rl_chancfg *cfg;
    rl_chancfg_diag diag;
    int rc = rl_chancfg_parse((const char *)data, size, &cfg, &diag);
    if (rc != 0) {
        must(rc == RL_EPARSE || rc == RL_ETOOBIG);
        must(strchr(diag.text, '\n') == NULL);
        return 0;
    }
    rl_chancfg_report rep;
    rl_chancfg_report_init(&rep);
    must(rl_chancfg_check(cfg, &rep) == 0);
    size_t errors = 0;
    for (size_t i = 0; i < rep.nfindings; i++) {
        const rl_chancfg_finding *f = &rep.findings[i];
        must(known_rule(f->rule));
        must(f->path[0] == '$' && !strchr(f->path, '\n') && !strchr(f->why, '\n'));
        must(f->why[0] != '\0');
        errors += f->severity == RL_CHANCFG_ERROR;
    }
    must(errors == rep.nerrors && rep.nfindings == rep.nerrors + rep.nwarnings);

    for (int side = 0; side < 2; side++) {
        rl_chancfg_side s = side ? RL_CHANCFG_SERVER : RL_CHANCFG_CLIENT;
        grpc_channel_args *a = NULL;
        rc = rl_chancfg_channel_args(cfg, s, NULL, 0, &a);
        must(rep.nerrors ? rc == RL_EINVAL && !a : rc == 0 && a);
        for (size_t i = 0; a && i < a->num_args; i++)
            must(a->args[i].key && (a->args[i].type != GRPC_ARG_STRING || a->args[i].value.string));
        rl_chancfg_args_free(a);
        char *text = NULL;
        rc = rl_chancfg_format_args(cfg, s, RL_CHANCFG_FORMAT_NODE, &text);
        must(rep.nerrors ? rc == RL_EINVAL : rc == 0);
        if (text)
            json_must_parse(text); /* the node form is a JSON object */
        free(text);
        text = NULL;
        rc = rl_chancfg_format_args(cfg, s, RL_CHANCFG_FORMAT_PYTHON, &text);
        must(rep.nerrors ? rc == RL_EINVAL : rc == 0);
        must(!text || strncmp(text, "options=[\n", 10) == 0);
        free(text);
    }
    char *sc = NULL;
    must(rl_chancfg_service_config(cfg, &sc) == 0);
    if (sc)
        json_must_parse(sc);
    free(sc);

    rl_chancfg_method m;
    static const char *const names[][2] = {
        {"relaylab.Baseline", "Lookup"}, {"relaylab.Baseline", ""}, {"", ""}, {"a", "b"}};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (rl_chancfg_method_config(cfg, names[i][0], names[i][1], &m) == 0 && m.has_retry)
            must(m.max_attempts >= 2 && m.max_attempts <= 5 && m.retryable_codes != 0);
    int64_t v, idle;
    const char *kind;
    rl_chancfg_effective_int(cfg, RL_CHANCFG_CLIENT, "grpc.keepalive_time_ms", &v, NULL);
    rl_chancfg_effective_int(cfg, RL_CHANCFG_SERVER, "grpc.http2.max_ping_strikes", &v, NULL);
    if (rl_chancfg_intermediary(cfg, &idle, &kind) == 0)
        must(idle > 0 && kind != NULL);

    rl_chancfg_report_fini(&rep);
    rl_chancfg_free(cfg);
    return 0;
}
