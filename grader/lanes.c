/* lanes: the scenarios of one grading at once, one forked worker a lane;
 * see lanes.h.
 *
 * The grader forks every worker before any gRPC thread exists, shares one
 * anonymous mapping of outcome slots with them, and waits on their pidfds
 * with a bound: a lane's scenarios each have the driver's watchdog, so a
 * worker still running past all of them plus their teardowns is a grader
 * bug, killed and reported, never waited for forever. */
#include "lanes.h"

#include "driver.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_log.h"
#include "rl_proc_sample.h"
#include "sandbox.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* A worker's bound, per scenario run, beyond the submission's readiness
 * wait (--ready-timeout): the driver's watchdog over the scenario, and what
 * the run's other setup and its teardown may take at most (each of their
 * waits is bounded, the longest by a few seconds). */
#define LANE_RUN_BOUND_MS (GR_WATCHDOG_MS + 60000)
/* After SIGTERM (the grader interrupted), how long a worker has to tear
 * its scenario down before it is killed: well inside grade-class's 15 s
 * between its SIGTERM and its SIGKILL to the grader's group
 * (grade_class/pool.c), so the grader still writes its results. */
#define LANE_STOP_MS 5000
/* The most lanes an exercise may have (the pidfds polled at once). */
#define MAX_LANES 64

/* One slot a scenario, shared with the workers. |done| is set last, after
 * the outcome is whole; the grader reads it only after the worker exited. */
typedef struct slot {
    gr_outcome o;
    int done;
} slot;

typedef struct lane {
    int id;          /* the scenarios' gr_scenario.lane */
    size_t nslots;   /* its selected scenarios (runs each) */
    pid_t pid;       /* its worker while running, else 0 */
    pid_t was;       /* its worker's pid, once started */
    int pidfd;       /* -1 when none */
    int64_t started; /* ns */
    int64_t bound_ns;
    bool termed;   /* SIGTERM passed on */
    char how[160]; /* why the worker ended without exiting 0, or was never
                    * started; "" when neither */
} lane;

/* The lanes of the scenarios |only| selects, in the order their first
 * scenario comes, into |lanes| (room for MAX_LANES), each with its count
 * of scenarios; *nsel the selected scenarios. Returns the number of lanes,
 * or -1 when there are more than MAX_LANES. */
static int collect_lanes(const gr_exercise *ex, const char *only, lane *lanes, size_t *nsel)
{
    int nlanes = 0;
    *nsel = 0;
    for (size_t i = 0; i < ex->nscenarios; i++) {
        const gr_scenario *sc = &ex->scenarios[i];
        if (!gr_selected(only, sc->id))
            continue;
        (*nsel)++;
        int j = 0;
        while (j < nlanes && lanes[j].id != sc->lane)
            j++;
        if (j == nlanes) {
            if (nlanes == MAX_LANES)
                return -1;
            lanes[nlanes++] = (lane){.id = sc->lane, .pidfd = -1};
        }
        lanes[j].nslots++;
    }
    return nlanes;
}

size_t gr_lanes_count(const gr_exercise *ex, const char *only)
{
    lane lanes[MAX_LANES];
    size_t nsel;
    int n = collect_lanes(ex, only, lanes, &nsel);
    return n < 0 ? MAX_LANES + 1 : (size_t)n;
}

bool gr_lanes_single_threaded(void)
{
    FILE *f = fopen("/proc/self/status", "re");
    char line[128];
    int threads = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "Threads: %d", &threads) == 1)
            break;
    if (f)
        fclose(f);
    return threads == 1;
}

/* The worker of lane |id|: every selected scenario of it, in table order,
 * into its slots. Never returns. */
_Noreturn static void worker(const gr_exercise *ex, const gr_options *opt, int id, slot *slots, pid_t grader)
{
    /* Orphaned if the grader is killed outright: stop, as an interrupted
     * grader's worker does, rather than grade on for no one. */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != grader)
        raise(SIGTERM);
    /* This worker's escaped processes come back to it, not to the grader,
     * so that its runs' teardowns find them (rl_proc_reap_orphans). */
    if (rl_proc_become_subreaper() != RL_OK)
        RL_WARN("lane %d: cannot become a subreaper", id);
    /* Sandboxed, each lane gets a network of its own: in the grader's
     * shared one, a submission scanning loopback would find the other
     * lanes' worlds (a neighbour's proxy, baselines, submission). */
    char why[256];
    bool apart = !opt->sandbox || gr_sandbox_enter_lane_network(why, sizeof why) == RL_OK;
    if (apart)
        grpc_init();
    size_t k = 0;
    for (size_t i = 0; i < ex->nscenarios; i++) {
        const gr_scenario *sc = &ex->scenarios[i];
        if (!gr_selected(opt->only, sc->id))
            continue;
        slot *sl = &slots[k++];
        if (sc->lane != id)
            continue;
        if (apart) {
            gr_run_outcome(ex, sc, opt, &sl->o);
        } else {
            memset(&sl->o, 0, sizeof sl->o);
            sl->o.scenario = sc;
            sl->o.verdict = GR_ERROR;
            snprintf(sl->o.feedback, sizeof sl->o.feedback,
                     "the grader could not give this scenario's lane a network of its own: %s", why);
        }
        sl->done = 1;
    }
    if (apart)
        grpc_shutdown();
    fflush(stderr);
    exit(0);
}

static int start_lane(const gr_exercise *ex, const gr_options *opt, lane *ln, slot *slots, char *why, size_t len)
{
    fflush(stdout); /* nothing buffered may be written twice */
    fflush(stderr);
    pid_t grader = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, len, "fork: %s", strerror(errno));
        return RL_ESYS;
    }
    if (pid == 0)
        worker(ex, opt, ln->id, slots, grader);
    ln->pid = ln->was = pid;
    ln->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    ln->started = rl_now_ns();
    ln->bound_ns = (int64_t)ln->nslots * opt->runs * (LANE_RUN_BOUND_MS + opt->ready_timeout_ms) * 1000000;
    return RL_OK;
}

/* Reaps |ln|'s worker if it has ended; true when it has. */
static bool reap_lane(lane *ln)
{
    int st;
    pid_t r = waitpid(ln->pid, &st, WNOHANG);
    if (r == 0 || (r < 0 && errno == EINTR))
        return false;
    /* A kill past the bound has already said why. */
    if (r == ln->pid && WIFSIGNALED(st) && !ln->how[0])
        snprintf(ln->how, sizeof ln->how, "was killed by signal %d", WTERMSIG(st));
    else if (r == ln->pid && WIFEXITED(st) && WEXITSTATUS(st) != 0 && !ln->how[0])
        snprintf(ln->how, sizeof ln->how, "exited with status %d", WEXITSTATUS(st));
    if (ln->pidfd >= 0)
        close(ln->pidfd);
    ln->pidfd = -1;
    ln->pid = 0;
    return true;
}

/* Passes an interruption on, and ends a worker past its bound. */
static void police_lane(lane *ln, int64_t now)
{
    if (gr_driver_interrupted && !ln->termed) {
        kill(ln->pid, SIGTERM);
        ln->termed = true;
        ln->started = now;
        ln->bound_ns = (int64_t)LANE_STOP_MS * 1000000;
    }
    if (now - ln->started > ln->bound_ns) {
        snprintf(ln->how, sizeof ln->how, "did not finish within %lld s and was killed",
                 (long long)(ln->bound_ns / 1000000000));
        kill(ln->pid, SIGKILL);
        ln->bound_ns = INT64_MAX / 2; /* once; the reap follows */
    }
}

/* Waits up to 100 ms for any running worker to end. */
static void wait_some(lane *lanes, size_t nlanes)
{
    struct pollfd pfd[MAX_LANES];
    nfds_t n = 0;
    for (size_t i = 0; i < nlanes; i++)
        if (lanes[i].pid && lanes[i].pidfd >= 0)
            pfd[n++] = (struct pollfd){.fd = lanes[i].pidfd, .events = POLLIN};
    if (n)
        (void)poll(pfd, n, 100);
    else
        rl_sleep_ms(20, NULL); /* no pidfd (an old kernel): poll by waitpid */
}

int gr_lanes_run(const gr_exercise *ex, const gr_options *opt, int parallel, gr_outcome *outcomes, size_t *noutcomes,
                 char *err, size_t errlen)
{
    lane lanes[MAX_LANES];
    size_t nsel;
    int counted = collect_lanes(ex, opt->only, lanes, &nsel);
    if (counted < 0) {
        snprintf(err, errlen, "exercise %s has more than %d lanes", ex->name, MAX_LANES);
        return RL_EINVAL;
    }
    size_t nlanes = (size_t)counted;
    size_t bytes = (nsel ? nsel : 1) * sizeof(slot);
    slot *slots = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (slots == MAP_FAILED) {
        snprintf(err, errlen, "cannot share memory with the scenarios' workers: %s", strerror(errno));
        return RL_ESYS;
    }
    size_t next = 0, running = 0, ended = 0;
    while (ended < nlanes) {
        while (next < nlanes && running < (size_t)parallel && !gr_driver_interrupted) {
            char why[128];
            if (start_lane(ex, opt, &lanes[next], slots, why, sizeof why) != RL_OK) {
                snprintf(lanes[next].how, sizeof lanes[next].how, "was not started (%s)", why);
                ended++;
                next++;
                continue;
            }
            running++;
            next++;
        }
        if (gr_driver_interrupted)
            for (; next < nlanes; next++, ended++) /* never started */
                snprintf(lanes[next].how, sizeof lanes[next].how, "was not started: interrupted");
        if (ended >= nlanes)
            break;
        wait_some(lanes, nlanes);
        int64_t now = rl_now_ns();
        for (size_t i = 0; i < nlanes; i++) {
            if (!lanes[i].pid)
                continue;
            if (reap_lane(&lanes[i])) {
                running--;
                ended++;
            } else {
                police_lane(&lanes[i], now);
            }
        }
    }
    /* What a worker's escaped or orphaned processes became: the grader's
     * children (it is their subreaper); then what a worker that did not
     * end cleanly left of its last run: its cgroups and private folders. */
    rl_proc_reap_orphans(NULL, 0, 3000);
    int rc = RL_OK;
    for (size_t i = 0; i < nlanes; i++) {
        if (!lanes[i].how[0] || !lanes[i].was)
            continue;
        gr_remove_private_dirs_of(lanes[i].was);
        /* Its results all written, and still not a clean exit (a sanitizer's
         * report at exit, a crash in grpc_shutdown): the grader's error. */
        rc = RL_ECHILD;
        snprintf(err, errlen, "the grader's worker for lane %d %s", lanes[i].id, lanes[i].how);
    }
    if (rc != RL_OK && opt->sandbox)
        gr_sandbox_sweep_stale(); /* the dead workers' cgroups, now empty */
    /* The slots, in table order; a scenario its worker never finished is
     * the grader's failure, and says which worker and how. */
    *noutcomes = 0;
    size_t k = 0;
    for (size_t i = 0; i < ex->nscenarios; i++) {
        const gr_scenario *sc = &ex->scenarios[i];
        if (!gr_selected(opt->only, sc->id))
            continue;
        gr_outcome *o = &outcomes[(*noutcomes)++];
        if (slots[k].done) {
            *o = slots[k].o;
        } else {
            const lane *ln = lanes;
            while (ln->id != sc->lane)
                ln++;
            memset(o, 0, sizeof *o);
            o->scenario = sc;
            o->verdict = GR_ERROR;
            snprintf(o->feedback, sizeof o->feedback, "%s: the grader's worker for this scenario %s",
                     gr_driver_interrupted && ln->termed ? "interrupted: the grader was asked to stop"
                                                         : "the grader failed",
                     ln->how[0] ? ln->how : "ended without its result");
        }
        k++;
    }
    munmap(slots, bytes);
    return rc;
}
