/* Unit tests for rl_proc: children lead their own process group, a stop
 * kills the whole group (grandchildren too) and one that ignores SIGTERM,
 * exit statuses and signals are told apart, output is captured as head and
 * tail with a count, group sampling sees RSS and CPU time and the
 * scheduler's run and wait times (rl_proc_group_sched), and escaped
 * processes are reaped. Every wait in here is bounded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_proc.h"

static void spawn_sh(rl_proc *p, const char *script)
{
    const char *argv[] = {"/bin/sh", "-c", script, NULL};
    rl_proc_options o = {.argv = argv};
    assert_int_equal(rl_proc_spawn(p, &o), RL_OK);
}

static bool pid_exists(pid_t pid)
{
    /* A zombie still "exists" for kill(); read its state instead. */
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *paren = strrchr(buf, ')');
    return paren && paren[2] != 'Z';
}

static void child_leads_its_own_group(void **state)
{
    (void)state;
    rl_proc p;
    spawn_sh(&p, "echo ready; exec sleep 30");
    char line[64];
    assert_int_equal(rl_proc_wait_line(&p, "ready", 5000, line, sizeof line), RL_OK);
    assert_int_equal(getpgid(p.pid), p.pid);
    assert_int_not_equal(getpgid(p.pid), getpgid(0));
    rl_proc_fini(&p);
}

static void stop_kills_grandchildren(void **state)
{
    (void)state;
    rl_proc p;
    /* The grandchild writes its pid and lives on in the same group. */
    spawn_sh(&p, "sleep 30 & echo grandchild $!; wait");
    char line[64];
    assert_int_equal(rl_proc_wait_line(&p, "grandchild", 5000, line, sizeof line), RL_OK);
    pid_t gc = (pid_t)atoi(line + strlen("grandchild "));
    assert_true(gc > 0);
    assert_true(pid_exists(gc));
    rl_proc_stop(&p, 1000);
    rl_proc_reap_orphans(NULL, 0, 2000);
    int64_t until = rl_now_ns() + 2 * RL_NS_PER_SEC;
    while (pid_exists(gc) && rl_now_ns() < until)
        usleep(10000);
    assert_false(pid_exists(gc));
    rl_proc_fini(&p);
}

static void sigterm_ignored_then_sigkill(void **state)
{
    (void)state;
    rl_proc p;
    spawn_sh(&p, "trap '' TERM; echo up; while :; do sleep 1; done");
    char line[64];
    assert_int_equal(rl_proc_wait_line(&p, "up", 5000, line, sizeof line), RL_OK);
    int64_t t0 = rl_now_ns();
    assert_true(rl_proc_stop(&p, 300)); /* true: SIGKILL was needed */
    assert_true(rl_now_ns() - t0 >= 300 * RL_NS_PER_MS);
    assert_int_equal(rl_proc_death_signal(&p), SIGKILL);
    rl_proc_fini(&p);
}

static void exit_status_and_signal_are_told_apart(void **state)
{
    (void)state;
    rl_proc p;
    char how[96];
    spawn_sh(&p, "exit 3");
    assert_true(rl_proc_wait_exit(&p, 5000));
    rl_proc_describe(&p, how, sizeof how);
    assert_string_equal(how, "exited with status 3");
    assert_int_equal(rl_proc_death_signal(&p), 0);
    rl_proc_fini(&p);

    spawn_sh(&p, "kill -SEGV $$");
    assert_true(rl_proc_wait_exit(&p, 5000));
    rl_proc_describe(&p, how, sizeof how);
    assert_string_equal(how, "was killed by SIGSEGV");
    assert_int_equal(rl_proc_death_signal(&p), SIGSEGV);
    rl_proc_fini(&p);

    /* A shell whose child died of a signal reports 128+N. */
    spawn_sh(&p, "sh -c 'kill -ABRT $$'; exit $?");
    assert_true(rl_proc_wait_exit(&p, 5000));
    assert_int_equal(rl_proc_death_signal(&p), SIGABRT);
    rl_proc_describe(&p, how, sizeof how);
    assert_non_null(strstr(how, "SIGABRT"));
    assert_non_null(strstr(how, "134"));
    rl_proc_fini(&p);
}

static void failed_exec_is_status_127(void **state)
{
    (void)state;
    rl_proc p;
    const char *argv[] = {"/nonexistent/program", NULL};
    rl_proc_options o = {.argv = argv};
    assert_int_equal(rl_proc_spawn(&p, &o), RL_OK);
    assert_true(rl_proc_wait_exit(&p, 5000));
    rl_proc_stop(&p, 0);
    char tail[256];
    rl_proc_output_tail(&p, tail, sizeof tail);
    assert_non_null(strstr(tail, "cannot run /nonexistent/program"));
    assert_int_equal(p.exit_code, 127);
    rl_proc_fini(&p);
}

static void flood_is_capped_and_counted(void **state)
{
    (void)state;
    rl_proc p;
    /* 8 MiB: far more than a pipe holds, so an undrained pipe would block. */
    spawn_sh(&p, "echo FIRST; head -c 8388608 /dev/zero | tr '\\0' x; echo; echo LAST");
    assert_true(rl_proc_wait_exit(&p, 20000));
    rl_proc_stop(&p, 0);
    char text[RL_CAPTURE_HEAD + RL_CAPTURE_TAIL + 128];
    uint64_t total = rl_proc_output_text(&p, text, sizeof text);
    assert_int_equal(total, 6 + 8388608 + 1 + 5);
    assert_true(strncmp(text, "FIRST\n", 6) == 0);
    assert_non_null(strstr(text, "bytes skipped"));
    assert_non_null(strstr(text, "\nLAST\n"));
    char tail[16];
    rl_proc_output_tail(&p, tail, sizeof tail);
    assert_string_equal(tail + strlen(tail) - 5, "LAST\n");
    rl_proc_fini(&p);
}

/* What a child writes comes back printable (rl_text.h): ESC and CR
 * escaped, newlines kept; the tail keeps its last bytes whole even when
 * escapes make it longer. */
static void output_is_made_printable(void **state)
{
    (void)state;
    rl_proc p;
    spawn_sh(&p, "printf 'ok\\n\\033[2Jscore 10/10\\r\\n'");
    assert_true(rl_proc_wait_exit(&p, 20000));
    rl_proc_stop(&p, 0);
    char text[256], tail[12];
    rl_proc_output_text(&p, text, sizeof text);
    assert_string_equal(text, "ok\n\\x1b[2Jscore 10/10\\r\n");
    rl_proc_output_tail(&p, tail, sizeof tail);
    assert_string_equal(tail, "re 10/10\\r\n");
    rl_proc_fini(&p);
}

static void capture_keeps_head_and_tail(void **state)
{
    (void)state;
    static rl_capture cap;
    memset(&cap, 0, sizeof cap);
    char chunk[1000];
    for (int i = 0; i < 20; i++) {
        memset(chunk, 'a' + i, sizeof chunk);
        rl_capture_add(&cap, chunk, sizeof chunk);
    }
    assert_int_equal(cap.total, 20000);
    assert_int_equal(cap.nhead, RL_CAPTURE_HEAD);
    assert_int_equal(cap.head[0], 'a');
    /* The newest byte sits just before the ring's write position. */
    assert_int_equal(cap.tail[(cap.tail_pos + RL_CAPTURE_TAIL - 1) % RL_CAPTURE_TAIL], 'a' + 19);
}

/* A child signalled right after fork must never run the parent's handler
 * (the grader's handler kills every group it started). The handler here
 * writes to a pipe, so a run in a child before its exec shows as a byte;
 * 200 spawns each met by an immediate SIGTERM gave bytes before signals
 * were blocked across fork. */
static int handler_pipe[2];
static void note_handler(int sig)
{
    (void)sig;
    (void)!write(handler_pipe[1], "x", 1);
}

static void early_signal_never_runs_the_parents_handler(void **state)
{
    (void)state;
    assert_int_equal(pipe2(handler_pipe, O_NONBLOCK), 0);
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = note_handler;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGTERM, &sa, &old), 0);
    for (int i = 0; i < 200; i++) {
        rl_proc p;
        spawn_sh(&p, "exec sleep 30");
        kill(p.pid, SIGTERM);
        rl_proc_stop(&p, 1000);
        rl_proc_fini(&p);
    }
    sigaction(SIGTERM, &old, NULL);
    char buf[16];
    ssize_t n = read(handler_pipe[0], buf, sizeof buf);
    close(handler_pipe[0]);
    close(handler_pipe[1]);
    assert_true(n <= 0);
}

/* Descriptors count per member: a process holding three more files open
 * shows exactly three more than the same program without them. The line
 * comes before the exec of sleep, so each sample waits for sleep itself. */
/* Waits (up to 20 s) until |pid| sleeps in (clock_)nanosleep: sleep(1)
 * itself, done loading. Its command name alone is not enough: it changes at
 * the exec, while the dynamic loader still holds the C library open (one
 * descriptor more, seen in 2 of 15 runs). */
static void wait_for_sleep(pid_t pid)
{
    char path[64], text[128] = "";
    snprintf(path, sizeof path, "/proc/%ld/syscall", (long)pid);
    int64_t until = rl_now_ns() + 20 * RL_NS_PER_SEC;
    while (rl_now_ns() < until) {
        FILE *f = fopen(path, "r");
        long nr = -1;
        if (f) {
            if (fgets(text, sizeof text, f))
                nr = strtol(text, NULL, 10);
            fclose(f);
        }
        if (nr == SYS_clock_nanosleep || nr == SYS_nanosleep)
            return;
        struct timespec ts = {0, 2 * RL_NS_PER_MS};
        nanosleep(&ts, NULL);
    }
    fail_msg("%ld never went to sleep (/proc/PID/syscall: %s)", (long)pid, text);
}

static void group_sample_counts_open_files(void **state)
{
    (void)state;
    rl_proc p;
    spawn_sh(&p, "exec 7</dev/null 8</dev/null 9</dev/null; echo after; exec sleep 30");
    char line[32];
    assert_int_equal(rl_proc_wait_line(&p, "after", 20000, line, sizeof line), RL_OK);
    wait_for_sleep(p.pid);
    rl_proc_sample with;
    assert_int_equal(rl_proc_group_sample(p.pid, &with), RL_OK);
    rl_proc_stop(&p, 500);
    rl_proc_fini(&p);

    spawn_sh(&p, "echo ready; exec sleep 30");
    assert_int_equal(rl_proc_wait_line(&p, "ready", 20000, line, sizeof line), RL_OK);
    wait_for_sleep(p.pid);
    rl_proc_sample without;
    assert_int_equal(rl_proc_group_sample(p.pid, &without), RL_OK);
    rl_proc_stop(&p, 500);
    rl_proc_fini(&p);
    assert_true(without.nfds >= 3);
    if (with.nfds - without.nfds != 3)
        fail_msg("with 7, 8, 9 open: %d descriptors in %d process(es); without: %d in %d", with.nfds, with.nprocs,
                 without.nfds, without.nprocs);
}

static void group_sample_sees_rss_and_cpu(void **state)
{
    (void)state;
    rl_proc p;
    /* A shell that counts for a while (no subprocesses: its own CPU time)
     * and keeps a sleeping child in its group. */
    spawn_sh(&p, "sleep 30 & i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; echo spun; wait");
    char line[32];
    assert_int_equal(rl_proc_wait_line(&p, "spun", 20000, line, sizeof line), RL_OK);
    rl_proc_sample s;
    assert_int_equal(rl_proc_group_sample(p.pid, &s), RL_OK);
    assert_int_equal(s.nprocs, 2); /* the shell and its sleep */
    assert_true(s.nthreads >= 2);
    assert_true(s.rss_bytes > UINT64_C(100) * 1024);
    /* 300000 shell iterations take well over 50 ms of CPU on any machine
     * this runs on; ticks are 10 ms. */
    assert_true(s.cpu_ns >= 50 * RL_NS_PER_MS);
    rl_proc_stop(&p, 500);
    /* SIGKILL is delivered asynchronously to the sleep: allow it a moment. */
    int64_t until = rl_now_ns() + 2 * RL_NS_PER_SEC;
    while (rl_proc_group_sample(p.pid, &s) != RL_ENOTFOUND && rl_now_ns() < until)
        usleep(5000);
    assert_int_equal(rl_proc_group_sample(p.pid, &s), RL_ENOTFOUND);
    rl_proc_fini(&p);
}

static void escaped_process_is_reaped(void **state)
{
    (void)state;
    assert_int_equal(rl_proc_become_subreaper(), RL_OK);
    rl_proc p;
    /* setsid leaves the group; the intermediate shell exits, so the sleeper
     * is re-parented to us (the subreaper). */
    spawn_sh(&p, "setsid sh -c 'echo escaped $$; exec sleep 30' & wait");
    char line[64];
    assert_int_equal(rl_proc_wait_line(&p, "escaped", 5000, line, sizeof line), RL_OK);
    pid_t esc = (pid_t)atoi(line + strlen("escaped "));
    rl_proc_stop(&p, 500);
    assert_true(pid_exists(esc)); /* the group kill did not reach it */
    assert_true(rl_proc_reap_orphans(NULL, 0, 3000) >= 1);
    assert_false(pid_exists(esc));
    rl_proc_fini(&p);
}

static void signal_all_reaches_live_groups(void **state)
{
    (void)state;
    rl_proc p;
    spawn_sh(&p, "echo up; sleep 30");
    char line[16];
    assert_int_equal(rl_proc_wait_line(&p, "up", 5000, line, sizeof line), RL_OK);
    rl_proc_signal_all(SIGKILL);
    assert_true(rl_proc_wait_exit(&p, 5000));
    assert_int_equal(rl_proc_death_signal(&p), SIGKILL);
    rl_proc_fini(&p);
}

static void environment_is_added(void **state)
{
    (void)state;
    rl_proc p;
    const char *argv[] = {"/bin/sh", "-c", "echo \"v=$RL_TEST_VAR\"", NULL};
    const char *env[] = {"RL_TEST_VAR=hello", NULL};
    rl_proc_limits lim = {.nofile = 64, .cpu_seconds = 10};
    rl_proc_options o = {.argv = argv, .setenv = env, .limits = &lim};
    assert_int_equal(rl_proc_spawn(&p, &o), RL_OK);
    char line[64];
    assert_int_equal(rl_proc_wait_line(&p, "v=", 5000, line, sizeof line), RL_OK);
    assert_string_equal(line, "v=hello");
    rl_proc_fini(&p);
}

static void data_limit_stops_a_big_allocation(void **state)
{
    (void)state;
    rl_proc p;
    /* 256 MiB of private memory against a 64 MiB RLIMIT_DATA. */
    const char *argv[] = {"/usr/bin/python3", "-c", "b = bytearray(256 << 20); print('allocated')", NULL};
    rl_proc_limits lim = {.data_bytes = 64 << 20};
    rl_proc_options o = {.argv = argv, .limits = &lim};
    assert_int_equal(rl_proc_spawn(&p, &o), RL_OK);
    assert_true(rl_proc_wait_exit(&p, 20000));
    rl_proc_stop(&p, 0);
    char text[2048];
    rl_proc_output_text(&p, text, sizeof text);
    assert_null(strstr(text, "allocated"));
    assert_non_null(strstr(text, "MemoryError")); /* it ran, and the limit stopped it */
    assert_int_not_equal(p.exit_code, 0);
    rl_proc_fini(&p);
}

/* A registered cgroup is counted by its member list, and its CPU read from
 * the accounting file in either format: cgroup v1's bare nanoseconds or
 * v2's cpu.stat (microseconds). */
static void cgroup_sample_reads_members_and_cpu_files(void **state)
{
    (void)state;
    char dir[] = "/tmp/relaylab-proc-test-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char procs[64], cpu[64];
    snprintf(procs, sizeof procs, "%s/cgroup.procs", dir);
    snprintf(cpu, sizeof cpu, "%s/cpu", dir);
    FILE *f = fopen(procs, "w");
    fprintf(f, "%ld\n", (long)getpid());
    fclose(f);
    f = fopen(cpu, "w");
    fputs("usage_usec 1500\nuser_usec 1000\nsystem_usec 500\n", f);
    fclose(f);
    pid_t pg = 424242; /* no real group: only the registration can find us */
    rl_proc_sample_by_cgroup(pg, procs, 0, cpu);
    rl_proc_sample s;
    assert_int_equal(rl_proc_group_sample(pg, &s), RL_OK);
    assert_int_equal(s.nprocs, 1);
    assert_true(s.rss_bytes > 0);
    assert_int_equal(s.cpu_ns, 1500000);
    f = fopen(cpu, "w");
    fputs("123456789\n", f);
    fclose(f);
    assert_int_equal(rl_proc_group_sample(pg, &s), RL_OK);
    assert_int_equal(s.cpu_ns, 123456789);
    rl_proc_sample_by_cgroup(0, NULL, 0, NULL);
    assert_int_equal(rl_proc_group_sample(pg, &s), RL_ENOTFOUND);
    unlink(procs);
    unlink(cpu);
    rmdir(dir);
}

/* ---- servers: the readiness line ---- */

static int start_sh_server(rl_proc *p, const char *script, int64_t ready_ms, char *addr, size_t addrlen, char *err,
                           size_t errlen)
{
    const char *argv[] = {"/bin/sh", "-c", script, NULL};
    rl_proc_options o = {.argv = argv};
    return rl_proc_start_server(p, &o, ready_ms, addr, addrlen, err, errlen);
}

static void readiness_line_gives_the_address(void **state)
{
    (void)state;
    rl_proc p;
    char addr[64], err[256];
    /* A log line before the readiness line, and a CR after the address. */
    int rc =
        start_sh_server(&p, "echo 'starting up' >&2; printf 'srv listening on 127.0.0.1:4242\\r\\n'; exec sleep 30",
                        5000, addr, sizeof addr, err, sizeof err);
    assert_int_equal(rc, RL_OK);
    assert_string_equal(addr, "127.0.0.1:4242");
    rl_proc_stop(&p, 1000);
    rl_proc_fini(&p);
}

static void server_that_exits_first_reports_its_output(void **state)
{
    (void)state;
    rl_proc p;
    char addr[64], err[256];
    int rc = start_sh_server(&p, "echo 'cannot bind: boom' >&2; exit 3", 5000, addr, sizeof addr, err, sizeof err);
    assert_int_equal(rc, RL_ECHILD);
    assert_non_null(strstr(err, "exited before its readiness line"));
    assert_non_null(strstr(err, "cannot bind: boom"));
    assert_null(strchr(err, '\n'));
    rl_proc_stop(&p, 1000);
    rl_proc_fini(&p);
}

static void silent_server_times_out(void **state)
{
    (void)state;
    rl_proc p;
    char addr[64], err[256];
    int64_t t0 = rl_now_ns();
    int rc = start_sh_server(&p, "exec sleep 30", 300, addr, sizeof addr, err, sizeof err);
    assert_int_equal(rc, RL_ETIMEOUT);
    assert_true(rl_now_ns() - t0 >= 300 * RL_NS_PER_MS);
    assert_non_null(strstr(err, "no readiness line"));
    rl_proc_stop(&p, 1000);
    rl_proc_fini(&p);
}

static void address_too_long_is_refused(void **state)
{
    (void)state;
    rl_proc p;
    char addr[8], err[256];
    int rc = start_sh_server(&p, "echo 'srv listening on 127.0.0.1:4242'; exec sleep 30", 5000, addr, sizeof addr, err,
                             sizeof err);
    assert_int_equal(rc, RL_EINVAL);
    rl_proc_stop(&p, 1000);
    rl_proc_fini(&p);
}

/* A registered PID namespace counts every process in it, also one that
 * left the process group with setsid, and not the unshare outside it.
 * Needs root for the PID namespace. */
static void pidns_sample_counts_the_whole_namespace(void **state)
{
    (void)state;
    if (geteuid() != 0)
        skip();
    rl_proc p;
    const char *argv[] = {"/usr/bin/unshare",
                          "--pid",
                          "--fork",
                          "--kill-child",
                          "--",
                          "/bin/sh",
                          "-c",
                          "setsid sleep 30 & exec sleep 30",
                          NULL};
    rl_proc_options o = {.argv = argv};
    assert_int_equal(rl_proc_spawn(&p, &o), RL_OK);
    struct stat mine, ns;
    assert_int_equal(stat("/proc/self/ns/pid", &mine), 0);
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/ns/pid_for_children", (long)p.pid);
    rl_proc_sample s = {0};
    int64_t until = rl_now_ns() + 10 * RL_NS_PER_SEC;
    bool seen = false;
    while (!seen && rl_now_ns() < until) {
        if (stat(path, &ns) == 0 && ns.st_ino != mine.st_ino) {
            rl_proc_sample_by_pidns(p.pid, ns.st_ino, p.pid);
            /* Both processes may be caught at the start of their exec, when
             * the new image has no page yet (a fresh-clone make test read
             * 0 bytes once): the sum is waited for as the count is. */
            seen = rl_proc_group_sample(p.pid, &s) == RL_OK && s.nprocs == 2 && s.rss_bytes > 0;
        }
        if (!seen) {
            struct timespec ts = {0, 10 * RL_NS_PER_MS};
            nanosleep(&ts, NULL);
        }
    }
    assert_true(seen);
    assert_true(s.rss_bytes > 0);
    rl_proc_sample_by_cgroup(0, NULL, 0, NULL);
    rl_proc_stop(&p, 0);
    rl_proc_fini(&p);
}

/* The peak only rises: a sample of this test's own group raises a zero
 * peak, never lowers a larger one, and a group that is gone leaves it. */
static void peak_sample_only_rises(void **state)
{
    (void)state;
    rl_proc_peak p = {getpgrp(), 0};
    rl_proc_peak_sample(&p);
    assert_true(p.peak_rss > 0);
    p.peak_rss = UINT64_MAX;
    rl_proc_peak_sample(&p);
    assert_true(p.peak_rss == UINT64_MAX);
    rl_proc_peak gone = {0x3ffffff0, 7};
    rl_proc_peak_sample(&gone);
    assert_true(gone.peak_rss == 7);
}

/* CPU time this process has used, in ns. */
static int64_t own_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* This process spins for 30 ms of CPU: its group's run time grows by that
 * much at least; wait time never goes back. No group: RL_ENOTFOUND. */
static void sched_of_a_real_group(void **state)
{
    (void)state;
    int64_t run_a = -1, wait_a = -1, run_b = -1, wait_b = -1;
    assert_int_equal(rl_proc_group_sched(getpgrp(), &run_a, &wait_a), RL_OK);
    assert_true(run_a > 0);
    assert_true(wait_a >= 0);
    int64_t c0 = own_cpu_ns();
    int64_t until = rl_now_ns() + 10 * RL_NS_PER_SEC; /* bounded on a busy machine */
    volatile uint64_t x = 0;
    while (own_cpu_ns() - c0 < 30 * RL_NS_PER_MS && rl_now_ns() < until)
        x += 1;
    assert_true(own_cpu_ns() - c0 >= 30 * RL_NS_PER_MS);
    assert_int_equal(rl_proc_group_sched(getpgrp(), &run_b, &wait_b), RL_OK);
    assert_true(run_b - run_a >= 25 * RL_NS_PER_MS); /* schedstat and the CPU clock round differently */
    assert_true(wait_b >= wait_a);
    assert_int_equal(rl_proc_group_sched(-5, &run_b, &wait_b), RL_ENOTFOUND);
}

/* A registered cgroup's members are the group for the scheduler's account
 * too: a submission's process that left its group with setsid still has
 * its wait counted. The member list names this process under a group id
 * that exists nowhere else; unregistered, the same id has no member. */
static void sched_counts_a_registered_cgroup(void **state)
{
    (void)state;
    char dir[] = "/tmp/relaylab-proc-test-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char procs[64];
    snprintf(procs, sizeof procs, "%s/cgroup.procs", dir);
    FILE *f = fopen(procs, "w");
    assert_non_null(f);
    fprintf(f, "%ld\n", (long)getpid());
    fclose(f);
    pid_t pg = 424242; /* no real group: only the registration can find us */
    int64_t run = -1, wait = -1, own_run = -1, own_wait = -1;
    assert_int_equal(rl_proc_group_sched(pg, &run, &wait), RL_ENOTFOUND);
    rl_proc_sample_by_cgroup(pg, procs, 0, NULL);
    assert_int_equal(rl_proc_group_sched(pg, &run, &wait), RL_OK);
    assert_int_equal(rl_proc_group_sched(getpgrp(), &own_run, &own_wait), RL_OK);
    assert_true(run > 0);
    assert_true(run <= own_run); /* this process alone, read first */
    rl_proc_sample_by_cgroup(0, NULL, 0, NULL);
    assert_int_equal(rl_proc_group_sched(pg, &run, &wait), RL_ENOTFOUND);
    unlink(procs);
    rmdir(dir);
}

/* A child whose command name holds ") Z 1 1 (" still reads as itself: the
 * fields are counted from the last ')'. Names that are not pids are refused. */
static void stat_ids_read_past_a_hostile_name(void **state)
{
    (void)state;
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    pid_t kid = fork();
    assert_true(kid >= 0);
    if (kid == 0) {
        prctl(PR_SET_NAME, ") Z 1 1 (", 0, 0, 0);
        (void)!write(ready[1], "x", 1);
        pause();
        _exit(0);
    }
    char c;
    assert_int_equal(read(ready[0], &c, 1), 1);
    char name[16], st = 0;
    pid_t ppid = 0, pgrp = 0;
    snprintf(name, sizeof name, "%d", (int)kid);
    assert_int_equal(rl_proc_stat_ids(name, &st, &ppid, &pgrp), RL_OK);
    assert_true(st != 'Z');
    assert_int_equal(ppid, getpid());
    assert_int_equal(pgrp, getpgrp());
    kill(kid, SIGKILL);
    assert_int_equal(waitpid(kid, NULL, 0), kid);
    close(ready[0]);
    close(ready[1]);
    assert_int_equal(rl_proc_stat_ids("self", &st, &ppid, &pgrp), RL_ENOTFOUND);
    assert_int_equal(rl_proc_stat_ids("", &st, &ppid, &pgrp), RL_ENOTFOUND);
    assert_int_equal(rl_proc_stat_ids("-1", &st, &ppid, &pgrp), RL_ENOTFOUND);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sched_of_a_real_group),
        cmocka_unit_test(sched_counts_a_registered_cgroup),
        cmocka_unit_test(stat_ids_read_past_a_hostile_name),
        cmocka_unit_test(child_leads_its_own_group),
        cmocka_unit_test(stop_kills_grandchildren),
        cmocka_unit_test(sigterm_ignored_then_sigkill),
        cmocka_unit_test(exit_status_and_signal_are_told_apart),
        cmocka_unit_test(failed_exec_is_status_127),
        cmocka_unit_test(flood_is_capped_and_counted),
        cmocka_unit_test(capture_keeps_head_and_tail),
        cmocka_unit_test(output_is_made_printable),
        cmocka_unit_test(group_sample_sees_rss_and_cpu),
        cmocka_unit_test(group_sample_counts_open_files),
        cmocka_unit_test(early_signal_never_runs_the_parents_handler),
        cmocka_unit_test(escaped_process_is_reaped),
        cmocka_unit_test(signal_all_reaches_live_groups),
        cmocka_unit_test(environment_is_added),
        cmocka_unit_test(data_limit_stops_a_big_allocation),
        cmocka_unit_test(cgroup_sample_reads_members_and_cpu_files),
        cmocka_unit_test(readiness_line_gives_the_address),
        cmocka_unit_test(server_that_exits_first_reports_its_output),
        cmocka_unit_test(silent_server_times_out),
        cmocka_unit_test(address_too_long_is_refused),
        cmocka_unit_test(pidns_sample_counts_the_whole_namespace),
        cmocka_unit_test(peak_sample_only_rises),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
