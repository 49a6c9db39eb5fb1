/* ports: picking the submission's port and telling whose sockets hold it;
 * see ports.h. Ownership goes through socket inodes: /proc/net/tcp{,6}
 * name the inode of every socket on the port, and /proc/PID/fd of the
 * submission's processes (ours, so always readable) name theirs. Another
 * user's process cannot be read, and does not need to be: any inode not
 * found among the submission's is someone else's. */
#include "ports.h"

#include "rl_alloc.h"
#include "rl_err.h"
#include "rl_proc_sample.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

/* Below the ephemeral range, a window this wide at most is used; a range
 * starting lower than this leaves no useful room and the pick goes inside. */
#define BELOW_WINDOW 16384
#define MIN_BELOW    2048
#define PICK_TRIES   64

static bool bindable(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    /* SO_REUSEADDR as servers set it, so a TIME_WAIT leftover (which would
     * not stop the submission) does not make a port look taken. */
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    bool ok = bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
    int saved = errno;
    close(fd);
    errno = saved;
    return ok;
}

int gr_ports_pick(bool first, int *port)
{
    const char *hook = getenv(GR_PORTS_TEST_CLASH_ENV);
    if (first && hook && *hook) {
        int p = atoi(hook);
        if (p > 0 && p < 65536) {
            *port = p;
            return RL_OK;
        }
    }
    int lo = 32768, hi = 60999;
    FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "re");
    if (f) {
        if (fscanf(f, "%d %d", &lo, &hi) != 2 || lo < 1 || hi > 65535 || lo > hi)
            lo = 32768, hi = 60999;
        fclose(f);
    }
    int from, to;
    if (lo - 1024 >= MIN_BELOW) {
        to = lo - 1;
        from = lo - BELOW_WINDOW > 1024 ? lo - BELOW_WINDOW : 1024;
    } else {
        from = lo;
        to = hi;
    }
    for (int i = 0; i < PICK_TRIES; i++) {
        uint32_t r;
        if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
            r = (uint32_t)rand();
        int p = from + (int)(r % (uint32_t)(to - from + 1));
        if (bindable(p)) {
            *port = p;
            return RL_OK;
        }
    }
    return RL_ESYS;
}

int gr_ports_parse_line(const char *line, int *port, int *state, uint64_t *inode)
{
    /* "sl: LOCALADDR:PORT REMADDR:PORT ST TXQ:RXQ TR:WHEN RETR UID TIMEOUT INODE" */
    char local[64];
    unsigned lport, st;
    unsigned long uid, timeout;
    uint64_t ino;
    if (sscanf(line, " %*u: %63s %*s %x %*s %*s %*s %lu %lu %" SCNu64, local, &st, &uid, &timeout, &ino) != 5)
        return RL_EPARSE;
    const char *colon = strrchr(local, ':');
    if (!colon || sscanf(colon + 1, "%x", &lport) != 1 || lport > 65535)
        return RL_EPARSE;
    *port = (int)lport;
    *state = (int)st;
    *inode = ino;
    return RL_OK;
}

typedef struct proc_entry {
    pid_t pid, ppid, pgrp;
} proc_entry;

/* Every process's pid, parent and group. Caller frees *out. */
static size_t proc_table(proc_entry **out)
{
    size_t n = 0, cap = 256;
    proc_entry *t = rl_xmalloc(cap * sizeof *t);
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char state;
        pid_t ppid, pgrp;
        if (rl_proc_stat_ids(e->d_name, &state, &ppid, &pgrp) != RL_OK)
            continue;
        RL_GROW(t, n, cap, 256);
        t[n++] = (proc_entry){(pid_t)atol(e->d_name), ppid, pgrp};
    }
    if (d)
        closedir(d);
    *out = t;
    return n;
}

static pid_t parent_of(const proc_entry *t, size_t n, pid_t pid)
{
    for (size_t i = 0; i < n; i++)
        if (t[i].pid == pid)
            return t[i].ppid;
    return 0;
}

static bool excepted(pid_t pid, const pid_t *except, size_t nexcept)
{
    for (size_t i = 0; i < nexcept; i++)
        if (except[i] == pid)
            return true;
    return false;
}

/* The submission's: in |pgid|, below a member of |pgid|, or below this
 * process without passing through one of |except|. */
static bool is_submissions(const proc_entry *t, size_t n, const proc_entry *p, pid_t pgid, const pid_t *except,
                           size_t nexcept)
{
    if (p->pgrp == pgid)
        return true;
    pid_t self = getpid();
    pid_t cur = p->pid;
    for (int depth = 0; depth < 64 && cur > 1; depth++) {
        if (excepted(cur, except, nexcept))
            return false;
        pid_t parent = parent_of(t, n, cur);
        if (parent == self)
            return true;
        for (size_t i = 0; i < n; i++)
            if (t[i].pid == parent && t[i].pgrp == pgid)
                return true;
        cur = parent;
    }
    return false;
}

/* Marks in |found| the inodes of |inodes| that process |pid| holds. */
static void mark_fds(pid_t pid, const uint64_t *inodes, size_t ninodes, bool *found)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/fd", (long)pid);
    DIR *d = opendir(path);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        char link[320], target[64];
        snprintf(link, sizeof link, "%s/%s", path, e->d_name);
        ssize_t len = readlink(link, target, sizeof target - 1);
        if (len <= 0)
            continue;
        target[len] = '\0';
        uint64_t ino;
        if (sscanf(target, "socket:[%" SCNu64 "]", &ino) != 1)
            continue;
        for (size_t i = 0; i < ninodes; i++)
            if (inodes[i] == ino)
                found[i] = true;
    }
    closedir(d);
}

/* Calls |fn| with the state and inode of every TCP socket (v4 and v6) on
 * local port |port|. Returns 0, or RL_ESYS when neither table could be read. */
static int each_socket(int port, void (*fn)(void *arg, int st, uint64_t ino), void *arg)
{
    static const char *const files[] = {"/proc/net/tcp", "/proc/net/tcp6"};
    int opened = 0;
    for (size_t k = 0; k < 2; k++) {
        FILE *f = fopen(files[k], "re");
        if (!f)
            continue;
        opened++;
        char line[512];
        while (fgets(line, sizeof line, f)) {
            int lport, st;
            uint64_t ino;
            if (gr_ports_parse_line(line, &lport, &st, &ino) == RL_OK && lport == port)
                fn(arg, st, ino);
        }
        fclose(f);
    }
    return opened ? RL_OK : RL_ESYS;
}

/* The inodes gr_ports_holders collects. */
typedef struct inode_list {
    uint64_t *inodes;
    size_t n, cap;
    bool listeners_only;
} inode_list;

static void add_inode(void *arg, int st, uint64_t ino)
{
    inode_list *l = arg;
    if ((l->listeners_only && st != GR_PORTS_LISTEN) || ino == 0)
        return;
    RL_GROW(l->inodes, l->n, l->cap, 16);
    l->inodes[l->n++] = ino;
}

int gr_ports_holders(int port, bool listeners_only, pid_t pgid, const pid_t *except, size_t nexcept, int *ours,
                     int *foreign)
{
    *ours = *foreign = 0;
    inode_list l = {.cap = 16, .listeners_only = listeners_only};
    l.inodes = rl_xmalloc(l.cap * sizeof *l.inodes);
    if (each_socket(port, add_inode, &l) != RL_OK) {
        free(l.inodes);
        return RL_ESYS;
    }
    if (l.n) {
        bool *found = rl_xcalloc(l.n, sizeof *found);
        proc_entry *t;
        size_t np = proc_table(&t);
        for (size_t i = 0; i < np; i++)
            if (is_submissions(t, np, &t[i], pgid, except, nexcept))
                mark_fds(t[i].pid, l.inodes, l.n, found);
        for (size_t i = 0; i < l.n; i++) {
            if (found[i])
                (*ours)++;
            else
                (*foreign)++;
        }
        free(t);
        free(found);
    }
    free(l.inodes);
    return RL_OK;
}

static void count_connection(void *arg, int st, uint64_t ino)
{
    (void)ino;
    if (st == GR_PORTS_ESTABLISHED || st == GR_PORTS_SYN_RECV)
        (*(int *)arg)++;
}

int gr_ports_connections(int port, int *count)
{
    *count = 0;
    return each_socket(port, count_connection, count);
}
