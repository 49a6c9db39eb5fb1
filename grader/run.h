/* run: the grader's driver and the accessors a scenario uses.
 *
 * For every scenario run the driver starts fresh baselines (the exercise's
 * count, each in its own process group; a config exercise may leave them to
 * its scenarios, gr_restart_baseline) and (command submissions) a fresh
 * submission in its own process group, waits until the submission listens,
 * calls the scenario, then kills every group and every process that
 * escaped them. A scenario reaches what it needs only through
 * the gr_* accessors below, so exercises never touch processes. All
 * accessors are for the scenario's own thread; the driver owns every object
 * they return unless a comment says otherwise. */
#ifndef GR_RUN_H
#define GR_RUN_H

#include "exercise.h"

#include <grpc/grpc.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* ---- what the scenario talks to ---- */

/* "127.0.0.1:PORT" the submission was told to listen on (RELAYLAB_LISTEN).
 * NULL for config exercises. */
const char *gr_submission_addr(gr_ctx *ctx);

/* How many baselines this run has (the exercise's |baselines|). Baseline 0
 * is the one the submission is given as RELAYLAB_BASELINE; all of them, in
 * index order, are RELAYLAB_BASELINES ("HOST:PORT,HOST:PORT"). */
int gr_baseline_count(gr_ctx *ctx);

/* "127.0.0.1:PORT" of baseline |i| (0-based); NULL when there is no such
 * baseline or it is not running (a failed restart). */
const char *gr_baseline_addr(gr_ctx *ctx, int i);

/* A channel to the submission, created once it was READY, with
 * GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL so no connection is shared with another
 * scenario or channel. Owned by the driver, destroyed after the scenario.
 * NULL for config exercises. */
grpc_channel *gr_submission_channel(gr_ctx *ctx);

/* The process id of baseline |i| (the leader of its own process group)
 * while it runs, else 0. */
pid_t gr_baseline_pid(gr_ctx *ctx, int i);

/* A channel to baseline |i| through the grader's private unix socket (one
 * per baseline), the only place its Observer (records, Reset, faults)
 * answers; same isolation; owned by the driver. Recreated by
 * gr_restart_baseline. The submission knows only the TCP addresses,
 * where Observer refuses. NULL as for gr_baseline_addr. */
grpc_channel *gr_baseline_channel(gr_ctx *ctx, int i);

/* Creates a new channel to |target| with the local subchannel pool plus
 * |extra| (may be NULL; copied). The caller owns the result and destroys it
 * with grpc_channel_destroy before returning from the scenario. Never NULL
 * (an invalid config gives gRPC's lame channel). */
grpc_channel *gr_channel_create(gr_ctx *ctx, const char *target, const grpc_channel_args *extra);

/* The submitted file for config exercises (--submission FILE); NULL for
 * command exercises. */
const char *gr_config_path(gr_ctx *ctx);

/* --world FILE and --variant SEED as given (NULL when not), for config
 * exercises (config_check.c resolves the exercise's default world). */
const char *gr_world_path(gr_ctx *ctx);

/* The submission's folder given with --dir, or NULL. */
const char *gr_submission_dir(gr_ctx *ctx);

/* Config exercises: the folder the grader checked, held open (> 0), and
 * the config's path inside it; 0 and NULL when the config is read by its
 * path (gr_config_path) instead. */
int gr_submission_dir_fd(gr_ctx *ctx);
const char *gr_config_rel(gr_ctx *ctx);
const char *gr_variant(gr_ctx *ctx);

/* Config exercises: when the submission's folder was made for another
 * identity than the grading one (its .relaylab, rl_marker.h), the identity
 * it was made for ("" for none recorded) and the note that opens the
 * feedback; both NULL when they agree or there is no marker. */
const char *gr_made_for(gr_ctx *ctx);
const char *gr_identity_note(gr_ctx *ctx);

/* Kills baseline |i| and starts a new one on the same port (so a running
 * submission keeps finding it) with |extra_argv| appended to its command line
 * (NULL-terminated; may be NULL), waits for its readiness line and recreates
 * its channel (a pointer obtained before is invalid afterwards). A baseline
 * that never ran (the exercise's baselines_by_scenario) starts on a port of
 * its own, which later restarts keep. Returns 0,
 * or RL_EINVAL (no baseline |i|) / RL_ECHILD / RL_ETIMEOUT with a reason in
 * |err|. */
int gr_restart_baseline(gr_ctx *ctx, int i, const char *const *extra_argv, char *err, size_t errlen);

/* Stops baseline |i| (SIGTERM, then SIGKILL after a short grace) and
 * leaves its port closed, as a backend that went away: connects to it are
 * refused, and the port is held (rl_tcp_hold) so that no other program is
 * handed it meanwhile. gr_restart_baseline starts it again on the same port. Its
 * address and channel are NULL meanwhile, and its exit is not judged.
 * Returns 0, or RL_EINVAL when there is no baseline |i|. */
int gr_stop_baseline(gr_ctx *ctx, int i);

/* The exercise's world of this run (gr_exercise.world's *world), NULL
 * when it has none. */
void *gr_world(gr_ctx *ctx);

/* The scenario being run (for a world's start, which sets itself up per
 * scenario). */
const gr_scenario *gr_current_scenario(gr_ctx *ctx);

/* The folder of the kit's programs (--bin), e.g. for bin/tunnel. */
const char *gr_bin_dir(gr_ctx *ctx);

/* The run's private folder (0700, the grader's alone), for unix sockets
 * only the grader may reach; "" when the run has none. */
const char *gr_private_dir(gr_ctx *ctx);

/* ---- the submission process ---- */

/* True while the submission's leader process has not exited. Reaps it when it
 * has (so a later call keeps answering false). Always false for config
 * exercises. */
bool gr_submission_alive(gr_ctx *ctx);

/* Waits up to |wait_ms| for the submission's leader to exit (use a short wait
 * after an UNAVAILABLE status: the socket closes a moment before the exit is
 * visible). Returns true if it is dead, with "CRASH (SIGSEGV)"-style wording
 * in |how| ("killed by SIGSEGV" or "exited with status 3"). */
bool gr_submission_died(gr_ctx *ctx, int64_t wait_ms, char *how, size_t howlen);

/* Convenience for scenarios: if the submission is dead (waiting up to
 * |wait_ms|), fills |out| with GR_CRASH, "how it died" and |what| (what the
 * scenario was doing, e.g. "during Process") plus the tail of its output,
 * and returns true. */
bool gr_crash_check(gr_ctx *ctx, int64_t wait_ms, const char *what, gr_scenario_result *out);

/* The submission's process-group id (== its leader's pid), for sampling its
 * RSS and CPU time with rl_proc_group_sample; 0 for config exercises. The
 * group is killed after the scenario: never signal it yourself. */
pid_t gr_submission_pgid(gr_ctx *ctx);

/* The last of what the submission printed (stdout and stderr, as
 * rl_proc_output_tail keeps it) into |buf|, NUL-terminated: untrusted text,
 * to be searched, never shown as it is. Returns the bytes it ever wrote. A
 * judge that names a starter's untouched TODO reads it (coverage). */
size_t gr_submission_output_tail(gr_ctx *ctx, char *buf, size_t len);

/* ---- stopping the submission (graceful-shutdown scenarios) ---- */

/* Sends |sig| to the submission's main process: the program its command
 * started (the driver has the shell exec a simple command; a compound
 * command's shell is what gets it, so such a command must end in `exec
 * SERVER`); in the sandbox, the command the jail runs. Only that process,
 * not its group: a platform stopping a server signals it, and the server
 * decides what its children get. Remembers the instant, for
 * gr_await_submission_exit, and that the scenario asked for the
 * exit: from now on the submission's death is the scenario's to judge, and
 * the driver no longer calls it a crash. Returns 0, RL_ECHILD when it had
 * already exited, RL_EINVAL for a config exercise or a bad signal number,
 * RL_ESYS (errno) when the signal could not be sent. */
int gr_signal_submission(gr_ctx *ctx, int sig);

/* How the submission ended after gr_signal_submission. */
typedef struct gr_exit {
    bool exited;      /* it had exited on its own when the wait ended */
    bool killed;      /* it had not, and the grader SIGKILLed its group */
    int status;       /* its exit status; -1 when a signal ended it or it runs */
    int signal;       /* the signal that ended it (the sandbox's 128+N read
                       * as N), 0 when none */
    int64_t ms;       /* from the signal (or the wait's start, when none was
                       * sent) to the exit, or to the wait's end when it
                       * did not exit */
    char how[192];    /* "exited with status 0", "was killed by SIGTERM",
                       * "still running" */
    char output[480]; /* the last lines it printed, on one line */
} gr_exit;

/* What the submission's group and baseline 0 have spent waiting for a CPU
 * so far (rl_proc_group_sched), in ns; -1 when either cannot be read. Two
 * readings around a judged interval give the chain's CPU wait over it (a
 * lower bound: threads that ended take theirs along), which a judge of a
 * late event subtracts before it blames the submission. */
int64_t gr_chain_wait_ns(gr_ctx *ctx);

/* The CPU wait between two readings |a| and |b| (of gr_chain_wait_ns or
 * any such count, in ns), in ms: -1 when either was unreadable (-1), else
 * never below 0 (a thread that ended between them took its wait along,
 * so the difference is a lower bound). */
int64_t gr_waited_ms(int64_t a, int64_t b);

/* A submission still running at its exit deadline that waited for a CPU
 * since the signal is given that wait again, once, if it was at least the
 * first and at most the second (ms): gr_await_submission_exit. */
#define GR_EXIT_STARVED_MIN_MS 50
#define GR_EXIT_STARVED_MAX_MS 5000

/* Waits until |within_ms| after the last gr_signal_submission (after
 * now when none was sent) for the submission's main process to exit, and
 * fills |out|. A process still running then that waited for a CPU since
 * the signal gets that wait again, once (GR_EXIT_STARVED_MAX_MS at most):
 * a busy machine may delay an exit, never turn it into a kill. When it has
 * not exited by then and |kill_at_deadline|, the grader SIGKILLs its whole
 * group (out->killed) and waits for that. The
 * wait ends early when the grader is interrupted. Returns 0 when it exited
 * on its own, RL_ETIMEOUT when it did not (|out| filled either way), or
 * RL_EINVAL for a config exercise. */
int gr_await_submission_exit(gr_ctx *ctx, int64_t within_ms, bool kill_at_deadline, gr_exit *out);

/* ---- several instances (gr_exercise.instances) ----
 *
 * An exercise may run its submission as several instances, each in its own
 * process group (and sandbox) on its own port. Every accessor above means
 * instance 0; these take the index, 0 <= i < gr_instance_count. */

/* How many instances this run started (0 for config exercises). */
int gr_instance_count(gr_ctx *ctx);

/* Instance |i|'s address and the driver's channel to it, as
 * gr_submission_addr/_channel; NULL when |i| is out of range or the
 * instance is not running. */
const char *gr_submission_addr_at(gr_ctx *ctx, int i);
grpc_channel *gr_submission_channel_at(gr_ctx *ctx, int i);

/* gr_submission_alive, gr_signal_submission and
 * gr_await_submission_exit for instance |i|. */
bool gr_submission_alive_at(gr_ctx *ctx, int i);
int gr_signal_submission_at(gr_ctx *ctx, int i, int sig);
int gr_await_submission_exit_at(gr_ctx *ctx, int i, int64_t within_ms, bool kill_at_deadline, gr_exit *out);

/* Replaces instance |i|: stops what is left of it (SIGTERM, then SIGKILL
 * after 2 s; normally the scenario has already signalled it and seen it
 * exit), then starts a fresh one on the same port, in a fresh sandbox, and
 * waits for it to listen, as a platform replaces a pod behind a fixed
 * address. Channels to it obtained before are invalid afterwards. Returns
 * 0 once it listens, or RL_ECHILD with |out| holding the verdict of the
 * failed start (NOT-READY, CRASH or ERROR, naming the instance), or
 * RL_EINVAL for an index out of range. */
int gr_restart_submission(gr_ctx *ctx, int i, gr_scenario_result *out);

/* ---- bookkeeping ---- */

/* A tag unique to this scenario run, "EXERCISE.SCENARIO.RUN.PID"; stable
 * for the whole run. Use it in every request so the scenario judges only the
 * baseline records it caused. */
const char *gr_tag(gr_ctx *ctx);

/* Remembers |tag| (copied) as one the grader itself sent in this run. A
 * scenario that reads the baseline's records must count every record of
 * the run, not only those with its tag: a submission can put its calls under
 * any tag. Records with a tag the grader never sent belong to whichever call
 * is being judged (gr_process_observe does this). */
void gr_note_tag(gr_ctx *ctx, const char *tag);

/* True when |tag| was noted by gr_note_tag in this run. */
bool gr_tag_sent(gr_ctx *ctx, const char *tag);

/* 1-based index of this run (--runs N) and the total. */
int gr_run_index(gr_ctx *ctx);
int gr_run_count(gr_ctx *ctx);

/* True once the grader was asked to stop (SIGINT/SIGTERM/SIGHUP) or the
 * scenario's watchdog fired; a scenario looping on observations should give
 * up then (the driver records ERROR "interrupted"). */
bool gr_interrupted(gr_ctx *ctx);

/* gr_result and gr_feedback_append, which fill a scenario's verdict, are in
 * verdict.h (through exercise.h). */

/* ---- the driver (main.c) ---- */

typedef struct gr_options {
    const char *submission;                /* command, or config file path */
    const char *bin_dir;                   /* folder with bin/baseline */
    const char *only;                      /* comma-separated scenario ids, or NULL: all */
    int runs;                              /* >= 1 */
    int64_t ready_timeout_ms;              /* submission readiness bound */
    int64_t data_limit_mb;                 /* RLIMIT_DATA of the submission; 0: none */
    bool progress;                         /* progress lines on stderr */
    const char *dir;                       /* --dir: the submission's folder (a config file must lie
                                            * in it), or NULL: the config file's own folder */
    const char *world;                     /* config exercises: --world FILE, or NULL: the exercise's own */
    const char *variant;                   /* config exercises: --variant SEED, or NULL: the world's default */
    const char *made_for;                  /* config exercises: the marker's other identity, or NULL (gr_made_for) */
    const char *identity_note;             /* the note that goes with it, or NULL */
    const char *node_path;                 /* "NODE_PATH=DIR": the kit's Node packages (build/node-packages),
                                            * for a submission without node_modules; or NULL */
    int dir_fd;                            /* the submission's folder, held open since it was
                                            * checked (rl_file_open_dir; > 0), or 0: none */
    const char *config_rel;                /* config exercises: the config's path inside
                                            * |dir_fd|'s folder, read beneath it; NULL: none */
    int parallel;                          /* lanes of scenarios at once (lanes.h): 0 every
                                            * lane the exercise has, 1 one scenario at a time */
    const struct gr_sandbox_view *sandbox; /* command submissions run in the
                                            * sandbox with this view (sandbox.h), once
                                            * gr_sandbox_enter succeeded; NULL: unsandboxed */
} gr_options;

/* The outcome of one scenario over all its runs. */
typedef struct gr_outcome {
    const gr_scenario *scenario;
    int runs, passed;               /* runs done, runs that passed */
    gr_verdict verdict;             /* the worst run's */
    char feedback[GR_FEEDBACK_MAX]; /* the worst run's feedback */
    char output[1024];              /* the submission's last output, when the
                                     * worst run was CRASH or NOT-READY */
    double seconds;                 /* wall time over all runs */
    double cpu_grader_s;            /* CPU the grader itself used over all runs
                                     * (its scenario, the worlds it hosts) */
    double cpu_others_s;            /* CPU of the processes it started and
                                     * reaped: baselines, the submission, a
                                     * world's servers (RUSAGE_CHILDREN; the
                                     * grader is their subreaper) */
    gr_figure figure;               /* the worst run's picture (figure.h) */
} gr_outcome;

/* Checks that every comma-separated id of |only| (NULL: all) names a
 * scenario of |ex|: a typo must not silently grade nothing. Returns 0, or
 * RL_EINVAL with the message in |err|. */
int gr_check_only(const gr_exercise *ex, const char *only, char *err, size_t errlen);

/* Runs every selected scenario of |ex| |opt->runs| times, lanes at once
 * (lanes.h) unless opt->parallel is 1; starts and stops gRPC itself (call
 * it from a process that has not). |outcomes| has
 * room for ex->nscenarios entries; *noutcomes is set to the number filled
 * (scenarios not reached after an interruption are ERROR "interrupted").
 * Returns 0, or RL_EINVAL for an unknown --only id (message in |err|).
 * Everything else that goes wrong is a scenario's verdict (ERROR when it
 * is the grader's), never a return code. */
int gr_run_exercise(const gr_exercise *ex, const gr_options *opt, gr_outcome *outcomes, size_t *noutcomes, char *err,
                    size_t errlen);

/* Installs SIGINT/SIGTERM/SIGHUP handlers that kill every child group at
 * once and mark the run interrupted, and makes the grader a child subreaper
 * so escaped processes come back to it. Call once from main. */
int gr_install_guards(void);

/* True once an interrupting signal arrived. */
bool gr_was_interrupted(void);

#endif
