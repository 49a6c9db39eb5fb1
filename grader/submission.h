/* submission: the student's server as the driver starts, watches, stops
 * and replaces it, and the wording of the verdicts its start earns.
 *
 * Each instance runs its command through /bin/sh (exec'd, so the program
 * itself leads its process group) or the sandbox's jail, on a port of its
 * own, under limits. A start ends ready (it listens and a gRPC connection
 * became READY, or its world says so), or with NOT-READY, CRASH or ERROR;
 * another process on its port is nobody's verdict: the start is repeated
 * on a fresh port. What was observed maps to a verdict through one pure
 * function (gr_submission_start_verdict), so the wording is tested without
 * a process. The scenario-side accessors are declared in run.h; these are
 * the driver's own (run.c) and its tests'. */
#ifndef GR_SUBMISSION_H
#define GR_SUBMISSION_H

#include "driver.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Starts instance |s| (s->index set, s->sb prepared when sandboxed) on a
 * fresh port, again on another one while another process holds it (at
 * most a few times). Returns GR_PASS once it is ready, else the verdict to
 * record with |out| filled. */
gr_verdict gr_submission_start(gr_ctx *ctx, gr_instance *s, gr_scenario_result *out);

/* Stops instance |s| (SIGTERM, SIGKILL after the 2 s grace) and destroys
 * its channel. What a well-behaved server would not have needed (the
 * SIGKILL, megabytes of output, starts lost to port clashes) is appended
 * to |res|' feedback as a note; the verdict stays the scenario's own. Safe
 * on an instance never started. */
void gr_submission_stop(gr_ctx *ctx, gr_instance *s, gr_scenario_result *res);

/* The first instance that died without the scenario asking it to (a
 * signal), or NULL. */
gr_instance *gr_submission_dead(gr_ctx *ctx);

/* Instance |i| while it was started and not stopped, else NULL. */
gr_instance *gr_started_instance(gr_ctx *ctx, int i);

/* How instance |s| ended, into |how|, naming the sandbox's memory limit
 * when its cgroup killed it (a SIGKILL alone would not say why). */
void gr_submission_describe(gr_ctx *ctx, gr_instance *s, char *how, size_t howlen);

/* Fills |out| with the CRASH verdict for dead instance |s|: how it ended,
 * |what| it was doing ("during the scenario") and its last output. */
void gr_submission_crash_feedback(gr_ctx *ctx, gr_instance *s, const char *what, gr_scenario_result *out);

/* ---- how the submission is started (pure but for the limits) ---- */

/* The shell command for submission command |sub|: a simple command is
 * exec'd by the shell ("exec CMD"), so the submission itself leads the
 * group and its exit status or signal reaches the grader unaltered; one
 * that begins with VAR=value words goes through env(1) ("exec env CMD"),
 * since `exec` takes none; a compound one (; & | ( ) ` newline) or one
 * that already begins with "exec " is left as it is. The caller frees the
 * result. */
char *gr_submission_command(const char *sub);

/* Everything one spawn of the submission is given, and the buffers
 * |po| points into (so the struct must stay where it was built). */
typedef struct gr_launch {
    char env_listen[96];                            /* RELAYLAB_LISTEN=127.0.0.1:PORT */
    char env_baseline[96];                          /* RELAYLAB_BASELINE=... */
    char env_baselines[32 + GR_MAX_BASELINES * 64]; /* RELAYLAB_BASELINES=A,B */
    const char *env[8 + 17];                        /* unsandboxed: added to the grader's environment */
    const char *sandbox_env[8 + 17];                /* sandboxed: the whole environment */
    char *cmd;                                      /* gr_submission_command's, owned */
    const char *plain_argv[4];                      /* /bin/sh -c cmd */
    char **sandbox_argv;                            /* the jail's (gr_sandbox_argv), owned; NULL unsandboxed */
    rl_proc_limits lim;
    rl_proc_options po; /* what rl_proc_spawn takes */
} gr_launch;

/* Builds |l| for instance |s| on s->addr: the address variables, the
 * kit's NODE_PATH, the exercise's variables and its world's, in that
 * order; the argv (through the sandbox when ctx->opt->sandbox) and the
 * limits. Release with gr_submission_launch_fini. */
void gr_submission_launch_init(gr_ctx *ctx, gr_instance *s, gr_launch *l);
void gr_submission_launch_fini(gr_launch *l);

/* ---- the memory limit during a start ---- */

/* A start that keeps hitting the sandbox's memory limit can thrash for
 * many seconds (no swap: the cgroup evicts the program's own code pages
 * and reads them back) before the kernel's OOM killer ends it, so its
 * verdict would depend on the machine. One second of it ends the start,
 * as the OOM killer would have. "Of it": new hits with no pause longer
 * than 250 ms, since on a loaded machine a thrashing program is not
 * scheduled in every 20 ms sample and then adds no hit there. A start
 * that runs out of time while still hitting the limit (a hit within its
 * last second) is ended at the limit too: the limit is what kept it from
 * listening, and a loaded machine can spread its hits too thin to count
 * as thrashing. */
typedef struct gr_limit_watch {
    uint64_t seen_hits;              /* the cgroup's hit counter, last read */
    int64_t hitting_since, last_hit; /* CLOCK_MONOTONIC ns; 0: not hitting, none */
} gr_limit_watch;

/* Takes the hit counter |hits| read at |now_ns| into |w| (zeroed before
 * the first). Returns true once the start has thrashed for a second. */
bool gr_limit_watch_sample(gr_limit_watch *w, uint64_t hits, int64_t now_ns);

/* True when a hit came within the second before |now_ns|. */
bool gr_limit_watch_still_hitting(const gr_limit_watch *w, int64_t now_ns);

/* ---- the verdict of a start that did not become ready ---- */

/* What the driver saw of a start that did not become ready. */
typedef struct gr_start_seen {
    const char *who;             /* "the submission", "instance 2 of the submission" */
    const char *addr;            /* "127.0.0.1:PORT" it was told to listen on */
    bool world;                  /* it dials out: ready when its world says so */
    const char *world_not_ready; /* the world's wording of what it failed to do */
    bool interrupted;            /* the grader was asked to stop meanwhile */
    bool exited;                 /* its leader exited (or was killed) */
    int death_signal;            /* the signal that ended it, 0 for an exit */
    const char *how;             /* how it ended (when |exited|): "exited with status 3" */
    bool accepts;                /* something accepted TCP on its port */
    double seconds;              /* how long the grader waited */
    const char *lines;           /* its last output on one line, "" when none */
} gr_start_seen;

/* The verdict for |seen|, with its feedback in |out|: ERROR when
 * interrupted; CRASH when a signal ended it, NOT-READY when it exited;
 * NOT-READY when it still ran (did not listen, or listened without
 * HTTP/2, or its world never saw it). Returns the verdict written. */
gr_verdict gr_submission_start_verdict(const gr_start_seen *seen, gr_scenario_result *out);

/* Appends to |how| (the exit as rl_proc_describe words it) why the
 * memory limit ended it: the grader ended a start thrashing at it
 * (|thrashed|), or the sandbox's cgroup killed it (|oom_killed|). */
void gr_submission_describe_limit(char *how, size_t howlen, bool thrashed, bool oom_killed, long long limit_mb);

#endif
