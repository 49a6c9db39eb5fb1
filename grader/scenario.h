/* scenario: the steps every exercise's scenarios repeat, under one rule for
 * stopping. A step returns 0 when the scenario goes on, or GR_DECIDED
 * (verdict.h: what gr_result returns) once it has written the verdict into
 * |out| (FAIL, TIMEOUT, CRASH, or ERROR when the grader itself could not go
 * on): the scenario then stops, `if (step(...)) goto done;`. Positive, so it
 * never reads as an RL_E code: a grader failure is an ERROR verdict in
 * |out|, not a return value. Exercise helpers that end a scenario early
 * (ex_*.c, leak.h, config_check.h, process.h) follow the same rule. */
#ifndef GR_SCENARIO_H
#define GR_SCENARIO_H

#include "exercise.h"
#include "relaylab.pb-c.h"
#include "rl_probe.h"
#include "rl_stream.h"

#include <grpc/grpc.h>
#include <stdbool.h>
#include <stdint.h>

/* A call's status comes when its deadline passes, from the client's own
 * gRPC timer; this is how long after that the grader still waits before it
 * calls the missing status its own failure (ERROR), never the submission's.
 * Two seconds is a loaded machine's scheduling delay many times over. */
#define GR_SCENARIO_GRACE_MS 2000
/* A cancelled call's status is made by the client's own gRPC at once; this
 * bounds the wait for it on a loaded machine. */
#define GR_SCENARIO_CANCEL_MS 1000
/* How long the baseline's Observer may take to answer one query. It answers
 * in a few ms; 3 s once ran out (an ERROR verdict, 1 run of 20) with the
 * grader at nice 19 beside a CPU hog per core and a load average of 25 on
 * 2 cores. Waiting longer costs nothing when it answers. */
#define GR_SCENARIO_OBSERVER_MS 10000

/* The crash check's waits. A submission that dies shows it to a client a
 * moment before its exit is visible to the driver: the kernel closes its
 * sockets (the client sees UNAVAILABLE) and drops its threads from /proc
 * while the process exits, and the driver sees the exit only once the
 * leader is a zombie it can reap. When the scenario has such a sign, the
 * check waits GR_SCENARIO_EXIT_LAG_MS for the exit, a loaded machine's
 * scheduling delay many times over. Without one (a status a live server
 * sends, a timeout), the check only looks whether the submission is
 * already dead: GR_SCENARIO_CRASH_LOOK_MS, kept short because a scenario
 * may still have a timed window to watch after it. Both are the longest
 * of the waits the exercises used before they shared this check. */
#define GR_SCENARIO_EXIT_LAG_MS   1000
#define GR_SCENARIO_CRASH_LOOK_MS 200

/* The Observer did not answer: ERROR "the baseline's observer did not
 * answer", followed by " (why)" when |rc| is an RL_E code (rl_strerror).
 * The one wording every scenario uses. Returns GR_DECIDED. */
int gr_scenario_observer_failed(gr_scenario_result *out, int rc);

/* Asks the baseline's Observer (the grader's private channel) for the
 * records tagged |tag| ("" = all), waiting GR_SCENARIO_OBSERVER_MS. Returns
 * 0 with *obs (free with gr_scenario_free_obs), or GR_DECIDED with
 * gr_scenario_observer_failed's ERROR and *obs NULL. */
int gr_scenario_observe(gr_ctx *ctx, const char *tag, Relaylab__ObserveReply **obs, gr_scenario_result *out);

/* Judges an rl_observe_until result: an observation the scenario can read
 * is one where the Observer answered at least once (|obs| not NULL) and did
 * not fail for good (|rc| not RL_EGRPC); |rc| RL_ETIMEOUT with a reply only
 * means the condition did not hold in time, which the scenario judges.
 * Returns 0, or gr_scenario_observer_failed(out, rc). */
int gr_scenario_observed(int rc, const Relaylab__ObserveReply *obs, gr_scenario_result *out);

/* Frees *obs (may be NULL) and sets it to NULL. */
void gr_scenario_free_obs(Relaylab__ObserveReply **obs);

/* Starts unary |method| on |ch| with |req| and absolute deadline
 * |deadline_ns| (not RL_NO_DEADLINE), then waits as gr_scenario_wait.
 * Returns 0 with |c| done, or GR_DECIDED with ERROR "cannot start
 * the client call" or gr_scenario_wait's. |out| may be NULL when the caller
 * judges from |c| alone (then nothing is written). Finish |c| with
 * rl_probe_call_fini either way. */
int gr_scenario_call(rl_probe_call *c, grpc_channel *ch, const char *method, const ProtobufCMessage *req,
                     int64_t deadline_ns, gr_scenario_result *out);

/* Waits for started call |c| until GR_SCENARIO_GRACE_MS past its deadline.
 * Returns 0 with |c| done, or GR_DECIDED with ERROR "the client
 * call had no status 2000 ms after its own deadline" (|out| may be NULL). A
 * call without a deadline cannot be waited for this way: ERROR at once. */
int gr_scenario_wait(rl_probe_call *c, gr_scenario_result *out);

/* Cancels |c| and waits up to GR_SCENARIO_CANCEL_MS for its status. Returns
 * the instant of the cancel (rl_probe_call_cancel). */
int64_t gr_scenario_cancel(rl_probe_call *c);

/* The same for a Produce stream (rl_stream_cancel). */
int64_t gr_scenario_cancel_stream(rl_stream *s);

/* The crash check's wait: GR_SCENARIO_EXIT_LAG_MS when |likely_dead| (the
 * scenario saw a sign of death), GR_SCENARIO_CRASH_LOOK_MS otherwise. */
int64_t gr_scenario_crash_wait_ms(bool likely_dead);

/* True when a call's |status| is a sign that the submission died: gRPC
 * gives UNAVAILABLE when the connection closed under the call. */
bool gr_scenario_status_says_dead(grpc_status_code status);

/* Waits gr_scenario_crash_wait_ms(|likely_dead|) for the submission to
 * die. Returns GR_DECIDED with CRASH "the submission <how> <what>"
 * and its last output when it did (gr_crash_check), else 0. */
int gr_scenario_crash_check(gr_ctx *ctx, bool likely_dead, const char *what, gr_scenario_result *out);

/* The crash check after a call's status: none when |c| ended OK (a
 * submission that answered was alive), else gr_scenario_crash_check with
 * the status as the sign. */
int gr_scenario_crash_after(gr_ctx *ctx, const rl_probe_call *c, const char *what, gr_scenario_result *out);

/* The shared end of a scenario: frees *obs and finishes |c| (either may be
 * NULL) and returns 0, the run function's return once |out| holds the
 * verdict: `done: return gr_scenario_done(&c, &obs);`. */
int gr_scenario_done(rl_probe_call *c, Relaylab__ObserveReply **obs);

#endif
