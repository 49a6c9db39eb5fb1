/* Unit tests for the streamer's pure logic: request limits (which status,
 * which message) and the hand-built Chunk encoding, which must decode with
 * protobuf-c exactly as the contract says for every length-prefix size. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <grpc/byte_buffer_reader.h>

#include "produce.h"
#include "rl_payload.h"
#include "rl_pb.h"

static grpc_status_code check(uint32_t count, uint32_t size, char *msg, size_t len)
{
    Relaylab__ProduceRequest req = RELAYLAB__PRODUCE_REQUEST__INIT;
    req.count = count;
    req.size = size;
    msg[0] = '\0';
    return st_produce_check(&req, msg, len);
}

static void limits_accept_the_lab_request(void **state)
{
    (void)state;
    char msg[256];
    assert_int_equal(check(3000, 65536, msg, sizeof msg), GRPC_STATUS_OK);
    assert_int_equal(check(0, 0, msg, sizeof msg), GRPC_STATUS_OK);
    assert_int_equal(check(ST_PRODUCE_MAX_COUNT, 1024, msg, sizeof msg), GRPC_STATUS_OK);
    assert_int_equal(check(4096, ST_PRODUCE_MAX_SIZE, msg, sizeof msg), GRPC_STATUS_OK);
}

static void limits_refuse_oversized_chunks(void **state)
{
    (void)state;
    char msg[256];
    assert_int_equal(check(1, ST_PRODUCE_MAX_SIZE + 1, msg, sizeof msg), GRPC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(msg, "size"));
    assert_int_equal(check(1, UINT32_MAX, msg, sizeof msg), GRPC_STATUS_INVALID_ARGUMENT);
}

static void limits_refuse_too_many_chunks(void **state)
{
    (void)state;
    char msg[256];
    assert_int_equal(check(ST_PRODUCE_MAX_COUNT + 1, 1, msg, sizeof msg), GRPC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(msg, "count"));
}

static void limits_refuse_too_many_bytes(void **state)
{
    (void)state;
    char msg[256];
    /* 1,000,000 x 4 MiB-64 is within each field's limit but not the total. */
    assert_int_equal(check(ST_PRODUCE_MAX_COUNT, ST_PRODUCE_MAX_SIZE, msg, sizeof msg), GRPC_STATUS_RESOURCE_EXHAUSTED);
    assert_non_null(strstr(msg, "bytes per call"));
    /* Exactly 16 GiB is allowed; one byte per chunk more is not. */
    assert_int_equal(check(262144, 65536, msg, sizeof msg), GRPC_STATUS_OK);
    assert_int_equal(check(262144, 65537, msg, sizeof msg), GRPC_STATUS_RESOURCE_EXHAUSTED);
}

static void decode_chunk(uint64_t seq, uint32_t size)
{
    grpc_byte_buffer *bb = st_produce_chunk(seq, size);
    ProtobufCMessage *m = NULL;
    assert_int_equal(rl_pb_unpack(&relaylab__chunk__descriptor, bb, 0, &m), 0);
    Relaylab__Chunk *c = (Relaylab__Chunk *)m;
    assert_int_equal(c->seq, seq);
    assert_int_equal(c->payload.len, size);
    assert_int_equal(rl_payload_check(c->payload.data, c->payload.len, seq, size, NULL), 0);
    /* Byte for byte what protobuf-c itself would send. */
    Relaylab__Chunk ref = RELAYLAB__CHUNK__INIT;
    ref.seq = seq;
    ref.payload = c->payload;
    assert_int_equal(grpc_byte_buffer_length(bb), protobuf_c_message_get_packed_size(&ref.base));
    protobuf_c_message_free_unpacked(m, NULL);
    grpc_byte_buffer_destroy(bb);
}

static void chunks_decode_for_every_prefix_length(void **state)
{
    (void)state;
    /* Sizes at the boundaries of 1-, 2-, 3- and 4-byte length varints. */
    const uint32_t sizes[] = {0, 1, 127, 128, 16383, 16384, 65536, 2097151, 2097152, ST_PRODUCE_MAX_SIZE};
    const uint64_t seqs[] = {0, 1, 127, 128, 2999, 999999};
    for (size_t a = 0; a < sizeof sizes / sizeof *sizes; a++)
        for (size_t b = 0; b < sizeof seqs / sizeof *seqs; b++)
            decode_chunk(seqs[b], sizes[a]);
}

int main(void)
{
    grpc_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(limits_accept_the_lab_request),         cmocka_unit_test(limits_refuse_oversized_chunks),
        cmocka_unit_test(limits_refuse_too_many_chunks),         cmocka_unit_test(limits_refuse_too_many_bytes),
        cmocka_unit_test(chunks_decode_for_every_prefix_length),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    grpc_shutdown();
    return rc;
}
