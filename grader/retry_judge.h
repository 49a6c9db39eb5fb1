/* retry_judge: the retry exercise's rules (gRFC A6), apart from its
 * scenarios (ex_retry.c) so that they are unit-tested without a channel
 * (tests/unit/grader/test_retry_judge.c): why a code would not be retried
 * under a config, a channel gRPC made lame, and each scenario's verdict as
 * a pure function of what one faulted call showed (facts in, a verdict
 * and its feedback out). Nothing is owned. */
#ifndef GR_RETRY_JUDGE_H
#define GR_RETRY_JUDGE_H

#include "verdict.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the config makes of the method's calls. */
typedef struct gr_retry_policy {
    bool retries_off;         /* grpc.enable_retries is 0 */
    bool has_method;          /* a methodConfig names the method */
    bool has_retry;           /* ... with a retryPolicy gRPC takes */
    int max_attempts;         /* as gRPC uses it: clamped to 5 */
    uint32_t retryable_codes; /* bit (1u << code) for each retryable status */
} gr_retry_policy;

/* Why |code| would not be retried for Baseline/|rpc| under |p|, for
 * feedback (or "maxAttempts is N" when it would). Into |buf|. */
void gr_retry_why_not_retried(const gr_retry_policy *p, const char *rpc, int code, char *buf, size_t len);

/* A lame channel (gRPC refused the service config) fails every call with
 * INVALID_ARGUMENT before anything reaches the baseline: true, with the
 * FAIL's words in |buf|, when the baseline saw none of the call's
 * attempts (|seen| 0) and it ended INVALID_ARGUMENT (|details| its
 * message). */
bool gr_retry_lame(size_t seen, int status, const char *details, char *buf, size_t len);

/* One call through the config's channel, the baseline failing its first
 * |fail_first| attempts with |code|. */
typedef struct gr_retry_facts {
    gr_retry_policy policy;
    int64_t budget_ms; /* the caller's deadline */
    int fail_first;    /* attempts the baseline failed on purpose */
    int code;          /* with this status */
    size_t n;          /* the method's attempts the baseline saw */
    bool numbered;     /* attempt k carried grpc-previous-rpc-attempts k - 1 */
    int status;        /* what the client got */
    int64_t ms;        /* its start to its status */
} gr_retry_facts;

/* unavailable-then-ok: UNAVAILABLE |fail_first| times, then OK: PASS for
 * one attempt more, numbered, and OK; FAIL when the deadline ended it (the
 * backoff), or otherwise (gr_retry_why_not_retried). */
gr_verdict gr_retry_judge_retried_to_ok(const gr_retry_facts *f, char *buf, size_t len);

/* non-retryable: an answer code once: PASS for 1 attempt and the code at
 * the caller; else FAIL. */
gr_verdict gr_retry_judge_answer_not_retried(const gr_retry_facts *f, char *buf, size_t len);

/* persistent: UNAVAILABLE every time: PASS for maxAttempts attempts (1
 * without a policy for it) and UNAVAILABLE; FAIL when the deadline ended
 * it (the backoff), or for any other count. */
gr_verdict gr_retry_judge_gives_up(const gr_retry_facts *f, char *buf, size_t len);

/* work-once: Work failed once: PASS for 1 attempt and UNAVAILABLE at the
 * caller, whatever the policy says of the code; else FAIL. */
gr_verdict gr_retry_judge_work_once(const gr_retry_facts *f, char *buf, size_t len);

/* committed-stream: a Fetch failed UNAVAILABLE after its first message:
 * FAIL when gRPC refused the config (no attempt, INVALID_ARGUMENT); PASS
 * for 1 attempt, 1 message, none repeated, UNAVAILABLE; else FAIL (a
 * committed call retried). |n| the attempts the baseline saw, |messages|
 * and |duplicates| what the client read. */
gr_verdict gr_retry_judge_committed_stream(size_t n, int messages, int duplicates, int status, char *buf, size_t len);

#endif
