/* Unit tests for the scenario toolkit: a step that decides says so with one
 * value that no RL_E code shares, the observer's failure has one wording,
 * the crash check waits long only on a sign of death, and the call steps
 * collect a status (refused, expired, cancelled) from a loopback socket that
 * never speaks gRPC, so no server is needed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "rl_deadline.h"
#include "rl_err.h"
#include "run.h"
#include "scenario.h"

#include <arpa/inet.h>
#include <grpc/grpc_security.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void decided_is_no_error_code(void **state)
{
    (void)state;
    assert_true(GR_DECIDED > 0); /* every RL_E code is negative */
    assert_int_not_equal(GR_DECIDED, RL_OK);
}

static void decide_fills_the_verdict_and_stops(void **state)
{
    (void)state;
    gr_scenario_result out;
    memset(&out, 0, sizeof out);
    assert_int_equal(gr_result(&out, GR_TIMEOUT, "Process did not answer within %d ms", 5000), GR_DECIDED);
    assert_int_equal(out.verdict, GR_TIMEOUT);
    assert_string_equal(out.feedback, "Process did not answer within 5000 ms");
}

static void decide_marks_cut_feedback(void **state)
{
    (void)state;
    static char big[2 * GR_FEEDBACK_MAX];
    memset(big, 'x', sizeof big - 1);
    gr_scenario_result out;
    gr_result(&out, GR_FAIL, "%s", big);
    size_t n = strlen(out.feedback);
    assert_int_equal(n, GR_FEEDBACK_MAX - 1);
    assert_string_equal(out.feedback + n - strlen(GR_FEEDBACK_CUT), GR_FEEDBACK_CUT);
}

static void decide_may_quote_its_own_feedback(void **state)
{
    (void)state;
    gr_scenario_result out;
    gr_result(&out, GR_FAIL, "first");
    gr_result(&out, GR_ERROR, "%s, then second", out.feedback);
    assert_string_equal(out.feedback, "first, then second");
}

static void observer_failure_has_one_wording(void **state)
{
    (void)state;
    gr_scenario_result out;
    assert_int_equal(gr_scenario_observer_failed(&out, RL_EGRPC), GR_DECIDED);
    assert_int_equal(out.verdict, GR_ERROR);
    char want[200];
    snprintf(want, sizeof want, "the baseline's observer did not answer (%s)", rl_strerror(RL_EGRPC));
    assert_string_equal(out.feedback, want);
    gr_scenario_observer_failed(&out, RL_OK);
    assert_string_equal(out.feedback, "the baseline's observer did not answer");
}

static void observation_with_a_reply_is_judged_by_the_scenario(void **state)
{
    (void)state;
    Relaylab__ObserveReply reply = RELAYLAB__OBSERVE_REPLY__INIT;
    gr_scenario_result out;
    memset(&out, 0, sizeof out);
    out.verdict = GR_PASS;
    /* The condition did not hold in time: the last reply is still data. */
    assert_int_equal(gr_scenario_observed(RL_ETIMEOUT, &reply, &out), 0);
    assert_int_equal(gr_scenario_observed(RL_OK, &reply, &out), 0);
    assert_int_equal(out.verdict, GR_PASS); /* untouched */
}

static void observation_without_a_reply_is_an_error(void **state)
{
    (void)state;
    Relaylab__ObserveReply reply = RELAYLAB__OBSERVE_REPLY__INIT;
    gr_scenario_result out;
    assert_int_equal(gr_scenario_observed(RL_EGRPC, &reply, &out), GR_DECIDED);
    assert_int_equal(out.verdict, GR_ERROR);
    memset(&out, 0, sizeof out);
    /* No reply at all in the whole window: nothing to judge a relay by. */
    assert_int_equal(gr_scenario_observed(RL_ETIMEOUT, NULL, &out), GR_DECIDED);
    assert_int_equal(out.verdict, GR_ERROR);
    assert_non_null(strstr(out.feedback, "observer did not answer"));
}

static void free_obs_accepts_null_and_clears(void **state)
{
    (void)state;
    Relaylab__ObserveReply *obs = NULL;
    gr_scenario_free_obs(&obs);
    assert_null(obs);
    assert_int_equal(gr_scenario_done(NULL, &obs), 0);
    assert_int_equal(gr_scenario_done(NULL, NULL), 0);
}

static void crash_check_waits_long_only_on_a_sign(void **state)
{
    (void)state;
    assert_true(gr_scenario_status_says_dead(GRPC_STATUS_UNAVAILABLE));
    assert_false(gr_scenario_status_says_dead(GRPC_STATUS_OK));
    assert_false(gr_scenario_status_says_dead(GRPC_STATUS_DEADLINE_EXCEEDED));
    assert_false(gr_scenario_status_says_dead(GRPC_STATUS_CANCELLED));
    assert_int_equal(gr_scenario_crash_wait_ms(true), GR_SCENARIO_EXIT_LAG_MS);
    assert_int_equal(gr_scenario_crash_wait_ms(false), GR_SCENARIO_CRASH_LOOK_MS);
    assert_true(gr_scenario_crash_wait_ms(true) > gr_scenario_crash_wait_ms(false));
}

static void crash_after_an_ok_status_looks_at_nothing(void **state)
{
    (void)state;
    rl_probe_call c;
    memset(&c, 0, sizeof c);
    c.done = true;
    c.batch.status = GRPC_STATUS_OK;
    gr_scenario_result out;
    memset(&out, 0, sizeof out);
    /* A submission that answered was alive: no context is even read. */
    assert_int_equal(gr_scenario_crash_after(NULL, &c, "during Process", &out), 0);
    assert_int_equal(out.verdict, GR_PASS);
}

static void wait_refuses_a_call_without_deadline(void **state)
{
    (void)state;
    rl_probe_call c;
    memset(&c, 0, sizeof c);
    c.deadline_ns = RL_NO_DEADLINE;
    gr_scenario_result out;
    int64_t t0 = rl_now_ns();
    assert_int_equal(gr_scenario_wait(&c, &out), GR_DECIDED);
    assert_int_equal(out.verdict, GR_ERROR);
    assert_true(rl_now_ns() - t0 < GR_SCENARIO_GRACE_MS * RL_NS_PER_MS); /* did not wait */
    assert_int_equal(gr_scenario_wait(&c, NULL), GR_DECIDED);
}

/* A loopback TCP socket on a port the OS chose, and a channel to it. */
typedef struct silent_peer {
    int fd;
    grpc_channel *ch;
} silent_peer;

/* Listening, connections complete and nothing ever answers; only bound,
 * they are refused. */
static int peer_setup(void **state, bool listening)
{
    grpc_init();
    static silent_peer p;
    p.fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(p.fd >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(p.fd, (struct sockaddr *)&sa, sizeof sa), 0);
    if (listening)
        assert_int_equal(listen(p.fd, 8), 0);
    socklen_t len = sizeof sa;
    assert_int_equal(getsockname(p.fd, (struct sockaddr *)&sa, &len), 0);
    char target[64];
    snprintf(target, sizeof target, "127.0.0.1:%d", ntohs(sa.sin_port));
    grpc_channel_credentials *creds = grpc_insecure_credentials_create();
    p.ch = grpc_channel_create(target, creds, NULL);
    grpc_channel_credentials_release(creds);
    *state = &p;
    return 0;
}

static int silent_setup(void **state)
{
    return peer_setup(state, true);
}

static int refusing_setup(void **state)
{
    return peer_setup(state, false);
}

static int peer_teardown(void **state)
{
    silent_peer *p = *state;
    grpc_channel_destroy(p->ch);
    close(p->fd);
    grpc_shutdown();
    return 0;
}

static void call_to_a_refusing_port_ends_unavailable(void **state)
{
    silent_peer *p = *state;
    Relaylab__LookupRequest req = RELAYLAB__LOOKUP_REQUEST__INIT;
    rl_probe_call c;
    gr_scenario_result out;
    memset(&out, 0, sizeof out);
    assert_int_equal(
        gr_scenario_call(&c, p->ch, "/relaylab.Baseline/Lookup", &req.base, rl_now_ns() + 5000 * RL_NS_PER_MS, &out),
        0);
    assert_true(c.done);
    assert_int_equal(c.batch.status, GRPC_STATUS_UNAVAILABLE);
    assert_true(gr_scenario_status_says_dead(c.batch.status));
    rl_probe_call_fini(&c);
}

static void call_to_a_silent_server_ends_at_its_deadline(void **state)
{
    silent_peer *p = *state;
    Relaylab__LookupRequest req = RELAYLAB__LOOKUP_REQUEST__INIT;
    rl_probe_call c;
    int64_t d = rl_now_ns() + 200 * RL_NS_PER_MS;
    assert_int_equal(gr_scenario_call(&c, p->ch, "/relaylab.Baseline/Lookup", &req.base, d, NULL), 0);
    assert_int_equal(c.batch.status, GRPC_STATUS_DEADLINE_EXCEEDED);
    assert_true(c.end_ns >= d);
    rl_probe_call_fini(&c);
}

static void cancel_collects_the_status(void **state)
{
    silent_peer *p = *state;
    Relaylab__LookupRequest req = RELAYLAB__LOOKUP_REQUEST__INIT;
    rl_probe_call c;
    assert_int_equal(
        rl_probe_call_start(&c, p->ch, "/relaylab.Baseline/Lookup", &req.base, rl_now_ns() + 30000 * RL_NS_PER_MS),
        RL_OK);
    assert_true(gr_scenario_cancel(&c) > 0);
    assert_true(c.done);
    assert_int_equal(c.batch.status, GRPC_STATUS_CANCELLED);
    rl_probe_call_fini(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(decided_is_no_error_code),
        cmocka_unit_test(decide_fills_the_verdict_and_stops),
        cmocka_unit_test(decide_marks_cut_feedback),
        cmocka_unit_test(decide_may_quote_its_own_feedback),
        cmocka_unit_test(observer_failure_has_one_wording),
        cmocka_unit_test(observation_with_a_reply_is_judged_by_the_scenario),
        cmocka_unit_test(observation_without_a_reply_is_an_error),
        cmocka_unit_test(free_obs_accepts_null_and_clears),
        cmocka_unit_test(crash_check_waits_long_only_on_a_sign),
        cmocka_unit_test(crash_after_an_ok_status_looks_at_nothing),
        cmocka_unit_test(wait_refuses_a_call_without_deadline),
        cmocka_unit_test_setup_teardown(call_to_a_refusing_port_ends_unavailable, refusing_setup, peer_teardown),
        cmocka_unit_test_setup_teardown(call_to_a_silent_server_ends_at_its_deadline, silent_setup, peer_teardown),
        cmocka_unit_test_setup_teardown(cancel_collects_the_status, silent_setup, peer_teardown),
    };
    return cmocka_run_group_tests_name("scenario", tests, NULL, NULL);
}
