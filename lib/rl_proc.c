/* rl_proc: process groups under limits and output capture; see rl_proc.h.
 * The leader is never reaped before its group is killed, so the group id
 * stays reserved (a zombie keeps its pid) and killpg can never hit an
 * unrelated group that reused the number. */
#include "rl_proc.h"

#include "rl_alloc.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_text.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* Groups that rl_proc_signal_all reaches from a signal handler. Slots are
 * written with plain stores of a pid_t, which is atomic on every target. */
#define REGISTRY_SLOTS 64
static volatile pid_t registry[REGISTRY_SLOTS];

static void registry_add(pid_t pid)
{
    for (size_t i = 0; i < REGISTRY_SLOTS; i++)
        if (__sync_bool_compare_and_swap(&registry[i], 0, pid))
            return;
}

static void registry_remove(pid_t pid)
{
    for (size_t i = 0; i < REGISTRY_SLOTS; i++)
        if (__sync_bool_compare_and_swap(&registry[i], pid, 0))
            return;
}

void rl_proc_signal_all(int sig)
{
    for (size_t i = 0; i < REGISTRY_SLOTS; i++) {
        pid_t pid = registry[i];
        if (pid > 0)
            kill(-pid, sig);
    }
}

/* ---- capture ---- */

void rl_capture_add(rl_capture *cap, const char *data, size_t n)
{
    cap->total += n;
    if (cap->nhead < RL_CAPTURE_HEAD) {
        size_t take = RL_CAPTURE_HEAD - cap->nhead;
        if (take > n)
            take = n;
        memcpy(cap->head + cap->nhead, data, take);
        cap->nhead += take;
        data += take;
        n -= take;
    }
    if (n > RL_CAPTURE_TAIL) { /* only the last RL_CAPTURE_TAIL bytes can survive */
        data += n - RL_CAPTURE_TAIL;
        n = RL_CAPTURE_TAIL;
    }
    while (n) {
        size_t take = RL_CAPTURE_TAIL - cap->tail_pos;
        if (take > n)
            take = n;
        memcpy(cap->tail + cap->tail_pos, data, take);
        cap->tail_pos = (cap->tail_pos + take) % RL_CAPTURE_TAIL;
        data += take;
        n -= take;
    }
}

/* Bytes held in the ring: everything after the head, up to its size. */
static size_t ring_count(const rl_capture *cap)
{
    uint64_t after = cap->total - cap->nhead;
    return after > RL_CAPTURE_TAIL ? RL_CAPTURE_TAIL : (size_t)after;
}

/* Copies the |k|-th byte (0-based) of the ring's content, oldest first. */
static char ring_at(const rl_capture *cap, size_t k)
{
    size_t count = ring_count(cap);
    size_t start = (cap->tail_pos + RL_CAPTURE_TAIL - count) % RL_CAPTURE_TAIL;
    return cap->tail[(start + k) % RL_CAPTURE_TAIL];
}

/* The escaped length of one byte (rl_text.h): what it takes on screen. */
static size_t shown_len(char c)
{
    return rl_text_printable(NULL, 0, &c, 1, RL_TEXT_MULTILINE);
}

/* The output is a submission's: every byte goes out through
 * rl_text_printable (newlines and tabs kept, ESC and CR escaped), so it
 * cannot rewrite a terminal or a log it is printed to. */
static uint64_t capture_tail(const rl_capture *cap, char *buf, size_t len)
{
    if (!len)
        return cap->total;
    size_t want = len - 1;
    size_t r = ring_count(cap);
    /* The head joins the ring seamlessly only when nothing was dropped. */
    bool contiguous = cap->total - cap->nhead <= RL_CAPTURE_TAIL;
    size_t avail = r + (contiguous ? cap->nhead : 0);
    /* The last raw bytes whose escaped form fits: walk back from the end. */
    size_t take = 0, shown = 0;
    while (take < avail) {
        size_t k = avail - 1 - take;
        char c = k >= avail - r ? ring_at(cap, k - (avail - r)) : cap->head[cap->nhead - (avail - r) + k];
        size_t n = shown_len(c);
        if (shown + n > want)
            break;
        shown += n;
        take++;
    }
    char *raw = rl_xmalloc(take + 1);
    for (size_t i = 0; i < take; i++) {
        size_t k = avail - take + i;
        raw[i] = k >= avail - r ? ring_at(cap, k - (avail - r)) : cap->head[cap->nhead - (avail - r) + k];
    }
    rl_text_printable(buf, len, raw, take, RL_TEXT_MULTILINE);
    free(raw);
    return cap->total;
}

static uint64_t capture_text(const rl_capture *cap, char *buf, size_t len)
{
    if (!len)
        return cap->total;
    size_t o = rl_text_printable(buf, len, cap->head, cap->nhead, RL_TEXT_MULTILINE);
    if (o >= len)
        return cap->total;
    size_t r = ring_count(cap);
    uint64_t skipped = cap->total - cap->nhead - r;
    if (skipped)
        o += (size_t)snprintf(buf + o, len - o, "\n[... %llu bytes skipped ...]\n", (unsigned long long)skipped);
    if (o + 1 >= len)
        return cap->total;
    char *raw = rl_xmalloc(r + 1);
    for (size_t k = 0; k < r; k++)
        raw[k] = ring_at(cap, k);
    rl_text_printable(buf + o, len - o, raw, r, RL_TEXT_MULTILINE);
    free(raw);
    return cap->total;
}

/* ---- reader thread ---- */

static void *reader_main(void *arg)
{
    rl_proc *p = arg;
    char buf[65536];
    for (;;) {
        if (p->stop_reader)
            break;
        struct pollfd pfd = {.fd = p->out_fd, .events = POLLIN};
        int n = poll(&pfd, 1, 100);
        if (n < 0 && errno != EINTR)
            break;
        if (n <= 0)
            continue;
        ssize_t got = read(p->out_fd, buf, sizeof buf);
        if (got < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        pthread_mutex_lock(&p->mu);
        if (got > 0)
            rl_capture_add(&p->cap, buf, (size_t)got);
        else
            p->eof = true;
        pthread_cond_broadcast(&p->cond);
        pthread_mutex_unlock(&p->mu);
        if (got <= 0)
            break;
    }
    pthread_mutex_lock(&p->mu);
    p->eof = true;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* ---- spawn ---- */

static char **build_env(const char *const *add, bool clean)
{
    size_t n = 0, nadd = 0;
    while (!clean && environ[n])
        n++;
    while (add && add[nadd])
        nadd++;
    char **env = rl_xcalloc(n + nadd + 1, sizeof *env);
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr(environ[i], '=');
        size_t klen = eq ? (size_t)(eq - environ[i]) : strlen(environ[i]);
        bool replaced = false;
        for (size_t j = 0; j < nadd && !replaced; j++)
            replaced = strncmp(add[j], environ[i], klen) == 0 && add[j][klen] == '=';
        if (!replaced)
            env[o++] = environ[i];
    }
    for (size_t j = 0; j < nadd; j++)
        env[o++] = (char *)add[j];
    env[o] = NULL;
    return env;
}

static void set_limit(int resource, uint64_t soft, uint64_t hard)
{
    struct rlimit rl = {.rlim_cur = (rlim_t)soft, .rlim_max = (rlim_t)hard};
    struct rlimit cur;
    /* Never ask for more than the inherited hard limit: that would fail. */
    if (getrlimit(resource, &cur) == 0 && cur.rlim_max != RLIM_INFINITY) {
        if (rl.rlim_max > cur.rlim_max)
            rl.rlim_max = cur.rlim_max;
        if (rl.rlim_cur > rl.rlim_max)
            rl.rlim_cur = rl.rlim_max;
    }
    setrlimit(resource, &rl);
}

static void child_fail(const char *what, const char *arg)
{
    /* Only async-signal-safe calls here: write, not stdio. */
    int e = errno;
    const char *msg = strerror(e);
    (void)!write(2, what, strlen(what));
    (void)!write(2, arg, strlen(arg));
    (void)!write(2, ": ", 2);
    (void)!write(2, msg, strlen(msg));
    (void)!write(2, "\n", 1);
    _exit(RL_PROC_EXEC_FAILED);
}

/* Runs in the child between fork and exec: async-signal-safe calls only. */
static void child_exec(const rl_proc_options *opt, char **env, int out_w, int devnull, pid_t parent)
{
    setpgid(0, 0);
    /* First, so nothing the child does escapes the cgroup's accounting. */
    for (size_t i = 0; opt->join_cgroups && opt->join_cgroups[i]; i++) {
        int fd = open(opt->join_cgroups[i], O_WRONLY | O_CLOEXEC);
        if (fd < 0 || write(fd, "0", 1) != 1)
            child_fail("cannot join the cgroup ", opt->join_cgroups[i]);
        close(fd);
    }
    if (opt->kill_with_parent) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(RL_PROC_EXEC_FAILED);
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    for (int s = 1; s < NSIG; s++)
        sigaction(s, &sa, NULL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);

    if (dup2(devnull, 0) < 0 || dup2(out_w, 1) < 0 || dup2(out_w, 2) < 0)
        _exit(RL_PROC_EXEC_FAILED);
    int first_closed = 3;
    /* fd4 out of the way first: fd3's dup2 may land on its number. */
    int fd4 = opt->fd4 > 0 && opt->fd3 > 0 ? fcntl(opt->fd4, F_DUPFD_CLOEXEC, 10) : -1;
    if (opt->fd4 > 0 && opt->fd3 > 0 && fd4 < 0)
        _exit(RL_PROC_EXEC_FAILED);
    if (opt->fd3 > 0) {
        /* dup2 onto itself would keep O_CLOEXEC: clear it instead. */
        if ((opt->fd3 == 3 ? fcntl(3, F_SETFD, 0) : dup2(opt->fd3, 3)) < 0)
            _exit(RL_PROC_EXEC_FAILED);
        first_closed = 4;
    }
    if (fd4 >= 0) {
        if (dup2(fd4, 4) < 0)
            _exit(RL_PROC_EXEC_FAILED);
        first_closed = 5;
    }
    /* Nothing of the parent's (gRPC sockets, epoll, other pipes) leaks in. */
    if (close_range((unsigned)first_closed, ~0U, 0) != 0)
        for (int fd = first_closed; fd < 4096; fd++)
            close(fd);

    const rl_proc_limits *l = opt->limits;
    set_limit(RLIMIT_CORE, 0, 0);
    if (l) {
        if (l->data_bytes)
            set_limit(RLIMIT_DATA, l->data_bytes, l->data_bytes);
        if (l->as_bytes)
            set_limit(RLIMIT_AS, l->as_bytes, l->as_bytes);
        if (l->cpu_seconds)
            set_limit(RLIMIT_CPU, l->cpu_seconds, l->cpu_seconds + 5);
        if (l->nofile)
            set_limit(RLIMIT_NOFILE, l->nofile, l->nofile);
        if (l->nproc)
            set_limit(RLIMIT_NPROC, l->nproc, l->nproc);
        if (l->fsize_bytes)
            set_limit(RLIMIT_FSIZE, l->fsize_bytes, l->fsize_bytes);
    }
    if (opt->no_new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        child_fail("cannot set ", "no_new_privs");
    const char *prog = opt->argv[0];
    if (strchr(prog, '/'))
        execve(prog, (char *const *)opt->argv, env);
    else
        execvpe(prog, (char *const *)opt->argv, env);
    child_fail("cannot run ", prog);
}

int rl_proc_spawn(rl_proc *p, const rl_proc_options *opt)
{
    memset(p, 0, sizeof *p);
    p->out_fd = -1;
    p->exit_code = -1;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return RL_ESYS;
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (devnull < 0)
        goto fail_pipe;
    char **env = build_env(opt->setenv, opt->clean_env);
    pid_t parent = getpid();
    /* Until child_exec has put every handler back to default, the child is
     * a copy of us with our handlers: a SIGTERM that reaches it that early
     * (the grader stops a submission it has just started when another
     * program holds its port) would run our handler in the child, and the
     * grader's handler kills every group it knows -- its baseline too.
     * So signals stay blocked across fork; the child unblocks them after
     * the reset, and takes any that arrived with default actions. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pid_t pid = fork();
    if (pid == 0)
        child_exec(opt, env, fds[1], devnull, parent);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (pid < 0) {
        free(env);
        goto fail_devnull;
    }
    /* Both sides set the group so neither a signal nor the child's exec can
     * observe it outside its own group. EACCES after exec is harmless. */
    setpgid(pid, pid);
    free(env);
    close(devnull);
    close(fds[1]);
    p->pid = pid;
    registry_add(pid);
    p->out_fd = fds[0];
    pthread_mutex_init(&p->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->cond, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&p->reader, NULL, reader_main, p) == 0)
        p->reader_running = true;
    else
        p->eof = true; /* output is then simply not captured */
    return RL_OK;

fail_devnull:
    close(devnull);
fail_pipe : {
    int e = errno;
    close(fds[0]);
    close(fds[1]);
    errno = e;
}
    return RL_ESYS;
}

/* ---- exit status ---- */

static bool check_exit(rl_proc *p)
{
    if (!p->pid)
        return false;
    if (p->exited)
        return true;
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (waitid(P_PID, (id_t)p->pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0 || si.si_pid == 0)
        return false;
    p->exited = true;
    p->exit_ns = rl_now_ns();
    if (si.si_code == CLD_EXITED) {
        p->exit_code = si.si_status;
        p->term_sig = 0;
    } else {
        p->exit_code = -1;
        p->term_sig = si.si_status;
    }
    return true;
}

bool rl_proc_alive(rl_proc *p)
{
    return p->pid && !check_exit(p);
}

bool rl_proc_wait_exit(rl_proc *p, int64_t timeout_ms)
{
    int64_t until = rl_now_ns() + timeout_ms * RL_NS_PER_MS;
    for (;;) {
        if (!p->pid || check_exit(p))
            return true;
        if (rl_now_ns() >= until)
            return false;
        rl_sleep_ms(2, NULL);
    }
}

const char *rl_signal_name(int sig)
{
    static const struct {
        int sig;
        const char *name;
    } names[] = {
        {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},   {SIGTRAP, "SIGTRAP"},
        {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},   {SIGKILL, "SIGKILL"}, {SIGUSR1, "SIGUSR1"},
        {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"}, {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"},
        {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"}, {SIGSYS, "SIGSYS"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].sig == sig)
            return names[i].name;
    static __thread char other[16];
    snprintf(other, sizeof other, "SIG%d", sig);
    return other;
}

int rl_proc_death_signal(const rl_proc *p)
{
    if (!p->exited)
        return 0;
    if (p->term_sig)
        return p->term_sig;
    /* A shell that ran the program as its child (rather than exec'ing it),
     * or an init such as the grader's sandbox, reports the child's death by
     * signal N as exit status 128+N. */
    if (p->exit_code > 128 && p->exit_code < 128 + 32)
        return p->exit_code - 128;
    return 0;
}

void rl_proc_describe(const rl_proc *p, char *buf, size_t len)
{
    if (!p->exited)
        snprintf(buf, len, "running");
    else if (p->term_sig)
        snprintf(buf, len, "was killed by %s", rl_signal_name(p->term_sig));
    else if (rl_proc_death_signal(p))
        snprintf(buf, len, "was killed by %s (its parent, a shell or init, exited with status %d)",
                 rl_signal_name(rl_proc_death_signal(p)), p->exit_code);
    else
        snprintf(buf, len, "exited with status %d", p->exit_code);
}

/* ---- stop ---- */

static void stop_reader(rl_proc *p, int64_t timeout_ms)
{
    if (!p->reader_running)
        return;
    /* Wait for EOF (every writer gone) so the tail is complete; a process
     * that escaped the group may still hold the pipe, so bound the wait. */
    int64_t until = rl_now_ns() + timeout_ms * RL_NS_PER_MS;
    pthread_mutex_lock(&p->mu);
    while (!p->eof) {
        struct timespec ts = {.tv_sec = until / RL_NS_PER_SEC, .tv_nsec = (long)(until % RL_NS_PER_SEC)};
        if (pthread_cond_timedwait(&p->cond, &p->mu, &ts) == ETIMEDOUT)
            break;
    }
    pthread_mutex_unlock(&p->mu);
    p->stop_reader = 1;
    pthread_join(p->reader, NULL);
    p->reader_running = false;
}

bool rl_proc_stop(rl_proc *p, int64_t grace_ms)
{
    bool killed = false;
    if (p->pid && !p->reaped) {
        if (!check_exit(p)) {
            kill(-p->pid, SIGTERM);
            /* In case it left its group; only then, since a second SIGTERM
             * cuts a graceful server's drain short. */
            if (getpgid(p->pid) != p->pid)
                kill(p->pid, SIGTERM);
            rl_proc_wait_exit(p, grace_ms);
        }
        /* Whether or not the leader obeyed, nothing of its group may stay:
         * the unreaped leader still reserves the group id here. */
        if (!p->exited)
            killed = true;
        kill(-p->pid, SIGKILL);
        kill(p->pid, SIGKILL);
        rl_proc_wait_exit(p, 5000);
        int st;
        if (waitpid(p->pid, &st, 0) == p->pid || errno == ECHILD)
            p->reaped = true;
        registry_remove(p->pid);
    }
    stop_reader(p, 200);
    if (p->out_fd >= 0) {
        close(p->out_fd);
        p->out_fd = -1;
    }
    return killed;
}

void rl_proc_fini(rl_proc *p)
{
    if (!p->pid)
        return;
    rl_proc_stop(p, 0);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cond);
    p->pid = 0;
}

/* ---- output ---- */

int rl_proc_wait_line(rl_proc *p, const char *needle, int64_t timeout_ms, char *line, size_t linelen)
{
    int64_t until = rl_now_ns() + timeout_ms * RL_NS_PER_MS;
    size_t nlen = strlen(needle);
    /* Once the leader is gone, its last bytes may still be in the pipe:
     * wait for the reader's end of file, up to GONE_DRAIN_MS (a grandchild
     * holding the pipe open would otherwise keep us here). 20 ms was too
     * short on a loaded machine: a test missed a line the program had
     * printed before it exited. */
    enum { GONE_DRAIN_MS = 500 };
    int64_t gone_until = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        /* Look for a complete line holding |needle|. */
        size_t start = 0;
        for (size_t i = 0; i < p->cap.nhead; i++) {
            if (p->cap.head[i] != '\n')
                continue;
            size_t n = i - start;
            if (memmem(p->cap.head + start, n, needle, nlen)) {
                size_t c = n < linelen - 1 ? n : linelen - 1;
                memcpy(line, p->cap.head + start, c);
                line[c] = '\0';
                pthread_mutex_unlock(&p->mu);
                return RL_OK;
            }
            start = i + 1;
        }
        int64_t now = rl_now_ns();
        if (p->eof || (gone_until && now >= gone_until)) {
            pthread_mutex_unlock(&p->mu);
            return RL_ECHILD;
        }
        if (now >= until) {
            pthread_mutex_unlock(&p->mu);
            return RL_ETIMEOUT;
        }
        /* Wake at least every 50 ms to notice an exit while a grandchild
         * keeps the pipe open. */
        int64_t wake = now + 50 * RL_NS_PER_MS < until ? now + 50 * RL_NS_PER_MS : until;
        if (gone_until && gone_until < wake)
            wake = gone_until;
        struct timespec ts = {.tv_sec = wake / RL_NS_PER_SEC, .tv_nsec = (long)(wake % RL_NS_PER_SEC)};
        pthread_cond_timedwait(&p->cond, &p->mu, &ts);
        pthread_mutex_unlock(&p->mu);
        if (!gone_until && !rl_proc_alive(p))
            gone_until = rl_now_ns() + GONE_DRAIN_MS * RL_NS_PER_MS;
        pthread_mutex_lock(&p->mu);
    }
}

uint64_t rl_proc_output_tail(rl_proc *p, char *buf, size_t len)
{
    if (!p->pid && !p->cap.total) {
        if (len)
            buf[0] = '\0';
        return 0;
    }
    pthread_mutex_lock(&p->mu);
    uint64_t total = capture_tail(&p->cap, buf, len);
    pthread_mutex_unlock(&p->mu);
    return total;
}

uint64_t rl_proc_output_text(rl_proc *p, char *buf, size_t len)
{
    if (!p->pid && !p->cap.total) {
        if (len)
            buf[0] = '\0';
        return 0;
    }
    pthread_mutex_lock(&p->mu);
    uint64_t total = capture_text(&p->cap, buf, len);
    pthread_mutex_unlock(&p->mu);
    return total;
}

/* ---- servers ---- */

#define READY_WORDS "listening on "

int rl_proc_wait_ready(rl_proc *p, int64_t timeout_ms, char *addr, size_t addrlen)
{
    char line[256];
    int rc = rl_proc_wait_line(p, " " READY_WORDS, timeout_ms, line, sizeof line);
    if (rc != RL_OK)
        return rc;
    const char *a = strstr(line, " " READY_WORDS) + strlen(" " READY_WORDS);
    size_t n = strcspn(a, " \t\r");
    if (n == 0 || n >= addrlen)
        return RL_EINVAL;
    memcpy(addr, a, n);
    addr[n] = '\0';
    return RL_OK;
}

int rl_proc_await_server(rl_proc *p, const char *name, int64_t ready_ms, char *addr, size_t addrlen, char *err,
                         size_t errlen)
{
    int rc = rl_proc_wait_ready(p, ready_ms, addr, addrlen);
    if (rc == RL_OK)
        return RL_OK;
    char tail[300];
    rl_proc_output_tail(p, tail, sizeof tail);
    /* One line for the caller's message: the output's newlines become "; ". */
    char flat[400];
    size_t n = 0;
    for (const char *t = tail; *t && n + 3 < sizeof flat; t++) {
        if (*t != '\n') {
            flat[n++] = *t;
        } else if (t[1]) {
            flat[n++] = ';';
            flat[n++] = ' ';
        }
    }
    flat[n] = '\0';
    const char *why = rc == RL_ETIMEOUT ? "printed no readiness line in time"
                      : rc == RL_EINVAL ? "printed a readiness line without a usable HOST:PORT"
                                        : "exited before its readiness line";
    snprintf(err, errlen, "%s %s (%d ms); its output ends: %s", name, why, (int)ready_ms, flat[0] ? flat : "(nothing)");
    return rc;
}

int rl_proc_start_server(rl_proc *p, const rl_proc_options *opt, int64_t ready_ms, char *addr, size_t addrlen,
                         char *err, size_t errlen)
{
    if (rl_proc_spawn(p, opt) != RL_OK) {
        snprintf(err, errlen, "cannot start %s: %s", opt->argv[0], strerror(errno));
        return RL_ESYS;
    }
    return rl_proc_await_server(p, opt->argv[0], ready_ms, addr, addrlen, err, errlen);
}
