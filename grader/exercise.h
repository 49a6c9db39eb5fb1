/* exercise: what every graded exercise provides to the grader's driver.
 *
 * An exercise is a named list of scenarios. The driver (main.c, run.c) starts
 * fresh baselines (as many as the exercise asks for) and, for command
 * submissions, a fresh submission for every scenario, calls the scenario's
 * run function, and then kills every process group whatever happened. A
 * scenario judges only what it measured and reports a verdict with one line
 * of feedback that names the numbers and the likely mistake. Points come from the rubric file, never from code. */
#ifndef GR_EXERCISE_H
#define GR_EXERCISE_H

#include "verdict.h" /* gr_verdict, gr_scenario_result, gr_result: what a scenario returns */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gr_ctx gr_ctx; /* opaque; see run.h for accessors */

/* The most baselines one scenario run may have. */
#define GR_MAX_BASELINES 8
/* The most instances of a command submission one scenario run may have. */
#define GR_MAX_INSTANCES 4

typedef struct gr_scenario {
    const char *id;    /* rubric key, e.g. "shrinks" */
    const char *title; /* shown in the table */
    /* Runs the scenario against the running submission and baseline.
     * Returns GR_DECIDED (or 0) with *out filled, or a negative RL_E* code
     * when the grader itself failed (out->feedback then says why). */
    int (*run)(gr_ctx *ctx, gr_scenario_result *out);
    int instances; /* command submissions: instances this scenario needs,
                    * when not the exercise's (0: the exercise's) */
    int lane;      /* scenarios of one lane run one after another in table
                    * order, lanes at the same time (lanes.h); 0 for every
                    * scenario: one at a time. The exercise says beside its
                    * table why its lanes may share the machine */
} gr_scenario;

/* A world the exercise runs around a command submission that dials out
 * instead of listening (the coverage lab's agent): started for each
 * scenario run after the baselines and before the submission, which is
 * given |env|; the submission is ready once |ready| says so, instead of
 * when it listens; stopped after the submission. */
typedef struct gr_world_ops {
    /* Starts the run's world into *world. Sets *env to one "NAME=value"
     * string the submission gets (owned by the world, valid until stop).
     * Returns 0, or an RL_E* code with the reason in |err| (an ERROR
     * verdict: the grader's failure, never the submission's). */
    int (*start)(gr_ctx *ctx, void **world, const char **env, char *err, size_t errlen);
    /* True once the submission counts as started (polled every 20 ms). */
    bool (*ready)(void *world);
    /* What the submission failed to do when never ready, for NOT-READY
     * feedback: "opened no stream to RELAYLAB_TUNNEL". */
    const char *not_ready;
    /* Stops everything start made. Accepts what a failed start left. */
    void (*stop)(void *world);
} gr_world_ops;

typedef enum gr_submission_kind {
    GR_SUBMISSION_COMMAND, /* a shell command that starts a server */
    GR_SUBMISSION_CONFIG,  /* a channel config file */
} gr_submission_kind;

typedef struct gr_exercise {
    const char *name; /* "deadline", "cancel", "flow", "keepalive", "retry" */
    const char *summary;
    gr_submission_kind kind;
    int baselines;              /* fresh baselines each scenario run gets, 0..GR_MAX_BASELINES;
                                 * the submission is given the first as RELAYLAB_BASELINE
                                 * and all of them as RELAYLAB_BASELINES */
    bool baselines_by_scenario; /* config exercises whose scenarios start the
                                 * baselines they use themselves, each with the
                                 * config's server args (gr_restart_baseline): the
                                 * driver makes the slots and starts none, since a
                                 * start the scenario replaces, or never uses, is
                                 * CPU for nothing (bench/results/class.md) */
    int instances;              /* command submissions: instances started for each
                                 * scenario run, each on its own port, 1..GR_MAX_INSTANCES
                                 * (0 means 1); instance 0 is the one the single-instance
                                 * accessors and the measurements (RSS, CPU) see */
    const char *const *env;     /* "NAME=value" strings the submission is given
                                 * too (NULL-terminated, may be NULL): what the
                                 * exercise promises it, e.g. its grace period */
    const gr_scenario *scenarios;
    size_t nscenarios;
    const gr_world_ops *world; /* command submissions that dial out: their
                                * world (NULL: the submission listens) */
} gr_exercise;

/* The table of every exercise (exercises.c), NULL-terminated. */
extern const gr_exercise *const gr_exercises[];

/* Test hook: with GR_TEST_EXERCISES_ENV set (non-empty) in the
 * environment, gr_exercise_find also finds the grader's own test exercises
 * (ex_driver_test.c: "driver-test", "driver-test-instances",
 * "driver-test-lanes"; ex_cancel.c: "cancel-missed";
 * ex_shutdown.c: "shutdown-late"), which
 * are in no table and no rubric.
 * Never set it for real grading. */
#define GR_TEST_EXERCISES_ENV "RELAYLAB_GRADER_TEST_EXERCISES"

/* The exercise called |name| (a test exercise only under the hook), or
 * NULL. */
const gr_exercise *gr_exercise_find(const char *name);

#endif
