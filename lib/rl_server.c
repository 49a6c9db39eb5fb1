/* rl_server: accept loop, method dispatch and graceful drain; see rl_server.h. */
#include "rl_server.h"

#include "rl_alloc.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_health.h"
#include "rl_log.h"

#include <grpc/grpc_security.h>
#include <errno.h>
#include <grpc/support/alloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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
    rl_method *methods; /* the program's methods, then Check and Watch */
    size_t nmethods;
    rl_health health;
};

/* grpc_server_request_call slots posted and not yet completed. Once the
 * server is shut down and this is 0, every call gRPC matched before the
 * shutdown has reached accept_done and is counted in the calls in flight (rl_handler). While
 * it is above 0 gRPC holds no call waiting for a slot. */
static atomic_long slots_armed;
/* Admission is closed: a call accepted from now on is refused UNAVAILABLE
 * before any handler sees it, so the client can retry elsewhere. */
static atomic_bool refusing;

/* One outstanding grpc_server_request_call. */
typedef struct accept_state {
    rl_tag tag;
    rl_server *server;
    rl_loop *loop;
    grpc_call *call;
    grpc_call_details details;
    grpc_metadata_array metadata;
} accept_state;

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
    atomic_fetch_sub(&slots_armed, 1);
    if (!ok) { /* the server is shutting down */
        grpc_call_details_destroy(&a->details);
        grpc_metadata_array_destroy(&a->metadata);
        free(a);
        return;
    }
    char *method = grpc_slice_to_c_string(a->details.method);
    const rl_server *s = a->server;
    rl_server_hold(); /* handed to a handler (or refused): released by rl_server_call_end */
    const rl_method *m = NULL;
    for (size_t i = 0; i < s->nmethods; i++)
        if (strcmp(s->methods[i].path, method) == 0)
            m = &s->methods[i];
    char msg[300];
    if (atomic_load(&refusing)) {
        /* Accepted but not started when admission closed: never started. */
        rl_server_reject(a->call, GRPC_STATUS_UNAVAILABLE, "the server is shutting down; try another instance");
    } else if (m && m->private_only && s->opt.private_listen && !from_private(a->call)) {
        snprintf(msg, sizeof msg, "method %s is served only to the grader", method);
        rl_server_reject(a->call, GRPC_STATUS_PERMISSION_DENIED, msg);
    } else if (m) {
        rl_call_info info = {method, a->details.deadline, &a->metadata, rl_now_ns()};
        m->start(a->loop, a->call, &info, m->user);
    } else {
        snprintf(msg, sizeof msg, "method %s is not served here", method);
        rl_server_reject(a->call, GRPC_STATUS_UNIMPLEMENTED, msg);
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
    /* Counted before the call: its completion may come on this loop only
     * after this returns, but the main thread reads the count at any time. */
    atomic_fetch_add(&slots_armed, 1);
    grpc_call_error e = grpc_server_request_call(a->server->server, &a->call, &a->details, &a->metadata, a->loop->cq,
                                                 a->loop->cq, &a->tag);
    if (e != GRPC_CALL_OK) {
        atomic_fetch_sub(&slots_armed, 1);
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

void rl_server_signals_init(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
}

int rl_server_check_timing(int64_t grace_ms, int64_t drain_delay_ms, char *err, size_t errlen)
{
    int64_t grace = grace_ms < 0 ? RL_SERVER_GRACE_MS : grace_ms;
    if (drain_delay_ms < 0 || (drain_delay_ms > 0 && drain_delay_ms >= grace)) {
        snprintf(err, errlen, "the drain delay (%lld ms) must be shorter than the grace (%lld ms)",
                 (long long)drain_delay_ms, (long long)grace);
        return RL_EINVAL;
    }
    return RL_OK;
}

int rl_server_start(const rl_server_options *opt, rl_server **out, char *err, size_t errlen)
{
    int64_t grace = opt->grace_ms < 0 ? RL_SERVER_GRACE_MS : opt->grace_ms;
    if (rl_server_check_timing(opt->grace_ms, opt->drain_delay_ms, err, errlen) != RL_OK)
        return RL_EINVAL;
    if (!opt->listen && !opt->private_listen) {
        snprintf(err, errlen, "no address to listen on: neither a listener nor a private one");
        return RL_EINVAL;
    }
    rl_server_signals_init();
    signal(SIGPIPE, SIG_IGN);
    /* A server's bursts of calls must not leave their memory behind. */
    if (rl_alloc_purge_in_background() != 0)
        RL_WARN("the allocator would not purge in the background: freed memory returns only while calls come");

    rl_server *s = rl_xcalloc(1, sizeof *s);
    s->opt = *opt;
    s->opt.grace_ms = grace;
    s->nmethods = opt->nmethods + 2;
    s->methods = rl_xcalloc(s->nmethods, sizeof *s->methods);
    memcpy(s->methods, opt->methods, opt->nmethods * sizeof *s->methods);
    rl_health_init(&s->health, opt->methods, opt->nmethods);
    s->methods[opt->nmethods] = (rl_method){RL_HEALTH_CHECK_PATH, rl_health_check_start, &s->health, false};
    s->methods[opt->nmethods + 1] = (rl_method){RL_HEALTH_WATCH_PATH, rl_health_watch_start, &s->health, false};
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
    grpc_channel_args server_args = {.num_args = nargs, .args = argv};
    s->server = grpc_server_create(&server_args, NULL);
    free(argv);
    for (size_t i = 0; i < s->nloops; i++) {
        rl_loop_init(&s->loops[i]);
        grpc_server_register_completion_queue(s->server, s->loops[i].cq, NULL);
    }
    grpc_server_credentials *creds = grpc_insecure_server_credentials_create();
    /* No public listener: the private one alone (checked above). */
    s->port = opt->listen ? grpc_server_add_http2_port(s->server, opt->listen, creds) : 0;
    const char *bad = opt->listen && s->port <= 0 ? opt->listen : NULL;
    if (!bad && opt->private_listen &&
        (strncmp(opt->private_listen, "unix:", 5) != 0 ||
         grpc_server_add_http2_port(s->server, opt->private_listen, creds) <= 0))
        bad = opt->private_listen;
    grpc_server_credentials_release(creds);
    if (bad) {
        snprintf(err, errlen, "cannot listen on %s: the address is in use or invalid%s", bad,
                 bad == opt->private_listen ? " (the private listener must be unix:PATH)" : "");
        rl_server_free(s);
        return RL_EINVAL;
    }
    atomic_store(&refusing, false);
    rl_health_set_serving(true);
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
    /* Print the address with the port gRPC picked, or the private socket
     * when it is the only listener. */
    const char *name = opt->name ? opt->name : "relaylab";
    if (opt->listen) {
        char host[256];
        snprintf(host, sizeof host, "%s", opt->listen);
        char *colon = strrchr(host, ':');
        if (colon)
            *colon = '\0';
        printf("%s listening on %s:%d\n", name, host, s->port);
    } else {
        printf("%s listening on %s\n", name, opt->private_listen);
    }
    fflush(stdout);
    *out = s;
    return RL_OK;
}

/* Polls of the drain: how soon a finished drain, a second signal or the
 * grace is noticed. */
#define POLL_MS 2

int rl_server_take_signal(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    struct timespec zero = {0, 0};
    int sig = sigtimedwait(&set, NULL, &zero);
    return sig > 0 ? sig : 0;
}

static long long ms_since(int64_t t0)
{
    return (long long)((rl_now_ns() - t0) / RL_NS_PER_MS);
}

/* What the shutdown has come to; one drain at a time (the main thread's). */
typedef struct drain {
    rl_server *s;
    int64_t t0;         /* the signal */
    int64_t give_up;    /* t0 + grace; INT64_MAX without one */
    bool interruptible; /* a second SIGTERM or a SIGINT cancels at once */
    bool cut;           /* it did */
} drain;

/* Sleeps one poll; returns true when the drain must end now (a second
 * signal, or the grace is over). */
static bool poll_once(drain *d)
{
    rl_sleep_ms(POLL_MS, NULL);
    int sig = rl_server_take_signal();
    if (sig && d->interruptible) {
        RL_WARN("%s after %lld ms: ending now", sig == SIGINT ? "SIGINT" : "a second SIGTERM", ms_since(d->t0));
        d->cut = true;
    }
    return d->cut || rl_now_ns() >= d->give_up;
}

/* Closes admission: Watch streams end, a call not yet started is refused,
 * and gRPC closes the listeners and sends every connection a GOAWAY. */
static void close_admission(drain *d, grpc_completion_queue *cq, rl_tag *tag)
{
    rl_health_end_watches();
    atomic_store(&refusing, true);
    if (d->s->opt.on_close_admission)
        d->s->opt.on_close_admission(d->s->opt.close_user);
    /* gRPC kills calls still waiting for a slot at the shutdown with
     * CANCELLED; with the refusal on, the loops take them as UNAVAILABLE.
     * Slots are free again within a loop's turn; bounded by the grace. */
    while (atomic_load(&slots_armed) == 0 && !poll_once(d))
        ;
    grpc_server_shutdown_and_notify(d->s->server, cq, tag);
    RL_INFO("admission closed %lld ms after the signal; %ld calls in flight", ms_since(d->t0),
            rl_server_calls_in_flight());
}

/* The plan's "received" line: what comes next. */
static void log_plan(int sig, const rl_shutdown_plan *p)
{
    const char *name = sig == SIGTERM ? "SIGTERM" : "SIGINT";
    if (p->note)
        RL_INFO("%s received: NOT_SERVING; %s", name, p->note);
    else if (p->grace_ms < 0)
        RL_INFO("%s received: NOT_SERVING; admission closes in %lld ms, calls in flight may take forever", name,
                (long long)p->drain_delay_ms);
    else if (p->grace_ms == 0)
        RL_INFO("%s received: NOT_SERVING; closing admission and cancelling every call now", name);
    else
        RL_INFO("%s received: NOT_SERVING; admission closes in %lld ms, calls still in flight %lld ms after "
                "the signal are cancelled",
                name, (long long)p->drain_delay_ms, (long long)p->grace_ms);
}

int rl_server_wait(rl_server *s)
{
    static const rl_shutdown_hooks rule = {NULL, NULL, NULL, NULL};
    const rl_shutdown_hooks *h = s->opt.shutdown_hooks ? s->opt.shutdown_hooks : &rule;
    if (h->before_signal)
        h->before_signal(h->user);

    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    int sig = 0;
    sigwait(&set, &sig);
    int64_t t0 = rl_now_ns();
    rl_health_set_serving(false);
    rl_shutdown_plan plan = {s->opt.grace_ms, s->opt.drain_delay_ms, true, RL_SERVER_STOP_MS, NULL};
    if (h->at_signal)
        h->at_signal(h->user, sig, &plan);
    if (sig == SIGINT)
        plan.grace_ms = 0;
    log_plan(sig, &plan);
    drain d = {s, t0, INT64_MAX, plan.interruptible, false};
    if (plan.grace_ms >= 0)
        d.give_up = d.t0 + plan.grace_ms * RL_NS_PER_MS;

    grpc_completion_queue *cq = grpc_completion_queue_create_for_pluck(NULL);
    rl_tag shutdown_tag = {NULL};
    if (h->admitting) {
        while (h->admitting(h->user) && !poll_once(&d))
            ;
    } else if (d.give_up > d.t0) {
        /* Health says NOT_SERVING; admission stays open for those who have
         * not noticed yet. */
        int64_t until = d.t0 + plan.drain_delay_ms * RL_NS_PER_MS;
        while (rl_now_ns() < until && !poll_once(&d))
            ;
    }
    close_admission(&d, cq, &shutdown_tag);

    bool cancelled = false;
    for (;;) {
        grpc_event ev = grpc_completion_queue_pluck(cq, &shutdown_tag, rl_deadline_after_ms(POLL_MS), NULL);
        if (ev.type == GRPC_OP_COMPLETE)
            break;
        if (cancelled) {
            if (d.interruptible)
                rl_server_take_signal(); /* already ending: nothing more to cut */
            continue;
        }
        long in_flight = rl_server_calls_in_flight();
        if (in_flight == 0 && atomic_load(&slots_armed) == 0) {
            /* Every call is done; only idle connections are left, which
             * gRPC would otherwise wait seconds for: close them. */
            RL_INFO("drained %lld ms after the signal", ms_since(d.t0));
            grpc_server_cancel_all_calls(s->server);
            cancelled = true;
        } else if (rl_now_ns() >= d.give_up || d.cut || (rl_server_take_signal() && d.interruptible)) {
            RL_WARN("%lld ms after the signal: cancelling the %ld calls still in flight", ms_since(d.t0), in_flight);
            grpc_server_cancel_all_calls(s->server);
            cancelled = true;
        }
    }
    grpc_completion_queue_shutdown(cq);
    grpc_completion_queue_destroy(cq);
    /* gRPC has let go of the server calls, but their last completions (and
     * the calls handlers made downstream) may still be on their way through
     * the loops, which start batches as they go: the queues may only be shut
     * down once every handler is done. */
    int64_t stop_by = plan.stop_ms < 0 ? INT64_MAX : rl_now_ns() + plan.stop_ms * RL_NS_PER_MS;
    while (rl_server_calls_in_flight() > 0 || atomic_load(&slots_armed) > 0) {
        if (rl_now_ns() >= stop_by) {
            RL_ERROR("%ld calls still running %lld ms after the drain (not children of a server call?): "
                     "leaving without them",
                     rl_server_calls_in_flight(), (long long)plan.stop_ms);
            return RL_ETIMEOUT;
        }
        rl_sleep_ms(POLL_MS, NULL);
    }
    for (size_t i = 0; i < s->nloops; i++)
        grpc_completion_queue_shutdown(s->loops[i].cq);
    for (size_t i = 0; i < s->nloops; i++)
        pthread_join(s->threads[i], NULL);
    RL_INFO("stopped %lld ms after the signal", ms_since(d.t0));
    return RL_OK;
}

void rl_server_free(rl_server *s)
{
    if (!s)
        return;
    grpc_server_destroy(s->server);
    for (size_t i = 0; i < s->nloops; i++)
        rl_loop_fini(&s->loops[i]);
    rl_health_fini(&s->health);
    free(s->methods);
    free(s->loops);
    free(s->threads);
    free(s);
}

/* The teardown's thread and the wait for it. Static: the thread may outlive
 * rl_server_teardown when it gives up, and the process ends with _exit. */
static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done;
    void (*fn)(void);
} teardown_state = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, NULL};

static void *teardown_main(void *arg)
{
    (void)arg;
    teardown_state.fn();
    pthread_mutex_lock(&teardown_state.mu);
    teardown_state.done = true;
    pthread_cond_signal(&teardown_state.cv);
    pthread_mutex_unlock(&teardown_state.mu);
    return NULL;
}

int rl_server_teardown(void (*teardown)(void), int64_t max_ms)
{
    teardown_state.fn = teardown;
    teardown_state.done = false;
    pthread_t thread;
    if (pthread_create(&thread, NULL, teardown_main, NULL) != 0) {
        teardown(); /* no thread to spare: wait as long as it takes */
        return RL_OK;
    }
    /* CLOCK_REALTIME: the condition variable's default clock. */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    int64_t ns = until.tv_nsec + max_ms % 1000 * RL_NS_PER_MS;
    until.tv_sec += (time_t)(max_ms / 1000 + ns / RL_NS_PER_SEC);
    until.tv_nsec = (long)(ns % RL_NS_PER_SEC);
    pthread_mutex_lock(&teardown_state.mu);
    int rc = 0;
    while (!teardown_state.done && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&teardown_state.cv, &teardown_state.mu, &until);
    bool done = teardown_state.done;
    pthread_mutex_unlock(&teardown_state.mu);
    if (!done) {
        pthread_detach(thread); /* it frees itself if it ever ends */
        RL_INFO("gRPC's teardown still waits on its own poll %lld ms after the stop; leaving without it",
                (long long)max_ms);
        fflush(NULL); /* the caller's _exit would drop what stdio holds */
        return RL_ETIMEOUT;
    }
    pthread_join(thread, NULL);
    return RL_OK;
}
