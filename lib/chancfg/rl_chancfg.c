/* rl_chancfg: loading a channel config, the catalogue of gRPC channel args it
 * accepts, the report, and the small helpers every module shares (allocation
 * that can fail, one-line message building, did-you-mean). Reading values
 * out of a config is rl_chancfg_values.c's.
 *
 * The arg catalogue is built from gRPC's own macros, so a name here is by
 * construction the string gRPC 1.51 reads; the macro's spelling rides along
 * because people write it (or a lower-case guess of it) by mistake. */
#include "rl_chancfg_int.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- allocation ------------------------------------------------------- */

static void *(*g_malloc)(size_t) = malloc;
static void (*g_free)(void *) = free;

void rl_chancfg_set_alloc_funcs(void *(*malloc_fn)(size_t), void (*free_fn)(void *))
{
    g_malloc = malloc_fn ? malloc_fn : malloc;
    g_free = free_fn ? free_fn : free;
}

void *cc_malloc(size_t n)
{
    return g_malloc(n ? n : 1);
}

void cc_free(void *p)
{
    if (p)
        g_free(p);
}

char *cc_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = cc_malloc(n);
    if (p)
        memcpy(p, s, n);
    return p;
}

/* ---- cc_buf ----------------------------------------------------------- */

void cc_buf_init(cc_buf *b)
{
    memset(b, 0, sizeof(*b));
}

void cc_buf_fini(cc_buf *b)
{
    cc_free(b->p);
    cc_buf_init(b);
}

static bool buf_reserve(cc_buf *b, size_t extra)
{
    if (b->oom)
        return false;
    if (b->len + extra + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra + 1)
        cap *= 2;
    /* No realloc in the allocator interface (it mirrors jansson's), so grow
     * by copy; strings here are short. */
    char *p = cc_malloc(cap);
    if (!p) {
        b->oom = true;
        return false;
    }
    if (b->p)
        memcpy(p, b->p, b->len + 1);
    else
        p[0] = '\0';
    cc_free(b->p);
    b->p = p;
    b->cap = cap;
    return true;
}

void cc_buf_add(cc_buf *b, const char *s, size_t n)
{
    if (!buf_reserve(b, n))
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void cc_buf_puts(cc_buf *b, const char *s)
{
    cc_buf_add(b, s, strlen(s));
}

void cc_buf_vprintf(cc_buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0 || !buf_reserve(b, (size_t)n))
        return;
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void cc_buf_printf(cc_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cc_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

static void buf_escaped(cc_buf *b, const char *s, size_t max)
{
    size_t i;
    for (i = 0; s[i] && i < max; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            cc_buf_printf(b, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f)
            cc_buf_printf(b, "\\x%02x", c);
        else
            cc_buf_add(b, (const char *)&c, 1);
    }
    if (s[i])
        cc_buf_puts(b, "...");
}

void cc_buf_user(cc_buf *b, const char *s)
{
    cc_buf_puts(b, "\"");
    buf_escaped(b, s, 60);
    cc_buf_puts(b, "\"");
}

void cc_buf_path_key(cc_buf *b, const char *key)
{
    bool ident = key[0] && (isalpha((unsigned char)key[0]) || key[0] == '_');
    for (const char *p = key; ident && *p; p++)
        ident = isalnum((unsigned char)*p) || *p == '_';
    if (ident) {
        cc_buf_puts(b, ".");
        cc_buf_puts(b, key);
    } else {
        cc_buf_puts(b, "[\"");
        buf_escaped(b, key, 80);
        cc_buf_puts(b, "\"]");
    }
}

const char *cc_buf_str(const cc_buf *b)
{
    return b->p && !b->oom ? b->p : "";
}

char *cc_buf_take(cc_buf *b)
{
    char *p = b->oom ? NULL : b->p;
    if (b->oom)
        cc_free(b->p);
    else if (!p)
        p = cc_strdup("");
    cc_buf_init(b);
    return p;
}

/* ---- the arg catalogue ------------------------------------------------ */

#define OFF INT32_MAX /* gRPC's "infinite"/"disabled" for millisecond args */
#define ND CC_NODEFAULT

static const char *const lb_policies[] = {"pick_first", "round_robin", "grpclb", NULL};
static const char *const opt_targets[] = {"latency", "blend", "throughput", NULL};

/* Each wrapper stringifies its macro argument itself: passed through to a
 * common macro it would be expanded to the string first. */
#define ARG(m, sides, type, lo, hi, dc, ds) {m, #m, sides, type, lo, hi, dc, ds, NULL}
#define INT_ARG(m, sides, lo, dc, ds) {m, #m, sides, CC_INT, lo, INT32_MAX, dc, ds, NULL}
#define BOOL_ARG(m, sides, dc, ds) {m, #m, sides, CC_BOOL, 0, 1, dc, ds, NULL}
#define STR_ARG(m, sides) {m, #m, sides, CC_STRING, 0, 0, ND, ND, NULL}
#define PTR_ARG(m) {m, #m, CC_SIDE_BOTH, CC_POINTER, 0, 0, ND, ND, NULL}

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
    {GRPC_ARG_OPTIMIZATION_TARGET, "GRPC_ARG_OPTIMIZATION_TARGET", B, CC_STRING, 0, 0, ND, ND,
     opt_targets},
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

/* ---- did you mean ----------------------------------------------------- */

unsigned cc_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 128 || lb > 128)
        return 255;
    unsigned row[129];
    for (size_t j = 0; j <= lb; j++)
        row[j] = (unsigned)j;
    for (size_t i = 1; i <= la; i++) {
        unsigned diag = row[0];
        row[0] = (unsigned)i;
        for (size_t j = 1; j <= lb; j++) {
            unsigned up = row[j];
            unsigned cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            unsigned best = diag + cost;
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb] > 255 ? 255 : row[lb];
}

/* |a| and |b| differ by more than |limit| edits when their lengths do. */
static bool too_far(size_t la, size_t lb, unsigned limit)
{
    return (la > lb ? la - lb : lb - la) > limit;
}

const char *cc_suggest(const char *word, const void *base, size_t n, size_t stride)
{
    size_t wl = strlen(word);
    /* Close enough to be a typo: a couple of edits, more for long names. */
    unsigned limit = wl >= 24 ? 4 : wl >= 10 ? 3 : wl >= 4 ? 2 : 1;
    const char *best = NULL;
    unsigned best_score = UINT_MAX;
    for (size_t i = 0; i < n; i++) {
        const char *cand = *(const char *const *)((const char *)base + i * stride);
        size_t cl = strlen(cand);
        unsigned d = 255;
        if (!too_far(wl, cl, limit))
            d = cc_edit_distance(word, cand);
        /* "keepalive_time_ms" for "grpc.keepalive_time_ms": a missing
         * "grpc." prefix is not five mistakes. */
        if (strncmp(cand, "grpc.", 5) == 0 && strncmp(word, "grpc.", 5) != 0 &&
            !too_far(wl, cl - 5, limit)) {
            unsigned d2 = cc_edit_distance(word, cand + 5);
            if (d2 < d)
                d = d2;
        }
        if (d > limit)
            continue;
        /* Twice the distance, one less when the word is a prefix of the
         * candidate: "grpc.keepalive_timeout" is closer to
         * "grpc.keepalive_timeout_ms" than to "grpc.keepalive_time_ms". */
        unsigned score = 2 * d - (strncasecmp(cand, word, wl) == 0 && d > 0 ? 1 : 0);
        if (score < best_score) {
            best_score = score;
            best = cand;
        }
    }
    return best;
}

/* ---- loading ---------------------------------------------------------- */

static void diag_set(rl_chancfg_diag *diag, int line, int column, long pos, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void diag_set(rl_chancfg_diag *diag, int line, int column, long pos, const char *fmt, ...)
{
    if (!diag)
        return;
    diag->line = line;
    diag->column = column;
    diag->position = pos;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(diag->text, sizeof(diag->text), fmt, ap);
    va_end(ap);
    for (char *p = diag->text; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
}

int rl_chancfg_parse(const char *buf, size_t len, rl_chancfg **out, rl_chancfg_diag *diag)
{
    *out = NULL;
    if (len > RL_CHANCFG_MAX_BYTES) {
        diag_set(diag, 0, 0, -1, "file is %zu bytes; the limit is %d", len, RL_CHANCFG_MAX_BYTES);
        return RL_ETOOBIG;
    }
    rl_chancfg *cfg = cc_malloc(sizeof(*cfg));
    if (!cfg) {
        diag_set(diag, 0, 0, -1, "out of memory");
        return RL_ENOMEM;
    }
    json_error_t err;
    /* Duplicate keys are refused: with them the later value silently wins,
     * which is the kind of surprise this tool exists to catch. */
    cfg->root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &err);
    if (!cfg->root) {
        cc_free(cfg);
        /* jansson reports most of its allocation failures as an error
         * without text (see "Limits" in the README). */
        if (json_error_code(&err) == json_error_out_of_memory || !err.text[0]) {
            diag_set(diag, 0, 0, -1, "out of memory");
            return RL_ENOMEM;
        }
        diag_set(diag, err.line > 0 ? err.line : 0, err.column > 0 ? err.column : 0,
                 err.position, "%s", err.text);
        return RL_EPARSE;
    }
    *out = cfg;
    if (diag)
        diag_set(diag, 0, 0, -1, "ok");
    return 0;
}

int rl_chancfg_load(const char *path, rl_chancfg **out, rl_chancfg_diag *diag)
{
    *out = NULL;
    /* O_NONBLOCK and O_NOCTTY, then a regular file only: a FIFO no one
     * writes would block open() and read() for ever (issue 21), and a
     * device is no config. A submission's file goes through
     * rl_file_read_untrusted and rl_chancfg_parse instead (lib/rl_file.h). */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        int e = errno;
        diag_set(diag, 0, 0, -1, "cannot open: %s", strerror(e));
        return e == ENOENT ? RL_ENOTFOUND : RL_ESYS;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        diag_set(diag, 0, 0, -1, "not a regular file (a FIFO, device, socket or folder is no config)");
        close(fd);
        return RL_EINVAL;
    }
    /* Read in a loop rather than trusting st_size: the file may grow. */
    size_t cap = 4096, len = 0;
    char *buf = cc_malloc(cap);
    int rc = 0;
    if (!buf) {
        rc = RL_ENOMEM;
        diag_set(diag, 0, 0, -1, "out of memory");
        goto fail_close;
    }
    for (;;) {
        if (len == cap) {
            if (cap > RL_CHANCFG_MAX_BYTES) {
                rc = RL_ETOOBIG;
                diag_set(diag, 0, 0, -1, "file is above the limit of %d bytes", RL_CHANCFG_MAX_BYTES);
                goto fail_buf;
            }
            char *bigger = cc_malloc(cap * 2);
            if (!bigger) {
                rc = RL_ENOMEM;
                diag_set(diag, 0, 0, -1, "out of memory");
                goto fail_buf;
            }
            memcpy(bigger, buf, len);
            cc_free(buf);
            buf = bigger;
            cap *= 2;
        }
        ssize_t n = read(fd, buf + len, cap - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = RL_ESYS;
            diag_set(diag, 0, 0, -1, "cannot read: %s", strerror(errno));
            goto fail_buf;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    rc = rl_chancfg_parse(buf, len, out, diag);
    cc_free(buf);
    return rc;

fail_buf:
    cc_free(buf);
fail_close:
    close(fd);
    return rc;
}

void rl_chancfg_free(rl_chancfg *cfg)
{
    if (!cfg)
        return;
    json_decref(cfg->root);
    cc_free(cfg);
}

/* ---- the report ------------------------------------------------------- */

void rl_chancfg_report_init(rl_chancfg_report *report)
{
    memset(report, 0, sizeof(*report));
}

void rl_chancfg_report_fini(rl_chancfg_report *report)
{
    for (size_t i = 0; i < report->nfindings; i++) {
        cc_free(report->findings[i].path);
        cc_free(report->findings[i].why);
    }
    cc_free(report->findings);
    rl_chancfg_report_init(report);
}

int rl_chancfg_report_add(rl_chancfg_report *report, rl_chancfg_severity severity,
                          const char *rule, const char *path, const char *why)
{
    if (report->nfindings == report->cap) {
        size_t cap = report->cap ? report->cap * 2 : 16;
        rl_chancfg_finding *f = cc_malloc(cap * sizeof(*f));
        if (!f)
            return RL_ENOMEM;
        if (report->nfindings)
            memcpy(f, report->findings, report->nfindings * sizeof(*f));
        cc_free(report->findings);
        report->findings = f;
        report->cap = cap;
    }
    char *p = cc_strdup(path);
    char *w = cc_strdup(why);
    if (!p || !w) {
        cc_free(p);
        cc_free(w);
        return RL_ENOMEM;
    }
    rl_chancfg_finding *f = &report->findings[report->nfindings++];
    f->severity = severity;
    f->rule = rule;
    f->path = p;
    f->why = w;
    if (severity == RL_CHANCFG_ERROR)
        report->nerrors++;
    else
        report->nwarnings++;
    return 0;
}

const rl_chancfg_finding *rl_chancfg_report_find(const rl_chancfg_report *report, const char *rule)
{
    for (size_t i = 0; i < report->nfindings; i++)
        if (strcmp(report->findings[i].rule, rule) == 0)
            return &report->findings[i];
    return NULL;
}
