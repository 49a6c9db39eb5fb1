/* Unit tests for rl_tcp: a listening port is ACCEPTED, the same port once
 * closed is REFUSED, a listener whose accept queue is full gives NO_ANSWER
 * within the wait (the case the callers treat as "not yet"), bad arguments
 * are refused, and a held port (taken beside a listener that shares its
 * port, or right after one that does not, as the kit's servers) is refused,
 * in use to any other bind, and open again to a server restarting there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rl_err.h"
#include "rl_tcp.h"

/* A listener on 127.0.0.1:0 with |backlog|; sets *port. */
static int listen_loopback(int backlog, int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(fd, backlog), 0);
    socklen_t len = sizeof sa;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
    *port = ntohs(sa.sin_port);
    return fd;
}

/* A listener the way gRPC makes one: SO_REUSEADDR, and SO_REUSEPORT
 * unless |reuseport| is false (the kit's servers turn it off), on |port|
 * (0: any); sets *port. */
static int listen_like_grpc(int *port, bool reuseport)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    int one = 1;
    assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one), 0);
    if (reuseport)
        assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one), 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)*port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(fd, 8), 0);
    socklen_t len = sizeof sa;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
    *port = ntohs(sa.sin_port);
    return fd;
}

/* A held port: the hold taken beside the listener when that set
 * SO_REUSEPORT, else right after it closed (connections in TIME_WAIT
 * there); then refused, in use to a bind that does not ask to share it,
 * and open again to a server restarting there while it is held. */
static void hold_and_restart(bool reuseport)
{
    int port = 0;
    int lfd = listen_like_grpc(&port, reuseport);
    /* A connection the server closes first leaves TIME_WAIT on the port,
     * as a stopped baseline does. */
    int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(c, (struct sockaddr *)&sa, sizeof sa), 0);
    int acc = accept(lfd, NULL, NULL);
    assert_true(acc >= 0);
    int hold = -1;
    if (reuseport)
        assert_int_equal(rl_tcp_hold(port, &hold), RL_OK);
    else
        assert_int_equal(rl_tcp_hold(port, &hold), RL_ESYS); /* EADDRINUSE beside it */
    close(acc);
    close(lfd);
    close(c);
    if (!reuseport)
        assert_int_equal(rl_tcp_hold(port, &hold), RL_OK);
    rl_tcp_answer a;
    assert_int_equal(rl_tcp_probe(port, 1000, &a), RL_OK);
    assert_int_equal(a, RL_TCP_REFUSED);
    int other = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_int_equal(bind(other, (struct sockaddr *)&sa, sizeof sa), -1);
    assert_int_equal(errno, EADDRINUSE);
    close(other);
    int again = port;
    lfd = listen_like_grpc(&again, reuseport);
    assert_int_equal(again, port);
    assert_int_equal(rl_tcp_probe(port, 1000, &a), RL_OK);
    assert_int_equal(a, RL_TCP_ACCEPTED);
    close(hold);
    close(lfd);
}

static void held_port_beside_a_reuseport_listener(void **state)
{
    (void)state;
    hold_and_restart(true);
}

static void held_port_after_a_listener_of_the_kit(void **state)
{
    (void)state;
    hold_and_restart(false);
    int fd;
    assert_int_equal(rl_tcp_hold(0, &fd), RL_EINVAL);
    assert_int_equal(rl_tcp_hold(65536, &fd), RL_EINVAL);
}

static void open_then_closed(void **state)
{
    (void)state;
    int port;
    int fd = listen_loopback(8, &port);
    rl_tcp_answer a;
    assert_int_equal(rl_tcp_probe(port, 1000, &a), RL_OK);
    assert_int_equal(a, RL_TCP_ACCEPTED);
    close(fd);
    assert_int_equal(rl_tcp_probe(port, 1000, &a), RL_OK);
    assert_int_equal(a, RL_TCP_REFUSED);
}

static void full_accept_queue_is_no_answer(void **state)
{
    (void)state;
    int port;
    int fd = listen_loopback(0, &port);
    /* Linux queues backlog + 1 connections; fill it (never accepted), then
     * the next SYN is dropped and the connect stays pending. */
    int held[4];
    int nheld = 0;
    rl_tcp_answer a = RL_TCP_ACCEPTED;
    for (int i = 0; i < 4 && a == RL_TCP_ACCEPTED; i++) {
        held[nheld] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        assert_int_equal(connect(held[nheld], (struct sockaddr *)&sa, sizeof sa), 0);
        nheld++;
        assert_int_equal(rl_tcp_probe(port, 50, &a), RL_OK);
    }
    assert_int_equal(a, RL_TCP_NO_ANSWER);
    for (int i = 0; i < nheld; i++)
        close(held[i]);
    close(fd);
}

static void bad_arguments(void **state)
{
    (void)state;
    rl_tcp_answer a;
    assert_int_equal(rl_tcp_probe(0, 10, &a), RL_EINVAL);
    assert_int_equal(rl_tcp_probe(65536, 10, &a), RL_EINVAL);
    assert_int_equal(rl_tcp_probe(80, -1, &a), RL_EINVAL);
}

static void port_of_addresses(void **state)
{
    (void)state;
    assert_int_equal(rl_tcp_port_of("127.0.0.1:5051"), 5051);
    assert_int_equal(rl_tcp_port_of("[::1]:80"), 80);
    assert_int_equal(rl_tcp_port_of("127.0.0.1:"), RL_EINVAL);
    assert_int_equal(rl_tcp_port_of("127.0.0.1:0"), RL_EINVAL);
    assert_int_equal(rl_tcp_port_of("127.0.0.1:70000"), RL_EINVAL);
    assert_int_equal(rl_tcp_port_of("127.0.0.1:12x"), RL_EINVAL);
    assert_int_equal(rl_tcp_port_of("localhost"), RL_EINVAL);
    assert_int_equal(rl_tcp_port_of(NULL), RL_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(open_then_closed),
        cmocka_unit_test(full_accept_queue_is_no_answer),
        cmocka_unit_test(bad_arguments),
        cmocka_unit_test(port_of_addresses),
        cmocka_unit_test(held_port_beside_a_reuseport_listener),
        cmocka_unit_test(held_port_after_a_listener_of_the_kit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
