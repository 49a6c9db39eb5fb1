/* retry_judge: the retry exercise's rules and verdicts; see retry_judge.h.
 * The wording is the scenarios' own: each verdict function is the chain a
 * scenario ran on what its call showed. */
#include "retry_judge.h"

#include "rl_probe.h"

#include <grpc/status.h>
#include <stdio.h>

void gr_retry_why_not_retried(const gr_retry_policy *p, const char *rpc, int code, char *buf, size_t len)
{
    if (p->retries_off)
        snprintf(buf, len, "grpc.enable_retries is 0, which switches every retryPolicy off");
    else if (!p->has_method || !p->has_retry)
        snprintf(buf, len, "no retryPolicy applies to relaylab.Baseline/%s (methodConfig name must match it)", rpc);
    else if (!(p->retryable_codes & (1u << code)))
        snprintf(buf, len, "%s is not in retryableStatusCodes", rl_status_name(code));
    else
        snprintf(buf, len, "maxAttempts is %d", p->max_attempts);
}

bool gr_retry_lame(size_t seen, int status, const char *details, char *buf, size_t len)
{
    if (seen > 0 || status != GRPC_STATUS_INVALID_ARGUMENT)
        return false;
    snprintf(buf, len,
             "gRPC refused the service config: every call fails INVALID_ARGUMENT (\"%s\") before "
             "it is sent; run bin/channel-config check for the reason",
             details);
    return true;
}

gr_verdict gr_retry_judge_retried_to_ok(const gr_retry_facts *f, char *buf, size_t len)
{
    int run = f->fail_first;
    size_t n = f->n;
    char why[160];
    gr_retry_why_not_retried(&f->policy, "Lookup", GRPC_STATUS_UNAVAILABLE, why, sizeof why);
    if (f->status == GRPC_STATUS_OK && n == (size_t)run + 1 && f->numbered) {
        snprintf(buf, len,
                 "UNAVAILABLE %d time%s in a row, then OK: %d attempts, the client got OK "
                 "in %lld ms",
                 run, run == 1 ? "" : "s", run + 1, (long long)f->ms);
        return GR_PASS;
    }
    if (f->status == GRPC_STATUS_DEADLINE_EXCEEDED)
        snprintf(buf, len,
                 "the retries did not finish within the caller's %lld ms deadline (%zu attempts seen): "
                 "the backoff is too long for it",
                 (long long)f->budget_ms, n);
    else
        snprintf(buf, len,
                 "UNAVAILABLE %d time%s in a row (the world's restarting backend), then OK: the baseline "
                 "saw %zu attempt%s and the client got %s; expected %d attempts and OK: %s",
                 run, run == 1 ? "" : "s", n, n == 1 ? "" : "s", rl_status_name(f->status), run + 1, why);
    return GR_FAIL;
}

gr_verdict gr_retry_judge_answer_not_retried(const gr_retry_facts *f, char *buf, size_t len)
{
    const char *name = rl_status_name(f->code);
    size_t n = f->n;
    if (n == 1 && f->status == f->code) {
        snprintf(buf, len, "%s: 1 attempt, not retried", name);
        return GR_PASS;
    }
    if (n == 1)
        snprintf(buf, len, "%s: 1 attempt, but the client got %s", name, rl_status_name(f->status));
    else
        snprintf(buf, len,
                 "%s was tried %zu times: a request the server rejects fails the same way every time; "
                 "keep such codes out of retryableStatusCodes",
                 name, n);
    return GR_FAIL;
}

gr_verdict gr_retry_judge_gives_up(const gr_retry_facts *f, char *buf, size_t len)
{
    size_t n = f->n;
    const gr_retry_policy *p = &f->policy;
    bool retries = p->has_method && p->has_retry && (p->retryable_codes & (1u << GRPC_STATUS_UNAVAILABLE));
    size_t want = retries ? (size_t)p->max_attempts : 1;
    if (f->status == GRPC_STATUS_DEADLINE_EXCEEDED) {
        snprintf(buf, len,
                 "a persistent UNAVAILABLE: %zu attempts did not finish within the caller's %lld ms "
                 "deadline: the backoff is too long for it",
                 n, (long long)f->budget_ms);
        return GR_FAIL;
    }
    if (n == want && f->status == GRPC_STATUS_UNAVAILABLE) {
        snprintf(buf, len, "a persistent UNAVAILABLE: %zu attempts (maxAttempts %d%s), then UNAVAILABLE", n,
                 retries ? p->max_attempts : 1, retries ? ", at most 5" : "");
        return GR_PASS;
    }
    char why[160];
    gr_retry_why_not_retried(p, "Lookup", GRPC_STATUS_UNAVAILABLE, why, sizeof why);
    snprintf(buf, len,
             "a persistent UNAVAILABLE: the baseline saw %zu attempt%s, expected %zu; the client got "
             "%s%s%s",
             n, n == 1 ? "" : "s", want, rl_status_name(f->status), n < want ? ": " : "", n < want ? why : "");
    return GR_FAIL;
}

gr_verdict gr_retry_judge_work_once(const gr_retry_facts *f, char *buf, size_t len)
{
    if (f->n == 1 && f->status == GRPC_STATUS_UNAVAILABLE) {
        snprintf(buf, len, "Work failed UNAVAILABLE once: 1 attempt, the failure reached the caller");
        return GR_PASS;
    }
    snprintf(buf, len,
             "Work was tried %zu times (client got %s): Work has effects and must run at most once; "
             "give the retryPolicy to Lookup only",
             f->n, rl_status_name(f->status));
    return GR_FAIL;
}

gr_verdict gr_retry_judge_committed_stream(size_t n, int messages, int duplicates, int status, char *buf, size_t len)
{
    if (n == 0 && status == GRPC_STATUS_INVALID_ARGUMENT) {
        snprintf(buf, len,
                 "gRPC refused the service config: the Fetch call failed INVALID_ARGUMENT "
                 "before it was sent; run bin/channel-config check for the reason");
        return GR_FAIL;
    }
    if (n == 1 && messages == 1 && duplicates == 0 && status == GRPC_STATUS_UNAVAILABLE) {
        snprintf(buf, len,
                 "a stream that failed after its first message: 1 attempt, 1 message, "
                 "UNAVAILABLE reached the caller (the call had committed)");
        return GR_PASS;
    }
    snprintf(buf, len,
             "a stream that failed after its first message: %zu attempts, %d messages (%d repeated), "
             "status %s; a committed call must not be retried",
             n, messages, duplicates, rl_status_name(status));
    return GR_FAIL;
}
