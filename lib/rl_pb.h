/* rl_pb: protobuf-c messages <-> grpc_byte_buffer. The only place that
 * serialises, so size limits and malformed-input handling live in one spot. */
#ifndef RL_PB_H
#define RL_PB_H

#include <grpc/byte_buffer.h>
#include <protobuf-c/protobuf-c.h>
#include <stddef.h>

/* Packs |msg| into a new byte buffer, owned by the caller (destroy it with
 * grpc_byte_buffer_destroy after the SEND_MESSAGE op completes). */
grpc_byte_buffer *rl_pb_pack(const ProtobufCMessage *msg);

/* Unpacks |buf| (not consumed; the caller still owns it) as |desc|.
 * |max_bytes| of 0 means no limit. Returns 0 and sets *out (free it with
 * protobuf_c_message_free_unpacked), RL_ETOOBIG when the buffer is larger than
 * |max_bytes|, or RL_EINVAL when it is NULL or not a valid |desc|. */
int rl_pb_unpack(const ProtobufCMessageDescriptor *desc, grpc_byte_buffer *buf, size_t max_bytes,
                 ProtobufCMessage **out);

#endif
