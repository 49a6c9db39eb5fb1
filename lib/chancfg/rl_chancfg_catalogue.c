/* rl_chancfg_catalogue: the gRPC channel args a channel config may set,
 * with the sides they apply to, their types, bounds and gRPC 1.51's
 * defaults (cc_argdef in rl_chancfg_int.h), and the lookups on it.
 *
 * The catalogue is built from gRPC's own macros, so a name here is by
 * construction the string gRPC 1.51 reads; the macro's spelling rides along
 * because people write it (or a lower-case guess of it) by mistake. */
#include "rl_chancfg_int.h"

#include <stdint.h>
#include <string.h>

#define OFF INT32_MAX /* gRPC's "infinite"/"disabled" for millisecond args */
#define ND  CC_NODEFAULT

static const char *const lb_policies[] = {"pick_first", "round_robin", "grpclb", NULL};
static const char *const opt_targets[] = {"latency", "blend", "throughput", NULL};

/* Each wrapper stringifies its macro argument itself: passed through to a
 * common macro it would be expanded to the string first. */
#define ARG(m, sides, type, lo, hi, dc, ds)                                                                            \
    {                                                                                                                  \
        m, #m, sides, type, lo, hi, dc, ds, NULL                                                                       \
    }
#define INT_ARG(m, sides, lo, dc, ds)                                                                                  \
    {                                                                                                                  \
        m, #m, sides, CC_INT, lo, INT32_MAX, dc, ds, NULL                                                              \
    }
#define BOOL_ARG(m, sides, dc, ds)                                                                                     \
    {                                                                                                                  \
        m, #m, sides, CC_BOOL, 0, 1, dc, ds, NULL                                                                      \
    }
#define STR_ARG(m, sides)                                                                                              \
    {                                                                                                                  \
        m, #m, sides, CC_STRING, 0, 0, ND, ND, NULL                                                                    \
    }
#define PTR_ARG(m)                                                                                                     \
    {                                                                                                                  \
        m, #m, CC_SIDE_BOTH, CC_POINTER, 0, 0, ND, ND, NULL                                                            \
    }

enum { C = CC_SIDE_CLIENT, S = CC_SIDE_SERVER, B = CC_SIDE_BOTH };

static const cc_argdef g_args[] = {
    /* keepalive and ping policy (doc/keepalive.md gives the defaults) */
    INT_ARG(GRPC_ARG_KEEPALIVE_TIME_MS, B, 1, OFF, 7200000),
    INT_ARG(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, B, 0, 20000, 20000),
    BOOL_ARG(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, B, 0, 0),
    INT_ARG(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, B, 0, 2, 2),
    INT_ARG(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, S, 0, ND, 300000),
    INT_ARG(GRPC_ARG_HTTP2_MAX_PING_STRIKES, S, 0, ND, 2),
    INT_ARG(GRPC_ARG_HTTP2_MIN_SENT_PING_INTERVAL_WITHOUT_DATA_MS, B, 0, ND, ND),
    BOOL_ARG(GRPC_ARG_HTTP2_BDP_PROBE, B, 1, 1),
    /* connection lifetime */
    INT_ARG(GRPC_ARG_MAX_CONNECTION_IDLE_MS, S, 1, ND, OFF),
    INT_ARG(GRPC_ARG_MAX_CONNECTION_AGE_MS, S, 1, ND, OFF),
    INT_ARG(GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS, S, 0, ND, OFF),
    INT_ARG(GRPC_ARG_CLIENT_IDLE_TIMEOUT_MS, C, 1000, 1800000, ND),
    INT_ARG(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS, S, 1, ND, 120000),
    INT_ARG(GRPC_ARG_SERVER_CONFIG_CHANGE_DRAIN_GRACE_TIME_MS, S, 0, ND, 600000),
    /* reconnection and name resolution */
    INT_ARG(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, C, 0, 1000, ND),
    INT_ARG(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, C, 0, 20000, ND),
    INT_ARG(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, C, 0, 120000, ND),
    INT_ARG(GRPC_ARG_DNS_MIN_TIME_BETWEEN_RESOLUTIONS_MS, C, 0, 30000, ND),
    BOOL_ARG(GRPC_ARG_DNS_ENABLE_SRV_QUERIES, C, 0, ND),
    INT_ARG(GRPC_ARG_DNS_ARES_QUERY_TIMEOUT_MS, C, 0, 120000, ND),
    BOOL_ARG(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, C, 0, ND),
    BOOL_ARG(GRPC_ARG_ENABLE_HTTP_PROXY, C, 1, ND),
    STR_ARG(GRPC_ARG_HTTP_PROXY, C),
    /* retries, service config, load balancing */
    BOOL_ARG(GRPC_ARG_ENABLE_RETRIES, C, 1, ND),
    INT_ARG(GRPC_ARG_PER_RPC_RETRY_BUFFER_SIZE, C, 0, 262144, ND),
    BOOL_ARG(GRPC_ARG_EXPERIMENTAL_ENABLE_HEDGING, C, 0, ND),
    BOOL_ARG(GRPC_ARG_SERVICE_CONFIG_DISABLE_RESOLUTION, C, 0, ND),
    {GRPC_ARG_LB_POLICY_NAME, "GRPC_ARG_LB_POLICY_NAME", C, CC_STRING, 0, 0, ND, ND, lb_policies},
    BOOL_ARG(GRPC_ARG_INHIBIT_HEALTH_CHECKING, C, 0, ND),
    INT_ARG(GRPC_ARG_GRPCLB_CALL_TIMEOUT_MS, C, 0, ND, ND),
    INT_ARG(GRPC_ARG_GRPCLB_FALLBACK_TIMEOUT_MS, C, 0, 10000, ND),
    INT_ARG(GRPC_ARG_PRIORITY_FAILOVER_TIMEOUT_MS, C, 0, 10000, ND),
    /* messages and streams */
    ARG(GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH, B, CC_INT, -1, INT32_MAX, 4194304, 4194304),
    ARG(GRPC_ARG_MAX_SEND_MESSAGE_LENGTH, B, CC_INT, -1, INT32_MAX, -1, -1),
    INT_ARG(GRPC_ARG_MAX_METADATA_SIZE, B, 0, 8192, 8192),
    INT_ARG(GRPC_ARG_MAX_CONCURRENT_STREAMS, S, 0, ND, OFF),
    ARG(GRPC_ARG_HTTP2_MAX_FRAME_SIZE, B, CC_INT, 16384, 16777215, 16384, 16384),
    INT_ARG(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, B, 0, 65535, 65535),
    INT_ARG(GRPC_ARG_HTTP2_HPACK_TABLE_SIZE_DECODER, B, 0, 4096, 4096),
    INT_ARG(GRPC_ARG_HTTP2_HPACK_TABLE_SIZE_ENCODER, B, 0, 4096, 4096),
    INT_ARG(GRPC_ARG_HTTP2_WRITE_BUFFER_SIZE, B, 0, ND, ND),
    BOOL_ARG(GRPC_ARG_HTTP2_ENABLE_TRUE_BINARY, B, 1, 1),
    INT_ARG(GRPC_ARG_HTTP2_INITIAL_SEQUENCE_NUMBER, C, 1, 1, ND),
    STR_ARG(GRPC_ARG_HTTP2_SCHEME, C),
    ARG(GRPC_COMPRESSION_CHANNEL_DEFAULT_ALGORITHM, B, CC_INT, 0, 2, 0, 0),
    ARG(GRPC_COMPRESSION_CHANNEL_DEFAULT_LEVEL, B, CC_INT, 0, 3, 0, 0),
    ARG(GRPC_COMPRESSION_CHANNEL_ENABLED_ALGORITHMS_BITSET, B, CC_INT, 0, 7, 7, 7),
    BOOL_ARG(GRPC_ARG_ENABLE_PER_MESSAGE_COMPRESSION, B, 1, 1),
    BOOL_ARG(GRPC_ARG_ENABLE_PER_MESSAGE_DECOMPRESSION, B, 1, 1),
    /* identity and headers */
    STR_ARG(GRPC_ARG_DEFAULT_AUTHORITY, C),
    STR_ARG(GRPC_ARG_PRIMARY_USER_AGENT_STRING, C),
    STR_ARG(GRPC_ARG_SECONDARY_USER_AGENT_STRING, C),
    STR_ARG(GRPC_SSL_TARGET_NAME_OVERRIDE_ARG, C),
    BOOL_ARG(GRPC_ARG_DISABLE_CLIENT_AUTHORITY_FILTER, C, 0, ND),
    BOOL_ARG(GRPC_ARG_SURFACE_USER_AGENT, S, ND, 1),
    /* stack, transport and diagnostics */
    BOOL_ARG(GRPC_ARG_MINIMAL_STACK, B, 0, 0),
    BOOL_ARG(GRPC_ARG_ENABLE_DEADLINE_CHECKS, B, 1, 1),
    BOOL_ARG(GRPC_ARG_ENABLE_CENSUS, B, 0, 0),
    BOOL_ARG(GRPC_ARG_ENABLE_LOAD_REPORTING, S, ND, 0),
    BOOL_ARG(GRPC_ARG_ENABLE_CHANNELZ, B, 1, 1),
    INT_ARG(GRPC_ARG_MAX_CHANNEL_TRACE_EVENT_MEMORY_PER_NODE, B, 0, ND, ND),
    {GRPC_ARG_OPTIMIZATION_TARGET, "GRPC_ARG_OPTIMIZATION_TARGET", B, CC_STRING, 0, 0, ND, ND, opt_targets},
    INT_ARG(GRPC_ARG_TCP_READ_CHUNK_SIZE, B, 1, 8192, 8192),
    INT_ARG(GRPC_ARG_TCP_MIN_READ_CHUNK_SIZE, B, 1, ND, ND),
    INT_ARG(GRPC_ARG_TCP_MAX_READ_CHUNK_SIZE, B, 1, ND, ND),
    BOOL_ARG(GRPC_ARG_TCP_TX_ZEROCOPY_ENABLED, B, 0, 0),
    INT_ARG(GRPC_ARG_TCP_TX_ZEROCOPY_SEND_BYTES_THRESHOLD, B, 0, 16384, 16384),
    INT_ARG(GRPC_ARG_TCP_TX_ZEROCOPY_MAX_SIMULT_SENDS, B, 0, 4, 4),
    INT_ARG(GRPC_ARG_TSI_MAX_FRAME_SIZE, B, 0, ND, ND),
    BOOL_ARG(GRPC_ARG_ALLOW_REUSEPORT, S, ND, 1),
    BOOL_ARG(GRPC_ARG_EXPAND_WILDCARD_ADDRS, S, ND, 0),
    BOOL_ARG(GRPC_ARG_USE_CRONET_PACKET_COALESCING, C, 1, ND),
    BOOL_ARG(GRPC_ARG_WORKAROUND_CRONET_COMPRESSION, S, ND, 0),
    STR_ARG(GRPC_ARG_CHANNEL_POOL_DOMAIN, C),
    INT_ARG(GRPC_ARG_CHANNEL_ID, C, 0, ND, ND),
    /* args that carry C objects (or belong to tests): not settable from a file */
    PTR_ARG(GRPC_ARG_RESOURCE_QUOTA),
    PTR_ARG(GRPC_ARG_SOCKET_MUTATOR),
    PTR_ARG(GRPC_ARG_SOCKET_FACTORY),
    PTR_ARG(GRPC_SSL_SESSION_CACHE_ARG),
    PTR_ARG(GRPC_ARG_EXPERIMENTAL_GRPCLB_CHANNEL_ARGS),
    PTR_ARG(GRPC_ARG_MOBILE_LOG_CONTEXT),
    PTR_ARG(GRPC_ARG_AUTHORIZATION_POLICY_PROVIDER),
    PTR_ARG(GRPC_ARG_TEST_ONLY_DO_NOT_USE_IN_PROD_XDS_BOOTSTRAP_CONFIG),
    /* written as an object under client.service_config, not as a string arg */
    PTR_ARG(GRPC_ARG_SERVICE_CONFIG),
};

const cc_argdef *cc_argdef_table(size_t *n)
{
    *n = sizeof(g_args) / sizeof(g_args[0]);
    return g_args;
}

const cc_argdef *cc_argdef_find(const char *name)
{
    for (size_t i = 0; i < sizeof(g_args) / sizeof(g_args[0]); i++)
        if (strcmp(g_args[i].name, name) == 0)
            return &g_args[i];
    return NULL;
}
