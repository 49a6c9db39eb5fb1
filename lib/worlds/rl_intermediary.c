/* rl_intermediary: a TCP relay to N upstreams with a selection policy and an
 * optional idle drop; see rl_intermediary.h. A poll() loop over the listener,
 * a wake-up pipe and every connection's two sockets; the poll timeout is
 * the next idle expiry. */
#include "rl_intermediary.h"

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

/* The balance lab's clients hold one connection each, plus the old ones
 * still draining after a GOAWAY; 128 leaves room for a churning config. */
#define MAX_CONNS 128

typedef struct conn {
    int fd[2];       /* [0] client side, [1] upstream side; -1 when closed */
    size_t upstream; /* index of the upstream it goes to */
    int64_t last_ns; /* last byte either way */
    bool silent;     /* the mapping is "forgotten": drop everything */
} conn;

struct rl_intermediary {
    int listen_fd;
    int wake[2];
    int port;
    int64_t idle_ns; /* 0: never drop */
    const rl_intermediary_policy *policy;
    void *policy_state;
    void (*on_open)(void *user, size_t upstream, int64_t ns);
    void *user;
    int64_t (*clock)(void *clock_user); /* idle time; never NULL */
    void *clock_user;
    pthread_t thread;
    pthread_mutex_t mu; /* guards stats, whose upstream counts the thread
                         * updates and the policy reads */
    rl_intermediary_stats stats;
    conn conns[MAX_CONNS];
    int nconns;
};

static void close_conn(rl_intermediary *im, conn *c)
{
    if (c->fd[0] < 0)
        return;
    for (int i = 0; i < 2; i++)
        if (c->fd[i] >= 0)
            close(c->fd[i]);
    c->fd[0] = c->fd[1] = -1;
    pthread_mutex_lock(&im->mu);
    im->stats.upstreams[c->upstream].active--;
    pthread_mutex_unlock(&im->mu);
    if (im->policy->on_close)
        im->policy->on_close(im->policy_state, c->upstream);
}

/* ---- policies ---- */

typedef struct turn {
    size_t next; /* where the next search starts */
} turn;

static int turn_init(void **state, size_t n)
{
    (void)n;
    *state = rl_xcalloc(1, sizeof(turn));
    return RL_OK;
}

static void turn_destroy(void *state)
{
    free(state);
}

static int round_robin_pick(void *state, const rl_intermediary_upstream *ups, const bool *tried, size_t n)
{
    (void)ups;
    turn *t = state;
    for (size_t k = 0; k < n; k++) {
        size_t i = (t->next + k) % n;
        if (!tried[i]) {
            t->next = i + 1;
            return (int)i;
        }
    }
    return -1;
}

static int least_connections_pick(void *state, const rl_intermediary_upstream *ups, const bool *tried, size_t n)
{
    turn *t = state;
    int best = -1;
    /* From the turn's start, so the first of equals is the next in turn. */
    for (size_t k = 0; k < n; k++) {
        size_t i = (t->next + k) % n;
        if (!tried[i] && (best < 0 || ups[i].active < ups[best].active))
            best = (int)i;
    }
    if (best >= 0)
        t->next = (size_t)best + 1;
    return best;
}

const rl_intermediary_policy rl_intermediary_round_robin = {
    .name = "round-robin",
    .init = turn_init,
    .pick = round_robin_pick,
    .destroy = turn_destroy,
};

const rl_intermediary_policy rl_intermediary_least_connections = {
    .name = "least-connections",
    .init = turn_init,
    .pick = least_connections_pick,
    .destroy = turn_destroy,
};

/* ---- the relay ---- */

/* The default clock (rl_intermediary_options.clock). */
static int64_t monotonic(void *unused)
{
    (void)unused;
    return rl_now_ns();
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

/* Connects to the upstream the policy picks, skipping those that refuse.
 * Returns the socket with *which set, or -1 when none took it. */
static int connect_picked(rl_intermediary *im, size_t *which)
{
    bool tried[RL_INTERMEDIARY_MAX_UPSTREAMS] = {false};
    rl_intermediary_upstream ups[RL_INTERMEDIARY_MAX_UPSTREAMS];
    pthread_mutex_lock(&im->mu);
    size_t n = im->stats.nupstreams;
    memcpy(ups, im->stats.upstreams, n * sizeof *ups);
    pthread_mutex_unlock(&im->mu);
    /* A removed upstream is one the policy must not pick: as if tried. */
    for (size_t i = 0; i < n; i++)
        tried[i] = ups[i].removed;
    for (size_t attempt = 0; attempt < n; attempt++) {
        if (attempt) {
            pthread_mutex_lock(&im->mu);
            memcpy(ups, im->stats.upstreams, n * sizeof *ups);
            pthread_mutex_unlock(&im->mu);
        }
        int i = im->policy->pick(im->policy_state, ups, tried, n);
        if (i < 0 || (size_t)i >= n || tried[i])
            return -1;
        int fd = connect_upstream(ups[i].port);
        if (fd >= 0) {
            *which = (size_t)i;
            return fd;
        }
        tried[i] = true;
    }
    return -1;
}

static void accept_one(rl_intermediary *im)
{
    int fd = accept4(im->listen_fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0)
        return;
    size_t which = 0;
    int up = im->nconns < MAX_CONNS ? connect_picked(im, &which) : -1;
    pthread_mutex_lock(&im->mu);
    im->stats.connections++;
    if (up < 0) {
        im->stats.refused++;
    } else {
        im->stats.upstreams[which].active++;
        im->stats.upstreams[which].opened++;
    }
    pthread_mutex_unlock(&im->mu);
    if (up < 0) {
        close(fd);
        return;
    }
    if (im->on_open)
        im->on_open(im->user, which, rl_now_ns());
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    conn *c = &im->conns[im->nconns++];
    c->fd[0] = fd;
    c->fd[1] = up;
    c->upstream = which;
    c->last_ns = im->clock(im->clock_user);
    c->silent = false;
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
    int64_t now = im->clock(im->clock_user);
    int64_t gap = (now - c->last_ns) / RL_NS_PER_MS;
    pthread_mutex_lock(&im->mu);
    if (gap > im->stats.longest_idle_ms)
        im->stats.longest_idle_ms = gap;
    rl_intermediary_upstream *u = &im->stats.upstreams[c->upstream];
    if (from == 0)
        u->bytes_up += n;
    else
        u->bytes_down += n;
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

/* Whether bytes wait unread on either side of |c|. A loop that ran late
 * (a busy machine) would otherwise see a connection as idle whose next
 * bytes came in while it was not running; they are read this turn. */
static bool has_pending(const conn *c)
{
    struct pollfd pf[2] = {{.fd = c->fd[0], .events = POLLIN}, {.fd = c->fd[1], .events = POLLIN}};
    return poll(pf, 2, 0) > 0 && ((pf[0].revents | pf[1].revents) & POLLIN);
}

static void *serve(void *arg)
{
    rl_intermediary *im = arg;
    struct pollfd pf[2 + 2 * MAX_CONNS];
    for (;;) {
        int64_t now = im->clock(im->clock_user);
        int64_t next = INT64_MAX;
        for (int i = 0; i < im->nconns; i++) {
            conn *c = &im->conns[i];
            if (!im->idle_ns)
                continue;
            if (!c->silent && now - c->last_ns >= im->idle_ns && !has_pending(c)) {
                c->silent = true;
                pthread_mutex_lock(&im->mu);
                im->stats.dropped++;
                pthread_mutex_unlock(&im->mu);
            }
            if (!c->silent && c->last_ns + im->idle_ns < next)
                next = c->last_ns + im->idle_ns;
        }
        /* A connection kept past its expiry (bytes were waiting) has a
         * next expiry already gone: poll at once, never -1 (no end). */
        int timeout = next == INT64_MAX ? -1 : next <= now ? 0 : (int)((next - now) / RL_NS_PER_MS + 1);
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
        int64_t turn_ns = rl_now_ns();
        if (pf[1].revents & POLLIN)
            accept_one(im);
        for (int i = 0, k = 2; i < im->nconns && k < n; i++, k += 2) {
            conn *c = &im->conns[i];
            bool keep = true;
            for (int s = 0; s < 2 && keep; s++)
                if (pf[k + s].revents & (POLLIN | POLLHUP | POLLERR))
                    keep = pump(im, c, s);
            if (!keep)
                close_conn(im, c);
        }
        int64_t turn_ms = (rl_now_ns() - turn_ns) / RL_NS_PER_MS;
        pthread_mutex_lock(&im->mu);
        if (turn_ms > im->stats.longest_turn_ms)
            im->stats.longest_turn_ms = turn_ms;
        pthread_mutex_unlock(&im->mu);
        /* Compact closed connections away. */
        int j = 0;
        for (int i = 0; i < im->nconns; i++)
            if (im->conns[i].fd[0] >= 0)
                im->conns[j++] = im->conns[i];
        im->nconns = j;
    }
    return NULL;
}

int rl_intermediary_start(const rl_intermediary_options *opt, rl_intermediary **out, char *err, size_t errlen)
{
    if (opt->nupstreams < 1 || opt->nupstreams > RL_INTERMEDIARY_MAX_UPSTREAMS) {
        snprintf(err, errlen, "intermediary: %zu upstreams given, 1 to %d allowed", opt->nupstreams,
                 RL_INTERMEDIARY_MAX_UPSTREAMS);
        return RL_EINVAL;
    }
    rl_intermediary *im = rl_xcalloc(1, sizeof *im);
    im->idle_ns = opt->idle_drop_ms > 0 ? opt->idle_drop_ms * RL_NS_PER_MS : 0;
    im->policy = opt->policy ? opt->policy : &rl_intermediary_round_robin;
    im->on_open = opt->on_open;
    im->user = opt->user;
    im->clock = opt->clock ? opt->clock : monotonic;
    im->clock_user = opt->clock_user;
    im->stats.nupstreams = opt->nupstreams;
    for (size_t i = 0; i < opt->nupstreams; i++)
        im->stats.upstreams[i].port = opt->upstream_ports[i];
    int prc = im->policy->init ? im->policy->init(&im->policy_state, opt->nupstreams) : RL_OK;
    if (prc != RL_OK) {
        snprintf(err, errlen, "intermediary: policy %s failed to start: %s", im->policy->name, rl_strerror(prc));
        free(im);
        return prc;
    }
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
        if (im->policy->destroy)
            im->policy->destroy(im->policy_state);
        free(im);
        return RL_ESYS;
    }
    im->port = ntohs(a.sin_port);
    pthread_create(&im->thread, NULL, serve, im);
    *out = im;
    return RL_OK;
}

int rl_intermediary_add_upstream(rl_intermediary *im, int port, size_t *index)
{
    pthread_mutex_lock(&im->mu);
    size_t n = im->stats.nupstreams;
    int rc = RL_EINVAL;
    if (n < RL_INTERMEDIARY_MAX_UPSTREAMS) {
        im->stats.upstreams[n] = (rl_intermediary_upstream){.port = port};
        im->stats.nupstreams = n + 1;
        if (index)
            *index = n;
        rc = RL_OK;
    }
    pthread_mutex_unlock(&im->mu);
    return rc;
}

int rl_intermediary_remove_upstream(rl_intermediary *im, size_t i)
{
    pthread_mutex_lock(&im->mu);
    int rc = RL_EINVAL;
    size_t left = 0;
    for (size_t k = 0; k < im->stats.nupstreams; k++)
        left += !im->stats.upstreams[k].removed;
    if (i < im->stats.nupstreams && !im->stats.upstreams[i].removed && left > 1) {
        im->stats.upstreams[i].removed = true;
        rc = RL_OK;
    }
    pthread_mutex_unlock(&im->mu);
    return rc;
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
        close_conn(im, &im->conns[i]);
    close(im->listen_fd);
    close(im->wake[0]);
    close(im->wake[1]);
    pthread_mutex_destroy(&im->mu);
    if (im->policy->destroy)
        im->policy->destroy(im->policy_state);
    free(im);
}
