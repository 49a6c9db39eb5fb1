/* Unit tests for the shutdown exercise's rules (grader/shutdown_judge): what
 * a refusal is, when a signal came in time to tell, the words for an exit,
 * and each scenario's verdict chain, branch by branch, at its boundaries
 * and with its exact feedback. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <grpc/status.h>

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "shutdown_judge.h"

static char fb[GR_FEEDBACK_MAX];

static gr_exit exit_with(int status, int sig, bool killed, int64_t ms)
{
    gr_exit e;
    memset(&e, 0, sizeof e);
    e.exited = !killed;
    e.killed = killed;
    e.status = status;
    e.signal = sig;
    e.ms = ms;
    snprintf(e.how, sizeof e.how, "%s", killed ? "was killed by SIGKILL" : sig ? "was killed by a signal" : "exited");
    return e;
}

/* A call refused at shutdown fails fast with whatever status gRPC gave it
 * (CANCELLED when it raced the GOAWAY, UNAVAILABLE on a refused connection);
 * served, left to its deadline, or slow is not a refusal. */
static void refusal_is_any_fast_failure_but_a_deadline(void **state)
{
    (void)state;
    assert_true(gr_shutdown_refused(GRPC_STATUS_UNAVAILABLE, 1));
    assert_true(gr_shutdown_refused(GRPC_STATUS_CANCELLED, 1));
    assert_true(gr_shutdown_refused(GRPC_STATUS_RESOURCE_EXHAUSTED, GR_SHUTDOWN_REFUSE_MS));
    assert_false(gr_shutdown_refused(GRPC_STATUS_UNAVAILABLE, GR_SHUTDOWN_REFUSE_MS + 1));
    assert_false(gr_shutdown_refused(GRPC_STATUS_OK, 1));
    assert_false(gr_shutdown_refused(GRPC_STATUS_DEADLINE_EXCEEDED, 1));
}

/* The soak's wrong PASS: an 8 x 100 ms Work over when SIGTERM landed. A
 * run passes only if the Work ran on half its plan after the signal. */
static void signal_too_late_to_tell_a_stop_now(void **state)
{
    (void)state;
    assert_int_equal(gr_shutdown_stop_margin(8, 100), 400);
    assert_int_equal(gr_shutdown_stop_margin(40, 100), 2000);
    assert_true(gr_shutdown_signal_in_time(700, 8, 100)); /* signalled once a step was done */
    assert_true(gr_shutdown_signal_in_time(400, 8, 100));
    assert_false(gr_shutdown_signal_in_time(399, 8, 100));
    assert_false(gr_shutdown_signal_in_time(0, 8, 100));    /* "completed OK 0 ms after it" */
    assert_false(gr_shutdown_signal_in_time(-250, 8, 100)); /* ended before the signal */
}

/* The words for an exit: a kill by the grader first, then SIGTERM (no
 * handler), another signal, a non-zero status; exit 0 is none. */
static void exit_mistake_names_each_way_out(void **state)
{
    (void)state;
    gr_exit e = exit_with(0, 0, false, 10);
    assert_null(gr_shutdown_exit_mistake(&e));
    e = exit_with(1, 0, false, 10);
    assert_string_equal(gr_shutdown_exit_mistake(&e), "a graceful shutdown exits 0");
    e = exit_with(-1, SIGSEGV, false, 10);
    assert_string_equal(gr_shutdown_exit_mistake(&e), "it crashed during the drain");
    e = exit_with(-1, SIGTERM, false, 10);
    assert_non_null(strstr(gr_shutdown_exit_mistake(&e), "there is no SIGTERM handler"));
    e = exit_with(-1, SIGKILL, true, 3500);
    assert_string_equal(gr_shutdown_exit_mistake(&e), "it had not exited when the grader killed it");
}

static void too_late_lists_every_run(void **state)
{
    (void)state;
    const int64_t left[] = {120, -5, 399};
    assert_int_equal(gr_shutdown_judge_too_late(left, 3, 8, 100, fb, sizeof fb), GR_ERROR);
    assert_string_equal(fb, "grade again: the machine was too slow to tell. In 3 tries the call in flight at "
                            "SIGTERM completed OK, but SIGTERM came too late to tell a drain from a server that "
                            "stops at once: its Work ran on only 120, -5, 399 ms after the signal (negative: it had "
                            "ended before), less than the 400 ms a stop(0) needs to be seen");
}

static void in_flight_each_branch(void **state)
{
    (void)state;
    char st[] = "UNAVAILABLE: Socket closed";
    gr_exit e = exit_with(-1, SIGTERM, false, 3);
    gr_shutdown_in_flight_facts f = {.grace_ms = 2000, .waited_ms = 3500, .status = st, .ex = &e};
    assert_int_equal(gr_shutdown_judge_in_flight(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "the call in flight at SIGTERM had no answer 3500 ms later, past the 2000 ms grace: the "
                            "drain does not end in-flight calls at the grace");
    f.answered = true;
    f.ok = true;
    f.ms = 712;
    f.left_ms = 700;
    assert_int_equal(gr_shutdown_judge_in_flight(&f, fb, sizeof fb), GR_PASS);
    assert_string_equal(fb, "the call in flight at SIGTERM completed OK 712 ms after it (its Work ran on 700 ms after "
                            "the signal: a server that stopped at once would have cut it)");
    f.ok = false;
    f.ms = 4;
    assert_int_equal(gr_shutdown_judge_in_flight(&f, fb, sizeof fb), GR_FAIL);
    assert_non_null(strstr(fb, "the call in flight failed UNAVAILABLE: Socket closed 4 ms after SIGTERM: it died of "
                               "SIGTERM: there is no SIGTERM handler"));
    /* Not exited (or another way out): the server stopped without a grace. */
    e = exit_with(0, 0, false, 1000);
    e.exited = false;
    assert_int_equal(gr_shutdown_judge_in_flight(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "the call in flight failed UNAVAILABLE: Socket closed 4 ms after SIGTERM: the server "
                            "stopped without a grace (calls admitted before the signal must be let finish)");
}

static void refuses_new_each_branch(void **state)
{
    (void)state;
    char st[] = "UNAVAILABLE";
    gr_exit dead = exit_with(-1, SIGTERM, false, 2);
    gr_shutdown_refuses_facts f = {.closed = false, .status_text = st};
    assert_int_equal(gr_shutdown_judge_refuses_new(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "new connections were still accepted 1000 ms after SIGTERM while a call was in flight: "
                            "stop admitting first (close the listener), then drain");
    gr_exit clean = exit_with(0, 0, false, 30);
    f.ex = &clean; /* exited 0: no mistake in the exit, the listener's is named */
    assert_int_equal(gr_shutdown_judge_refuses_new(&f, fb, sizeof fb), GR_FAIL);
    assert_non_null(strstr(fb, "new connections were still accepted"));
    f.ex = &dead;
    assert_int_equal(gr_shutdown_judge_refuses_new(&f, fb, sizeof fb), GR_FAIL);
    assert_non_null(strstr(fb, "it was killed by a signal 2 ms after SIGTERM: it died of SIGTERM"));

    f = (gr_shutdown_refuses_facts){.closed = true,
                                    .closed_ms = 3,
                                    .told = true,
                                    .after_ms = 5,
                                    .status = GRPC_STATUS_UNAVAILABLE,
                                    .took_ms = 1,
                                    .status_text = st};
    f.died = &dead;
    assert_int_equal(gr_shutdown_judge_refuses_new(&f, fb, sizeof fb), GR_FAIL);
    assert_non_null(strstr(fb, "a call started 5 ms after SIGTERM failed UNAVAILABLE, but only because the process "
                               "was gone: it died of SIGTERM"));
    assert_non_null(strstr(fb, "; nothing closed admission while a call drained (see in-flight)"));
    f.died = NULL;
    f.status = GRPC_STATUS_OK;
    assert_int_equal(gr_shutdown_judge_refuses_new(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "a call started 5 ms after SIGTERM was served: a server that is shutting down must admit "
                            "no new call (clients retry on a live instance)");
    f.told = false;
    assert_int_equal(gr_shutdown_judge_refuses_new(&f, fb, sizeof fb), GR_FAIL);
    assert_non_null(strstr(fb, "was served on the open connection, which had no GOAWAY: "));
    /* The refusal's bound, both sides; and a deadline is never one. */
    f.status = GRPC_STATUS_UNAVAILABLE;
    f.took_ms = GR_SHUTDOWN_REFUSE_MS + 1;
    assert_int_equal(gr_shutdown_judge_refuses_new(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "a call started 5 ms after SIGTERM failed UNAVAILABLE only after 1001 ms: a server that "
                            "is shutting down refuses new calls at once, so that clients go elsewhere");
    f.status = GRPC_STATUS_DEADLINE_EXCEEDED;
    f.took_ms = 1;
    assert_int_equal(gr_shutdown_judge_refuses_new(&f, fb, sizeof fb), GR_FAIL);
    f.status = GRPC_STATUS_CANCELLED;
    f.took_ms = GR_SHUTDOWN_REFUSE_MS;
    assert_int_equal(gr_shutdown_judge_refuses_new(&f, fb, sizeof fb), GR_PASS);
    assert_string_equal(fb, "the listener closed 3 ms after SIGTERM; a new call then failed UNAVAILABLE in 1000 ms "
                            "while the admitted one ran on");
    f.admitted_ended = true;
    assert_int_equal(gr_shutdown_judge_refuses_new(&f, fb, sizeof fb), GR_PASS);
    assert_non_null(strstr(fb, "in 1000 ms (the admitted call had already ended: see in-flight)"));
}

static void exits_each_branch(void **state)
{
    (void)state;
    char why[] = "status UNAVAILABLE";
    gr_exit e = exit_with(-1, SIGKILL, true, 3501);
    gr_shutdown_exits_facts f = {
        .grace_ms = 2000, .ex = &e, .call_done = true, .call_ok = true, .why = why, .call_ms = 690};
    assert_int_equal(gr_shutdown_judge_exits(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "still running 3501 ms after SIGTERM, past the 2000 ms grace, with no call left in "
                            "flight: something held the exit (a drain without a bound?); it was killed");
    e = exit_with(-1, SIGSEGV, false, 40);
    assert_int_equal(gr_shutdown_judge_exits(&f, fb, sizeof fb), GR_CRASH);
    assert_string_equal(fb, "it was killed by a signal 40 ms after SIGTERM: it crashed during the drain");
    e = exit_with(-1, SIGTERM, false, 1);
    assert_int_equal(gr_shutdown_judge_exits(&f, fb, sizeof fb), GR_FAIL);
    e = exit_with(3, 0, false, 700);
    assert_int_equal(gr_shutdown_judge_exits(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "it exited 700 ms after SIGTERM: a graceful shutdown exits 0");
    e = exit_with(0, 0, false, 700);
    f.call_ok = false;
    assert_int_equal(gr_shutdown_judge_exits(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "it exited 0 after 700 ms, but the call in flight did not complete (status UNAVAILABLE): "
                            "exit once the admitted calls are done");
    f.call_done = false;
    assert_int_equal(gr_shutdown_judge_exits(&f, fb, sizeof fb), GR_FAIL);
    assert_non_null(strstr(fb, "did not complete (no status)"));
    f.call_done = f.call_ok = true;
    f.survivors = 1;
    assert_int_equal(gr_shutdown_judge_exits(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "it exited 0 after 700 ms, but 1 process(es) it started ran on");
    f.survivors = 0;
    assert_int_equal(gr_shutdown_judge_exits(&f, fb, sizeof fb), GR_PASS);
    assert_string_equal(fb, "exited 0 700 ms after SIGTERM, once the call in flight had completed (690 ms)");
}

/* The grace's window: GRACE_EARLY_MS before it to GRACE_LATE_MS after, both
 * ends included, and cancelled. */
static void grace_window_and_each_branch(void **state)
{
    (void)state;
    gr_exit e = exit_with(0, 0, false, 2100);
    gr_shutdown_grace_facts f = {.grace_ms = 2000, .steps = 40, .cancelled = true, .steps_done = 19, .ex = &e};
    f.end_ms = 2000 - GR_SHUTDOWN_GRACE_EARLY_MS;
    assert_int_equal(gr_shutdown_judge_grace(&f, fb, sizeof fb), GR_PASS);
    assert_string_equal(fb, "at the 2000 ms grace the call still in flight was ended: Work cancelled 1900 ms after "
                            "SIGTERM (19 of 40 steps), and the process exited 0 after 2100 ms");
    f.end_ms = 2000 + GR_SHUTDOWN_GRACE_LATE_MS;
    assert_int_equal(gr_shutdown_judge_grace(&f, fb, sizeof fb), GR_PASS);
    f.end_ms = 2000 - GR_SHUTDOWN_GRACE_EARLY_MS - 1;
    assert_int_equal(gr_shutdown_judge_grace(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "Work was ended 1899 ms after SIGTERM, before the 2000 ms grace (19 of 40 steps): calls "
                            "in flight must be given the grace, not cut at once");
    f.end_ms = 3;
    e = exit_with(-1, SIGTERM, false, 2);
    assert_int_equal(gr_shutdown_judge_grace(&f, fb, sizeof fb), GR_FAIL);
    assert_non_null(strstr(fb, "(19 of 40 steps): it died of SIGTERM"));
    e = exit_with(0, 0, false, 2100);
    f.end_ms = 2000 + GR_SHUTDOWN_GRACE_LATE_MS + 1;
    assert_int_equal(gr_shutdown_judge_grace(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "Work was cancelled only 2751 ms after SIGTERM, past the 2000 ms grace: the call that "
                            "outlived the grace was not cancelled, so its downstream work ran on as an orphan");
    /* Late by 1 ms past the allowance: starved when the chain waited at
     * least that long for a CPU, FAIL when it waited less or unread. */
    f.waited_ms = 1;
    assert_int_equal(gr_shutdown_judge_grace(&f, fb, sizeof fb), GR_ERROR);
    assert_non_null(strstr(fb, "waited 1 ms for a CPU: the machine was too busy"));
    f.end_ms = 2000 + GR_SHUTDOWN_GRACE_LATE_MS + 2;
    assert_int_equal(gr_shutdown_judge_grace(&f, fb, sizeof fb), GR_FAIL);
    f.waited_ms = -1;
    assert_int_equal(gr_shutdown_judge_grace(&f, fb, sizeof fb), GR_FAIL);
    /* Waited long, but uncancelled: the rule broken however busy. */
    f.waited_ms = 5000;
    f.cancelled = false;
    assert_int_equal(gr_shutdown_judge_grace(&f, fb, sizeof fb), GR_FAIL);
    f.cancelled = true;
    f.waited_ms = -1;
    f.end_ms = 2000 + GR_SHUTDOWN_GRACE_LATE_MS + 1;
    f.end_ms = 2000;
    f.cancelled = false;
    assert_int_equal(gr_shutdown_judge_grace(&f, fb, sizeof fb), GR_FAIL);
    assert_non_null(strstr(fb, "Work ran to its end 2000 ms after SIGTERM"));
    f.end_ms = -1;
    f.now_ms = 3600;
    e = exit_with(-1, SIGKILL, true, 3500);
    assert_int_equal(gr_shutdown_judge_grace(&f, fb, sizeof fb), GR_FAIL);
    assert_non_null(strstr(fb, "Work still ran 3600 ms after SIGTERM"));
    assert_non_null(strstr(fb, "as an orphan; and the process did not exit until it was killed"));
    f.end_ms = 2010;
    f.cancelled = true;
    assert_int_equal(gr_shutdown_judge_grace(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "Work was cancelled at the grace (2010 ms after SIGTERM), but the process was still "
                            "running 3500 ms after SIGTERM: a stuck call held the exit past the 2000 ms grace");
    e = exit_with(2, 0, false, 2050);
    assert_int_equal(gr_shutdown_judge_grace(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "Work was cancelled at the grace, but it exited 2050 ms after SIGTERM: a graceful "
                            "shutdown exits 0");
}

/* Rolling: admitted before SIGTERM and failed is lost; admitted after is
 * not judged; never admitted is a refusal when fast (the bound included). */
static void rolling_sorts_the_failed_calls(void **state)
{
    (void)state;
    gr_exit e = exit_with(0, 0, false, 640);
    gr_shutdown_failed_call c[3] = {{0, 1, "CANCELLED"}, {0, 2, "UNAVAILABLE"}, {0, 3, "UNAVAILABLE"}};
    gr_shutdown_rolling_facts f = {.held_ok = false,
                                   .held_why = "status CANCELLED",
                                   .ok = 97,
                                   .failed = 0,
                                   .before = 30,
                                   .failures = c,
                                   .sig_ns = 1000,
                                   .ex = &e,
                                   .listen_ms = 25};
    assert_int_equal(gr_shutdown_judge_rolling(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "the call in flight on instance 1 at SIGTERM did not complete (status CANCELLED): calls "
                            "in flight must be let finish");
    f.held_ok = true;
    assert_int_equal(gr_shutdown_judge_rolling(&f, fb, sizeof fb), GR_PASS);
    assert_string_equal(fb, "97 calls through both instances (30 before SIGTERM): every call admitted before SIGTERM "
                            "succeeded; instance 1 exited 0 640 ms after SIGTERM and its replacement listened after "
                            "25 ms");
    f.failed = f.nkept = 3;
    c[1].took_ms = GR_SHUTDOWN_REFUSE_MS; /* still a refusal */
    c[2].admitted_ns = 1000;              /* admitted at SIGTERM: not before it */
    assert_int_equal(gr_shutdown_judge_rolling(&f, fb, sizeof fb), GR_PASS);
    assert_non_null(strstr(fb, "100 calls through both instances (30 before SIGTERM): every call admitted before "
                               "SIGTERM succeeded, those never admitted were refused at once (a client retries "
                               "them), and some admitted during the drain failed (see refuses-new); instance 1"));
    c[1].took_ms = GR_SHUTDOWN_REFUSE_MS + 1;
    assert_int_equal(gr_shutdown_judge_rolling(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "1 calls that were never admitted failed only after 1001 ms or more (UNAVAILABLE): "
                            "refuse at once, so that clients go to the live instance");
    c[2].admitted_ns = 999;
    e = exit_with(-1, SIGTERM, false, 1);
    assert_int_equal(gr_shutdown_judge_rolling(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "1 of 100 calls failed that the relay had admitted before SIGTERM (the first: "
                            "UNAVAILABLE); instance 1 was killed by a signal: calls in flight at SIGTERM must be let "
                            "finish");
    c[2].admitted_ns = 0;
    c[1].took_ms = 2;
    assert_int_equal(gr_shutdown_judge_rolling(&f, fb, sizeof fb), GR_FAIL);
    assert_non_null(strstr(fb, "no admitted call failed, but instance 1 was killed by a signal 1 ms after SIGTERM: "
                               "it died of SIGTERM"));
    f.nkept = 2; /* more failed than were kept */
    assert_int_equal(gr_shutdown_judge_rolling(&f, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "3 of 100 calls failed while instance 1 was replaced (the first: CANCELLED)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(refusal_is_any_fast_failure_but_a_deadline),
        cmocka_unit_test(signal_too_late_to_tell_a_stop_now),
        cmocka_unit_test(exit_mistake_names_each_way_out),
        cmocka_unit_test(too_late_lists_every_run),
        cmocka_unit_test(in_flight_each_branch),
        cmocka_unit_test(refuses_new_each_branch),
        cmocka_unit_test(exits_each_branch),
        cmocka_unit_test(grace_window_and_each_branch),
        cmocka_unit_test(rolling_sorts_the_failed_calls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
