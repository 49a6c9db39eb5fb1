/* rl_pb: protobuf-c <-> grpc_byte_buffer; see rl_pb.h. */
#include "rl_pb.h"

#include "rl_alloc.h"
#include "rl_err.h"

#include <grpc/byte_buffer_reader.h>
#include <grpc/slice.h>

grpc_byte_buffer *rl_pb_pack(const ProtobufCMessage *msg)
{
    size_t n = protobuf_c_message_get_packed_size(msg);
    grpc_slice slice = grpc_slice_malloc(n);
    protobuf_c_message_pack(msg, GRPC_SLICE_START_PTR(slice));
    grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&slice, 1);
    grpc_slice_unref(slice);
    return bb;
}

int rl_pb_unpack(const ProtobufCMessageDescriptor *desc, grpc_byte_buffer *buf, size_t max_bytes,
                 ProtobufCMessage **out)
{
    if (!buf)
        return RL_EINVAL;
    if (max_bytes && grpc_byte_buffer_length(buf) > max_bytes)
        return RL_ETOOBIG;
    grpc_byte_buffer_reader reader;
    if (!grpc_byte_buffer_reader_init(&reader, buf))
        return RL_EINVAL;
    grpc_slice all = grpc_byte_buffer_reader_readall(&reader);
    grpc_byte_buffer_reader_destroy(&reader);
    /* protobuf-c copies strings and bytes, so the slice can go right away. */
    ProtobufCMessage *msg = protobuf_c_message_unpack(desc, NULL, GRPC_SLICE_LENGTH(all), GRPC_SLICE_START_PTR(all));
    grpc_slice_unref(all);
    if (!msg)
        return RL_EINVAL;
    *out = msg;
    return RL_OK;
}
