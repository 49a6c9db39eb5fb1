/* process: what the relay exercises' scenarios (deadline, cancel,
 * shutdown) share: starting a relaylab.Relay/Process call on the
 * submission, waiting for it to reach the baseline, and reading the
 * baseline's records for its tag, with the failure wording they all use. */
#ifndef GR_PROCESS_H
#define GR_PROCESS_H

#include "exercise.h"
#include "rl_probe.h"
#include "run.h"
#include "scenario.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Starts Process{tag, lookup_delay_ms, steps, step_ms} on the submission
 * (noting |tag| as the grader's, gr_note_tag) with absolute deadline
 * |deadline_ns| (RL_NO_DEADLINE: none). |c| must be finished with
 * rl_probe_call_fini whatever this returns. Returns 0, or
 * GR_DECIDED with ERROR "cannot start the Process call" in |res|. */
int gr_process_start(gr_ctx *ctx, rl_probe_call *c, const char *tag, uint32_t lookup_delay_ms, uint32_t steps,
                     uint32_t step_ms, int64_t deadline_ns, gr_scenario_result *res);

/* Observes what the call tagged |tag| caused on the baseline: every record
 * of the run whose tag is |tag| or one the grader never sent (a submission
 * choosing the tags of its downstream calls cannot hide them), without the
 * records of the grader's other calls. Returns 0 with *out, or
 * GR_DECIDED with the observer's ERROR in |res| (scenario.h). */
int gr_process_observe(gr_ctx *ctx, const char *tag, Relaylab__ObserveReply **out, gr_scenario_result *res);

/* rl_observe_until on the same records as gr_process_observe; judge its
 * result with gr_scenario_observed. */
int gr_process_observe_until(gr_ctx *ctx, const char *tag, rl_observe_pred pred, void *user, int64_t until_ns,
                             int64_t poll_ms, Relaylab__ObserveReply **out);

/* How long a relay may take to reach the downstream call: one that works
 * does it in milliseconds (a Python relay starts well under a second), but
 * 3 s once ran out (TIMEOUT 1 run of 20: Lookup seen, Work not yet) with
 * the grader at nice 19 beside a CPU hog per core at a load average of 20
 * on 2 cores. The wait costs time only for a relay that never gets there. */
#define GR_PROCESS_REACH_MS 10000

/* Starts Process{tag, lookup_ms, steps, step_ms} with no deadline and
 * waits until the baseline shows |method| ("Lookup" or "Work") running (Work
 * with a step done, so what comes next lands in real work), at most
 * |reach_ms| after the start. Returns 0 when it runs, or
 * GR_DECIDED: CRASH, FAIL (Process ended first, naming its status
 * and what the baseline saw), TIMEOUT (neither happened) or the observer's
 * ERROR. |c| must be finished with rl_probe_call_fini either way. */
int gr_process_start_and_reach(gr_ctx *ctx, rl_probe_call *c, const char *tag, const char *method, uint32_t lookup_ms,
                               uint32_t steps, uint32_t step_ms, int64_t reach_ms, gr_scenario_result *out);

/* gr_process_start_and_reach, except when |method| ran to its end and
 * Process answered OK before the grader saw |method| running (a grader
 * starved for longer than the call: not the relay's doing). That returns
 * GR_PROCESS_MISSED with |out| untouched, so the caller may try again with
 * a new call; gr_process_start_and_reach makes it an ERROR. */
#define GR_PROCESS_MISSED 2
int gr_process_try_reach(gr_ctx *ctx, rl_probe_call *c, const char *tag, const char *method, uint32_t lookup_ms,
                         uint32_t steps, uint32_t step_ms, int64_t reach_ms, gr_scenario_result *out);

/* "UNAVAILABLE (Socket closed)": the status and its message. */
void gr_process_status_text(const rl_probe_call *c, char *buf, size_t len);

/* True when the call ended OK with a ProcessReply carrying |tag|; otherwise
 * writes why into |why|. */
bool gr_process_reply_ok(const rl_probe_call *c, const char *tag, char *why, size_t len);

/* Milliseconds from |from_ns| to |to_ns|, rounded down (may be negative). */
static inline int64_t gr_ms_between(int64_t from_ns, int64_t to_ns)
{
    int64_t d = to_ns - from_ns;
    return d >= 0 ? d / 1000000 : -((-d + 999999) / 1000000);
}

#endif
