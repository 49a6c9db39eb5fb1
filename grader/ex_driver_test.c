/* ex_driver_test: an exercise for the grader's own tests, not for students.
 * It runs what the next labs build on through the whole driver, sandbox
 * included: a run with two baselines, each observed on its own private
 * channel, and the submission given both (RELAYLAB_BASELINES); and a
 * scenario that sends the submission SIGTERM and judges its exit; and
 * (driver-test-instances) two instances of the submission, one replaced on
 * its own port after SIGTERM, as a rolling restart does. Found only with
 * RL_TEST_EXERCISES_ENV set (exercise.h): never listed, and in no rubric (a
 * test gives its own --rubric). */
#include "exercise.h"
#include "process.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_probe.h"
#include "run.h"
#include "scenario.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#define BASELINES 2
/* Enough Process calls that a relay spreading them in turn reaches both. */
#define CALLS 4
#define CALL_MS 5000
/* How long after SIGTERM the submission may take to exit. */
#define SIGTERM_WITHIN_MS 2000

/* Work records on baseline |i| for calls the grader sent, in *works. */
static int count_works(rl_grade_ctx *ctx, int i, int *works, rl_scenario_result *out)
{
    Relaylab__ObserveReply *obs = NULL;
    int rc = rl_observe(rl_grade_baseline_channel(ctx, i), "", RL_SCENARIO_OBSERVER_MS, &obs);
    if (rc != RL_OK)
        return rl_scenario_observer_failed(out, rc);
    *works = 0;
    for (size_t k = 0; k < obs->n_calls; k++)
        if (strcmp(obs->calls[k]->method, "Work") == 0 && rl_grade_tag_sent(ctx, obs->calls[k]->tag))
            (*works)++;
    rl_scenario_free_obs(&obs);
    return 0;
}

/* baselines: CALLS Process calls; each baseline must have served some of
 * their Work, and together all of it. */
static int baselines(rl_grade_ctx *ctx, rl_scenario_result *out)
{
    int n = rl_grade_baseline_count(ctx);
    if (n != BASELINES)
        return rl_grade_result(out, RL_ERROR, "the run has %d baselines, not the exercise's %d", n, BASELINES);
    if (strcmp(rl_grade_baseline_addr(ctx, 0), rl_grade_baseline_addr(ctx, 1)) == 0)
        return rl_grade_result(out, RL_ERROR, "both baselines listen on %s", rl_grade_baseline_addr(ctx, 0));
    for (int i = 0; i < CALLS; i++) {
        char tag[200], why[256];
        snprintf(tag, sizeof tag, "%s.%d", rl_grade_tag(ctx), i);
        rl_probe_call c;
        int rc = rl_process_start(ctx, &c, tag, 0, 1, 1, rl_now_ns() + CALL_MS * RL_NS_PER_MS, out) ||
                 rl_scenario_wait(&c, out) || rl_scenario_crash_after(ctx, &c, "during Process", out);
        bool ok = !rc && rl_process_reply_ok(&c, tag, why, sizeof why);
        rl_probe_call_fini(&c);
        if (rc)
            return 0;
        if (!ok)
            return rl_grade_result(out, RL_FAIL, "Process %d of %d: %s", i + 1, CALLS, why);
    }
    int works[BASELINES];
    for (int i = 0; i < BASELINES; i++)
        if (count_works(ctx, i, &works[i], out))
            return 0;
    bool spread = works[0] > 0 && works[1] > 0 && works[0] + works[1] == CALLS;
    return rl_grade_result(out, spread ? RL_PASS : RL_FAIL,
                           "of %d Process calls, baseline 1 (%s) saw %d Work and baseline 2 (%s) saw %d", CALLS,
                           rl_grade_baseline_addr(ctx, 0), works[0], rl_grade_baseline_addr(ctx, 1), works[1]);
}

/* sigterm: SIGTERM to the submission, which must exit on its own within
 * SIGTERM_WITHIN_MS; the feedback says how, when and what it printed. */
static int sigterm(rl_grade_ctx *ctx, rl_scenario_result *out)
{
    int rc = rl_grade_signal_submission(ctx, SIGTERM);
    if (rc == RL_ECHILD && rl_grade_crash_check(ctx, 0, "before the grader sent SIGTERM", out))
        return 0;
    if (rc != RL_OK)
        return rl_grade_result(out, RL_ERROR, "cannot send the submission SIGTERM: %s", rl_strerror(rc));
    rl_grade_exit ex;
    rl_grade_await_submission_exit(ctx, SIGTERM_WITHIN_MS, true, &ex);
    const char *sep = ex.output[0] ? "; last output: " : "; it printed nothing";
    if (ex.exited)
        return rl_grade_result(out, RL_PASS, "after SIGTERM it %s after %lld ms%s%s", ex.how, (long long)ex.ms, sep,
                               ex.output);
    return rl_grade_result(out, RL_FAIL, "it did not exit within %d ms of SIGTERM (%s after %lld ms)%s%s",
                           SIGTERM_WITHIN_MS, ex.how, (long long)ex.ms, sep, ex.output);
}

/* One Process call on instance |i|; 0 when it answered, else a verdict. */
static int process_on(rl_grade_ctx *ctx, int i, const char *suffix, rl_scenario_result *out)
{
    char tag[200], why[256];
    snprintf(tag, sizeof tag, "%s.%s", rl_grade_tag(ctx), suffix);
    Relaylab__ProcessRequest req = RELAYLAB__PROCESS_REQUEST__INIT;
    req.tag = tag;
    req.steps = 1;
    req.step_ms = 1;
    rl_grade_note_tag(ctx, tag);
    rl_probe_call c;
    grpc_channel *ch = rl_grade_submission_channel_at(ctx, i);
    if (!ch)
        return rl_scenario_decide(out, RL_ERROR, "instance %d has no channel", i + 1);
    int rc = rl_scenario_call(&c, ch, "/relaylab.Relay/Process", &req.base, rl_now_ns() + CALL_MS * RL_NS_PER_MS, out);
    bool ok = !rc && rl_process_reply_ok(&c, tag, why, sizeof why);
    rl_probe_call_fini(&c);
    if (!rc && !ok)
        rc = rl_scenario_decide(out, RL_FAIL, "Process on instance %d (%s): %s", i + 1,
                                rl_grade_submission_addr_at(ctx, i), why);
    return rc;
}

/* restart: both instances answer on their own ports; instance 1 gets
 * SIGTERM, exits, and its replacement answers on the same port. */
static int restart(rl_grade_ctx *ctx, rl_scenario_result *out)
{
    if (rl_grade_instance_count(ctx) != 2)
        return rl_grade_result(out, RL_ERROR, "the run has %d instances, not 2", rl_grade_instance_count(ctx));
    char first[64];
    snprintf(first, sizeof first, "%s", rl_grade_submission_addr_at(ctx, 0));
    if (strcmp(first, rl_grade_submission_addr_at(ctx, 1)) == 0)
        return rl_grade_result(out, RL_ERROR, "both instances listen on %s", first);
    if (process_on(ctx, 0, "a", out) || process_on(ctx, 1, "b", out))
        return 0;
    if (rl_grade_signal_submission_at(ctx, 0, SIGTERM) != RL_OK)
        return rl_grade_result(out, RL_ERROR, "cannot send instance 1 SIGTERM");
    rl_grade_exit ex;
    if (rl_grade_await_submission_exit_at(ctx, 0, SIGTERM_WITHIN_MS, true, &ex) != RL_OK)
        return rl_grade_result(out, RL_FAIL, "instance 1 did not exit within %d ms of SIGTERM (%s)", SIGTERM_WITHIN_MS,
                               ex.how);
    if (rl_grade_submission_alive_at(ctx, 0) || !rl_grade_submission_alive_at(ctx, 1))
        return rl_grade_result(out, RL_ERROR, "the wrong instance exited");
    if (rl_grade_restart_submission(ctx, 0, out) != RL_OK)
        return 0;
    if (strcmp(first, rl_grade_submission_addr_at(ctx, 0)) != 0)
        return rl_grade_result(out, RL_ERROR, "the replacement listens on %s, not %s", rl_grade_submission_addr_at(ctx, 0),
                               first);
    if (process_on(ctx, 0, "c", out) || process_on(ctx, 1, "d", out))
        return 0;
    return rl_grade_result(out, RL_PASS, "instance 1 %s after %lld ms; its replacement answered on %s, instance 2 on %s",
                           ex.how, (long long)ex.ms, first, rl_grade_submission_addr_at(ctx, 1));
}

static const rl_scenario instance_scenarios[] = {
    {"restart", "two instances, one replaced on its port", restart, 0},
};

const rl_exercise rl_ex_driver_test_instances = {
    .name = "driver-test-instances",
    .summary = "the grader's own test of its driver (several instances, a replacement)",
    .kind = RL_SUBMISSION_COMMAND,
    .baselines = 1,
    .instances = 2,
    .scenarios = instance_scenarios,
    .nscenarios = sizeof instance_scenarios / sizeof instance_scenarios[0],
};

static const rl_scenario scenarios[] = {
    {"baselines", "two baselines, both given to the submission", baselines, 0},
    {"sigterm", "exits on its own after SIGTERM", sigterm, 0},
};

const rl_exercise rl_ex_driver_test = {
    .name = "driver-test",
    .summary = "the grader's own test of its driver (several baselines, signals)",
    .kind = RL_SUBMISSION_COMMAND,
    .baselines = BASELINES,
    .scenarios = scenarios,
    .nscenarios = sizeof scenarios / sizeof scenarios[0],
};
