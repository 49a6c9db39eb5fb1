/* Unit tests for the no-leak judge: a pool that grows a little passes, one
 * thread or file per call fails with the per-call figure named, memory is
 * judged against its own budget, and a runaway group is told apart. The
 * settle, on a real child group: one still giving memory back is waited
 * for, one that keeps it is judged a second after its threads settled. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "leak.h"
#include "rl_deadline.h"
#include "rl_err.h"

#define MIB (UINT64_C(1) << 20)

static rl_proc_sample sample(int threads, int fds, uint64_t rss_mib)
{
    rl_proc_sample s = {.nprocs = 1, .nthreads = threads, .nfds = fds, .rss_bytes = rss_mib * MIB};
    return s;
}

static void unchanged_group_passes(void **state)
{
    (void)state;
    rl_proc_sample a = sample(10, 8, 33), b = sample(10, 8, 33);
    gr_leak_check c;
    gr_leak_judge(&a, &b, GR_LEAK_CALLS, 0, &c);
    assert_true(c.pass);
    char buf[512];
    gr_leak_feedback(&c, "cancelled calls", buf, sizeof buf);
    assert_non_null(strstr(buf, "nothing was left behind"));
}

static void pool_growth_within_a_third_passes(void **state)
{
    (void)state;
    rl_proc_sample a = sample(10, 8, 33), b = sample(10 + GR_LEAK_CALLS / 3, 8 + GR_LEAK_CALLS / 3, 33);
    gr_leak_check c;
    gr_leak_judge(&a, &b, GR_LEAK_CALLS, 0, &c);
    assert_true(c.pass);
}

static void thread_per_call_fails_and_says_so(void **state)
{
    (void)state;
    rl_proc_sample a = sample(11, 7, 33), b = sample(11 + GR_LEAK_CALLS, 7, 34);
    gr_leak_check c;
    gr_leak_judge(&a, &b, GR_LEAK_CALLS, 0, &c);
    assert_false(c.pass);
    assert_true(c.threads_grew);
    assert_false(c.fds_grew);
    char buf[512];
    gr_leak_feedback(&c, "cancelled calls", buf, sizeof buf);
    assert_non_null(strstr(buf, "30 more threads (1.00 per call"));
    assert_null(strstr(buf, "open files"));
}

static void file_per_call_fails(void **state)
{
    (void)state;
    rl_proc_sample a = sample(10, 14, 33), b = sample(10, 14 + GR_LEAK_CALLS / 3 + 1, 33);
    gr_leak_check c;
    gr_leak_judge(&a, &b, GR_LEAK_CALLS, 0, &c);
    assert_false(c.pass);
    assert_true(c.fds_grew);
    char buf[512];
    gr_leak_feedback(&c, "cancelled calls", buf, sizeof buf);
    assert_non_null(strstr(buf, "11 more open files"));
}

static void unreadable_descriptors_are_not_judged(void **state)
{
    (void)state;
    rl_proc_sample a = sample(10, -1, 33), b = sample(10, 500, 33);
    gr_leak_check c;
    gr_leak_judge(&a, &b, GR_LEAK_CALLS, 0, &c);
    assert_true(c.pass);
}

static void memory_past_its_budget_fails(void **state)
{
    (void)state;
    rl_proc_sample a = sample(10, 8, 60), b = sample(10, 8, 60 + GR_LEAK_RSS_MIB);
    gr_leak_check c;
    gr_leak_judge(&a, &b, GR_LEAK_CALLS, 0, &c);
    assert_true(c.pass);
    b.rss_bytes += MIB;
    gr_leak_judge(&a, &b, GR_LEAK_CALLS, 0, &c);
    assert_false(c.pass);
    assert_true(c.rss_grew);
    /* Shrinking is never a leak. */
    gr_leak_judge(&b, &a, GR_LEAK_CALLS, 0, &c);
    assert_true(c.pass);
}

/* The RSS after each call of a batch: |base| MiB, plus |per_call| MiB per
 * call, plus |jump| MiB from call |at| on (a new high a flood set). */
static void batch(uint64_t *rss, uint64_t base, uint64_t per_call, int at, uint64_t jump)
{
    for (int i = 0; i < GR_LEAK_CALLS; i++)
        rss[i] = (base + per_call * (uint64_t)(i + 1) + (i >= at ? jump : 0)) * MIB;
}

static void high_steps_sum_the_largest_new_highs(void **state)
{
    (void)state;
    uint64_t rss[] = {40 * MIB, 90 * MIB, 80 * MIB, 95 * MIB, 200 * MIB, 201 * MIB, 150 * MIB, 230 * MIB};
    /* steps over 30: 10, 50, 5, 105, 1, 29; the three largest */
    assert_int_equal(gr_leak_high_steps(30 * MIB, rss, 8), (105 + 50 + 29) * MIB);
    assert_int_equal(gr_leak_high_steps(300 * MIB, rss, 8), 0);
}

static void memory_kept_at_a_few_highs_passes(void **state)
{
    (void)state;
    /* A flooding producer's allocator: two bigger floods late in the
     * batch, then flat (the 148.8 MiB of a make test run). */
    uint64_t rss[GR_LEAK_CALLS];
    batch(rss, 60, 0, 12, 70);
    for (int i = 21; i < GR_LEAK_CALLS; i++)
        rss[i] += 79 * MIB;
    rl_proc_sample a = sample(10, 8, 60), b = sample(10, 8, 60 + 149);
    gr_leak_check c;
    gr_leak_judge(&a, &b, GR_LEAK_CALLS, gr_leak_high_steps(a.rss_bytes, rss, GR_LEAK_CALLS), &c);
    assert_true(c.pass);
    assert_true(c.rss_kept_by_highs);
    char buf[512];
    gr_leak_feedback(&c, "cancelled calls", buf, sizeof buf);
    assert_non_null(strstr(buf, "+149.0, grown at the few calls that set a new high"));
}

static void memory_kept_at_every_call_fails(void **state)
{
    (void)state;
    /* 3 MiB per call: 90 MiB, of which the three largest steps are 9. */
    uint64_t rss[GR_LEAK_CALLS];
    batch(rss, 60, 3, 0, 0);
    rl_proc_sample a = sample(10, 8, 60), b = sample(10, 8, 60 + 3 * GR_LEAK_CALLS);
    gr_leak_check c;
    gr_leak_judge(&a, &b, GR_LEAK_CALLS, gr_leak_high_steps(a.rss_bytes, rss, GR_LEAK_CALLS), &c);
    assert_false(c.pass);
    assert_true(c.rss_grew);
    /* ... and with a flood's high on top of it */
    batch(rss, 60, 3, 5, 120);
    b.rss_bytes += 120 * MIB;
    gr_leak_judge(&a, &b, GR_LEAK_CALLS, gr_leak_high_steps(a.rss_bytes, rss, GR_LEAK_CALLS), &c);
    assert_true(c.rss_grew);
    /* the smallest leak the budget catches, 64 MiB over the batch, still
     * fails once the three largest steps are set aside */
    batch(rss, 60, 0, 0, 0);
    for (int i = 0; i < GR_LEAK_CALLS; i++)
        rss[i] = 60 * MIB + (uint64_t)(i + 1) * (GR_LEAK_RSS_MIB + 2) * MIB / GR_LEAK_CALLS;
    b = sample(10, 8, 60 + GR_LEAK_RSS_MIB + 2);
    gr_leak_judge(&a, &b, GR_LEAK_CALLS, gr_leak_high_steps(a.rss_bytes, rss, GR_LEAK_CALLS), &c);
    assert_true(c.rss_grew);
}

static void runaway_is_past_the_give_up_growth(void **state)
{
    (void)state;
    rl_proc_sample a = sample(10, 8, 30), b = sample(10, 8, 30 + GR_LEAK_GIVE_UP_MIB);
    assert_false(gr_leak_runaway(&a, &b));
    b.rss_bytes += MIB;
    assert_true(gr_leak_runaway(&a, &b));
    char buf[512];
    gr_leak_runaway_feedback(&a, &b, 9, "cancelled Produce calls", buf, sizeof buf);
    assert_non_null(strstr(buf, "while 9 cancelled Produce calls ran, RSS grew 513.0 MiB"));
}

enum { BLOCKS = 10, BLOCK_MIB = 10 };

/* A child in a group of its own that, told to on |go|, maps and touches
 * BLOCKS x BLOCK_MIB, says so on |done|, then gives a block back every
 * |free_every_ms| (0: keeps them all) and waits to be killed. */
static pid_t hoarder(int free_every_ms, int *go_w, int *done_r)
{
    int go[2], done[2];
    assert_int_equal(pipe(go), 0);
    assert_int_equal(pipe(done), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setpgid(0, 0);
        char c;
        if (read(go[0], &c, 1) != 1)
            _exit(1);
        char *blocks[BLOCKS];
        size_t n = (size_t)BLOCK_MIB * MIB;
        for (int i = 0; i < BLOCKS; i++) {
            blocks[i] = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (blocks[i] == MAP_FAILED)
                _exit(1);
            memset(blocks[i], 1, n);
        }
        if (write(done[1], "x", 1) != 1)
            _exit(1);
        for (int i = 0; free_every_ms && i < BLOCKS; i++) {
            usleep((useconds_t)free_every_ms * 1000);
            munmap(blocks[i], n);
        }
        for (;;)
            pause();
    }
    setpgid(pid, pid);
    close(go[0]);
    close(done[1]);
    *go_w = go[1];
    *done_r = done[0];
    return pid;
}

/* Runs gr_leak_settle on a hoarder from before its blocks to after
 * (threads and files never change, so only the RSS can hold it). */
static void settle_hoarder(int free_every_ms, rl_proc_sample *before, rl_proc_sample *after, int64_t *took_ms)
{
    int go, done;
    pid_t pid = hoarder(free_every_ms, &go, &done);
    /* the group exists once setpgid ran on either side */
    while (rl_proc_group_sample(pid, before) != RL_OK)
        usleep(1000);
    char c = 'x';
    assert_int_equal(write(go, &c, 1), 1);
    assert_int_equal(read(done, &c, 1), 1);
    int64_t t0 = rl_now_ns();
    assert_int_equal(gr_leak_settle(pid, before, before, GR_LEAK_CALLS, t0 + 300 * RL_NS_PER_MS, after), RL_OK);
    *took_ms = (rl_now_ns() - t0) / RL_NS_PER_MS;
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    close(go);
    close(done);
}

static void settle_waits_for_memory_given_back(void **state)
{
    (void)state;
    rl_proc_sample before, after;
    int64_t took;
    settle_hoarder(150, &before, &after, &took);
    gr_leak_check lc;
    gr_leak_judge(&before, &after, GR_LEAK_CALLS, 0, &lc);
    assert_false(lc.rss_grew); /* judged at 300 ms, 100 MiB were still held */
    assert_true(lc.pass);
}

static void settle_judges_memory_kept(void **state)
{
    (void)state;
    rl_proc_sample before, after;
    int64_t took;
    settle_hoarder(0, &before, &after, &took);
    gr_leak_check lc;
    gr_leak_judge(&before, &after, GR_LEAK_CALLS, 0, &lc);
    assert_true(lc.rss_grew);
    /* a second without a new low, not the whole falling bound */
    assert_true(took < 300 + GR_LEAK_FALLING_MS / 2);
}

/* A batch's trace: RSS from |rss0| MiB up one MiB a call, threads from
 * |threads0| up |per_call| a call, 8 files throughout. */
static gr_leak_trace trace(uint64_t rss0, int threads0, int per_call)
{
    gr_leak_trace tr;
    memset(&tr, 0, sizeof tr);
    tr.n = GR_LEAK_WARMUP_CALLS + GR_LEAK_CALLS;
    for (int i = 0; i < tr.n; i++) {
        tr.rss[i] = (rss0 + (uint64_t)i) * MIB;
        tr.threads[i] = threads0 + per_call * i;
        tr.fds[i] = 8;
    }
    tr.start = rss0 * MIB;
    tr.before = (rss0 + 5) * MIB;
    return tr;
}

/* The batch's picture: every call's RSS in order against the bound the
 * judge used, the batch's start marked, the settle as a second line, and a
 * caption that says what the judge found. */
static void figure_plots_each_call_against_the_bound(void **state)
{
    (void)state;
    const int n = GR_LEAK_WARMUP_CALLS + GR_LEAK_CALLS;
    gr_leak_trace tr = trace(40, 10, 0);
    rl_proc_sample before = sample(10, 8, 45), after = sample(10, 8, 46);
    gr_leak_check lc;
    gr_leak_judge(&before, &after, GR_LEAK_CALLS, 0, &lc);
    assert_true(lc.pass);
    gr_figure f;
    gr_leak_figure(&f, "cancelled calls", &tr, &lc);
    assert_int_equal(f.kind, GR_FIG_PLOT);
    assert_int_equal(f.nseries, 1);
    assert_string_equal(f.series[0].label, "RSS after the call");
    assert_int_equal((int)f.series[0].n, n);
    assert_true(f.series[0].x[0] == 1.0 && f.series[0].x[n - 1] == (double)n);
    assert_true(f.series[0].y[0] == 40.0 && f.series[0].y[n - 1] == 40.0 + n - 1);
    assert_int_equal(f.nevents, 1);
    assert_true(f.events[0].value > GR_LEAK_WARMUP_CALLS && f.events[0].value < GR_LEAK_WARMUP_CALLS + 1);
    assert_int_equal(f.nrefs, 2);
    assert_true(f.refs[0].value == 45.0 + GR_LEAK_RSS_MIB);
    assert_true(f.refs[1].value == 46.0);
    assert_non_null(strstr(f.caption, "+1.0 MiB over the batch, under the 64 MiB bound"));
    assert_true(strlen(f.caption) <= 110); /* one line in the SVG */

    /* Memory past its bound: the same plot, and the caption says so. */
    after = sample(10, 8, 45 + GR_LEAK_RSS_MIB + 10);
    gr_leak_judge(&before, &after, GR_LEAK_CALLS, 0, &lc);
    gr_leak_figure(&f, "cancelled calls", &tr, &lc);
    assert_string_equal(f.series[0].label, "RSS after the call");
    assert_non_null(strstr(f.caption, "leaves memory behind"));
}

/* Threads that grew alone: the picture plots the threads after each call
 * against their bound, not an RSS that shows nothing wrong. */
static void figure_of_a_thread_leak_plots_the_threads(void **state)
{
    (void)state;
    gr_leak_trace tr = trace(40, 10, 1);
    rl_proc_sample before = sample(16, 8, 45), after = sample(46, 8, 46);
    gr_leak_check lc;
    gr_leak_judge(&before, &after, GR_LEAK_CALLS, 0, &lc);
    assert_true(lc.threads_grew && !lc.rss_grew);
    gr_figure f;
    gr_leak_figure(&f, "cancelled calls", &tr, &lc);
    assert_string_equal(f.series[0].label, "threads after the call");
    assert_true(f.series[0].y[0] == 10.0 && f.series[0].y[GR_LEAK_WARMUP_CALLS + GR_LEAK_CALLS - 1] == 45.0);
    assert_int_equal(f.nrefs, 2);
    int tolerance = GR_LEAK_CALLS / GR_LEAK_COUNT_DIVISOR; /* whole threads, as leak.c counts them */
    assert_true(f.refs[0].value == 16.0 + tolerance);
    assert_true(f.refs[1].value == 46.0);
    assert_non_null(strstr(f.caption, "Threads grew with the calls (16 -> 46)"));
    assert_true(strlen(f.caption) <= 110);
}

/* A group that ran away in the warm-up: no bound yet, the give-up line
 * instead, and only the calls made. */
static void figure_of_a_runaway_draws_the_give_up_line(void **state)
{
    (void)state;
    gr_leak_trace tr = trace(50, 10, 0);
    tr.n = 3;
    tr.before = 0;
    gr_figure f;
    gr_leak_figure(&f, "cancelled calls", &tr, NULL);
    assert_int_equal((int)f.series[0].n, 3);
    assert_int_equal(f.nevents, 0);
    assert_int_equal(f.nrefs, 1);
    assert_true(f.refs[0].value == 50.0 + GR_LEAK_GIVE_UP_MIB);
    assert_non_null(strstr(f.caption, "ran away"));
    assert_true(strlen(f.caption) <= 110);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unchanged_group_passes),
        cmocka_unit_test(pool_growth_within_a_third_passes),
        cmocka_unit_test(thread_per_call_fails_and_says_so),
        cmocka_unit_test(file_per_call_fails),
        cmocka_unit_test(unreadable_descriptors_are_not_judged),
        cmocka_unit_test(memory_past_its_budget_fails),
        cmocka_unit_test(high_steps_sum_the_largest_new_highs),
        cmocka_unit_test(memory_kept_at_a_few_highs_passes),
        cmocka_unit_test(memory_kept_at_every_call_fails),
        cmocka_unit_test(runaway_is_past_the_give_up_growth),
        cmocka_unit_test(settle_waits_for_memory_given_back),
        cmocka_unit_test(settle_judges_memory_kept),
        cmocka_unit_test(figure_plots_each_call_against_the_bound),
        cmocka_unit_test(figure_of_a_thread_leak_plots_the_threads),
        cmocka_unit_test(figure_of_a_runaway_draws_the_give_up_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
