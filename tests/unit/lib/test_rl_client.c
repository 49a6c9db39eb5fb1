/* Unit tests for rl_client_batch, the one batch of every client unary call
 * in the kit, against a real gRPC server on one rl_loop (loopback, a port
 * chosen by the OS): the request goes out and the reply, status and details
 * come back; the initial-metadata flags reach the call (wait-for-ready
 * waits on a refused port, its absence fails at once); a batch that never
 * started, or that gRPC refused, still releases everything at fini; a failed
 * batch reads UNKNOWN; fini leaves the struct as after init. */
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
#include "rl_pb.h"
#include "rl_test_server.h"
#include "rl_unary.h"

#include <arpa/inet.h>
#include <grpc/grpc.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* The server's handler: Lookup answers with the request's tag, except for
 * tag "missing", which fails NOT_FOUND. One call at a time. */
typedef struct handler {
    rl_unary u;
    int requests;
    char seen_tag[64]; /* the request's tag as the server decoded it */
} handler;

static struct {
    rl_test_server srv;
    rl_tag client_tag, other_tag;
    bool client_done, other_done;
    handler h;
    rl_client_batch b;
} t;

static void on_request(rl_unary *u, ProtobufCMessage *msg)
{
    handler *h = RL_CONTAINER_OF(u, handler, u);
    Relaylab__LookupRequest *req = (Relaylab__LookupRequest *)msg;
    h->requests++;
    snprintf(h->seen_tag, sizeof h->seen_tag, "%s", req->tag);
    if (strcmp(req->tag, "missing") == 0) {
        rl_unary_fail(u, GRPC_STATUS_NOT_FOUND, "no record for missing");
    } else {
        Relaylab__LookupReply rep = RELAYLAB__LOOKUP_REPLY__INIT;
        rep.tag = req->tag;
        rl_unary_reply(u, &rep.base);
    }
    protobuf_c_message_free_unpacked(msg, NULL);
}

/* The handler is static: its memory outlives on_free. */
static void on_free(rl_unary *u)
{
    (void)u;
}

static const rl_unary_ops ops = {.on_request = on_request, .on_free = on_free};

static void on_call(grpc_call *call)
{
    rl_unary_start(&t.h.u, &t.srv.loop, call, &relaylab__lookup_request__descriptor, 0, &ops);
}

/* What every owner does when the batch's tag comes off its queue. */
static void client_done(rl_tag *tag, bool ok)
{
    (void)tag;
    rl_client_batch_done(&t.b, ok);
    t.client_done = true;
}

/* A batch of the test's own on the client's call. */
static void other_done(rl_tag *tag, bool ok)
{
    (void)tag;
    (void)ok;
    t.other_done = true;
}

static int setup(void **state)
{
    (void)state;
    memset(&t, 0, sizeof t);
    t.client_tag.done = client_done;
    t.other_tag.done = other_done;
    rl_client_batch_init(&t.b);
    return rl_test_server_start(&t.srv, on_call);
}

static int teardown(void **state)
{
    (void)state;
    rl_client_batch_fini(&t.b);
    rl_test_server_stop(&t.srv);
    return 0;
}

/* A Lookup call on |ch| with a deadline |deadline_ms| from now. */
static grpc_call *lookup_call(grpc_channel *ch, int64_t deadline_ms)
{
    grpc_call *call = grpc_channel_create_call(ch, NULL, GRPC_PROPAGATE_DEFAULTS, t.srv.loop.cq,
                                               grpc_slice_from_static_string("/relaylab.Baseline/Lookup"), NULL,
                                               rl_deadline_after_ms(deadline_ms), NULL);
    assert_non_null(call);
    return call;
}

/* Starts a Lookup of |tag| on |ch| in t.b. */
static int start_lookup(grpc_channel *ch, const char *tag, uint32_t flags, int64_t deadline_ms)
{
    Relaylab__LookupRequest req = RELAYLAB__LOOKUP_REQUEST__INIT;
    req.tag = (char *)tag;
    return rl_client_batch_start(&t.b, lookup_call(ch, deadline_ms), &req.base, flags, &t.client_tag);
}

static void details_are(const char *want)
{
    assert_int_equal(GRPC_SLICE_LENGTH(t.b.details), strlen(want));
    assert_memory_equal(GRPC_SLICE_START_PTR(t.b.details), want, strlen(want));
}

static void reply_and_ok_status_arrive(void **state)
{
    (void)state;
    /* Deadlines far beyond the waits: a hung call fails the wait. */
    assert_int_equal(start_lookup(t.srv.channel, "echo-me", 0, 30000), RL_OK);
    assert_true(rl_test_run_until(&t.srv, &t.client_done, 10000));
    assert_int_equal(t.h.requests, 1);
    assert_string_equal(t.h.seen_tag, "echo-me");
    assert_int_equal(t.b.status, GRPC_STATUS_OK);
    details_are("");
    assert_non_null(t.b.reply_buf);
    ProtobufCMessage *m = NULL;
    assert_int_equal(rl_pb_unpack(&relaylab__lookup_reply__descriptor, t.b.reply_buf, 0, &m), RL_OK);
    assert_string_equal(((Relaylab__LookupReply *)m)->tag, "echo-me");
    protobuf_c_message_free_unpacked(m, NULL);
}

static void status_and_details_arrive_without_a_reply(void **state)
{
    (void)state;
    assert_int_equal(start_lookup(t.srv.channel, "missing", 0, 30000), RL_OK);
    assert_true(rl_test_run_until(&t.srv, &t.client_done, 10000));
    assert_int_equal(t.h.requests, 1);
    assert_int_equal(t.b.status, GRPC_STATUS_NOT_FOUND);
    details_are("no record for missing");
    assert_null(t.b.reply_buf);
}

/* A port bound but not listening: a connect is refused at once. The socket
 * stays bound for the test so no one else takes the port. */
static int refusing_port(int *fd)
{
    *fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(*fd >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(*fd, (struct sockaddr *)&sa, sizeof sa), 0);
    socklen_t len = sizeof sa;
    assert_int_equal(getsockname(*fd, (struct sockaddr *)&sa, &len), 0);
    return ntohs(sa.sin_port);
}

static void initial_metadata_flags_reach_the_call(void **state)
{
    (void)state;
    int fd;
    grpc_channel *refused = rl_test_channel(refusing_port(&fd));
    /* Without flags gRPC fails the call as soon as the connect is refused,
     * long before its deadline. */
    assert_int_equal(start_lookup(refused, "fail-fast", 0, 30000), RL_OK);
    assert_true(rl_test_run_until(&t.srv, &t.client_done, 20000));
    assert_int_equal(t.b.status, GRPC_STATUS_UNAVAILABLE);
    rl_client_batch_fini(&t.b);
    /* With wait-for-ready the same call waits for a connection that never
     * comes, until its deadline. */
    t.client_done = false;
    assert_int_equal(start_lookup(refused, "wait", GRPC_INITIAL_METADATA_WAIT_FOR_READY, 300), RL_OK);
    assert_true(rl_test_run_until(&t.srv, &t.client_done, 20000));
    assert_int_equal(t.b.status, GRPC_STATUS_DEADLINE_EXCEEDED);
    grpc_channel_destroy(refused);
    close(fd);
}

static void a_call_gRPC_did_not_create_is_refused(void **state)
{
    (void)state;
    Relaylab__LookupRequest req = RELAYLAB__LOOKUP_REQUEST__INIT;
    req.tag = (char *)"never";
    assert_int_equal(rl_client_batch_start(&t.b, NULL, &req.base, 0, &t.client_tag), RL_EGRPC);
    assert_null(t.b.call);
    assert_int_equal(t.b.status, GRPC_STATUS_UNKNOWN);
}

/* gRPC refuses a second SEND_INITIAL_METADATA: the batch keeps the call and
 * the packed request, and fini releases both (ASan and valgrind see a leak
 * otherwise). */
static void a_refused_batch_leaves_its_buffers_to_fini(void **state)
{
    (void)state;
    grpc_call *call = lookup_call(t.srv.channel, 30000);
    grpc_op op;
    memset(&op, 0, sizeof op);
    op.op = GRPC_OP_SEND_INITIAL_METADATA;
    assert_int_equal(grpc_call_start_batch(call, &op, 1, &t.other_tag, NULL), GRPC_CALL_OK);
    Relaylab__LookupRequest req = RELAYLAB__LOOKUP_REQUEST__INIT;
    req.tag = (char *)"twice";
    assert_int_equal(rl_client_batch_start(&t.b, call, &req.base, 0, &t.client_tag), RL_EGRPC);
    assert_ptr_equal(t.b.call, call);
    assert_non_null(t.b.req_buf);
    /* Its own batch must be done before the call may go. */
    grpc_call_cancel(call, NULL);
    assert_true(rl_test_run_until(&t.srv, &t.other_done, 10000));
    assert_false(t.client_done);
    rl_client_batch_fini(&t.b);
    assert_null(t.b.call);
    assert_null(t.b.req_buf);
}

static void a_failed_batch_reads_unknown(void **state)
{
    (void)state;
    t.b.status = GRPC_STATUS_OK;
    rl_client_batch_done(&t.b, true);
    assert_int_equal(t.b.status, GRPC_STATUS_OK);
    rl_client_batch_done(&t.b, false);
    assert_int_equal(t.b.status, GRPC_STATUS_UNKNOWN);
    details_are("the client batch failed");
}

static void fini_leaves_it_as_after_init(void **state)
{
    (void)state;
    assert_int_equal(start_lookup(t.srv.channel, "echo-me", 0, 30000), RL_OK);
    assert_true(rl_test_run_until(&t.srv, &t.client_done, 10000));
    assert_int_equal(t.b.status, GRPC_STATUS_OK);
    rl_client_batch_fini(&t.b);
    assert_null(t.b.call);
    assert_null(t.b.req_buf);
    assert_null(t.b.reply_buf);
    assert_int_equal(t.b.status, GRPC_STATUS_UNKNOWN);
    details_are("");
    rl_client_batch_fini(&t.b); /* again: nothing left to release */
    rl_client_batch zeroed;
    memset(&zeroed, 0, sizeof zeroed);
    rl_client_batch_fini(&zeroed);
    assert_int_equal(zeroed.status, GRPC_STATUS_UNKNOWN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(reply_and_ok_status_arrive, setup, teardown),
        cmocka_unit_test_setup_teardown(status_and_details_arrive_without_a_reply, setup, teardown),
        cmocka_unit_test_setup_teardown(initial_metadata_flags_reach_the_call, setup, teardown),
        cmocka_unit_test_setup_teardown(a_call_gRPC_did_not_create_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(a_refused_batch_leaves_its_buffers_to_fini, setup, teardown),
        cmocka_unit_test_setup_teardown(a_failed_batch_reads_unknown, setup, teardown),
        cmocka_unit_test_setup_teardown(fini_leaves_it_as_after_init, setup, teardown),
    };
    return cmocka_run_group_tests_name("rl_client", tests, NULL, NULL);
}
