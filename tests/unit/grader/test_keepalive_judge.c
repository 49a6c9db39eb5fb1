/* Unit tests for the keepalive exercise's rules (grader/keepalive_judge):
 * why a client let the NAT forget its connection, in gRPC's order, and each
 * live scenario's verdict chain, branch by branch, with its exact
 * feedback. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <grpc/status.h>

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "keepalive_judge.h"

static char fb[GR_FEEDBACK_MAX];

/* A world whose NAT forgets after 4000 ms, a config pinging every 20 s of
 * a 240 s world scaled 1:60. */
static gr_ka_run run(void)
{
    gr_ka_run r = {.real_ka = 20000,
                   .idle_ms = 240000,
                   .nat_ms = 4000,
                   .kind = "l4-lb",
                   .permit = 1,
                   .max_pings = 0,
                   .ka = "20000 ms",
                   .note = " (world w)",
                   .dropped = 0,
                   .connections = 1};
    return r;
}

/* gRPC's order: no keepalive, a period no shorter than the idle timeout,
 * no pings without a call (between calls only), the ping limit, else the
 * pings were late. */
static void why_dropped_in_grpcs_order(void **state)
{
    (void)state;
    char buf[200];
    gr_ka_run r = run();
    gr_ka_why_dropped(&r, true, buf, sizeof buf);
    assert_string_equal(buf, "the client's pings (every 20000 ms) did not reach the l4-lb in time");
    r.max_pings = 2;
    gr_ka_why_dropped(&r, true, buf, sizeof buf);
    assert_string_equal(buf, "after 2 pings with no data the client holds pings back "
                             "(grpc.http2.max_pings_without_data 2; 0 means no limit)");
    r.permit = 0;
    gr_ka_why_dropped(&r, true, buf, sizeof buf);
    assert_string_equal(buf, "with no call in flight the client does not ping (grpc.keepalive_permit_without_calls 0)");
    gr_ka_why_dropped(&r, false, buf, sizeof buf); /* in a call, permit does not matter */
    assert_true(strncmp(buf, "after 2 pings", 13) == 0);
    r.real_ka = 239999;
    gr_ka_why_dropped(&r, true, buf, sizeof buf);
    assert_true(strncmp(buf, "with no call in flight", 22) == 0);
    r.real_ka = 240000; /* as long as the idle timeout: too long */
    gr_ka_why_dropped(&r, true, buf, sizeof buf);
    assert_string_equal(buf, "the client pings every 240000 ms, not more often than the l4-lb forgets (240000 ms)");
    r.real_ka = INT_MAX;
    gr_ka_why_dropped(&r, true, buf, sizeof buf);
    assert_string_equal(buf, "the client has no keepalive (grpc.keepalive_time_ms unset)");
}

static void idle_each_branch(void **state)
{
    (void)state;
    gr_ka_run r = run();
    gr_ka_call first = {.status = GRPC_STATUS_OK, .ms = 3}, second = {.status = GRPC_STATUS_OK, .ms = GR_KA_FAST_MS};
    assert_int_equal(gr_ka_judge_idle(&r, &first, &second, fb, sizeof fb), GR_PASS);
    assert_string_equal(fb,
                        "after 10000 ms with no call the next call took 1000 ms; the NAT dropped nothing (world w)");
    second.ms = GR_KA_FAST_MS + 1;
    assert_int_equal(gr_ka_judge_idle(&r, &first, &second, fb, sizeof fb), GR_PASS);
    assert_non_null(strstr(fb, "took 1001 ms (a busy machine); the NAT"));
    /* A success after a drop is the reconnect's, not the rule's. */
    r.dropped = 1;
    assert_int_equal(gr_ka_judge_idle(&r, &first, &second, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "client rule broke: after 10000 ms with no call, the NAT (idle 4000 ms) dropped 1 "
                            "connection and the next call succeeded only after 1001 ms: the client's pings (every "
                            "20000 ms) did not reach the l4-lb in time (world w)");
    r.dropped = 2;
    second.status = GRPC_STATUS_UNAVAILABLE;
    assert_int_equal(gr_ka_judge_idle(&r, &first, &second, fb, sizeof fb), GR_FAIL);
    assert_non_null(strstr(fb, "dropped 2 connections and the next call UNAVAILABLE after 1001 ms: "));
    r.dropped = 0; /* failed with nothing dropped: still the client's */
    assert_int_equal(gr_ka_judge_idle(&r, &first, &second, fb, sizeof fb), GR_FAIL);
    first.status = GRPC_STATUS_INTERNAL;
    snprintf(first.details, sizeof first.details, "bad arg");
    assert_int_equal(gr_ka_judge_idle(&r, &first, &second, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "the first call failed INTERNAL (bad arg): the client args do not work at all (world w)");
}

static void quiet_call_each_branch(void **state)
{
    (void)state;
    gr_ka_run r = run();
    gr_ka_call call = {.status = GRPC_STATUS_OK, .ms = 10004};
    assert_int_equal(gr_ka_judge_quiet_call(&r, &call, false, fb, sizeof fb), GR_PASS);
    assert_string_equal(fb, "a 10000 ms call that sent nothing succeeded; the NAT dropped nothing (world w)");
    /* Pings that drew a GOAWAY: the server's rule, named first. */
    call.status = GRPC_STATUS_UNAVAILABLE;
    assert_int_equal(gr_ka_judge_quiet_call(&r, &call, true, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "server rule broke: the server answered the pings with GOAWAY too_many_pings during a "
                            "silent call (client keepalive 20000 ms) (world w)");
    r.dropped = 1;
    r.max_pings = 2;
    assert_int_equal(gr_ka_judge_quiet_call(&r, &call, false, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "client rule broke: a 10000 ms call that sent nothing ended UNAVAILABLE after 10004 ms; "
                            "the NAT (idle 4000 ms) dropped 1 connection: after 2 pings with no data the client holds "
                            "pings back (grpc.http2.max_pings_without_data 2; 0 means no limit) (world w)");
    call.status = GRPC_STATUS_OK; /* it succeeded, yet the NAT dropped one */
    assert_int_equal(gr_ka_judge_quiet_call(&r, &call, false, fb, sizeof fb), GR_FAIL);
}

static void no_goaway_each_branch(void **state)
{
    (void)state;
    gr_ka_run r = run();
    gr_ka_goaway g = {.calls = 3, .first_failure = "", .min_ms = 300000, .strikes = 2};
    assert_int_equal(gr_ka_judge_no_goaway(&r, &g, fb, sizeof fb), GR_PASS);
    assert_string_equal(fb, "3 calls and idle gaps over 15000 ms: no too_many_pings, 1 connection (world w)");
    r.connections = 2;
    assert_int_equal(gr_ka_judge_no_goaway(&r, &g, fb, sizeof fb), GR_PASS);
    assert_non_null(strstr(fb, "2 connections (world w)"));
    g.failed = 1;
    g.first_failure = "UNAVAILABLE (GOAWAY)";
    assert_int_equal(gr_ka_judge_no_goaway(&r, &g, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "1 of 3 calls failed, first UNAVAILABLE (GOAWAY) (world w)");
    g.too_many_pings = true;
    assert_int_equal(gr_ka_judge_no_goaway(&r, &g, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "server rule broke: GOAWAY too_many_pings within 15000 ms: the client pings every 20000 "
                            "ms, the server allows one every 300000 ms (and between calls only if it permits pings "
                            "without calls) and strikes out after 2 (world w)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(why_dropped_in_grpcs_order),
        cmocka_unit_test(idle_each_branch),
        cmocka_unit_test(quiet_call_each_branch),
        cmocka_unit_test(no_goaway_each_branch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
