/* driver: what the driver's own files share (run.c, submission.c,
 * baselines.c) and no exercise may see: the run's context behind the
 * opaque gr_ctx, one baseline and one submission instance as the driver
 * keeps them, and the flag a signal to the grader sets.
 *
 * Exercises reach all of this only through run.h's accessors; unit tests of
 * the driver may include this header to build a context by hand. */
#ifndef GR_DRIVER_H
#define GR_DRIVER_H

#include "rl_proc.h"
#include "rl_wait_tally.h"
#include "run.h"
#include "sandbox.h"
#include "watchdog.h"

#include <grpc/grpc.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

/* Set by the grader's SIGINT/SIGTERM/SIGHUP handler (run.c), which has
 * already killed every child group: every wait of the driver ends on it. */
extern volatile sig_atomic_t gr_driver_interrupted;

/* A scenario run's bound (the driver's watchdog, run.c): its own waits
 * end it long before (the longest rule-bound run is about 15 s); the
 * watchdog only catches a grader bug or a gRPC call that never returns. */
#define GR_WATCHDOG_MS 60000

/* Whether |id| is one of the comma-separated ids of |only| (NULL: all). */
bool gr_selected(const char *only, const char *id);

/* Runs scenario |sc| of |ex| |opt->runs| times into |o| (the worst run's
 * verdict, feedback, output and figure; its wall time and CPU), in this
 * process, which must have started gRPC. */
void gr_run_outcome(const gr_exercise *ex, const gr_scenario *sc, const gr_options *opt, gr_outcome *o);

/* Removes the private folders (relaylab-grader-PID-*) of process |pid|, a
 * lane's worker that died before its runs' teardowns could. */
void gr_remove_private_dirs_of(pid_t pid);

/* One of the run's baselines. */
typedef struct gr_baseline {
    rl_proc proc;
    bool running;            /* |proc| was spawned and is not stopped yet */
    int port;                /* its TCP port, kept across a restart */
    char addr[64];           /* "127.0.0.1:PORT", what the submission is given */
    char observer_addr[192]; /* "unix:PRIVATE_DIR/observer-I.sock" */
    grpc_channel *ch;        /* to |observer_addr|; NULL when not running */
    bool held;               /* |held_fd| holds |port| (rl_tcp_hold) while the
                              * baseline is stopped or restarting, so that no
                              * other program is handed it meanwhile */
    int held_fd;
} gr_baseline;

/* One instance of the submission. */
typedef struct gr_instance {
    int index;
    rl_proc proc;
    bool have; /* |proc| was spawned and is not stopped yet */
    char addr[64];
    int port;
    int port_clashes; /* starts abandoned because another process held the port */
    grpc_channel *ch;
    /* The scenario signalled it (gr_signal_submission): its exit is
     * what the scenario asked for, not a crash. */
    bool signalled;
    int64_t signal_ns; /* when, CLOCK_MONOTONIC */
    /* Its group's CPU wait since then, thread by thread (valid while
     * |tallied|; freed by gr_submission_stop). */
    rl_wait_tally signal_wait;
    bool tallied;
    /* Its sandbox (opt->sandbox), valid while |sandboxed|. */
    gr_sandbox_run sb;
    bool sandboxed;
    bool killed_at_memory_limit; /* the grader ended a start thrashing at it */
} gr_instance;

struct gr_ctx {
    const gr_exercise *ex;
    const gr_scenario *sc;
    const gr_options *opt;
    int run_index;
    char tag[160];

    /* The run's baselines, ex->baselines of them. Each serves the Observer
     * to the grader alone on a unix socket in the grader's private folder
     * (0700) for this run; |private_dir| is empty when none was made. */
    gr_baseline baselines[GR_MAX_BASELINES];
    int nbaselines;
    char private_dir[128];

    /* The instances of the submission, ex->instances of them (command
     * exercises); the single-instance accessors mean instance 0. */
    gr_instance subs[GR_MAX_INSTANCES];
    int ninstances;

    /* Tags the grader sent in this run (gr_note_tag). */
    char **tags;
    size_t ntags, captags;

    /* The exercise's world (ex->world), started before the submission,
     * and the variable it gives the submission. */
    void *world;
    bool world_started;
    const char *world_env;

    /* Holds the groups above while they may be killed: each is published
     * right after its spawn and released before its leader is reaped. */
    gr_watchdog wd;
};

#endif
