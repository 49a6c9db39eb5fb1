/* Unit tests for the deadline exercise's rules (grader/deadline_judge): the
 * received-deadline tolerance boundaries (just inside and just outside), the
 * mistake classes and their wording, and each scenario's verdict chain,
 * branch by branch, with its exact feedback. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <grpc/status.h>

#include <stdio.h>
#include <string.h>

#include "deadline_judge.h"
#include "judge.h"

/* shrinks: 2000 ms budget, 1480 ms truly left at Work's arrival. Both hops
 * round in 10 ms steps (1-10 s), plus the scheduling allowance. */
static void upper_bound_adds_both_roundings_and_allowance(void **state)
{
    (void)state;
    assert_int_equal(gr_dl_upper(2000, 1480, 0), 1480 + 10 + 10 + GR_DL_SCHED_MS);
    /* Below one second the wire is exact on the second hop. */
    assert_int_equal(gr_dl_upper(2000, 500, 0), 500 + 10 + 0 + GR_DL_SCHED_MS);
    assert_int_equal(gr_dl_upper(300, 290, 0), 290 + 0 + 0 + GR_DL_SCHED_MS);
    /* The relay's own time is what a late re-anchoring can add. */
    assert_int_equal(gr_dl_upper(2000, 1160, 340), 1160 + 10 + 10 + 340 + GR_DL_SCHED_MS);
}

static void lower_bound_allows_a_margin(void **state)
{
    (void)state;
    assert_int_equal(gr_dl_lower(1480), 1480 - 148);
    assert_int_equal(gr_dl_lower(500), 500 - GR_DL_MARGIN_MIN_MS);
    assert_int_equal(gr_dl_lower(50), 0);
}

static void deadline_just_inside_passes(void **state)
{
    (void)state;
    gr_dl_check c;
    int64_t up = gr_dl_upper(2000, 1480, 0), lo = gr_dl_lower(1480);
    gr_dl_judge_hop("Work", 2000, 1480, 0, true, up, &c);
    assert_int_equal(c.cls, GR_DL_OK);
    gr_dl_judge_hop("Work", 2000, 1480, 0, true, lo, &c);
    assert_int_equal(c.cls, GR_DL_OK);
    gr_dl_judge_hop("Work", 2000, 1480, 0, true, 1479, &c); /* floor to ms */
    assert_int_equal(c.cls, GR_DL_OK);
}

static void deadline_just_outside_fails(void **state)
{
    (void)state;
    gr_dl_check c;
    int64_t up = gr_dl_upper(2000, 1480, 0), lo = gr_dl_lower(1480);
    gr_dl_judge_hop("Work", 2000, 1480, 0, true, up + 1, &c);
    assert_int_equal(c.cls, GR_DL_GREW);
    gr_dl_judge_hop("Work", 2000, 1480, 0, true, lo - 1, &c);
    assert_int_equal(c.cls, GR_DL_TOO_SHORT);
}

static void forwarded_timeout_is_named(void **state)
{
    (void)state;
    gr_dl_check c;
    char buf[256];
    gr_dl_judge_hop("Work", 1000, 702, 0, true, 1000, &c);
    assert_int_equal(c.cls, GR_DL_UNCHANGED);
    gr_dl_feedback(&c, buf, sizeof buf);
    assert_string_equal(buf, "Work received 1000 ms but only 702 ms remained: the original timeout was forwarded "
                             "unchanged");
    /* Rounded up on the wire, it is still the original timeout. */
    gr_dl_judge_hop("Work", 2000, 1480, 0, true, 2009, &c);
    assert_int_equal(c.cls, GR_DL_UNCHANGED);
    /* A slow relay gets its own time back, but Lookup's 500 ms are not its. */
    gr_dl_judge_hop("Work", 2000, 1160, 340, true, 2000, &c);
    assert_int_equal(c.cls, GR_DL_UNCHANGED);
    gr_dl_judge_hop("Work", 2000, 1160, 340, true, 1243, &c);
    assert_int_equal(c.cls, GR_DL_OK);
}

static void dropped_deadline_is_named(void **state)
{
    (void)state;
    gr_dl_check c;
    char buf[256];
    gr_dl_judge_hop("Work", 2000, 1480, 0, false, 0, &c);
    assert_int_equal(c.cls, GR_DL_MISSING);
    gr_dl_feedback(&c, buf, sizeof buf);
    assert_non_null(strstr(buf, "Work received no deadline"));
    assert_non_null(strstr(buf, "the deadline was dropped"));
}

static void huge_timeout_is_named(void **state)
{
    (void)state;
    gr_dl_check c;
    char buf[256];
    gr_dl_judge_hop("Work", -1, 0, 0, true, 2147483647, &c);
    assert_int_equal(c.cls, GR_DL_HUGE);
    gr_dl_feedback(&c, buf, sizeof buf);
    assert_string_equal(buf, "Work received 2147483647 ms although the client set no deadline: a huge finite "
                             "timeout was sent instead of none");
    gr_dl_judge_hop("Work", 2000, 1480, 0, true, 2147483647, &c);
    assert_int_equal(c.cls, GR_DL_HUGE);
}

static void no_deadline_in_none_out(void **state)
{
    (void)state;
    gr_dl_check c;
    char buf[256];
    gr_dl_judge_hop("Lookup", -1, 0, 0, false, 0, &c);
    assert_int_equal(c.cls, GR_DL_OK);
    gr_dl_judge_hop("Lookup", -1, 0, 0, true, 30000, &c);
    assert_int_equal(c.cls, GR_DL_INVENTED);
    gr_dl_feedback(&c, buf, sizeof buf);
    assert_non_null(strstr(buf, "invented a deadline"));
}

static void grown_deadline_between_truth_and_budget(void **state)
{
    (void)state;
    gr_dl_check c;
    char buf[256];
    /* Closer to what remained than to the budget: grew, not forwarded. */
    gr_dl_judge_hop("Work", 2000, 1480, 0, true, 1650, &c);
    assert_int_equal(c.cls, GR_DL_GREW);
    gr_dl_feedback(&c, buf, sizeof buf);
    assert_non_null(strstr(buf, "the deadline grew along the chain"));
}

static char fb[GR_FEEDBACK_MAX];

/* A right Process: both hops judged OK. */
static gr_dl_check lk_ok, wk_ok;
static gr_dl_process_facts process(void)
{
    gr_dl_judge_hop("Lookup", 2000, 1990, 0, true, 1990, &lk_ok);
    gr_dl_judge_hop("Work", 2000, 1480, 0, true, 1480, &wk_ok);
    gr_dl_process_facts f = {.budget_ms = 2000,
                             .lookup = &lk_ok,
                             .work = &wk_ok,
                             .nlookup = 1,
                             .nwork = 1,
                             .status = GRPC_STATUS_OK,
                             .status_text = "OK",
                             .reply_ok = true,
                             .why = "",
                             .ms = 520};
    return f;
}

static void shrinks_each_branch(void **state)
{
    (void)state;
    gr_dl_process_facts f = process();
    assert_int_equal(gr_dl_judge_shrinks(&f, fb, sizeof fb), GR_PASS);
    assert_string_equal(fb, "Work received 1480 ms with 1480 ms remaining (accepted 1332..1525 ms); Lookup received "
                            "1990 ms with 1990 ms remaining (accepted 1791..2035 ms)");
    f.reply_ok = false;
    f.why = "Process answered tag 'x', expected 'y'";
    assert_int_equal(gr_dl_judge_shrinks(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "Process answered tag 'x', expected 'y' after 520 ms although its deadlines were right "
                            "(expected OK)");
    /* A missing hop: TIMEOUT only when the client's deadline ended it. */
    f.work = NULL;
    f.nwork = 0;
    f.status = GRPC_STATUS_DEADLINE_EXCEEDED;
    f.status_text = "DEADLINE_EXCEEDED";
    f.past_deadline = true;
    assert_int_equal(gr_dl_judge_shrinks(&f, fb, sizeof fb), GR_TIMEOUT);
    assert_string_equal(fb, "Process did not answer within its 2000 ms deadline (expected about 520 ms); the baseline "
                            "saw 1 Lookup and 0 Work calls");
    f.past_deadline = false;
    assert_int_equal(gr_dl_judge_shrinks(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "Process returned DEADLINE_EXCEEDED but the baseline saw 1 Lookup and 0 Work calls: a "
                            "relay calls Lookup, then Work");
    /* Lookup's deadline wrong: named alone. */
    gr_dl_check lk_bad, wk_bad;
    gr_dl_judge_hop("Lookup", 2000, 1990, 0, false, 0, &lk_bad);
    f = process();
    f.lookup = &lk_bad;
    assert_int_equal(gr_dl_judge_shrinks(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "Lookup received no deadline although 1990 ms remained: the deadline was dropped");
    /* Work's wrong too, differently: Work's first, then Lookup's. */
    gr_dl_judge_hop("Work", 2000, 1480, 0, true, 2000, &wk_bad);
    f.work = &wk_bad;
    assert_int_equal(gr_dl_judge_shrinks(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "Work received 2000 ms but only 1480 ms remained: the original timeout was forwarded "
                            "unchanged; Lookup received no deadline although 1990 ms remained: the deadline was "
                            "dropped");
    /* ... the same way: once. */
    gr_dl_judge_hop("Lookup", 2000, 1990, 0, false, 0, &lk_bad);
    gr_dl_judge_hop("Work", 2000, 1480, 0, false, 0, &wk_bad);
    assert_int_equal(gr_dl_judge_shrinks(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "Work received no deadline although 1480 ms remained: the deadline was dropped");
}

static void none_each_branch(void **state)
{
    (void)state;
    gr_dl_check lk, wk;
    gr_dl_judge_hop("Lookup", -1, 0, 0, false, 0, &lk);
    gr_dl_judge_hop("Work", -1, 0, 0, false, 0, &wk);
    gr_dl_process_facts f = {.lookup = &lk,
                             .work = &wk,
                             .nlookup = 1,
                             .nwork = 1,
                             .status = GRPC_STATUS_OK,
                             .status_text = "OK",
                             .reply_ok = true,
                             .why = "",
                             .ms = 61};
    assert_int_equal(gr_dl_judge_none(&f, fb, sizeof fb), GR_PASS);
    assert_string_equal(fb, "Lookup and Work arrived with no deadline, as the client set none");
    f.reply_ok = false;
    f.why = "Process failed with INTERNAL";
    assert_int_equal(gr_dl_judge_none(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "Process failed with INTERNAL (expected OK)");
    f.work = NULL;
    f.nwork = 0;
    f.status = GRPC_STATUS_UNAVAILABLE;
    f.status_text = "UNAVAILABLE";
    assert_int_equal(gr_dl_judge_none(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "Process returned UNAVAILABLE but the baseline saw 1 Lookup and 0 Work calls: a relay "
                            "calls Lookup, then Work");
    f.status = GRPC_STATUS_DEADLINE_EXCEEDED;
    char want[GR_FEEDBACK_MAX];
    gr_judge_no_deadline_expired_feedback(61, 1, 0, want, sizeof want);
    assert_int_equal(gr_dl_judge_none(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, want);
    gr_dl_judge_hop("Lookup", -1, 0, 0, true, 30000, &lk);
    assert_int_equal(gr_dl_judge_none(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "Lookup received 30000 ms although the client set no deadline: the relay invented a "
                            "deadline");
    f.work = &wk;
    gr_dl_judge_hop("Work", -1, 0, 0, true, 2147483647, &wk);
    assert_int_equal(gr_dl_judge_none(&f, fb, sizeof fb), GR_FAIL);
    assert_true(strncmp(fb, "Work received 2147483647 ms although the client set no deadline: a huge", 70) == 0);
}

static void once_each_branch(void **state)
{
    (void)state;
    gr_dl_process_facts f = {.nlookup = 1, .nwork = 1, .status = GRPC_STATUS_OK, .reply_ok = true, .why = "", .ms = 9};
    assert_int_equal(gr_dl_judge_once(&f, fb, sizeof fb), GR_PASS);
    assert_string_equal(fb, "one Lookup and one Work, answered in 9 ms");
    f.reply_ok = false;
    f.why = "Process failed with INTERNAL";
    assert_int_equal(gr_dl_judge_once(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "Process failed with INTERNAL (expected OK)");
    f.nwork = 0;
    assert_int_equal(gr_dl_judge_once(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "the baseline saw 1 Lookup and 0 Work calls: a relay calls Lookup, then Work");
    f.status = GRPC_STATUS_DEADLINE_EXCEEDED;
    assert_int_equal(gr_dl_judge_once(&f, fb, sizeof fb), GR_TIMEOUT);
    assert_string_equal(fb, "Process did not answer within its 5000 ms deadline (expected about 250 ms); the baseline "
                            "saw 1 Lookup and 0 Work calls");
    f.nlookup = 2;
    assert_int_equal(gr_dl_judge_once(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "Lookup was called 2 times for one Process: call it once");
    f.nwork = 3;
    assert_int_equal(gr_dl_judge_once(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "Work was called 3 times for one Process (Lookup 2): call it once");
}

static void expiry_each_branch(void **state)
{
    (void)state;
    gr_verdict v = GR_PASS;
    assert_false(
        gr_dl_judge_no_lookup(false, GRPC_STATUS_DEADLINE_EXCEEDED, true, "DEADLINE_EXCEEDED", 301, &v, fb, sizeof fb));
    assert_true(gr_dl_judge_no_lookup(false, GRPC_STATUS_DEADLINE_EXCEEDED, false, "DEADLINE_EXCEEDED", 290, &v, fb,
                                      sizeof fb));
    assert_int_equal(v, GR_FAIL);
    assert_string_equal(fb, "Process returned DEADLINE_EXCEEDED after 290 ms without calling Lookup");
    assert_true(gr_dl_judge_no_lookup(false, GRPC_STATUS_OK, true, "OK", 310, &v, fb, sizeof fb));
    assert_true(
        gr_dl_judge_no_lookup(true, GRPC_STATUS_DEADLINE_EXCEEDED, true, "DEADLINE_EXCEEDED", 301, &v, fb, sizeof fb));
    assert_string_equal(fb, "Work was called without a Lookup first");
    assert_int_equal(gr_dl_judge_never_looked_up(3, 300, 900, fb, sizeof fb), GR_TIMEOUT);
    assert_string_equal(fb, "the relay never called Lookup and did not answer before the client's deadline, in 3 "
                            "tries of 300 to 900 ms");
    gr_dl_expiry_facts f = {.budget_ms = 300,
                            .lookup_cancelled = true,
                            .lookup_ms = 296,
                            .status = GRPC_STATUS_DEADLINE_EXCEEDED,
                            .status_text = "DEADLINE_EXCEEDED",
                            .ms = 302,
                            .late_ms = 2};
    assert_int_equal(gr_dl_judge_expiry(&f, fb, sizeof fb), GR_PASS);
    assert_string_equal(fb, "DEADLINE_EXCEEDED 2 ms after the deadline; Lookup was cancelled after 296 ms; no Work in "
                            "the 500 ms after it");
    f.status = GRPC_STATUS_OK;
    f.status_text = "OK";
    f.ms = 1003;
    assert_int_equal(gr_dl_judge_expiry(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "Process ended with OK 1003 ms after the start; expected DEADLINE_EXCEEDED at its 300 ms "
                            "deadline");
    f.work_called = true;
    f.work_after_ms = 704;
    f.lookup_cancelled = false;
    f.lookup_ms = 1000;
    assert_int_equal(gr_dl_judge_expiry(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "Work was called 704 ms after the client's 300 ms deadline had passed (Lookup ran to its "
                            "end after 1000 ms): the relay went on after the deadline");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(upper_bound_adds_both_roundings_and_allowance),
        cmocka_unit_test(lower_bound_allows_a_margin),
        cmocka_unit_test(deadline_just_inside_passes),
        cmocka_unit_test(deadline_just_outside_fails),
        cmocka_unit_test(forwarded_timeout_is_named),
        cmocka_unit_test(dropped_deadline_is_named),
        cmocka_unit_test(huge_timeout_is_named),
        cmocka_unit_test(no_deadline_in_none_out),
        cmocka_unit_test(grown_deadline_between_truth_and_budget),
        cmocka_unit_test(shrinks_each_branch),
        cmocka_unit_test(none_each_branch),
        cmocka_unit_test(once_each_branch),
        cmocka_unit_test(expiry_each_branch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
