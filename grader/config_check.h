/* config_check: the `check` scenario both config exercises (keepalive,
 * retry) open with: the file loads, bin/channel-config's rules find no error,
 * and gRPC itself accepts the client args. */
#ifndef RL_GRADER_CONFIG_CHECK_H
#define RL_GRADER_CONFIG_CHECK_H

#include "exercise.h"
#include "rl_chancfg.h"
#include "run.h"

/* Loads the submitted config. Returns 0 with *out (free with
 * rl_chancfg_free), or fills |res| with FAIL and the reason and returns -1. */
int rl_config_load(rl_grade_ctx *ctx, rl_chancfg **out, rl_scenario_result *res);

/* The `check` scenario. */
int rl_config_check_run(rl_grade_ctx *ctx, rl_scenario_result *out);

#endif
