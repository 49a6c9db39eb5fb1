/* ex_driver_test: an exercise for the grader's own tests, not for students.
 * It runs what the next labs build on through the whole driver, sandbox
 * included: a run with two baselines, each observed on its own private
 * channel, and the submission given both (RELAYLAB_BASELINES); and a
 * scenario that sends the submission SIGTERM and judges its exit; and
 * (driver-test-instances) two instances of the submission, one replaced on
 * its own port after SIGTERM, as a rolling restart does; and
 * (driver-test-lanes) scenarios in lanes (lanes.h): two that can pass only
 * if they run at the same time, each out of the other's network reach, one
 * whose worker dies, one after another in a lane. Found only with
 * GR_TEST_EXERCISES_ENV set (exercise.h): never listed, and in no rubric (a
 * test gives its own --rubric). */
#include "exercise.h"
#include "process.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_probe.h"
#include "rl_tcp.h"
#include "run.h"
#include "scenario.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BASELINES 2
/* Enough Process calls that a relay spreading them in turn reaches both. */
#define CALLS   4
#define CALL_MS 5000
/* How long after SIGTERM the submission may take to exit. */
#define SIGTERM_WITHIN_MS 2000

/* Work records on baseline |i| for calls the grader sent, in *works. */
static int count_works(gr_ctx *ctx, int i, int *works, gr_scenario_result *out)
{
    Relaylab__ObserveReply *obs = NULL;
    int rc = rl_observe(gr_baseline_channel(ctx, i), "", GR_SCENARIO_OBSERVER_MS, &obs);
    if (rc != RL_OK)
        return gr_scenario_observer_failed(out, rc);
    *works = 0;
    for (size_t k = 0; k < obs->n_calls; k++)
        if (strcmp(obs->calls[k]->method, "Work") == 0 && gr_tag_sent(ctx, obs->calls[k]->tag))
            (*works)++;
    gr_scenario_free_obs(&obs);
    return 0;
}

/* baselines: CALLS Process calls; each baseline must have served some of
 * their Work, and together all of it. */
static int baselines(gr_ctx *ctx, gr_scenario_result *out)
{
    int n = gr_baseline_count(ctx);
    if (n != BASELINES)
        return gr_result(out, GR_ERROR, "the run has %d baselines, not the exercise's %d", n, BASELINES);
    if (strcmp(gr_baseline_addr(ctx, 0), gr_baseline_addr(ctx, 1)) == 0)
        return gr_result(out, GR_ERROR, "both baselines listen on %s", gr_baseline_addr(ctx, 0));
    for (int i = 0; i < CALLS; i++) {
        char tag[200], why[256];
        snprintf(tag, sizeof tag, "%s.%d", gr_tag(ctx), i);
        rl_probe_call c;
        int rc = gr_process_start(ctx, &c, tag, 0, 1, 1, rl_now_ns() + CALL_MS * RL_NS_PER_MS, out) ||
                 gr_scenario_wait(&c, out) || gr_scenario_crash_after(ctx, &c, "during Process", out);
        bool ok = !rc && gr_process_reply_ok(&c, tag, why, sizeof why);
        rl_probe_call_fini(&c);
        if (rc)
            return 0;
        if (!ok)
            return gr_result(out, GR_FAIL, "Process %d of %d: %s", i + 1, CALLS, why);
    }
    int works[BASELINES];
    for (int i = 0; i < BASELINES; i++)
        if (count_works(ctx, i, &works[i], out))
            return 0;
    bool spread = works[0] > 0 && works[1] > 0 && works[0] + works[1] == CALLS;
    return gr_result(out, spread ? GR_PASS : GR_FAIL,
                     "of %d Process calls, baseline 1 (%s) saw %d Work and baseline 2 (%s) saw %d", CALLS,
                     gr_baseline_addr(ctx, 0), works[0], gr_baseline_addr(ctx, 1), works[1]);
}

/* sigterm: SIGTERM to the submission, which must exit on its own within
 * SIGTERM_WITHIN_MS; the feedback says how, when and what it printed. */
static int sigterm(gr_ctx *ctx, gr_scenario_result *out)
{
    int rc = gr_signal_submission(ctx, SIGTERM);
    if (rc == RL_ECHILD && gr_crash_check(ctx, 0, "before the grader sent SIGTERM", out))
        return 0;
    if (rc != RL_OK)
        return gr_result(out, GR_ERROR, "cannot send the submission SIGTERM: %s", rl_strerror(rc));
    gr_exit ex;
    gr_await_submission_exit(ctx, SIGTERM_WITHIN_MS, true, &ex);
    const char *sep = ex.output[0] ? "; last output: " : "; it printed nothing";
    if (ex.exited)
        return gr_result(out, GR_PASS, "after SIGTERM it %s after %lld ms%s%s", ex.how, (long long)ex.ms, sep,
                         ex.output);
    return gr_result(out, GR_FAIL, "it did not exit within %d ms of SIGTERM (%s after %lld ms)%s%s", SIGTERM_WITHIN_MS,
                     ex.how, (long long)ex.ms, sep, ex.output);
}

/* One Process call on instance |i|; 0 when it answered, else a verdict. */
static int process_on(gr_ctx *ctx, int i, const char *suffix, gr_scenario_result *out)
{
    char tag[200], why[256];
    snprintf(tag, sizeof tag, "%s.%s", gr_tag(ctx), suffix);
    Relaylab__ProcessRequest req = RELAYLAB__PROCESS_REQUEST__INIT;
    req.tag = tag;
    req.steps = 1;
    req.step_ms = 1;
    gr_note_tag(ctx, tag);
    rl_probe_call c;
    grpc_channel *ch = gr_submission_channel_at(ctx, i);
    if (!ch)
        return gr_result(out, GR_ERROR, "instance %d has no channel", i + 1);
    int rc = gr_scenario_call(&c, ch, "/relaylab.Relay/Process", &req.base, rl_now_ns() + CALL_MS * RL_NS_PER_MS, out);
    bool ok = !rc && gr_process_reply_ok(&c, tag, why, sizeof why);
    rl_probe_call_fini(&c);
    if (!rc && !ok)
        rc = gr_result(out, GR_FAIL, "Process on instance %d (%s): %s", i + 1, gr_submission_addr_at(ctx, i), why);
    return rc;
}

/* restart: both instances answer on their own ports; instance 1 gets
 * SIGTERM, exits, and its replacement answers on the same port. */
static int restart(gr_ctx *ctx, gr_scenario_result *out)
{
    if (gr_instance_count(ctx) != 2)
        return gr_result(out, GR_ERROR, "the run has %d instances, not 2", gr_instance_count(ctx));
    char first[64];
    snprintf(first, sizeof first, "%s", gr_submission_addr_at(ctx, 0));
    if (strcmp(first, gr_submission_addr_at(ctx, 1)) == 0)
        return gr_result(out, GR_ERROR, "both instances listen on %s", first);
    if (process_on(ctx, 0, "a", out) || process_on(ctx, 1, "b", out))
        return 0;
    if (gr_signal_submission_at(ctx, 0, SIGTERM) != RL_OK)
        return gr_result(out, GR_ERROR, "cannot send instance 1 SIGTERM");
    gr_exit ex;
    if (gr_await_submission_exit_at(ctx, 0, SIGTERM_WITHIN_MS, true, &ex) != RL_OK)
        return gr_result(out, GR_FAIL, "instance 1 did not exit within %d ms of SIGTERM (%s)", SIGTERM_WITHIN_MS,
                         ex.how);
    if (gr_submission_alive_at(ctx, 0) || !gr_submission_alive_at(ctx, 1))
        return gr_result(out, GR_ERROR, "the wrong instance exited");
    if (gr_restart_submission(ctx, 0, out) != RL_OK)
        return 0;
    if (strcmp(first, gr_submission_addr_at(ctx, 0)) != 0)
        return gr_result(out, GR_ERROR, "the replacement listens on %s, not %s", gr_submission_addr_at(ctx, 0), first);
    if (process_on(ctx, 0, "c", out) || process_on(ctx, 1, "d", out))
        return 0;
    return gr_result(out, GR_PASS, "instance 1 %s after %lld ms; its replacement answered on %s, instance 2 on %s",
                     ex.how, (long long)ex.ms, first, gr_submission_addr_at(ctx, 1));
}

static const gr_scenario instance_scenarios[] = {
    {"restart", "two instances, one replaced on its port", restart, 0, 0},
};

const gr_exercise gr_ex_driver_test_instances = {
    .name = "driver-test-instances",
    .summary = "the grader's own test of its driver (several instances, a replacement)",
    .kind = GR_SUBMISSION_COMMAND,
    .baselines = 1,
    .instances = 2,
    .scenarios = instance_scenarios,
    .nscenarios = sizeof instance_scenarios / sizeof instance_scenarios[0],
};

static const gr_scenario scenarios[] = {
    {"baselines", "two baselines, both given to the submission", baselines, 0, 0},
    {"sigterm", "exits on its own after SIGTERM", sigterm, 0, 0},
};

const gr_exercise gr_ex_driver_test = {
    .name = "driver-test",
    .summary = "the grader's own test of its driver (several baselines, signals)",
    .kind = GR_SUBMISSION_COMMAND,
    .baselines = BASELINES,
    .scenarios = scenarios,
    .nscenarios = sizeof scenarios / sizeof scenarios[0],
};

/* ---- driver-test-lanes ---- */

/* The folder the lanes' scenarios meet in, given to the grader (never to
 * the submission) by the test. */
#define LANES_DIR_ENV "RELAYLAB_LANES_TEST_DIR"
/* How long a scenario waits for its partner in the other lane; the test
 * that expects no partner gives a shorter wait in this variable. */
#define MEET_MS     20000
#define MEET_MS_ENV "RELAYLAB_LANES_TEST_MEET_MS"

/* Writes |text| to DIR/|name| whole (a rename), for the other lane. */
static int publish(const char *dir, const char *name, const char *text)
{
    char tmp[512], path[512];
    snprintf(tmp, sizeof tmp, "%s/.%s", dir, name);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(tmp, "we");
    if (!f)
        return RL_ESYS;
    bool ok = fputs(text, f) >= 0;
    ok = fclose(f) == 0 && ok;
    return ok && rename(tmp, path) == 0 ? RL_OK : RL_ESYS;
}

/* Waits for DIR/|name| until |until| and reads it into |buf|. */
static bool await_file(const char *dir, const char *name, int64_t until, char *buf, size_t len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    for (;;) {
        FILE *f = fopen(path, "re");
        if (f) {
            size_t n = fread(buf, 1, len - 1, f);
            buf[n] = '\0';
            fclose(f);
            return true;
        }
        if (rl_now_ns() > until)
            return false;
        rl_sleep_ms(10, NULL);
    }
}

/* Publishes this run's baseline address as |me| and waits for |other|'s:
 * both appear only when the two scenarios run at the same time. Then
 * connects to the other's baseline, which must be out of reach (each lane
 * has a network of its own), and waits for the other to have tried too,
 * so that both baselines still run while either tries. */
static int meet(gr_ctx *ctx, const char *me, const char *other, gr_scenario_result *out)
{
    const char *dir = getenv(LANES_DIR_ENV);
    if (!dir || !*dir)
        return gr_result(out, GR_ERROR, "%s is not set", LANES_DIR_ENV);
    const char *ms_env = getenv(MEET_MS_ENV);
    long ms = ms_env && atol(ms_env) > 0 ? atol(ms_env) : MEET_MS;
    int64_t until = rl_now_ns() + (int64_t)ms * RL_NS_PER_MS;
    char theirs[64], done[64], name[64];
    if (publish(dir, me, gr_baseline_addr(ctx, 0)) != RL_OK)
        return gr_result(out, GR_ERROR, "cannot write to %s: %s", dir, strerror(errno));
    if (!await_file(dir, other, until, theirs, sizeof theirs))
        return gr_result(out, GR_FAIL, "%s never ran beside %s (%ld ms)", other, me, ms);
    rl_tcp_answer answer = RL_TCP_NO_ANSWER;
    int port = rl_tcp_port_of(theirs);
    if (port < 0 || rl_tcp_probe(port, 1000, &answer) != RL_OK)
        return gr_result(out, GR_ERROR, "cannot probe %s's baseline at '%s'", other, theirs);
    snprintf(name, sizeof name, "%s-done", me);
    if (publish(dir, name, "") != RL_OK)
        return gr_result(out, GR_ERROR, "cannot write to %s: %s", dir, strerror(errno));
    snprintf(name, sizeof name, "%s-done", other);
    if (!await_file(dir, name, until, done, sizeof done))
        return gr_result(out, GR_ERROR, "%s never finished its probe", other);
    if (answer == RL_TCP_ACCEPTED)
        return gr_result(out, GR_FAIL, "%s met %s in pid %ld, and reached %s's baseline at %s from its lane", me, other,
                         (long)getpid(), other, theirs);
    return gr_result(out, GR_PASS, "%s met %s in pid %ld; %s's baseline at %s is out of its reach", me, other,
                     (long)getpid(), other, theirs);
}

static int meet_a(gr_ctx *ctx, gr_scenario_result *out)
{
    return meet(ctx, "a", "b", out);
}

static int meet_b(gr_ctx *ctx, gr_scenario_result *out)
{
    return meet(ctx, "b", "a", out);
}

/* The worker dies as a grader bug would, with a submission running: the
 * grader reports the scenario ERROR and leaves nothing of it behind. */
static int worker_dies(gr_ctx *ctx, gr_scenario_result *out)
{
    if (!gr_submission_alive(ctx))
        return gr_result(out, GR_ERROR, "the submission is not running");
    raise(SIGKILL);
    return gr_result(out, GR_ERROR, "still alive after SIGKILL");
}

/* Runs after meet-a in its lane: says which process it ran in. */
static int after_a(gr_ctx *ctx, gr_scenario_result *out)
{
    (void)ctx;
    return gr_result(out, GR_PASS, "after meet-a in pid %ld", (long)getpid());
}

static const gr_scenario lane_scenarios[] = {
    {"meet-a", "runs at the same time as meet-b", meet_a, 0, 0},
    {"meet-b", "runs at the same time as meet-a", meet_b, 0, 1},
    {"worker-dies", "its worker dies with the submission running", worker_dies, 0, 2},
    {"after-a", "runs after meet-a, in its lane", after_a, 0, 0},
};

const gr_exercise gr_ex_driver_test_lanes = {
    .name = "driver-test-lanes",
    .summary = "the grader's own test of its lanes (scenarios at once, a worker that dies)",
    .kind = GR_SUBMISSION_COMMAND,
    .baselines = 1,
    .scenarios = lane_scenarios,
    .nscenarios = sizeof lane_scenarios / sizeof lane_scenarios[0],
};
