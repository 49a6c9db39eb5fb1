/* rl_health: grpc.health.v1.Health, Check and Watch; see rl_health.h. */
#include "rl_health.h"

#include "health.pb-c.h"
#include "rl_alloc.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_unary.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A service name is a few dozen bytes; anything longer is not a name. */
#define MAX_REQUEST 1024

typedef Grpc__Health__V1__HealthCheckRequest health_request;
typedef Grpc__Health__V1__HealthCheckResponse health_response;
#define SERVING         GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING
#define NOT_SERVING     GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__NOT_SERVING
#define SERVICE_UNKNOWN GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVICE_UNKNOWN

static atomic_bool serving_now;
static atomic_bool watches_ending;

void rl_health_set_serving(bool serving)
{
    atomic_store(&serving_now, serving);
    if (serving)
        atomic_store(&watches_ending, false);
}

bool rl_health_serving(void)
{
    return atomic_load(&serving_now);
}

void rl_health_end_watches(void)
{
    atomic_store(&watches_ending, true);
}

int rl_health_init(rl_health *h, const rl_method *methods, size_t nmethods)
{
    h->services = rl_xcalloc(nmethods + 1, sizeof *h->services);
    h->services[0] = rl_xstrdup("");
    h->nservices = 1;
    for (size_t i = 0; i < nmethods; i++) {
        /* "/pkg.Service/Method": the part between the slashes. */
        const char *path = methods[i].path;
        const char *end = path[0] == '/' ? strchr(path + 1, '/') : NULL;
        if (!end || end == path + 1)
            continue;
        size_t len = (size_t)(end - path - 1);
        char *name = rl_xmalloc(len + 1);
        memcpy(name, path + 1, len);
        name[len] = '\0';
        if (rl_health_knows(h, name)) {
            free(name);
            continue;
        }
        h->services[h->nservices++] = name;
    }
    return RL_OK;
}

void rl_health_fini(rl_health *h)
{
    for (size_t i = 0; i < h->nservices; i++)
        free(h->services[i]);
    free(h->services);
    h->services = NULL;
    h->nservices = 0;
}

bool rl_health_knows(const rl_health *h, const char *service)
{
    for (size_t i = 0; i < h->nservices; i++)
        if (strcmp(h->services[i], service) == 0)
            return true;
    return false;
}

static int status_for(const rl_health *h, const char *service)
{
    if (!rl_health_knows(h, service))
        return SERVICE_UNKNOWN;
    return rl_health_serving() ? SERVING : NOT_SERVING;
}

/* ---- Check ---- */

typedef struct check_call {
    rl_unary u;
    const rl_health *health;
} check_call;

static void check_request(rl_unary *u, ProtobufCMessage *msg)
{
    check_call *c = RL_CONTAINER_OF(u, check_call, u);
    health_request *req = (health_request *)msg;
    int status = status_for(c->health, req->service);
    if (status == SERVICE_UNKNOWN) {
        char text[200];
        snprintf(text, sizeof text, "no service '%.100s' here", req->service);
        rl_unary_fail(u, GRPC_STATUS_NOT_FOUND, text);
    } else {
        health_response rep = GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__INIT;
        rep.status = status;
        rl_unary_reply(u, &rep.base);
    }
    protobuf_c_message_free_unpacked(msg, NULL);
}

static void check_free(rl_unary *u)
{
    free(RL_CONTAINER_OF(u, check_call, u));
}

static const rl_unary_ops check_ops = {.on_request = check_request, .on_free = check_free};

void rl_health_check_start(rl_loop *loop, grpc_call *call, const rl_call_info *info, void *user)
{
    (void)info;
    check_call *c = rl_xcalloc(1, sizeof *c);
    c->health = user;
    rl_unary_start(&c->u, loop, call, &grpc__health__v1__health_check_request__descriptor, MAX_REQUEST, &check_ops);
}

/* ---- Watch ---- */

typedef struct watch_call {
    rl_unary u;
    rl_timer poll; /* armed while the stream waits for a change */
    const rl_health *health;
    char *service; /* owned; NULL until the request arrived */
    int sent;      /* the status last sent; -1 before the first */
    bool sending;  /* a message is in flight (rl_unary allows one) */
} watch_call;

static void watch_poll(rl_timer *t);

/* Sends the status when it differs from the last one sent, ends the stream
 * when watches are ending and the client has the latest status, else looks
 * again in RL_HEALTH_POLL_MS. */
static void watch_step(watch_call *w)
{
    if (w->sending || w->u.answered)
        return;
    int status = status_for(w->health, w->service);
    if (status != w->sent) {
        health_response rep = GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__INIT;
        rep.status = status;
        if (rl_unary_send(&w->u, &rep.base) == RL_OK) {
            w->sent = status;
            w->sending = true;
        }
        return; /* on_sent comes back here */
    }
    if (atomic_load(&watches_ending)) {
        rl_unary_finish(&w->u, GRPC_STATUS_UNAVAILABLE, "the server is shutting down");
        return;
    }
    rl_timer_start(w->u.loop, &w->poll, rl_now_ns() + RL_HEALTH_POLL_MS * RL_NS_PER_MS, watch_poll);
}

static void watch_poll(rl_timer *t)
{
    watch_step(RL_CONTAINER_OF(t, watch_call, poll));
}

static void watch_request(rl_unary *u, ProtobufCMessage *msg)
{
    watch_call *w = RL_CONTAINER_OF(u, watch_call, u);
    w->service = rl_xstrdup(((health_request *)msg)->service);
    protobuf_c_message_free_unpacked(msg, NULL);
    watch_step(w);
}

static void watch_sent(rl_unary *u, bool ok)
{
    watch_call *w = RL_CONTAINER_OF(u, watch_call, u);
    w->sending = false;
    if (ok)
        watch_step(w); /* a change may have come while this one was going out */
}

static void watch_cancel(rl_unary *u)
{
    watch_call *w = RL_CONTAINER_OF(u, watch_call, u);
    rl_timer_stop(u->loop, &w->poll);
}

static void watch_free(rl_unary *u)
{
    watch_call *w = RL_CONTAINER_OF(u, watch_call, u);
    rl_timer_stop(u->loop, &w->poll);
    free(w->service);
    free(w);
}

static const rl_unary_ops watch_ops = {
    .on_request = watch_request, .on_cancel = watch_cancel, .on_free = watch_free, .on_sent = watch_sent};

void rl_health_watch_start(rl_loop *loop, grpc_call *call, const rl_call_info *info, void *user)
{
    (void)info;
    watch_call *w = rl_xcalloc(1, sizeof *w);
    w->health = user;
    w->sent = -1;
    rl_unary_start(&w->u, loop, call, &grpc__health__v1__health_check_request__descriptor, MAX_REQUEST, &watch_ops);
}
