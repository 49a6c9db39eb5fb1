/* Unit tests for grader/submission_exit.c's wait for a signalled
 * submission's exit, on real children (this program run again in a child
 * mode, as an unsandboxed instance): one kept runnable but off the CPU past
 * its deadline by a cgroup's CPU quota exits within the wait it is granted
 * again, and is not killed; one blocked with SIGTERM ignored waits for no
 * CPU and is killed at its deadline, not later. The first needs root and a
 * cpu cgroup controller (v1's cpu hierarchy or v2's cpu.max) and is skipped
 * without them; docs/DESIGN.md records what the quota does to schedstat. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "driver.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "run.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The throttled child's quota: 2 ms of CPU every 100 ms (2%). Measured on
 * the 2-core Debian 12 machine (kernel 6.18, cgroup v1 cpu hierarchy): a
 * spinning member gets 19.8 ms of CPU a second and its run_delay grows
 * 0.98 s a second, throttled time counted as waiting for a CPU. */
#define QUOTA_US  2000
#define PERIOD_US 100000

/* The throttled child's exit deadline and the CPU it burns after SIGTERM
 * before it exits. By the deadline it can have had at most 26 periods'
 * quota (52 ms) plus a tick's overrun (4 ms at HZ=250): 56 ms < BURN_MS, so
 * it is still running then, having waited about 2.45 s for a CPU. The
 * grant (its wait, under GR_EXIT_STARVED_MAX_MS) takes it to about 4.9 s,
 * 48 whole periods: at least 96 ms less a tick's debt, > BURN_MS. Both
 * margins are about 20 ms of CPU, a second of wall time at the quota. */
#define THROTTLED_WITHIN_MS 2500
#define BURN_MS             75

/* The blocked child's deadline: no CPU wait, so no grant. */
#define BLOCKED_WITHIN_MS 300

/* The child whose wait leaves with a thread: after SIGTERM a worker thread
 * burns WORKER_BURN_MS of CPU under the quota (13 to 15 periods: about
 * 1.3-1.5 s, nearly all of it waiting) and ends; the main thread, blocked
 * meanwhile, sleeps MAIN_SLEEP_MS more and exits, about 2.8-3.1 s after the
 * signal: past THREAD_WITHIN_MS, inside the grant of the worker's wait
 * (to about 3.8 s). Read only at the deadline, the group has just the
 * main thread, which waited for almost nothing: no grant, and it was
 * killed, as the C relay was after its loop threads ended. */
#define THREAD_WITHIN_MS 2500
#define WORKER_BURN_MS   30
#define MAIN_SLEEP_MS    1500

static char self_exe[PATH_MAX];

/* ---- the child modes ---- */

static volatile sig_atomic_t termed;

static void on_term(int sig)
{
    (void)sig;
    termed = 1;
}

static int64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * RL_NS_PER_SEC + ts.tv_nsec;
}

/* Says "ready" and returns once SIGTERM came (blocked until it waits, so
 * none is lost). */
static void ready_until_term(void)
{
    sigset_t term, old;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigprocmask(SIG_BLOCK, &term, &old);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);
    printf("ready\n");
    fflush(stdout);
    while (!termed)
        sigsuspend(&old);
}

/* Says "ready", waits for SIGTERM, then spins until it has used |burn_ms|
 * of CPU since, and exits 0 at once: a submission whose shutdown needs that CPU. */
static _Noreturn void child_burn_on_term(long burn_ms)
{
    ready_until_term();
    int64_t from = cpu_ns();
    while (cpu_ns() - from < burn_ms * RL_NS_PER_MS)
        ;
    /* Without the exit handlers: under ASan, LeakSanitizer's scan at exit
     * would add CPU of its own to the fixed amount. */
    _exit(0);
}

static int64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * RL_NS_PER_SEC + ts.tv_nsec;
}

/* Spins until this thread has used |arg| ms of CPU. */
static void *burn_thread(void *arg)
{
    int64_t from = thread_cpu_ns();
    while (thread_cpu_ns() - from < (int64_t)(intptr_t)arg * RL_NS_PER_MS)
        ;
    return NULL;
}

/* Says "ready", waits for SIGTERM, then has a thread burn |burn_ms| of CPU
 * and end, sleeps |sleep_ms| and exits 0: a submission whose shutdown
 * work runs on threads that end before the process does. */
static _Noreturn void child_burn_in_thread(long burn_ms, long sleep_ms)
{
    ready_until_term();
    pthread_t t;
    if (pthread_create(&t, NULL, burn_thread, (void *)(intptr_t)burn_ms) != 0 || pthread_join(t, NULL) != 0)
        _exit(3);
    rl_sleep_ms(sleep_ms, NULL);
    _exit(0);
}

/* Says "ready" with SIGTERM ignored and sleeps until killed: a submission
 * stuck in a call, which waits for no CPU. */
static _Noreturn void child_ignore_term(void)
{
    signal(SIGTERM, SIG_IGN);
    printf("ready\n");
    fflush(stdout);
    for (;;)
        pause();
}

/* ---- the cgroup ---- */

static int put(const char *dir, const char *name, const char *text)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "we");
    if (!f)
        return -1;
    int ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

static bool file_has_word(const char *path, const char *word)
{
    char line[512];
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    bool has = false;
    if (fgets(line, sizeof line, f))
        for (char *save, *w = strtok_r(line, " \n", &save); w && !has; w = strtok_r(NULL, " \n", &save))
            has = strcmp(w, word) == 0;
    fclose(f);
    return has;
}

/* Makes a fresh cgroup whose members share QUOTA_US of CPU per PERIOD_US,
 * its path in |dir|. Returns 0, or -1 with why not in |why|. */
static int throttled_cgroup(char *dir, size_t len, char *why, size_t whylen)
{
    static int n;
    char quota[64], period[64];
    snprintf(quota, sizeof quota, "%d", QUOTA_US);
    snprintf(period, sizeof period, "%d", PERIOD_US);
    if (geteuid() != 0) {
        snprintf(why, whylen, "not root: cannot make a cpu cgroup");
        return -1;
    }
    bool v1 = access("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", W_OK) == 0;
    if (!v1 && !file_has_word("/sys/fs/cgroup/cgroup.controllers", "cpu")) {
        snprintf(why, whylen, "no cpu cgroup controller (neither /sys/fs/cgroup/cpu nor cpu in cgroup v2's root)");
        return -1;
    }
    if (!v1 && !file_has_word("/sys/fs/cgroup/cgroup.subtree_control", "cpu") &&
        put("/sys/fs/cgroup", "cgroup.subtree_control", "+cpu") != 0) {
        snprintf(why, whylen, "cannot enable cgroup v2's cpu controller: %s", strerror(errno));
        return -1;
    }
    snprintf(dir, len, "%s/relaylab-test-exit-%ld-%d", v1 ? "/sys/fs/cgroup/cpu" : "/sys/fs/cgroup", (long)getpid(),
             n++);
    if (mkdir(dir, 0755) != 0) {
        snprintf(why, whylen, "mkdir %s: %s", dir, strerror(errno));
        return -1;
    }
    char max[128];
    snprintf(max, sizeof max, "%s %s", quota, period);
    if (v1 ? put(dir, "cpu.cfs_period_us", period) != 0 || put(dir, "cpu.cfs_quota_us", quota) != 0
           : put(dir, "cpu.max", max) != 0) {
        snprintf(why, whylen, "cannot set %s's CPU quota: %s", dir, strerror(errno));
        rmdir(dir);
        return -1;
    }
    return 0;
}

/* ---- the instance ---- */

/* |ctx| with one unsandboxed instance running this program in |mode|,
 * which has said it is ready. */
static void start_instance(gr_ctx *ctx, gr_options *opt, const char *mode, const char *arg, const char *arg2)
{
    memset(ctx, 0, sizeof *ctx);
    memset(opt, 0, sizeof *opt);
    ctx->opt = opt;
    ctx->ninstances = 1;
    gr_instance *s = &ctx->subs[0];
    const char *argv[] = {self_exe, mode, arg, arg2, NULL};
    rl_proc_options po = {.argv = argv, .kill_with_parent = true};
    assert_int_equal(rl_proc_spawn(&s->proc, &po), RL_OK);
    s->have = true;
    char line[64];
    assert_int_equal(rl_proc_wait_line(&s->proc, "ready", 10000, line, sizeof line), RL_OK);
}

static void stop_instance(gr_ctx *ctx)
{
    if (ctx->subs[0].tallied)
        rl_wait_tally_fini(&ctx->subs[0].signal_wait);
    rl_proc_stop(&ctx->subs[0].proc, 1000);
    rl_proc_fini(&ctx->subs[0].proc);
}

/* What the thread of /proc/|task|/schedstat has waited for a CPU, in ns
 * (a zombie's too). */
static int64_t task_wait_ns(const char *task)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%.32s/schedstat", task);
    FILE *f = fopen(path, "re");
    assert_non_null(f);
    long long run, wait;
    assert_int_equal(fscanf(f, "%lld %lld", &run, &wait), 2);
    fclose(f);
    return wait;
}

/* The CPU wait of the thread that runs the tests (the one that waits for
 * the exit and kills) and of single-threaded child |pid|, in ns. Threads
 * of one process are read one by one: a whole process's sum would drop
 * when a thread ends. */
static int64_t both_wait_ns(pid_t pid)
{
    char child[32];
    snprintf(child, sizeof child, "%ld", (long)pid);
    return task_wait_ns("thread-self") + task_wait_ns(child);
}

/* ---- the tests ---- */

/* Makes the throttled cgroup and starts |mode| in it; false (skipped)
 * when no cgroup can be made. */
static bool start_throttled(gr_ctx *ctx, gr_options *opt, char *cg, size_t cglen, const char *mode, const char *arg,
                            const char *arg2)
{
    char why[512], pid[32];
    if (throttled_cgroup(cg, cglen, why, sizeof why) != 0) {
        print_message("skipped: %s\n", why);
        return false;
    }
    /* Started outside the cgroup, so its start-up is not throttled; only
     * its shutdown is. */
    start_instance(ctx, opt, mode, arg, arg2);
    snprintf(pid, sizeof pid, "%ld", (long)ctx->subs[0].proc.pid);
    if (put(cg, "cgroup.procs", pid) != 0) {
        int err = errno;
        stop_instance(ctx);
        rmdir(cg);
        fail_msg("cannot move the child into %s: %s", cg, strerror(err));
    }
    return true;
}

/* Sends the throttled child SIGTERM and waits |within_ms| for its exit,
 * then removes cgroup |cg|: it must exit on its own, with status 0, after
 * its deadline, in the wait it was granted. */
static void exits_in_its_grant(gr_ctx *ctx, const char *cg, int within_ms, const char *what)
{
    assert_int_equal(gr_signal_submission_at(ctx, 0, SIGTERM), RL_OK);
    gr_exit out;
    int rc = gr_await_submission_exit_at(ctx, 0, within_ms, true, &out);
    print_message("%s: %s %lld ms after SIGTERM (deadline %d ms)\n", what, out.how, (long long)out.ms, within_ms);
    stop_instance(ctx);
    assert_int_equal(rmdir(cg), 0);
    assert_int_equal(rc, RL_OK);
    assert_true(out.exited);
    assert_false(out.killed);
    assert_int_equal(out.status, 0);
    assert_true(out.ms > within_ms);
}

static void throttled_exit_is_granted_its_cpu_wait(void **state)
{
    (void)state;
    static gr_ctx ctx;
    gr_options opt;
    char cg[200], burn[16];
    snprintf(burn, sizeof burn, "%d", BURN_MS);
    if (!start_throttled(&ctx, &opt, cg, sizeof cg, "burn-on-term", burn, NULL))
        skip();
    exits_in_its_grant(&ctx, cg, THROTTLED_WITHIN_MS, "throttled child");
}

static void wait_that_left_with_a_thread_is_granted(void **state)
{
    (void)state;
    static gr_ctx ctx;
    gr_options opt;
    char cg[200], burn[16], nap[16];
    snprintf(burn, sizeof burn, "%d", WORKER_BURN_MS);
    snprintf(nap, sizeof nap, "%d", MAIN_SLEEP_MS);
    if (!start_throttled(&ctx, &opt, cg, sizeof cg, "burn-in-thread", burn, nap))
        skip();
    exits_in_its_grant(&ctx, cg, THREAD_WITHIN_MS, "child whose worker thread ended");
}

static void blocked_process_is_killed_at_its_deadline(void **state)
{
    (void)state;
    static gr_ctx ctx;
    gr_options opt;
    start_instance(&ctx, &opt, "ignore-term", NULL, NULL);
    pid_t pid = ctx.subs[0].proc.pid;
    assert_int_equal(gr_signal_submission_at(&ctx, 0, SIGTERM), RL_OK);
    int64_t waited = both_wait_ns(pid);
    gr_exit out;
    int rc = gr_await_submission_exit_at(&ctx, 0, BLOCKED_WITHIN_MS, true, &out);
    /* The killed child is a zombie until stop_instance reaps it. */
    waited = both_wait_ns(pid) - waited;
    print_message("blocked child: %s %lld ms after SIGTERM (deadline %d ms, %lld ms waiting for a CPU here)\n", out.how,
                  (long long)out.ms, BLOCKED_WITHIN_MS, (long long)(waited / RL_NS_PER_MS));
    stop_instance(&ctx);
    assert_int_equal(rc, RL_ETIMEOUT);
    assert_false(out.exited);
    assert_true(out.killed);
    assert_int_equal(out.signal, SIGKILL);
    /* Killed at the deadline: later only by what the test's thread and the
     * child waited for a CPU (a busy machine makes the grader late), never
     * by a grant, which is at least GR_EXIT_STARVED_MIN_MS. */
    assert_true(out.ms < BLOCKED_WITHIN_MS + GR_EXIT_STARVED_MIN_MS + waited / RL_NS_PER_MS);
}

/* Two readings of a wait give the wait between them in ms: unknown when
 * either was, and never below 0 (a thread that ended took its wait). */
static void waited_ms_is_a_lower_bound(void **state)
{
    (void)state;
    assert_int_equal(gr_waited_ms(RL_NS_PER_SEC, 3 * RL_NS_PER_SEC + RL_NS_PER_MS - 1), 2000);
    assert_int_equal(gr_waited_ms(5 * RL_NS_PER_MS, 2 * RL_NS_PER_MS), 0);
    assert_int_equal(gr_waited_ms(-1, RL_NS_PER_SEC), -1);
    assert_int_equal(gr_waited_ms(0, -1), -1);
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "burn-on-term") == 0)
        child_burn_on_term(argc >= 3 ? atol(argv[2]) : 0);
    if (argc >= 2 && strcmp(argv[1], "ignore-term") == 0)
        child_ignore_term();
    if (argc >= 4 && strcmp(argv[1], "burn-in-thread") == 0)
        child_burn_in_thread(atol(argv[2]), atol(argv[3]));
    ssize_t n = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
    if (n <= 0)
        return EXIT_FAILURE;
    self_exe[n] = '\0';
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(throttled_exit_is_granted_its_cpu_wait),
        cmocka_unit_test(wait_that_left_with_a_thread_is_granted),
        cmocka_unit_test(blocked_process_is_killed_at_its_deadline),
        cmocka_unit_test(waited_ms_is_a_lower_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
