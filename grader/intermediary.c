/* intermediary: an idle-dropping TCP relay for the keepalive lab; see
 * intermediary.h. A poll() loop over the listener, a wake-up pipe and every
 * connection's two sockets; the poll timeout is the next idle expiry. */
#include "intermediary.h"

#include "rl_alloc.h"
#include "rl_deadline.h"
#include "rl_err.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_CONNS 64

typedef struct conn {
    int fd[2];          /* [0] client side, [1] upstream side; -1 when closed */
    int64_t last_ns;    /* last byte either way */
    bool silent;        /* the mapping is "forgotten": drop everything */
} conn;

struct rl_intermediary {
    int listen_fd;
    int wake[2];
    int port, upstream_port;
    int64_t idle_ns;
    pthread_t thread;
    pthread_mutex_t mu; /* guards stats */
    rl_intermediary_stats stats;
    conn conns[MAX_CONNS];
    int nconns;
};

static void close_conn(conn *c)
{
    for (int i = 0; i < 2; i++)
        if (c->fd[i] >= 0)
            close(c->fd[i]);
    c->fd[0] = c->fd[1] = -1;
}

static int connect_upstream(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static void accept_one(rl_intermediary *im)
{
    int fd = accept4(im->listen_fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0)
        return;
    int up = connect_upstream(im->upstream_port);
    if (up < 0 || im->nconns == MAX_CONNS) {
        close(fd);
        if (up >= 0)
            close(up);
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    conn *c = &im->conns[im->nconns++];
    c->fd[0] = fd;
    c->fd[1] = up;
    c->last_ns = rl_now_ns();
    c->silent = false;
    pthread_mutex_lock(&im->mu);
    im->stats.connections++;
    pthread_mutex_unlock(&im->mu);
}

/* Moves what |from| has to the other side (or drops it when silent).
 * Returns false when the connection should close. */
static bool pump(rl_intermediary *im, conn *c, int from)
{
    char buf[65536];
    ssize_t n = read(c->fd[from], buf, sizeof buf);
    if (n <= 0)
        return n < 0 && (errno == EINTR || errno == EAGAIN);
    if (c->silent)
        return true;
    int64_t now = rl_now_ns();
    int64_t gap = (now - c->last_ns) / RL_NS_PER_MS;
    pthread_mutex_lock(&im->mu);
    if (gap > im->stats.longest_idle_ms)
        im->stats.longest_idle_ms = gap;
    pthread_mutex_unlock(&im->mu);
    c->last_ns = now;
    for (ssize_t off = 0; off < n;) {
        ssize_t w = write(c->fd[!from], buf + off, (size_t)(n - off));
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        off += w;
    }
    return true;
}

static void *serve(void *arg)
{
    rl_intermediary *im = arg;
    struct pollfd pf[2 + 2 * MAX_CONNS];
    for (;;) {
        int64_t now = rl_now_ns();
        int64_t next = INT64_MAX;
        for (int i = 0; i < im->nconns; i++) {
            conn *c = &im->conns[i];
            if (!c->silent && now - c->last_ns >= im->idle_ns) {
                c->silent = true;
                pthread_mutex_lock(&im->mu);
                im->stats.dropped++;
                pthread_mutex_unlock(&im->mu);
            }
            if (!c->silent && c->last_ns + im->idle_ns < next)
                next = c->last_ns + im->idle_ns;
        }
        int timeout = next == INT64_MAX ? -1 : (int)((next - now) / RL_NS_PER_MS + 1);
        int n = 0;
        pf[n++] = (struct pollfd){.fd = im->wake[0], .events = POLLIN};
        pf[n++] = (struct pollfd){.fd = im->listen_fd, .events = POLLIN};
        for (int i = 0; i < im->nconns; i++)
            for (int s = 0; s < 2; s++)
                pf[n++] = (struct pollfd){.fd = im->conns[i].fd[s], .events = POLLIN};
        if (poll(pf, (nfds_t)n, timeout) < 0 && errno != EINTR)
            break;
        if (pf[0].revents)
            break;
        if (pf[1].revents & POLLIN)
            accept_one(im);
        for (int i = 0, k = 2; i < im->nconns && k < n; i++, k += 2) {
            conn *c = &im->conns[i];
            bool keep = true;
            for (int s = 0; s < 2 && keep; s++)
                if (pf[k + s].revents & (POLLIN | POLLHUP | POLLERR))
                    keep = pump(im, c, s);
            if (!keep)
                close_conn(c);
        }
        /* Compact closed connections away. */
        int j = 0;
        for (int i = 0; i < im->nconns; i++)
            if (im->conns[i].fd[0] >= 0)
                im->conns[j++] = im->conns[i];
        im->nconns = j;
    }
    return NULL;
}

int rl_intermediary_start(int upstream_port, int64_t idle_timeout_ms, rl_intermediary **out, char *err,
                          size_t errlen)
{
    rl_intermediary *im = rl_xcalloc(1, sizeof *im);
    im->upstream_port = upstream_port;
    im->idle_ns = idle_timeout_ms * RL_NS_PER_MS;
    pthread_mutex_init(&im->mu, NULL);
    im->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof a;
    if (im->listen_fd < 0 || bind(im->listen_fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        listen(im->listen_fd, 16) != 0 || getsockname(im->listen_fd, (struct sockaddr *)&a, &alen) != 0 ||
        pipe2(im->wake, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "intermediary: cannot listen on loopback: %s", strerror(errno));
        if (im->listen_fd >= 0)
            close(im->listen_fd);
        pthread_mutex_destroy(&im->mu);
        free(im);
        return RL_ESYS;
    }
    im->port = ntohs(a.sin_port);
    pthread_create(&im->thread, NULL, serve, im);
    *out = im;
    return RL_OK;
}

int rl_intermediary_port(const rl_intermediary *im)
{
    return im->port;
}

void rl_intermediary_stats_get(rl_intermediary *im, rl_intermediary_stats *out)
{
    pthread_mutex_lock(&im->mu);
    *out = im->stats;
    pthread_mutex_unlock(&im->mu);
}

void rl_intermediary_stop(rl_intermediary *im)
{
    if (!im)
        return;
    ssize_t w = write(im->wake[1], "x", 1);
    (void)w;
    pthread_join(im->thread, NULL);
    for (int i = 0; i < im->nconns; i++)
        close_conn(&im->conns[i]);
    close(im->listen_fd);
    close(im->wake[0]);
    close(im->wake[1]);
    pthread_mutex_destroy(&im->mu);
    free(im);
}
