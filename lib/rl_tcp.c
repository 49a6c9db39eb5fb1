/* rl_tcp: a loopback TCP connect, answered or refused, and a held port;
 * see rl_tcp.h. */
#include "rl_tcp.h"

#include "rl_err.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int rl_tcp_probe(int port, int wait_ms, rl_tcp_answer *out)
{
    if (port < 1 || port > 65535 || wait_ms < 0)
        return RL_EINVAL;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return RL_ESYS;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int err = 0;
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        err = errno;
        if (err == EINPROGRESS) {
            /* Loopback normally answers inside connect; a full accept queue
             * or a starved machine is what ends up here. */
            struct pollfd pf = {.fd = fd, .events = POLLOUT};
            socklen_t len = sizeof err;
            int n;
            while ((n = poll(&pf, 1, wait_ms)) < 0 && errno == EINTR) {
            }
            if (n != 1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
                err = ETIMEDOUT;
        }
    }
    close(fd);
    *out = err == 0 ? RL_TCP_ACCEPTED : err == ECONNREFUSED ? RL_TCP_REFUSED : RL_TCP_NO_ANSWER;
    return RL_OK;
}

int rl_tcp_port_of(const char *addr)
{
    const char *colon = addr ? strrchr(addr, ':') : NULL;
    if (!colon || !colon[1])
        return RL_EINVAL;
    char *end;
    errno = 0;
    long port = strtol(colon + 1, &end, 10);
    if (errno || *end || port < 1 || port > 65535)
        return RL_EINVAL;
    return (int)port;
}

int rl_tcp_hold(int port, int *fd)
{
    if (port < 1 || port > 65535)
        return RL_EINVAL;
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return RL_ESYS;
    int one = 1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        setsockopt(s, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0 ||
        bind(s, (struct sockaddr *)&sa, sizeof sa) != 0) {
        int e = errno;
        close(s);
        errno = e;
        return RL_ESYS;
    }
    *fd = s;
    return RL_OK;
}
