/* judge: the rules more than one exercise uses; each exercise's own are in
 * its NAME_judge.[ch] (docs/DESIGN.md, the checklist). Here: the window a
 * call that must not come is watched for (cancel and deadline), the
 * feedback for an expiry of a call that had no deadline (deadline's none,
 * and process.c's start-and-reach, which cancel and shutdown use), and the
 * integration tests' own expiry bound. Pure, unit-tested in
 * tests/unit/grader/test_judge.c. Times are milliseconds. */
#ifndef GR_JUDGE_H
#define GR_JUDGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How long to watch for a call that must not come (Work after a cancel,
 * after an expired deadline): a relay that makes it anyway does so within
 * a few ms, tens on a loaded machine. */
#define GR_JUDGE_LATE_CALL_WINDOW_MS 500
/* A deadline to the status that reports it, for the integration tests'
 * own bounds (tests/integration/tolerances.py). No judge uses it: a
 * client's deadline ends its call whatever the server does, so how late
 * the status comes measures the grader's scheduling, not the submission. */
#define GR_JUDGE_EXPIRE_MS 100

/* Feedback for a Process whose client set NO deadline but that ended with
 * DEADLINE_EXCEEDED after |after_ms|, the baseline having seen |nlookup|
 * Lookup and |nwork| Work calls. Only the relay can have produced that
 * status: a call without a deadline cannot expire. The usual cause, in any
 * language, is passing "the time left" on as a timeout when there is none
 * (grpcio's time_remaining() then gives ~9.2e18 s, which the library turns
 * into an invalid deadline and fails the call at once, before sending it).
 * Names the hop that never arrived and the fix. Returns the snprintf
 * length. */
int gr_judge_no_deadline_expired_feedback(int64_t after_ms, size_t nlookup, size_t nwork, char *buf, size_t len);

#endif
