/* Unit tests for the grader's intermediary: bytes pass both ways while the
 * connection is busy; once it has been idle past the timeout it goes silent
 * without closing anything, as a NAT that forgot the mapping; a new
 * connection works again. The upstream is a small echo server on loopback. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "intermediary.h"
#include "rl_deadline.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

typedef struct echo {
    int listen_fd, port;
    pthread_t thread;
} echo;

static void *echo_serve(void *arg)
{
    echo *e = arg;
    int fds[8];
    int n = 0;
    for (;;) {
        struct pollfd pf[9];
        pf[0] = (struct pollfd){.fd = e->listen_fd, .events = POLLIN};
        for (int i = 0; i < n; i++)
            pf[i + 1] = (struct pollfd){.fd = fds[i], .events = POLLIN};
        if (poll(pf, (nfds_t)n + 1, -1) < 0)
            break;
        if (pf[0].revents & (POLLHUP | POLLERR | POLLNVAL))
            break;
        if ((pf[0].revents & POLLIN) && n < 8) {
            int fd = accept(e->listen_fd, NULL, NULL);
            if (fd < 0)
                break;
            fds[n++] = fd;
        }
        for (int i = n - 1; i >= 0; i--) {
            if (!(pf[i + 1].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            char buf[256];
            ssize_t r = read(fds[i], buf, sizeof buf);
            if (r <= 0 || write(fds[i], buf, (size_t)r) != r) {
                close(fds[i]);
                fds[i] = fds[--n];
            }
        }
    }
    for (int i = 0; i < n; i++)
        close(fds[i]);
    return NULL;
}

static int listen_loopback(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(fd, 8), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    *port = ntohs(a.sin_port);
    return fd;
}

static int dial(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    return fd;
}

/* Sends |msg| and waits up to |ms| for it to come back. Returns bytes read,
 * 0 on EOF, -1 when nothing came in time. */
static ssize_t round_trip(int fd, const char *msg, int ms)
{
    assert_int_equal(write(fd, msg, strlen(msg)), (ssize_t)strlen(msg));
    struct pollfd pf = {.fd = fd, .events = POLLIN};
    if (poll(&pf, 1, ms) <= 0)
        return -1;
    char buf[64];
    return read(fd, buf, sizeof buf);
}

static void wait_dropped(rl_intermediary *im, int want)
{
    rl_intermediary_stats st;
    int64_t give_up = rl_now_ns() + 3 * RL_NS_PER_SEC;
    do {
        rl_intermediary_stats_get(im, &st);
        if (st.dropped >= want)
            return;
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    } while (rl_now_ns() < give_up);
    fail_msg("the intermediary never went silent (dropped %d)", st.dropped);
}

static void forwards_then_goes_silent_without_closing(void **state)
{
    (void)state;
    echo e;
    e.listen_fd = listen_loopback(&e.port);
    pthread_create(&e.thread, NULL, echo_serve, &e);
    rl_intermediary *im;
    char err[128];
    assert_int_equal(rl_intermediary_start(e.port, 150, &im, err, sizeof err), 0);

    int fd = dial(rl_intermediary_port(im));
    assert_int_equal(round_trip(fd, "ping", 2000), 4);
    wait_dropped(im, 1);
    /* Silent: nothing comes back, and the socket is not closed either. */
    assert_int_equal(round_trip(fd, "lost", 300), -1);
    /* A new connection is a new mapping and works. */
    int fd2 = dial(rl_intermediary_port(im));
    assert_int_equal(round_trip(fd2, "again", 2000), 5);
    rl_intermediary_stats st;
    rl_intermediary_stats_get(im, &st);
    assert_int_equal(st.connections, 2);
    assert_int_equal(st.dropped, 1);

    close(fd);
    close(fd2);
    rl_intermediary_stop(im);
    shutdown(e.listen_fd, SHUT_RDWR);
    close(e.listen_fd);
    pthread_join(e.thread, NULL);
}

static void traffic_keeps_the_mapping(void **state)
{
    (void)state;
    echo e;
    e.listen_fd = listen_loopback(&e.port);
    pthread_create(&e.thread, NULL, echo_serve, &e);
    rl_intermediary *im;
    char err[128];
    assert_int_equal(rl_intermediary_start(e.port, 500, &im, err, sizeof err), 0);
    int fd = dial(rl_intermediary_port(im));
    /* Fifteen round trips 100 ms apart span three timeouts. */
    for (int i = 0; i < 15; i++) {
        assert_int_equal(round_trip(fd, "keep", 2000), 4);
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    rl_intermediary_stats st;
    rl_intermediary_stats_get(im, &st);
    assert_int_equal(st.dropped, 0);
    assert_true(st.longest_idle_ms < 500);
    close(fd);
    rl_intermediary_stop(im);
    shutdown(e.listen_fd, SHUT_RDWR);
    close(e.listen_fd);
    pthread_join(e.thread, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(forwards_then_goes_silent_without_closing),
        cmocka_unit_test(traffic_keeps_the_mapping),
    };
    return cmocka_run_group_tests_name("grader intermediary", tests, NULL, NULL);
}
