/* fd_guard: the accept4() that keeps the baseline's reserve of descriptors;
 * see fd_guard.h. Descriptors are handed out lowest first (POSIX), so an
 * accepted descriptor numbered N means every number below N is taken: one
 * at or above the limit minus the reserve is closed unless it is a unix
 * socket's. The numbers at the top of the range then only ever hold what
 * the reserve is for, and an observer connection always finds one. */
#include "fd_guard.h"

#include "rl_log.h"

#include <errno.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

static atomic_int first_reserved; /* 0: guard off */
static int limit_fds;             /* the soft limit it was armed below */
static atomic_uint_least64_t refused;

int bl_fd_guard_init(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return -1;
    if (rl.rlim_cur < rl.rlim_max) {
        struct rlimit raised = {rl.rlim_max, rl.rlim_max};
        if (setrlimit(RLIMIT_NOFILE, &raised) == 0)
            rl.rlim_cur = rl.rlim_max;
    }
    rlim_t cur = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (1u << 30) ? (1u << 30) : rl.rlim_cur;
    /* A tiny limit (a test's) keeps half for connections. */
    rlim_t reserve = cur / 2 < BL_FD_RESERVE ? cur / 2 : BL_FD_RESERVE;
    rlim_t first = cur - reserve < BL_FD_PUBLIC_MAX ? cur - reserve : BL_FD_PUBLIC_MAX;
    limit_fds = (int)cur;
    atomic_store(&first_reserved, (int)first);
    return 0;
}

/* Takes libc's place for the whole process (see fd_guard.h); the system
 * call itself does the accepting. */
int accept4(int sockfd, struct sockaddr *addr, socklen_t *addrlen, int flags);

int accept4(int sockfd, struct sockaddr *addr, socklen_t *addrlen, int flags)
{
    socklen_t given = addrlen ? *addrlen : 0;
    for (;;) {
        if (addrlen)
            *addrlen = given;
        int fd = (int)syscall(SYS_accept4, sockfd, addr, addrlen, flags);
        int limit = atomic_load(&first_reserved);
        if (fd < 0 || !limit || fd < limit)
            return fd;
        struct sockaddr_storage ss = {0}; /* AF_UNSPEC should getsockname fill less */
        socklen_t len = sizeof ss;
        if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0 || ss.ss_family == AF_UNIX)
            return fd;
        close(fd);
        /* Log the first and then every thousandth, not every one. */
        if (atomic_fetch_add(&refused, 1) % 1000 == 0)
            RL_WARN("a TCP connection closed at accept: descriptor %d is past the %d public connections may "
                    "take of %d, the rest kept for the observer (%llu closed so far)",
                    fd, limit, limit_fds, (unsigned long long)atomic_load(&refused));
        /* On to the next one queued, so the caller's edge-triggered poller
         * sees a true EAGAIN when the queue is empty. */
    }
}
