/* rl_channel: client channels that share nothing with the process's other
 * channels.
 *
 * gRPC pools subchannels process-wide: two channels to one address with the
 * same args share a connection, so one channel's state (its BDP estimate,
 * keepalive strikes, a GOAWAY) would leak into another's measurement. The
 * grader, the labs and the benches each judge one connection at a time, so
 * every channel they open gets a subchannel pool of its own. Insecure
 * credentials: relaylab talks to loopback only. */
#ifndef RL_CHANNEL_H
#define RL_CHANNEL_H

#include <grpc/grpc.h>

/* A new insecure channel to |target| with |extra|'s args (may be NULL; the
 * args are copied by gRPC, the caller keeps its own) followed by
 * GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL = 1. Never NULL: gRPC turns a bad
 * target or bad args into a channel whose calls fail. The caller destroys it
 * with grpc_channel_destroy, before grpc_shutdown. */
grpc_channel *rl_channel_isolated(const char *target, const grpc_channel_args *extra);

#endif
