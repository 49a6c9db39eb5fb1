/* Unit tests for rl_unary's contract, against a real gRPC server and client
 * on one rl_loop (loopback, a port chosen by the OS): an answer that would
 * put a second message in flight is refused with RL_EINVAL and leaves the
 * call unanswered, on_free never runs inside an answer function, and after
 * on_free the struct stays answered so a late answer is a harmless
 * RL_EINVAL (the relay answers late when its downstream call ends). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "relaylab.pb-c.h"
#include "rl_client.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_loop.h"
#include "rl_test_server.h"
#include "rl_unary.h"

#include <grpc/grpc.h>
#include <stdio.h>
#include <string.h>

/* What a test's handler does with the request. */
enum mode { STREAM_THEN_REPLY, NEVER_ANSWER };

typedef struct handler {
    rl_unary u;
    enum mode mode;
    int on_request, on_cancel, on_free, on_sent;
    int rc_send, rc_reply_in_flight, rc_send_in_flight, rc_finish, rc_after_finish;
    bool freed_inside_answer; /* on_free had run when an answer function returned */
} handler;

static struct {
    rl_test_server srv;
    handler h;
    rl_client client;
    bool client_done;
} t;

static Relaylab__LookupReply reply_tagged(const char *tag)
{
    Relaylab__LookupReply rep = RELAYLAB__LOOKUP_REPLY__INIT;
    rep.tag = (char *)tag;
    return rep;
}

static void on_request(rl_unary *u, ProtobufCMessage *req)
{
    handler *h = RL_CONTAINER_OF(u, handler, u);
    h->on_request++;
    protobuf_c_message_free_unpacked(req, NULL);
    if (h->mode != STREAM_THEN_REPLY)
        return;
    Relaylab__LookupReply first = reply_tagged("first"), second = reply_tagged("second");
    h->rc_send = rl_unary_send(u, &first.base);
    /* gRPC allows one SEND_MESSAGE at a time: a reply now must wait. */
    h->rc_reply_in_flight = rl_unary_reply(u, &second.base);
    h->rc_send_in_flight = rl_unary_send(u, &second.base);
    h->freed_inside_answer |= h->on_free > 0;
}

static void on_sent(rl_unary *u, bool ok)
{
    handler *h = RL_CONTAINER_OF(u, handler, u);
    h->on_sent++;
    if (!ok)
        return;
    h->rc_finish = rl_unary_finish(u, GRPC_STATUS_OK, NULL);
    h->rc_after_finish = rl_unary_fail(u, GRPC_STATUS_INTERNAL, "too late");
    h->freed_inside_answer |= h->on_free > 0;
}

static void on_cancel(rl_unary *u)
{
    RL_CONTAINER_OF(u, handler, u)->on_cancel++;
}

/* The test's handler struct is static: the memory outlives on_free, as a
 * relay's reference-counted struct does. */
static void on_free(rl_unary *u)
{
    RL_CONTAINER_OF(u, handler, u)->on_free++;
}

static const rl_unary_ops ops = {on_request, on_cancel, on_free, on_sent};

static void on_call(grpc_call *call)
{
    rl_unary_start(&t.h.u, &t.srv.loop, call, &relaylab__lookup_request__descriptor, 0, &ops);
}

static void client_done(rl_client *c)
{
    (void)c;
    t.client_done = true;
}

static int setup(void **state)
{
    (void)state;
    memset(&t, 0, sizeof t);
    return rl_test_server_start(&t.srv, on_call);
}

static int teardown(void **state)
{
    (void)state;
    rl_client_fini(&t.client);
    rl_test_server_stop(&t.srv);
    return 0;
}

/* Starts a Lookup on the loop with a deadline |deadline_ms| from now. */
static void call_lookup(int64_t deadline_ms)
{
    gpr_timespec deadline = gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(deadline_ms, GPR_TIMESPAN));
    grpc_slice method = grpc_slice_from_static_string("/relaylab.Baseline/Lookup");
    grpc_call *call = grpc_channel_create_call(t.srv.channel, NULL, GRPC_PROPAGATE_DEFAULTS, t.srv.loop.cq, method,
                                               NULL, deadline, NULL);
    assert_non_null(call);
    Relaylab__LookupRequest req = RELAYLAB__LOOKUP_REQUEST__INIT;
    req.tag = (char *)"unary-test";
    assert_int_equal(rl_client_start(&t.client, call, &req.base, client_done), RL_OK);
}

/* Runs the loop until the handler's on_free ran or |ms| passed. */
static void run_until_freed(int64_t ms)
{
    int64_t until = rl_now_ns() + ms * RL_NS_PER_MS;
    while (t.h.on_free == 0 && rl_now_ns() < until)
        rl_loop_run_until(&t.srv.loop, rl_now_ns() + 5 * RL_NS_PER_MS);
}

static void reply_while_a_message_is_in_flight_is_refused(void **state)
{
    (void)state;
    t.h.mode = STREAM_THEN_REPLY;
    call_lookup(30000); /* far beyond the wait below: a hung call fails the wait */
    assert_true(rl_test_run_until(&t.srv, &t.client_done, 10000));
    run_until_freed(10000);
    assert_int_equal(t.h.on_free, 1);

    assert_int_equal(t.h.on_request, 1);
    assert_int_equal(t.h.rc_send, RL_OK);
    /* Refused without effect: not RL_EGRPC, and the call not marked answered
     * with nothing sent (the client would then wait for its deadline). */
    assert_int_equal(t.h.rc_reply_in_flight, RL_EINVAL);
    assert_int_equal(t.h.rc_send_in_flight, RL_EINVAL);
    assert_int_equal(t.h.on_sent, 1);
    assert_int_equal(t.h.rc_finish, RL_OK);
    assert_int_equal(t.h.rc_after_finish, RL_EINVAL);
    assert_false(t.h.freed_inside_answer);
    assert_int_equal(t.h.on_cancel, 0);

    assert_int_equal(t.client.batch.status, GRPC_STATUS_OK);
    ProtobufCMessage *m = NULL;
    assert_int_equal(rl_client_unpack(&t.client, &relaylab__lookup_reply__descriptor, &m), RL_OK);
    assert_string_equal(((Relaylab__LookupReply *)m)->tag, "first");
    protobuf_c_message_free_unpacked(m, NULL);
}

static void late_answer_after_on_free_is_harmless(void **state)
{
    (void)state;
    t.h.mode = NEVER_ANSWER;
    call_lookup(300);
    assert_true(rl_test_run_until(&t.srv, &t.client_done, 10000));
    assert_int_equal(t.client.batch.status, GRPC_STATUS_DEADLINE_EXCEEDED);
    run_until_freed(10000);
    assert_int_equal(t.h.on_request, 1);
    assert_int_equal(t.h.on_cancel, 1);
    assert_int_equal(t.h.on_free, 1);

    /* What the relay does when its downstream call ends after on_free. */
    assert_null(t.h.u.call);
    assert_true(t.h.u.answered);
    assert_true(t.h.u.cancelled);
    Relaylab__LookupReply late = reply_tagged("late");
    assert_int_equal(rl_unary_reply(&t.h.u, &late.base), RL_EINVAL);
    assert_int_equal(rl_unary_fail(&t.h.u, GRPC_STATUS_INTERNAL, "late"), RL_EINVAL);
    assert_int_equal(rl_unary_send(&t.h.u, &late.base), RL_EINVAL);
    assert_int_equal(t.h.on_free, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(reply_while_a_message_is_in_flight_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(late_answer_after_on_free_is_harmless, setup, teardown),
    };
    return cmocka_run_group_tests_name("rl_unary", tests, NULL, NULL);
}
