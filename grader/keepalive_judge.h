/* keepalive_judge: the keepalive exercise's rules, apart from its scenarios
 * (ex_keepalive.c) so that they are unit-tested without a live run
 * (tests/unit/grader/test_keepalive_judge.c): why a client let the NAT
 * forget its connection, and each live scenario's verdict as a pure
 * function of what it measured (facts in, a verdict and its feedback
 * out). Times are the lab's ms unless said. Nothing is owned: every
 * pointer is read during the call only. */
#ifndef GR_KEEPALIVE_JUDGE_H
#define GR_KEEPALIVE_JUDGE_H

#include "verdict.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GR_KA_QUIET_MS      10000 /* idle gap, and the silent call's length */
#define GR_KA_FAST_MS       1000  /* a call after the idle gap takes longer only on a busy machine */
#define GR_KA_GOAWAY_RUN_MS 15000 /* how long no-goaway keeps the connection busy and idle */

/* What a live run's verdicts quote of the config, the world and the NAT. */
typedef struct gr_ka_run {
    int64_t real_ka;   /* the config's client keepalive time (world ms), INT_MAX: off */
    int64_t idle_ms;   /* the world's intermediary timeout (world ms) */
    int64_t nat_ms;    /* the lab NAT's */
    const char *kind;  /* the intermediary's kind: "nat", "l4-lb" */
    int64_t permit;    /* the client's grpc.keepalive_permit_without_calls (0 unset) */
    int64_t max_pings; /* the client's grpc.http2.max_pings_without_data (2 unset) */
    const char *ka;    /* the client keepalive time in words: "60000 ms", "off" */
    const char *note;  /* the world and its scale, closing every feedback */
    int dropped;       /* connections the NAT went silent on */
    int connections;   /* connections it accepted */
} gr_ka_run;

/* One call through the NAT: its status, time and status message. */
typedef struct gr_ka_call {
    int status;
    int64_t ms;
    char details[160];
} gr_ka_call;

/* Why the client let the NAT forget the connection, from the config's own
 * client args in |r|, in the order gRPC applies them. |between_calls|: the
 * silence was with no call in flight (else during a call that sent
 * nothing). Into |buf|. */
void gr_ka_why_dropped(const gr_ka_run *r, bool between_calls, char *buf, size_t len);

/* idle: a call, GR_KA_QUIET_MS with no call, another. FAIL when the first
 * failed (the client args do not work); PASS when the second succeeded and
 * the NAT dropped nothing; else FAIL with gr_ka_why_dropped. */
gr_verdict gr_ka_judge_idle(const gr_ka_run *r, const gr_ka_call *first, const gr_ka_call *second, char *buf,
                            size_t len);

/* quiet-call: a call of GR_KA_QUIET_MS that sends nothing. PASS when it
 * succeeded and the NAT dropped nothing; else FAIL: for the server's
 * GOAWAY too_many_pings (|too_many_pings|), or with gr_ka_why_dropped. */
gr_verdict gr_ka_judge_quiet_call(const gr_ka_run *r, const gr_ka_call *call, bool too_many_pings, char *buf,
                                  size_t len);

/* What no-goaway saw over GR_KA_GOAWAY_RUN_MS of calls and idle gaps. */
typedef struct gr_ka_goaway {
    bool too_many_pings;       /* the server sent GOAWAY too_many_pings */
    int calls, failed;         /* calls made, and failed */
    const char *first_failure; /* the first failed one's status and message */
    int64_t min_ms;            /* the server's min_ping_interval_without_data (world ms; 300000 unset) */
    int64_t strikes;           /* its max_ping_strikes (2 unset) */
} gr_ka_goaway;

/* no-goaway: FAIL for a GOAWAY too_many_pings, then for a failed call;
 * else PASS. */
gr_verdict gr_ka_judge_no_goaway(const gr_ka_run *r, const gr_ka_goaway *g, char *buf, size_t len);

#endif
