/* Unit tests for the grader's ports module: /proc/net/tcp lines parse (v4,
 * v6, header), a pick is a bindable port outside the kernel's own range when
 * there is room, the test hook is honoured only on a first pick, and a
 * listener is told apart as the submission's or someone else's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ports.h"
#include "rl_err.h"

static void parses_proc_net_tcp_lines(void **state)
{
    (void)state;
    int port, st;
    uint64_t ino;
    assert_int_equal(gr_ports_parse_line("   0: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 "
                                         "00000000     0        0 596 1 000000006a0fcb51 100 0 0 10 0",
                                         &port, &st, &ino),
                     RL_OK);
    assert_int_equal(port, 0x07E8);
    assert_int_equal(st, GR_PORTS_LISTEN);
    assert_int_equal(ino, 596);
    assert_int_equal(gr_ports_parse_line("   1: 0100007F:BE4E 0100007F:AE53 06 00000000:00000000 03:000011B7 "
                                         "00000000     0        0 0 3 000000004cad2e74",
                                         &port, &st, &ino),
                     RL_OK);
    assert_int_equal(port, 0xBE4E);
    assert_int_equal(st, 6);
    assert_int_equal(ino, 0);
    assert_int_equal(gr_ports_parse_line("   0: 0000000000000000FFFF00000100007F:9CCB "
                                         "00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 "
                                         "00000000     0        0 41297 1 0000000030e8c643 100 0 0 10 0",
                                         &port, &st, &ino),
                     RL_OK);
    assert_int_equal(port, 0x9CCB);
    assert_int_equal(ino, 41297);
    assert_int_equal(
        gr_ports_parse_line("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   "
                            "uid  timeout inode",
                            &port, &st, &ino),
        RL_EPARSE);
}

static void pick_avoids_the_ephemeral_range(void **state)
{
    (void)state;
    unsetenv(GR_PORTS_TEST_CLASH_ENV);
    int lo = 32768, hi = 60999;
    FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
    if (f) {
        assert_int_equal(fscanf(f, "%d %d", &lo, &hi), 2);
        fclose(f);
    }
    for (int i = 0; i < 20; i++) {
        int port = 0;
        assert_int_equal(gr_ports_pick(true, &port), RL_OK);
        assert_true(port >= 1024 && port <= 65535);
        if (lo - 1024 >= 2048)
            assert_true(port < lo);
    }
}

static void test_hook_applies_to_first_pick_only(void **state)
{
    (void)state;
    setenv(GR_PORTS_TEST_CLASH_ENV, "4242", 1);
    int port = 0;
    assert_int_equal(gr_ports_pick(true, &port), RL_OK);
    assert_int_equal(port, 4242);
    assert_int_equal(gr_ports_pick(false, &port), RL_OK);
    assert_int_not_equal(port, 4242);
    unsetenv(GR_PORTS_TEST_CLASH_ENV);
}

static int listen_loopback(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sa;
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(fd, 4), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
    *port = ntohs(sa.sin_port);
    return fd;
}

static void listener_is_ours_only_in_our_group(void **state)
{
    (void)state;
    int port;
    int fd = listen_loopback(&port);
    int ours, foreign;
    /* As if this process's group were the submission's. */
    assert_int_equal(gr_ports_holders(port, true, getpgrp(), NULL, 0, &ours, &foreign), RL_OK);
    assert_int_equal(ours, 1);
    assert_int_equal(foreign, 0);
    /* A submission in some other group: this listener is someone else's. */
    assert_int_equal(gr_ports_holders(port, true, 0x7ffffff0, NULL, 0, &ours, &foreign), RL_OK);
    assert_int_equal(ours, 0);
    assert_int_equal(foreign, 1);
    close(fd);
    /* Closed: nobody holds it. */
    assert_int_equal(gr_ports_holders(port, true, 0x7ffffff0, NULL, 0, &ours, &foreign), RL_OK);
    assert_int_equal(ours + foreign, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_proc_net_tcp_lines),
        cmocka_unit_test(pick_avoids_the_ephemeral_range),
        cmocka_unit_test(test_hook_applies_to_first_pick_only),
        cmocka_unit_test(listener_is_ours_only_in_our_group),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
