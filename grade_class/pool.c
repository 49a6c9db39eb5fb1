/* pool: a bounded set of grader processes; see pool.h. The loop polls
 * (waitpid WNOHANG, then a 50 ms sleep that a signal cuts short) instead of
 * waiting on SIGCHLD: it also has time limits and an interrupt flag to
 * watch, and a grading lasts seconds, so 50 ms costs nothing. */
#include "pool.h"

#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_proc.h"
#include "rl_text.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

int gc_pool_install_guards(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
        if (sigaction(sigs[i], &sa, NULL) != 0)
            return RL_ESYS;
    /* A closed progress pipe must not kill the batch before it writes. */
    signal(SIGPIPE, SIG_IGN);
    return rl_proc_become_subreaper();
}

/* The soft RLIMIT_NOFILE before gc_pool_raise_nofile; 0: not raised. */
static rlim_t nofile_was;

void gc_pool_raise_nofile(void)
{
    struct rlimit l;
    if (getrlimit(RLIMIT_NOFILE, &l) != 0 || l.rlim_cur >= l.rlim_max)
        return;
    nofile_was = l.rlim_cur;
    l.rlim_cur = l.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &l) != 0)
        nofile_was = 0;
}

bool gc_pool_interrupted(void)
{
    return interrupted != 0;
}

/* The child's side: its own group, the log as stdout and stderr, no stdin,
 * default signals, then the grader. */
static void exec_job(const gc_job *j, pid_t parent)
{
    setpgid(0, 0);
    /* A batch killed outright (SIGKILL) must not leave graders running on:
     * each gets SIGTERM, stops its submission and writes its results. */
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != parent)
        _exit(RL_PROC_EXEC_FAILED);
    /* A fresh log, never through a link planted at its name. */
    unlink(j->log);
    int fd = open(j->log, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd < 0 || in < 0 || dup2(in, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
        _exit(RL_PROC_EXEC_FAILED);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    if (nofile_was) {
        struct rlimit l;
        if (getrlimit(RLIMIT_NOFILE, &l) == 0) {
            l.rlim_cur = nofile_was;
            setrlimit(RLIMIT_NOFILE, &l);
        }
    }
    if (j->cwd_fd > 0 ? fchdir(j->cwd_fd) != 0 : chdir(j->cwd) != 0) {
        /* A folder's name is its student's: printable (rl_text.h; it takes
         * no lock and allocates nothing, as a child after fork must). */
        char shown[sizeof j->cwd * 4];
        int e = errno;
        rl_text_printable(shown, sizeof shown, j->cwd, strlen(j->cwd), 0);
        dprintf(2, "grade-class: cannot enter %s: %s\n", shown, strerror(e));
        _exit(RL_PROC_EXEC_FAILED);
    }
    execv(j->argv[0], (char *const *)j->argv);
    dprintf(2, "grade-class: cannot run %s: %s\n", j->argv[0], strerror(errno));
    _exit(RL_PROC_EXEC_FAILED);
}

static int start(gc_job *j)
{
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0)
        return RL_ESYS;
    if (pid == 0)
        exec_job(j, parent);
    /* Both sides set the group, so a signal sent right after fork finds it. */
    setpgid(pid, pid);
    j->pid = pid;
    j->state = GC_JOB_RUNNING;
    j->started_ns = rl_now_ns();
    return RL_OK;
}

/* Running job with |pid|, or NULL (an orphan re-parented to us). */
static gc_job *find(gc_job *jobs, size_t n, pid_t pid)
{
    for (size_t i = 0; i < n; i++)
        if (jobs[i].state == GC_JOB_RUNNING && jobs[i].pid == pid)
            return &jobs[i];
    return NULL;
}

int gc_pool_run(gc_job *jobs, size_t n, int max_running, int64_t grace_ms, gc_pool_event_fn ev, void *arg)
{
    size_t next = 0;
    int running = 0, rc = RL_OK;
    int64_t last_tick = 0;
    for (;;) {
        /* Reap every child that ended: our graders, and orphans of theirs. */
        int st;
        pid_t pid;
        while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
            gc_job *j = find(jobs, n, pid);
            if (!j)
                continue;
            /* What the grader left in its group dies with it. */
            kill(-pid, SIGKILL);
            j->state = GC_JOB_DONE;
            j->ended_ns = rl_now_ns();
            j->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            running--;
            if (ev)
                ev(j, arg);
        }
        int64_t now = rl_now_ns();
        for (size_t i = 0; i < n; i++) {
            gc_job *j = &jobs[i];
            if (j->state != GC_JOB_RUNNING)
                continue;
            bool over = j->timeout_ms > 0 && now - j->started_ns > j->timeout_ms * 1000000;
            if (!j->stop_ns && (over || interrupted)) {
                j->timed_out = !interrupted;
                j->interrupted = interrupted != 0;
                kill(-j->pid, SIGTERM);
                j->stop_ns = now;
            } else if (j->stop_ns && now - j->stop_ns > grace_ms * 1000000) {
                kill(-j->pid, SIGKILL);
            }
        }
        while (!interrupted && running < max_running && next < n) {
            gc_job *j = &jobs[next++];
            if (j->state != GC_JOB_PENDING)
                continue;
            if (start(j) != RL_OK) {
                rc = RL_ESYS;
                interrupted = 1; /* no more graders can start: stop the batch cleanly */
                break;
            }
            running++;
        }
        if (running == 0 && (interrupted || next >= n))
            break;
        if (ev && now - last_tick >= 1000000000) {
            last_tick = now;
            ev(NULL, arg);
        }
        struct timespec ts = {0, 50 * RL_NS_PER_MS};
        nanosleep(&ts, NULL);
    }
    rl_proc_reap_orphans(NULL, 0, 5000);
    return rc;
}
