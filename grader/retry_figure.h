/* retry_figure: the retry exercise's picture (figure.h): one call through
 * the config's channel and each attempt the baseline saw, drawn from what
 * ex_retry.c measured. Nothing here judges; nothing is owned. */
#ifndef GR_RETRY_FIGURE_H
#define GR_RETRY_FIGURE_H

#include "exercise.h"
#include "relaylab.pb-c.h"

#include <grpc/status.h>
#include <stddef.h>
#include <stdint.h>

/* The picture of one call through the config's channel (ms since the
 * client started it): the call as the client saw it, and each attempt of
 * |rpc| the baseline saw, red when it was one too many (|want| attempts
 * were right; 0: no bound), grey when the baseline failed it on purpose,
 * blue when it answered; the caller's deadline as an event. Rows past the
 * figure's room are summed in the last. */
void gr_retry_attempts_figure(gr_scenario_result *out, const char *rpc, int64_t start_ns, int64_t end_ns,
                              grpc_status_code status, const Relaylab__ObserveReply *obs, int64_t budget_ms,
                              size_t want);

#endif
