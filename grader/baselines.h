/* baselines: the run's reference downstream servers, as the driver starts,
 * restarts, stops and judges them.
 *
 * Each baseline is a bin/baseline in its own process group on a TCP port of
 * its own (what the submission is given) with its Observer on a unix
 * socket in the run's private folder (what only the grader reaches). A
 * baseline that fails or dies is the grader's problem unless the
 * submission could have caused it; the verdicts that say which are made
 * here. The scenario-side accessors (gr_baseline_addr, gr_restart_baseline,
 * ...) are declared in run.h; these are the driver's own (run.c). */
#ifndef GR_BASELINES_H
#define GR_BASELINES_H

#include "driver.h"

#include <stddef.h>

/* Starts ctx->nbaselines baselines, each on a fresh port, with one retry
 * each (a start that fails was seen while bin/ was being rebuilt: the
 * grader's problem, never the submission's). Returns 0, or an RL_E* code
 * with the reason in |err|; what started is stopped by gr_baselines_stop. */
int gr_baselines_start(gr_ctx *ctx, char *err, size_t errlen);

/* Stops every running baseline (SIGTERM, SIGKILL after a short grace) and
 * destroys its channel. Safe on baselines never started. */
void gr_baselines_stop(gr_ctx *ctx);

/* After the scenario: when a baseline the grader did not stop has died,
 * rewrites |res| as ERROR (the grader's fault) or, unsandboxed and killed
 * by a signal the submission may have sent, FAIL. Leaves |res| alone
 * otherwise. */
void gr_baselines_judge_dead(gr_ctx *ctx, gr_scenario_result *res);

/* After the scenario, while the submission runs: when it holds more than
 * GR_BASELINE_CONNECTIONS_MAX connections to the baselines, rewrites |res|
 * as FAIL, quoting what the scenario had said. */
void gr_baselines_judge_flood(gr_ctx *ctx, gr_scenario_result *res);

/* Connections to a baseline beyond which a submission is flooding it: an
 * honest relay holds one or a few per baseline (a channel per call, leaked,
 * is still hundreds in a scenario); the baseline keeps its observer's
 * descriptors whatever comes (baseline/fd_guard.h). */
#define GR_BASELINE_CONNECTIONS_MAX 1000

#endif
