/* Unit tests for the balance exercise's rules (grader/balance_judge): the
 * stall, whether a run measured anything, and each live scenario's verdict
 * chain, branch by branch, at its boundaries and with its exact feedback. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "balance_judge.h"

static char fb[GR_FEEDBACK_MAX];
static gr_bal_live l;

/* A run of the reference config: age 60 s, grace 30 s, the backend in at
 * 40 s of world time, 8 reconnects, 3000 calls. */
static void reference(void)
{
    memset(&l, 0, sizeof l);
    l.age_ms = 60000;
    l.grace_ms = 30000;
    snprintf(l.age, sizeof l.age, "60000 ms");
    snprintf(l.grace, sizeof l.grace, "30000 ms");
    snprintf(l.note, sizeof l.note, " (world w)");
    l.longest_ms = 20000;
    l.fill_ms = 1000;
    l.share_after = 0.31;
    l.share_tail = 0.33;
    l.tail_rate[0] = l.tail_rate[1] = l.tail_rate[2] = 100;
    l.tail_conns[0] = l.tail_conns[1] = l.tail_conns[2] = 2;
    l.sent = 3000;
    l.long_sent = 6;
    l.attempts = 1;
    l.lag_ms = 12;
    l.lb_turn_ms = 3;
    l.reconnects = 8;
    l.per_client_min = 2.2;
    l.storm = 2;
    l.storms = 0;
}

static void stall_bounds_and_words(void **state)
{
    (void)state;
    assert_false(gr_bal_stalled(GR_BAL_STALL_MS, GR_BAL_STALL_MS, 0));
    assert_true(gr_bal_stalled(GR_BAL_STALL_MS + 1, 0, 0));
    assert_true(gr_bal_stalled(0, GR_BAL_STALL_MS + 1, 0));
    assert_true(gr_bal_stalled(0, 0, 1));
    const int64_t lags[] = {400, 350, 900};
    gr_bal_stall_feedback(3, lags, 20, 2, fb, sizeof fb);
    assert_string_equal(fb, "the machine stalled in each of 3 runs (the grader's own calls up to 400, 350, ... ms "
                            "late, 300 ms the limit; its balancer 20 ms in the last; or a call that answers at once "
                            "ran out of its 2000 ms: 2 in the last run): grade again on a less loaded machine");
    gr_bal_stall_feedback(1, lags, 20, 0, fb, sizeof fb);
    assert_non_null(strstr(fb, "in each of 1 runs (the grader's own calls up to 400, 400 ms late"));
}

/* Something answered: a call that neither failed nor raced. */
static void answered_needs_one_call_that_succeeded(void **state)
{
    (void)state;
    reference();
    assert_int_equal(gr_bal_judge_answered(&l, fb, sizeof fb), GR_PASS);
    l.failed = 2999;
    assert_int_equal(gr_bal_judge_answered(&l, fb, sizeof fb), GR_PASS);
    l.raced = 1;
    assert_int_equal(gr_bal_judge_answered(&l, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "all 3000 calls failed (first with no status), so no connection carried a call and there "
                            "is nothing to judge: the check scenario says what gRPC refuses (world w)");
    snprintf(l.first_failure, sizeof l.first_failure, "UNAVAILABLE");
    assert_int_equal(gr_bal_judge_answered(&l, fb, sizeof fb), GR_FAIL);
    assert_non_null(strstr(fb, "(first UNAVAILABLE)"));
    l.sent = 0;
    assert_int_equal(gr_bal_judge_answered(&l, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "the clients made no call: with this config nothing could be measured (world w)");
}

static void fills_bound_and_each_reason(void **state)
{
    (void)state;
    reference();
    l.fill_ms = GR_BAL_WORLD_FILL_MS / GR_BAL_LAB_SCALE; /* just in time */
    l.share_after = GR_BAL_FAIR_MIN;
    assert_int_equal(gr_bal_judge_fills(&l, fb, sizeof fb), GR_PASS);
    assert_string_equal(fb, "the joining backend took its share (25 % or more over 30 s) 120 s after it joined (bound "
                            "120 s), 25 % of the calls from then on; at the end calls/s [100 100 100] over "
                            "connections [2 2 2]; max_connection_age 60000 ms (world w)");
    l.share_after = 0.24; /* reached, not kept */
    assert_int_equal(gr_bal_judge_fills(&l, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "the joining backend took its share only 120 s after it joined (bound 120 s), 24 % from "
                            "then on: connections were re-made (8 reconnects) but the backend did not get its share "
                            "(world w)");
    l.share_after = 0.3;
    l.fill_ms++;
    assert_int_equal(gr_bal_judge_fills(&l, fb, sizeof fb), GR_FAIL);
    /* An age whose +10 % passes the join plus the bound (150 s). */
    l.fill_ms = -1;
    l.age_ms = 136364; /* x 1.1 = 150000: not past it */
    assert_int_equal(gr_bal_judge_fills(&l, fb, sizeof fb), GR_FAIL);
    assert_non_null(strstr(fb, "but the backend did not get its share"));
    l.age_ms = 136365;
    snprintf(l.age, sizeof l.age, "136365 ms");
    assert_int_equal(gr_bal_judge_fills(&l, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "the joining backend never took 25 % of the calls within 120 s (at the end it had 33 %; "
                            "calls/s [100 100 100]): max_connection_age 136365 ms (+10 % jitter) is longer than the "
                            "120 s the backend may wait after joining 30 s in: connections are re-made too late "
                            "(world w)");
    l.age_ms = 60000;
    l.has_lb = true;
    snprintf(l.lb, sizeof l.lb, "pick_first or other");
    assert_int_equal(gr_bal_judge_fills(&l, fb, sizeof fb), GR_FAIL);
    assert_non_null(strstr(fb, "): connections were re-made, yet the calls did not follow (client policy pick_first "
                               "or other) (world w)"));
    snprintf(l.lb, sizeof l.lb, "round_robin");
    assert_int_equal(gr_bal_judge_fills(&l, fb, sizeof fb), GR_FAIL);
    assert_non_null(strstr(fb, "connections were re-made (8 reconnects) but"));
    l.age_ms = INT_MAX;
    assert_int_equal(gr_bal_judge_fills(&l, fb, sizeof fb), GR_FAIL);
    assert_non_null(strstr(fb, "): no grpc.max_connection_age_ms on the server: the clients' connections are made "
                               "once, and an L4 balancer places connections, not calls (world w)"));
}

static void no_failures_each_branch(void **state)
{
    (void)state;
    reference();
    assert_int_equal(gr_bal_judge_no_failures(&l, fb, sizeof fb), GR_PASS);
    assert_string_equal(fb, "3000 calls, 6 of them long (18000 ms), 8 reconnects: none cut; max_connection_age 60000 "
                            "ms, grace 30000 ms (world w); the grader lagged at most 12 ms, its balancer 3 ms");
    l.raced = 1;
    snprintf(l.first_race, sizeof l.first_race, "UNAVAILABLE");
    l.attempts = 2;
    assert_int_equal(gr_bal_judge_no_failures(&l, fb, sizeof fb), GR_PASS);
    assert_non_null(strstr(fb, "grace 30000 ms; 1 call that answers at once met a GOAWAY on the way and failed "
                               "UNAVAILABLE, gRPC 1.51's own race"));
    assert_non_null(strstr(fb, "(world w); judged on run 2 (the machine stalled in the one before; this one lagged "
                               "12 ms)"));
    l.raced = 2;
    assert_int_equal(gr_bal_judge_no_failures(&l, fb, sizeof fb), GR_PASS);
    assert_non_null(strstr(fb, "; 2 calls that answer at once met"));
    l.raced = 0;
    l.attempts = 1;
    l.failed = 3;
    l.failed_long = 2;
    l.grace_ms = 19999;
    snprintf(l.grace, sizeof l.grace, "19999 ms");
    snprintf(l.first_failure, sizeof l.first_failure, "UNAVAILABLE (GOAWAY)");
    assert_int_equal(gr_bal_judge_no_failures(&l, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "3 of 3000 calls failed (2 of 6 long ones), first UNAVAILABLE (GOAWAY): after the GOAWAY "
                            "the server closes the connection 19999 ms later, but calls run up to 20000 ms: set "
                            "grpc.max_connection_age_grace_ms to the longest deadline or more (world w); the grader "
                            "lagged at most 12 ms, its balancer 3 ms");
    l.grace_ms = 20000; /* as long as the longest call: the grace is not why */
    assert_int_equal(gr_bal_judge_no_failures(&l, fb, sizeof fb), GR_FAIL);
    assert_non_null(strstr(fb, "first UNAVAILABLE (GOAWAY) (world w)"));
    /* Nothing reconnected: nothing was put to the test. */
    l.failed = l.failed_long = 0;
    l.reconnects = 0;
    assert_int_equal(gr_bal_judge_no_failures(&l, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "nothing reconnected (3000 calls on the clients' first 6 connections, max_connection_age "
                            "60000 ms): nothing to judge until max_connection_age is set short enough to re-make "
                            "connections (world w)");
}

static void churn_limit_is_one_reconnect_a_life(void **state)
{
    (void)state;
    reference();
    assert_true(gr_bal_churn_limit() == 6.0);
    l.per_client_min = 6.0;
    assert_int_equal(gr_bal_judge_churn(&l, fb, sizeof fb), GR_PASS);
    assert_string_equal(fb, "6.0 reconnects per client per minute (at most 6), about 214 calls per connection; "
                            "max_connection_age 60000 ms (world w)");
    l.per_client_min = 6.05;
    l.reconnects = 94;
    assert_int_equal(gr_bal_judge_churn(&l, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "reconnects dominate: 6.0 per client per minute (at most 6: a connection should live 10 s "
                            "or more), 100 connections for 3000 calls, about 30 calls each; every reconnect is a TCP "
                            "and TLS handshake and a call waiting for it: max_connection_age 60000 ms is too short "
                            "(world w)");
    l.reconnects = 0;
    l.per_client_min = 0;
    assert_int_equal(gr_bal_judge_churn(&l, fb, sizeof fb), GR_PASS);
    assert_non_null(strstr(fb, "about 500 calls per connection"));
}

/* One round of every client at once is a coincidence; two are a storm. */
static void no_storm_two_rounds_are_a_storm(void **state)
{
    (void)state;
    reference();
    assert_int_equal(gr_bal_judge_no_storm(&l, fb, sizeof fb), GR_PASS);
    assert_string_equal(fb, "8 reconnects, at most 2 within 1.5 s (6 clients), 0 such rounds: spread by gRPC's +-10 % "
                            "jitter on max_connection_age 60000 ms (world w)");
    l.storms = 1;
    l.storm = 6;
    assert_int_equal(gr_bal_judge_no_storm(&l, fb, sizeof fb), GR_PASS);
    assert_non_null(strstr(fb, "at most 6 within 1.5 s (6 clients), 1 such round: spread"));
    l.storms = 2;
    l.storm_at_ms = 61500;
    assert_int_equal(gr_bal_judge_no_storm(&l, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "GOAWAY storms: 2 times every client (6) reconnected within 1.5 s, up to 6 reconnects at "
                            "61.5 s: gRPC's +-10 % jitter on max_connection_age 60000 ms spreads them over too little "
                            "time (world w)");
    l.reconnects = 0;
    assert_int_equal(gr_bal_judge_no_storm(&l, fb, sizeof fb), GR_FAIL);
    assert_true(strncmp(fb, "nothing reconnected (", 21) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stall_bounds_and_words),
        cmocka_unit_test(answered_needs_one_call_that_succeeded),
        cmocka_unit_test(fills_bound_and_each_reason),
        cmocka_unit_test(no_failures_each_branch),
        cmocka_unit_test(churn_limit_is_one_reconnect_a_life),
        cmocka_unit_test(no_storm_two_rounds_are_a_storm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
