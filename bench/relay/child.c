/* child: spawn a server, read its readiness line, stop it by pid; see child.h. */
#include "child.h"

#include "rl_deadline.h"
#include "rl_err.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static void reap(bench_child *c)
{
    kill(c->pid, SIGKILL);
    waitpid(c->pid, NULL, 0);
    c->pid = 0;
}

int bench_child_start(bench_child *c, char *const argv[], int timeout_ms, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return RL_ESYS;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return RL_ESYS;
    }
    if (pid == 0) {
        /* Die with the bench rather than linger as an orphan server. */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent)
            _exit(127);
        dup2(fds[1], STDOUT_FILENO);
        execv(argv[0], argv);
        fprintf(stderr, "bench-relay: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(fds[1]);
    c->pid = pid;

    char line[256];
    size_t n = 0;
    int64_t give_up = rl_now_ns() + (int64_t)timeout_ms * RL_NS_PER_MS;
    for (;;) {
        int64_t left_ms = (give_up - rl_now_ns()) / RL_NS_PER_MS;
        struct pollfd p = {fds[0], POLLIN, 0};
        if (left_ms <= 0 || poll(&p, 1, (int)left_ms) == 0) {
            snprintf(err, errlen, "%s printed no readiness line within %d ms", argv[0], timeout_ms);
            break;
        }
        ssize_t r = read(fds[0], line + n, sizeof line - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            snprintf(err, errlen, "%s exited before it was ready (see its stderr above)", argv[0]);
            break;
        }
        n += (size_t)r;
        line[n] = '\0';
        char *nl = strchr(line, '\n');
        if (!nl) {
            if (n == sizeof line - 1) {
                snprintf(err, errlen, "%s printed an overlong first line", argv[0]);
                break;
            }
            continue;
        }
        *nl = '\0';
        const char *at = strstr(line, " listening on ");
        if (!at || snprintf(c->addr, sizeof c->addr, "%s", at + strlen(" listening on ")) >= (int)sizeof c->addr) {
            snprintf(err, errlen, "%s printed '%s', not 'NAME listening on HOST:PORT'", argv[0], line);
            break;
        }
        /* The servers write nothing more on stdout; closing our end is safe
         * because rl_server ignores SIGPIPE. */
        close(fds[0]);
        return RL_OK;
    }
    close(fds[0]);
    reap(c);
    return RL_ECHILD;
}

int bench_child_stop(bench_child *c, int grace_ms)
{
    if (c->pid <= 0)
        return -1;
    kill(c->pid, SIGTERM);
    int status = -1;
    int64_t give_up = rl_now_ns() + (int64_t)grace_ms * RL_NS_PER_MS;
    for (;;) {
        pid_t r = waitpid(c->pid, &status, WNOHANG);
        if (r == c->pid)
            break;
        if (r < 0 && errno != EINTR) {
            status = -1;
            break;
        }
        if (rl_now_ns() >= give_up) {
            kill(c->pid, SIGKILL);
            waitpid(c->pid, &status, 0);
            break;
        }
        usleep(5000);
    }
    c->pid = 0;
    return status;
}
