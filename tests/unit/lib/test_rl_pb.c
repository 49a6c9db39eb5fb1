/* Unit tests for rl_pb: messages survive a round trip, oversized buffers are
 * refused before parsing, and garbage is refused without crashing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "relaylab.pb-c.h"
#include "rl_err.h"
#include "rl_pb.h"

#include <grpc/grpc.h>
#include <string.h>

static void round_trip_keeps_fields(void **state)
{
    (void)state;
    Relaylab__ProcessRequest req = RELAYLAB__PROCESS_REQUEST__INIT;
    req.tag = (char *)"t-1";
    req.lookup_delay_ms = 300;
    req.steps = 7;
    req.step_ms = 10;
    grpc_byte_buffer *bb = rl_pb_pack(&req.base);
    ProtobufCMessage *out = NULL;
    assert_int_equal(rl_pb_unpack(&relaylab__process_request__descriptor, bb, 0, &out), RL_OK);
    Relaylab__ProcessRequest *got = (Relaylab__ProcessRequest *)out;
    assert_string_equal(got->tag, "t-1");
    assert_int_equal(got->lookup_delay_ms, 300);
    assert_int_equal(got->steps, 7);
    assert_int_equal(got->step_ms, 10);
    protobuf_c_message_free_unpacked(out, NULL);
    grpc_byte_buffer_destroy(bb);
}

static void oversized_is_refused(void **state)
{
    (void)state;
    char big[2048];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    Relaylab__LookupRequest req = RELAYLAB__LOOKUP_REQUEST__INIT;
    req.tag = big;
    grpc_byte_buffer *bb = rl_pb_pack(&req.base);
    ProtobufCMessage *out = NULL;
    assert_int_equal(rl_pb_unpack(&relaylab__lookup_request__descriptor, bb, 1024, &out), RL_ETOOBIG);
    assert_null(out);
    grpc_byte_buffer_destroy(bb);
}

static void garbage_is_refused(void **state)
{
    (void)state;
    /* A length-delimited field whose length runs past the end. */
    static const char junk[] = {0x0a, 0x7f, 'a', 'b'};
    grpc_slice s = grpc_slice_from_copied_buffer(junk, sizeof junk);
    grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&s, 1);
    grpc_slice_unref(s);
    ProtobufCMessage *out = NULL;
    assert_int_equal(rl_pb_unpack(&relaylab__lookup_request__descriptor, bb, 0, &out), RL_EINVAL);
    assert_int_equal(rl_pb_unpack(&relaylab__lookup_request__descriptor, NULL, 0, &out), RL_EINVAL);
    grpc_byte_buffer_destroy(bb);
}

int main(void)
{
    grpc_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip_keeps_fields),
        cmocka_unit_test(oversized_is_refused),
        cmocka_unit_test(garbage_is_refused),
    };
    int rc = cmocka_run_group_tests_name("rl_pb", tests, NULL, NULL);
    grpc_shutdown();
    return rc;
}
