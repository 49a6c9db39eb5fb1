/* rl_test_server: a real gRPC server and a channel to it on one rl_loop, on
 * a loopback port the OS picks, for the lib unit tests that need a peer
 * (test_rl_unary for the server side, test_rl_client for the client side).
 *
 * The server takes one call and hands it to |on_call| on the loop thread;
 * the test drives the loop with rl_test_run_until. Stopping cancels what is
 * left, drains the queue and shuts gRPC down, so a test ends clean for the
 * leak checkers. Header-only, like rl_test.h: static functions for the one
 * test file that includes it. */
#ifndef RL_TEST_SERVER_H
#define RL_TEST_SERVER_H

#include "rl_deadline.h"
#include "rl_loop.h"

#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

typedef struct rl_test_server {
    rl_loop loop;
    grpc_server *server;
    grpc_channel *channel; /* to the server, on the loop's queue */
    int port;
    grpc_call *call; /* the call taken; |on_call| owns it */
    grpc_call_details details;
    grpc_metadata_array request_md;
    rl_tag accept_tag, shutdown_tag;
    bool shut_down;
    void (*on_call)(grpc_call *call);
} rl_test_server;

/* An insecure channel to 127.0.0.1:|port|; the caller destroys it. */
static grpc_channel *rl_test_channel(int port)
{
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
    grpc_channel_credentials *cc = grpc_insecure_credentials_create();
    grpc_channel *ch = grpc_channel_create(addr, cc, NULL);
    grpc_channel_credentials_release(cc);
    return ch;
}

static void rl_test_server_accepted(rl_tag *tag, bool ok)
{
    rl_test_server *s = RL_CONTAINER_OF(tag, rl_test_server, accept_tag);
    if (ok)
        s->on_call(s->call);
}

static void rl_test_server_shut_down(rl_tag *tag, bool ok)
{
    (void)ok;
    RL_CONTAINER_OF(tag, rl_test_server, shutdown_tag)->shut_down = true;
}

/* Runs |s|'s loop until |*flag| is set or |ms| passed; returns the flag. */
static bool rl_test_run_until(rl_test_server *s, const bool *flag, int64_t ms)
{
    int64_t until = rl_now_ns() + ms * RL_NS_PER_MS;
    while (!*flag && rl_now_ns() < until)
        rl_loop_run_until(&s->loop, rl_now_ns() + 5 * RL_NS_PER_MS);
    return *flag;
}

/* Starts gRPC, the loop, the server and the channel; the first call to
 * arrive goes to |on_call|. Returns 0, or -1 (a cmocka setup failure). */
static int rl_test_server_start(rl_test_server *s, void (*on_call)(grpc_call *call))
{
    grpc_init();
    memset(s, 0, sizeof *s);
    s->on_call = on_call;
    rl_loop_init(&s->loop);
    s->server = grpc_server_create(NULL, NULL);
    grpc_server_register_completion_queue(s->server, s->loop.cq, NULL);
    grpc_server_credentials *creds = grpc_insecure_server_credentials_create();
    s->port = grpc_server_add_http2_port(s->server, "127.0.0.1:0", creds);
    grpc_server_credentials_release(creds);
    if (s->port <= 0)
        return -1;
    grpc_server_start(s->server);
    s->channel = rl_test_channel(s->port);
    s->accept_tag.done = rl_test_server_accepted;
    s->shutdown_tag.done = rl_test_server_shut_down;
    grpc_call_details_init(&s->details);
    grpc_metadata_array_init(&s->request_md);
    if (grpc_server_request_call(s->server, &s->call, &s->details, &s->request_md, s->loop.cq, s->loop.cq,
                                 &s->accept_tag) != GRPC_CALL_OK)
        return -1;
    return 0;
}

/* Destroys the channel, shuts the server down (cancelling its calls),
 * drains the loop and shuts gRPC down. The test's own calls must be
 * finished first. */
static void rl_test_server_stop(rl_test_server *s)
{
    grpc_channel_destroy(s->channel);
    grpc_server_shutdown_and_notify(s->server, s->loop.cq, &s->shutdown_tag);
    grpc_server_cancel_all_calls(s->server);
    rl_test_run_until(s, &s->shut_down, 10000);
    grpc_server_destroy(s->server);
    grpc_completion_queue_shutdown(s->loop.cq);
    rl_loop_run(&s->loop);
    rl_loop_fini(&s->loop);
    grpc_call_details_destroy(&s->details);
    grpc_metadata_array_destroy(&s->request_md);
    grpc_shutdown();
}

#endif
