/* rl_chancfg_probe: gRPC's own verdict on the client args.
 *
 * gRPC does not fail channel creation for a bad service config: it returns a
 * lame channel whose calls fail INVALID_ARGUMENT "Failed to create secure
 * client channel", and logs the real reason at ERROR level (measured on 1.51:
 * "channel stack builder failed: INVALID_ARGUMENT: errors validating service
 * config: [field:... error:...]"). So the probe makes one call with a short
 * deadline on a channel to a loopback port that is bound but not listening,
 * and reads the reason from gRPC's log. A good channel fails UNAVAILABLE
 * (connection refused, possibly after retries) or DEADLINE_EXCEEDED. */
#include "rl_chancfg_int.h"

#include <arpa/inet.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <grpc/support/log.h>
#include <grpc/support/time.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* gRPC logs from its own threads too, hence the lock. */
static pthread_mutex_t g_cap_lock = PTHREAD_MUTEX_INITIALIZER;
static char g_cap[2048];
static size_t g_cap_len;

static void capture_log(gpr_log_func_args *args)
{
    if (args->severity < GPR_LOG_SEVERITY_ERROR)
        return;
    pthread_mutex_lock(&g_cap_lock);
    if (g_cap_len + 3 < sizeof(g_cap)) {
        int n = snprintf(g_cap + g_cap_len, sizeof(g_cap) - g_cap_len, "%s%s", g_cap_len ? "; " : "", args->message);
        if (n > 0)
            g_cap_len += (size_t)n;
        if (g_cap_len >= sizeof(g_cap))
            g_cap_len = sizeof(g_cap) - 1;
    }
    pthread_mutex_unlock(&g_cap_lock);
}

/* What stays installed afterwards: gRPC's default log is a C++ symbol we
 * cannot name from C, so write the same shape of line ourselves. */
static void stderr_log(gpr_log_func_args *args)
{
    const char *file = strrchr(args->file, '/');
    fprintf(stderr, "%c %s:%d] %s\n", gpr_log_severity_string(args->severity)[0], file ? file + 1 : args->file,
            args->line, args->message);
}

/* The first captured record's reason with gRPC's prefix cut, one line. */
static void take_reason(char *out, size_t len)
{
    static const char prefix[] = "channel stack builder failed: ";
    pthread_mutex_lock(&g_cap_lock);
    const char *s = strstr(g_cap, prefix);
    s = s ? s + sizeof(prefix) - 1 : g_cap;
    size_t n = strlen(s);
    if (n >= len) /* cut: a reason is for reading, the start says most */
        n = len - 1;
    memcpy(out, s, n);
    out[n] = '\0';
    g_cap_len = 0;
    g_cap[0] = '\0';
    pthread_mutex_unlock(&g_cap_lock);
    for (char *p = out; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
}

/* A loopback port nobody listens on, held for the probe's duration so no
 * other process can take it: connecting to it is refused at once. */
static int bound_port(int *fd_out, char *target, size_t len)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return RL_ESYS;
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t sl = sizeof(sa);
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || getsockname(fd, (struct sockaddr *)&sa, &sl) != 0) {
        close(fd);
        return RL_ESYS;
    }
    snprintf(target, len, "127.0.0.1:%u", (unsigned)ntohs(sa.sin_port));
    *fd_out = fd;
    return 0;
}

static int probe_call(grpc_channel *ch, int timeout_ms, grpc_status_code *status, char *details, size_t dlen)
{
    grpc_completion_queue *cq = grpc_completion_queue_create_for_next(NULL);
    gpr_timespec deadline = gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(timeout_ms, GPR_TIMESPAN));
    grpc_call *call = grpc_channel_create_call(
        ch, NULL, 0, cq, grpc_slice_from_static_string("/relaylab.Baseline/Lookup"), NULL, deadline, NULL);
    grpc_metadata_array im, tm;
    grpc_metadata_array_init(&im);
    grpc_metadata_array_init(&tm);
    grpc_slice det = grpc_empty_slice();
    grpc_op ops[4];
    memset(ops, 0, sizeof(ops));
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[1].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    /* When gRPC's retry machinery is active (it is by default), a client
     * batch that leaves out RECV_INITIAL_METADATA may never complete with
     * its status, so ask for it (docs/grpc-facts.md). */
    ops[2].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[2].data.recv_initial_metadata.recv_initial_metadata = &im;
    ops[3].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    ops[3].data.recv_status_on_client.trailing_metadata = &tm;
    ops[3].data.recv_status_on_client.status = status;
    ops[3].data.recv_status_on_client.status_details = &det;
    int rc = 0;
    if (!call || grpc_call_start_batch(call, ops, 4, ops, NULL) != GRPC_CALL_OK) {
        rc = RL_EGRPC;
    } else {
        /* The deadline bounds the call; the extra second bounds a gRPC that
         * would not honour it. */
        gpr_timespec limit = gpr_time_add(deadline, gpr_time_from_millis(1000, GPR_TIMESPAN));
        grpc_event ev = grpc_completion_queue_next(cq, limit, NULL);
        if (ev.type != GRPC_OP_COMPLETE) {
            grpc_call_cancel(call, NULL);
            grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
            rc = RL_ETIMEOUT;
        }
        char *d = grpc_slice_to_c_string(det);
        snprintf(details, dlen, "%s", d);
        gpr_free(d);
    }
    grpc_slice_unref(det);
    grpc_metadata_array_destroy(&im);
    grpc_metadata_array_destroy(&tm);
    if (call)
        grpc_call_unref(call);
    grpc_completion_queue_shutdown(cq);
    while (grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL).type != GRPC_QUEUE_SHUTDOWN)
        ;
    grpc_completion_queue_destroy(cq);
    return rc;
}

int rl_chancfg_grpc_verdict(const rl_chancfg *cfg, int timeout_ms, rl_chancfg_verdict *out)
{
    memset(out, 0, sizeof(*out));
    grpc_channel_args *user = NULL;
    int rc = cc_client_args_lenient(cfg, &user);
    if (rc)
        return rc;
    /* The user's args first, then ours: a local subchannel pool keeps the
     * probe away from any other channel of this process. (Not lib/'s
     * rl_channel_isolated: this archive uses nothing of lib/ but rl_err, and
     * these args come from cc_malloc, which fails instead of aborting.) */
    grpc_arg *args = cc_malloc((user->num_args + 1) * sizeof(grpc_arg));
    if (!args) {
        rl_chancfg_args_free(user);
        return RL_ENOMEM;
    }
    memcpy(args, user->args, user->num_args * sizeof(grpc_arg));
    args[user->num_args].type = GRPC_ARG_INTEGER;
    args[user->num_args].key = (char *)GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL;
    args[user->num_args].value.integer = 1;
    grpc_channel_args ca = {user->num_args + 1, args};

    int fd = -1;
    char target[64];
    if ((rc = bound_port(&fd, target, sizeof(target))) != 0)
        goto out_args;

    grpc_init();
    pthread_mutex_lock(&g_cap_lock);
    g_cap_len = 0;
    g_cap[0] = '\0';
    pthread_mutex_unlock(&g_cap_lock);
    gpr_set_log_function(capture_log);

    grpc_channel_credentials *creds = grpc_insecure_credentials_create();
    grpc_channel *ch = grpc_channel_create(target, creds, &ca);
    grpc_channel_credentials_release(creds);
    grpc_status_code status = GRPC_STATUS_UNKNOWN;
    char details[256] = "";
    rc = probe_call(ch, timeout_ms > 0 ? timeout_ms : 1000, &status, details, sizeof(details));
    grpc_channel_destroy(ch);

    gpr_set_log_function(stderr_log);
    char logged[sizeof(out->reason)];
    take_reason(logged, sizeof(logged));
    grpc_shutdown();
    close(fd);

    if (rc == 0) {
        out->status = (int)status;
        out->accepted = status != GRPC_STATUS_INVALID_ARGUMENT;
        if (!out->accepted && !logged[0])
            snprintf(out->reason, sizeof(out->reason), "%s (gRPC logged no reason)", details);
        else
            snprintf(out->reason, sizeof(out->reason), "%s", logged);
    }
out_args:
    cc_free(args);
    rl_chancfg_args_free(user);
    return rc;
}
