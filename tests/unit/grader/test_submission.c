/* Unit tests for the submission's start, without a process: the shell
 * command (exec rewrite, VAR=value through env(1), compound commands left
 * alone), the environment and argv a spawn is given, and the verdict a
 * start that never became ready earns for each thing the driver can
 * observe (interrupted, killed by a signal, exited, silent, TCP without
 * HTTP/2, a world that never saw it), worded as the driver words it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "submission.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void command_of(const char *sub, const char *want)
{
    char *cmd = gr_submission_command(sub);
    assert_string_equal(cmd, want);
    free(cmd);
}

static void simple_command_is_execd(void **state)
{
    (void)state;
    command_of("./bin/relay --mistake huge-timeout", "exec ./bin/relay --mistake huge-timeout");
    command_of("python3 relay.py", "exec python3 relay.py");
}

static void assignment_goes_through_env(void **state)
{
    (void)state;
    command_of("GRPC_VERBOSITY=debug python3 relay.py", "exec env GRPC_VERBOSITY=debug python3 relay.py");
    command_of("  _X1=2 node relay.js", "exec env   _X1=2 node relay.js");
    /* Not assignment words: a digit first, no name, '=' after a space. */
    command_of("1X=2 relay", "exec 1X=2 relay");
    command_of("=x relay", "exec =x relay");
    command_of("relay --opt=x", "exec relay --opt=x");
}

static void compound_command_is_left_alone(void **state)
{
    (void)state;
    command_of("cd src; exec python3 relay.py", "cd src; exec python3 relay.py");
    command_of("a && b", "a && b");
    command_of("a | b", "a | b");
    command_of("(relay)", "(relay)");
    command_of("echo `id`", "echo `id`");
    command_of("a\nb", "a\nb");
    command_of("exec python3 relay.py", "exec python3 relay.py");
}

static void launch_gives_addresses_then_exercise_then_world(void **state)
{
    (void)state;
    static const char *const ex_env[] = {"RELAYLAB_GRACE_MS=3000", NULL};
    gr_exercise ex = {.name = "t", .kind = GR_SUBMISSION_COMMAND, .env = ex_env};
    gr_options opt = {.submission = "A=1 python3 relay.py", .data_limit_mb = 512, .node_path = "NODE_PATH=/kit/np"};
    static gr_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.ex = &ex;
    ctx.opt = &opt;
    ctx.world_env = "RELAYLAB_TUNNEL=unix:/x";
    ctx.nbaselines = 2;
    snprintf(ctx.baselines[0].addr, sizeof ctx.baselines[0].addr, "127.0.0.1:1001");
    snprintf(ctx.baselines[1].addr, sizeof ctx.baselines[1].addr, "127.0.0.1:1002");
    gr_instance *s = &ctx.subs[0];
    snprintf(s->addr, sizeof s->addr, "127.0.0.1:2000");
    static gr_launch l;
    gr_submission_launch_init(&ctx, s, &l);
    const char *want[] = {"RELAYLAB_LISTEN=127.0.0.1:2000",
                          "RELAYLAB_BASELINE=127.0.0.1:1001",
                          "RELAYLAB_BASELINES=127.0.0.1:1001,127.0.0.1:1002",
                          "NODE_PATH=/kit/np",
                          "RELAYLAB_GRACE_MS=3000",
                          "RELAYLAB_TUNNEL=unix:/x",
                          NULL};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        if (want[i])
            assert_string_equal(l.po.setenv[i], want[i]);
        else
            assert_null(l.po.setenv[i]);
    }
    /* Unsandboxed: the grader's environment plus these, through /bin/sh. */
    assert_false(l.po.clean_env);
    assert_string_equal(l.po.argv[0], "/bin/sh");
    assert_string_equal(l.po.argv[1], "-c");
    assert_string_equal(l.po.argv[2], "exec env A=1 python3 relay.py");
    assert_null(l.po.argv[3]);
    assert_true(l.po.kill_with_parent);
    assert_ptr_equal(l.po.limits, &l.lim);
    assert_int_equal(l.lim.data_bytes, (uint64_t)512 << 20);
    assert_true(l.lim.nproc > 0);
    /* The sandbox's environment holds the same variables and a fixed few. */
    assert_string_equal(l.sandbox_env[0], want[0]);
    assert_string_equal(l.sandbox_env[3], "PATH=/usr/local/bin:/usr/bin:/bin");
    assert_string_equal(l.sandbox_env[7], "NODE_PATH=/kit/np");
    assert_string_equal(l.sandbox_env[9], "RELAYLAB_TUNNEL=unix:/x");
    assert_null(l.sandbox_env[10]);
    gr_submission_launch_fini(&l);
    assert_null(l.cmd);
}

static void launch_without_baselines_gives_empty_addresses(void **state)
{
    (void)state;
    gr_exercise ex = {.name = "t", .kind = GR_SUBMISSION_COMMAND};
    gr_options opt = {.submission = "relay"};
    static gr_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.ex = &ex;
    ctx.opt = &opt;
    snprintf(ctx.subs[0].addr, sizeof ctx.subs[0].addr, "127.0.0.1:3");
    static gr_launch l;
    gr_submission_launch_init(&ctx, &ctx.subs[0], &l);
    assert_string_equal(l.po.setenv[1], "RELAYLAB_BASELINE=");
    assert_string_equal(l.po.setenv[2], "RELAYLAB_BASELINES=");
    assert_null(l.po.setenv[3]);
    gr_submission_launch_fini(&l);
}

/* A start seen with the common fields filled. */
static gr_start_seen seen_base(void)
{
    return (gr_start_seen){
        .who = "the submission", .addr = "127.0.0.1:5000", .lines = "relay starting...", .seconds = 15.04, .how = ""};
}

static void interrupted_start_is_an_error(void **state)
{
    (void)state;
    gr_scenario_result out;
    gr_start_seen s = seen_base();
    s.interrupted = true;
    s.exited = true;
    s.death_signal = SIGKILL;
    assert_int_equal(gr_submission_start_verdict(&s, &out), GR_ERROR);
    assert_int_equal(out.verdict, GR_ERROR);
    assert_string_equal(out.feedback, "interrupted while waiting for the submission to listen");
}

static void signal_before_listening_is_a_crash(void **state)
{
    (void)state;
    gr_scenario_result out;
    gr_start_seen s = seen_base();
    s.exited = true;
    s.death_signal = SIGSEGV;
    s.how = "was killed by SIGSEGV";
    s.lines = "";
    assert_int_equal(gr_submission_start_verdict(&s, &out), GR_CRASH);
    assert_string_equal(
        out.feedback, "the submission was killed by SIGSEGV before it listened on 127.0.0.1:5000; it printed nothing");
}

static void exit_before_listening_is_not_ready(void **state)
{
    (void)state;
    gr_scenario_result out;
    gr_start_seen s = seen_base();
    s.who = "instance 2 of the submission";
    s.exited = true;
    s.how = "exited with status 127";
    s.lines = "/bin/sh: 1: exec: exit: not found";
    assert_int_equal(gr_submission_start_verdict(&s, &out), GR_NOT_READY);
    assert_string_equal(out.feedback, "instance 2 of the submission exited with status 127 before it listened on "
                                      "127.0.0.1:5000; last output: /bin/sh: 1: exec: exit: not found");
}

static void silent_submission_is_not_ready(void **state)
{
    (void)state;
    gr_scenario_result out;
    gr_start_seen s = seen_base();
    assert_int_equal(gr_submission_start_verdict(&s, &out), GR_NOT_READY);
    assert_string_equal(out.feedback,
                        "the submission did not listen on 127.0.0.1:5000 (RELAYLAB_LISTEN) within 15.0 s; "
                        "last output: relay starting...");
}

static void tcp_without_http2_is_not_ready(void **state)
{
    (void)state;
    gr_scenario_result out;
    gr_start_seen s = seen_base();
    s.accepts = true;
    assert_int_equal(gr_submission_start_verdict(&s, &out), GR_NOT_READY);
    assert_string_equal(out.feedback, "the submission accepted TCP connections on 127.0.0.1:5000 but no gRPC (HTTP/2) "
                                      "connection became ready within 15.0 s; last output: relay starting...");
}

static void world_wording_replaces_the_address(void **state)
{
    (void)state;
    gr_scenario_result out;
    gr_start_seen s = seen_base();
    s.world = true;
    s.world_not_ready = "opened no stream to RELAYLAB_TUNNEL";
    assert_int_equal(gr_submission_start_verdict(&s, &out), GR_NOT_READY);
    assert_string_equal(
        out.feedback,
        "the submission opened no stream to RELAYLAB_TUNNEL within 15.0 s; last output: relay starting...");
    s.exited = true;
    s.death_signal = SIGABRT;
    s.how = "was killed by SIGABRT";
    assert_int_equal(gr_submission_start_verdict(&s, &out), GR_CRASH);
    assert_string_equal(out.feedback,
                        "the submission was killed by SIGABRT before it was ready (it opened no stream to "
                        "RELAYLAB_TUNNEL); last output: relay starting...");
}

static void memory_limit_is_named(void **state)
{
    (void)state;
    char how[192] = "was killed by SIGKILL";
    gr_submission_describe_limit(how, sizeof how, true, true, 1024);
    assert_string_equal(how, "was killed by SIGKILL (by the grader, after 1000 ms of hitting the sandbox's memory "
                             "limit of 1024 MiB)");
    snprintf(how, sizeof how, "was killed by SIGKILL");
    gr_submission_describe_limit(how, sizeof how, false, true, 256);
    assert_string_equal(how, "was killed by SIGKILL at the sandbox's memory limit of 256 MiB");
    snprintf(how, sizeof how, "exited with status 1");
    gr_submission_describe_limit(how, sizeof how, false, false, 256);
    assert_string_equal(how, "exited with status 1");
}

#define MS_NS INT64_C(1000000)

/* Hits in every 20 ms sample: a thrashing start, ended after a second. */
static void steady_hits_thrash_after_a_second(void **state)
{
    (void)state;
    gr_limit_watch w = {0};
    uint64_t hits = 0;
    int64_t t = 1000 * MS_NS;
    for (int i = 0; i < 49; i++, t += 20 * MS_NS)
        assert_false(gr_limit_watch_sample(&w, ++hits, t));
    assert_true(gr_limit_watch_sample(&w, ++hits, t + 20 * MS_NS));
}

/* A starved start: a hit every 400 ms (more than the gap) never counts as
 * thrashing, but it is still hitting the limit when its time runs out, so
 * it is ended at the limit, as on a quiet machine. */
static void sparse_hits_never_thrash_but_are_kept(void **state)
{
    (void)state;
    gr_limit_watch w = {0};
    uint64_t hits = 0;
    for (int64_t t = 1000 * MS_NS; t < 16000 * MS_NS; t += 20 * MS_NS) {
        if ((t / MS_NS) % 400 == 0)
            hits++;
        assert_false(gr_limit_watch_sample(&w, hits, t));
    }
    assert_true(gr_limit_watch_still_hitting(&w, 16000 * MS_NS));
}

/* Hits early in a slow start, none in its last 10 s: the limit is not what
 * held it at the end, so it stays NOT-READY. */
static void early_hits_are_not_still_hitting(void **state)
{
    (void)state;
    gr_limit_watch w = {0};
    for (int64_t t = 1000 * MS_NS; t < 16000 * MS_NS; t += 20 * MS_NS)
        gr_limit_watch_sample(&w, t < 5000 * MS_NS ? (uint64_t)((t / MS_NS) / 400) : 10, t);
    assert_false(gr_limit_watch_still_hitting(&w, 16000 * MS_NS));
}

/* No hit in 15 s: nothing to end it for. */
static void no_hits_leave_nothing(void **state)
{
    (void)state;
    gr_limit_watch w = {0};
    for (int64_t t = 1000 * MS_NS; t < 16000 * MS_NS; t += 20 * MS_NS)
        assert_false(gr_limit_watch_sample(&w, 0, t));
    assert_false(gr_limit_watch_still_hitting(&w, 16000 * MS_NS));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(simple_command_is_execd),
        cmocka_unit_test(assignment_goes_through_env),
        cmocka_unit_test(compound_command_is_left_alone),
        cmocka_unit_test(launch_gives_addresses_then_exercise_then_world),
        cmocka_unit_test(launch_without_baselines_gives_empty_addresses),
        cmocka_unit_test(interrupted_start_is_an_error),
        cmocka_unit_test(signal_before_listening_is_a_crash),
        cmocka_unit_test(exit_before_listening_is_not_ready),
        cmocka_unit_test(silent_submission_is_not_ready),
        cmocka_unit_test(tcp_without_http2_is_not_ready),
        cmocka_unit_test(world_wording_replaces_the_address),
        cmocka_unit_test(memory_limit_is_named),
        cmocka_unit_test(steady_hits_thrash_after_a_second),
        cmocka_unit_test(sparse_hits_never_thrash_but_are_kept),
        cmocka_unit_test(no_hits_leave_nothing),
        cmocka_unit_test(early_hits_are_not_still_hitting),
    };
    return cmocka_run_group_tests_name("submission", tests, NULL, NULL);
}
