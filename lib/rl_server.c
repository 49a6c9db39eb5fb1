/* rl_server: accept loop, method dispatch and graceful drain; see rl_server.h. */
#include "rl_server.h"

#include "rl_alloc.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_log.h"

#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Requests kept outstanding per loop: enough that a burst of new calls does
 * not wait for a re-arm round trip. */
#define ACCEPTS_PER_LOOP 16

struct rl_server {
    grpc_server *server;
    rl_loop *loops;
    pthread_t *threads;
    size_t nloops;
    int port;
    rl_server_options opt;
};

/* Server calls handed to handlers and not yet released, across the process
 * (every program here runs one server). */
static atomic_long calls_in_flight;

void rl_server_call_end(void)
{
    atomic_fetch_sub(&calls_in_flight, 1);
}

/* One outstanding grpc_server_request_call. */
typedef struct accept_state {
    rl_tag tag;
    rl_server *server;
    rl_loop *loop;
    grpc_call *call;
    grpc_call_details details;
    grpc_metadata_array metadata;
} accept_state;

/* Answers a call to a method this server does not have. */
typedef struct reject_state {
    rl_tag tag;
    grpc_call *call;
    int cancelled;
    grpc_slice detail;
} reject_state;

static void reject_done(rl_tag *tag, bool ok)
{
    (void)ok;
    reject_state *r = (reject_state *)tag;
    grpc_slice_unref(r->detail);
    grpc_call_unref(r->call);
    rl_server_call_end();
    free(r);
}

static void reject(grpc_call *call, grpc_status_code code, const char *msg)
{
    reject_state *r = rl_xcalloc(1, sizeof *r);
    r->tag.done = reject_done;
    r->call = call;
    r->detail = grpc_slice_from_copied_string(msg);
    grpc_op ops[3];
    memset(ops, 0, sizeof ops);
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[1].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
    ops[1].data.recv_close_on_server.cancelled = &r->cancelled;
    ops[2].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
    ops[2].data.send_status_from_server.status = code;
    ops[2].data.send_status_from_server.status_details = &r->detail;
    if (grpc_call_start_batch(call, ops, 3, &r->tag, NULL) != GRPC_CALL_OK)
        reject_done(&r->tag, false);
}

static void accept_arm(accept_state *a);

/* True when |call| came through the private listener: the only unix-socket
 * listener, so its peers are the only ones gRPC names "unix:...". */
static bool from_private(grpc_call *call)
{
    char *peer = grpc_call_get_peer(call);
    bool ok = peer && strncmp(peer, "unix:", 5) == 0;
    gpr_free(peer);
    return ok;
}

static void accept_done(rl_tag *tag, bool ok)
{
    accept_state *a = (accept_state *)tag;
    if (!ok) { /* the server is shutting down */
        grpc_call_details_destroy(&a->details);
        grpc_metadata_array_destroy(&a->metadata);
        free(a);
        return;
    }
    char *method = grpc_slice_to_c_string(a->details.method);
    const rl_server_options *opt = &a->server->opt;
    atomic_fetch_add(&calls_in_flight, 1);
    const rl_method *m = NULL;
    for (size_t i = 0; i < opt->nmethods; i++)
        if (strcmp(opt->methods[i].path, method) == 0)
            m = &opt->methods[i];
    char msg[300];
    if (m && m->private_only && opt->private_listen && !from_private(a->call)) {
        snprintf(msg, sizeof msg, "method %s is served only to the grader", method);
        reject(a->call, GRPC_STATUS_PERMISSION_DENIED, msg);
    } else if (m) {
        rl_call_info info = {method, a->details.deadline, &a->metadata, rl_now_ns()};
        m->start(a->loop, a->call, &info, m->user);
    } else {
        snprintf(msg, sizeof msg, "method %s is not served here", method);
        reject(a->call, GRPC_STATUS_UNIMPLEMENTED, msg);
    }
    gpr_free(method);
    grpc_call_details_destroy(&a->details);
    grpc_metadata_array_destroy(&a->metadata);
    accept_arm(a);
}

static void accept_arm(accept_state *a)
{
    a->call = NULL;
    grpc_call_details_init(&a->details);
    grpc_metadata_array_init(&a->metadata);
    grpc_call_error e = grpc_server_request_call(a->server->server, &a->call, &a->details,
                                                 &a->metadata, a->loop->cq, a->loop->cq, &a->tag);
    if (e != GRPC_CALL_OK) {
        RL_ERROR("grpc_server_request_call failed (%d)", (int)e);
        grpc_call_details_destroy(&a->details);
        grpc_metadata_array_destroy(&a->metadata);
        free(a);
    }
}

static void *loop_thread(void *arg)
{
    rl_loop_run(arg);
    return NULL;
}

void rl_server_block_signals(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
}

int rl_server_start(const rl_server_options *opt, rl_server **out, char *err, size_t errlen)
{
    rl_server_block_signals();
    /* A server's bursts of calls must not leave their memory behind. */
    if (rl_alloc_purge_in_background() != 0)
        RL_WARN("the allocator would not purge in the background: freed memory returns only while calls come");

    rl_server *s = rl_xcalloc(1, sizeof *s);
    s->opt = *opt;
    if (s->opt.grace_ms < 0)
        s->opt.grace_ms = 10000;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    s->nloops = opt->threads > 0 ? (size_t)opt->threads : (size_t)(cores > 0 ? cores : 1);
    s->loops = rl_xcalloc(s->nloops, sizeof *s->loops);
    s->threads = rl_xcalloc(s->nloops, sizeof *s->threads);
    /* The caller's args without any reuseport setting, then reuseport off. */
    size_t nin = opt->args ? opt->args->num_args : 0, nargs = 0;
    grpc_arg *argv = rl_xcalloc(nin + 1, sizeof *argv);
    for (size_t i = 0; i < nin; i++)
        if (strcmp(opt->args->args[i].key, GRPC_ARG_ALLOW_REUSEPORT) != 0)
            argv[nargs++] = opt->args->args[i];
    argv[nargs].type = GRPC_ARG_INTEGER;
    argv[nargs].key = (char *)GRPC_ARG_ALLOW_REUSEPORT;
    argv[nargs++].value.integer = 0;
    grpc_channel_args args = {.num_args = nargs, .args = argv};
    s->server = grpc_server_create(&args, NULL);
    free(argv);
    for (size_t i = 0; i < s->nloops; i++) {
        rl_loop_init(&s->loops[i]);
        grpc_server_register_completion_queue(s->server, s->loops[i].cq, NULL);
    }
    grpc_server_credentials *creds = grpc_insecure_server_credentials_create();
    s->port = grpc_server_add_http2_port(s->server, opt->listen, creds);
    const char *bad = s->port <= 0 ? opt->listen : NULL;
    if (!bad && opt->private_listen &&
        (strncmp(opt->private_listen, "unix:", 5) != 0 ||
         grpc_server_add_http2_port(s->server, opt->private_listen, creds) <= 0))
        bad = opt->private_listen;
    grpc_server_credentials_release(creds);
    if (bad) {
        snprintf(err, errlen, "cannot listen on %s: the address is in use or invalid%s", bad,
                 bad == opt->private_listen ? " (the private listener must be unix:PATH)" : "");
        grpc_server_destroy(s->server);
        for (size_t i = 0; i < s->nloops; i++)
            rl_loop_fini(&s->loops[i]);
        free(s->loops);
        free(s->threads);
        free(s);
        return RL_EINVAL;
    }
    grpc_server_start(s->server);
    for (size_t i = 0; i < s->nloops; i++) {
        for (int k = 0; k < ACCEPTS_PER_LOOP; k++) {
            accept_state *a = rl_xcalloc(1, sizeof *a);
            a->tag.done = accept_done;
            a->server = s;
            a->loop = &s->loops[i];
            accept_arm(a);
        }
        pthread_create(&s->threads[i], NULL, loop_thread, &s->loops[i]);
    }
    /* Print the address with the port gRPC picked. */
    char host[256];
    snprintf(host, sizeof host, "%s", opt->listen);
    char *colon = strrchr(host, ':');
    if (colon)
        *colon = '\0';
    printf("%s listening on %s:%d\n", opt->name ? opt->name : "relaylab", host, s->port);
    fflush(stdout);
    *out = s;
    return RL_OK;
}

int rl_server_port(const rl_server *s)
{
    return s->port;
}

static bool another_signal(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    struct timespec zero = {0, 0};
    return sigtimedwait(&set, NULL, &zero) > 0;
}

void rl_server_wait(rl_server *s)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    int sig = 0;
    sigwait(&set, &sig);
    RL_INFO("%s received, draining in-flight calls (grace %lld ms)", sig == SIGTERM ? "SIGTERM" : "SIGINT",
            (long long)s->opt.grace_ms);

    grpc_completion_queue *cq = grpc_completion_queue_create_for_pluck(NULL);
    rl_tag shutdown_tag = {NULL};
    grpc_server_shutdown_and_notify(s->server, cq, &shutdown_tag);
    int64_t start = rl_now_ns();
    int64_t give_up = start + s->opt.grace_ms * RL_NS_PER_MS;
    bool cancelled = false;
    int idle_polls = 0;
    for (;;) {
        /* Short waits so a second signal cuts the drain short promptly. */
        grpc_event ev = grpc_completion_queue_pluck(cq, &shutdown_tag, rl_deadline_after_ms(50), NULL);
        if (ev.type == GRPC_OP_COMPLETE)
            break;
        if (cancelled)
            continue;
        /* No call in flight twice in a row (a call accepted just before the
         * shutdown may still be on its way to its handler): only idle
         * connections are left, and cancelling disconnects them. */
        idle_polls = atomic_load(&calls_in_flight) == 0 ? idle_polls + 1 : 0;
        if (idle_polls >= 2) {
            RL_DEBUG("no call in flight; closing idle connections");
            grpc_server_cancel_all_calls(s->server);
            cancelled = true;
        } else if (another_signal() || rl_now_ns() >= give_up) {
            RL_WARN("cancelling the calls still in flight");
            grpc_server_cancel_all_calls(s->server);
            cancelled = true;
        }
    }
    RL_DEBUG("server drained in %lld ms", (long long)((rl_now_ns() - start) / RL_NS_PER_MS));
    grpc_completion_queue_shutdown(cq);
    grpc_completion_queue_destroy(cq);
    for (size_t i = 0; i < s->nloops; i++)
        grpc_completion_queue_shutdown(s->loops[i].cq);
    for (size_t i = 0; i < s->nloops; i++)
        pthread_join(s->threads[i], NULL);
}

void rl_server_free(rl_server *s)
{
    if (!s)
        return;
    grpc_server_destroy(s->server);
    for (size_t i = 0; i < s->nloops; i++)
        rl_loop_fini(&s->loops[i]);
    free(s->loops);
    free(s->threads);
    free(s);
}
