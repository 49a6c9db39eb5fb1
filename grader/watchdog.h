/* watchdog: a timer thread that SIGKILLs the process groups it was handed
 * when a scenario runs past its bound, so the scenario's calls fail at once.
 *
 * The groups it may kill are published in slots under its mutex, and the
 * kill happens under the same mutex: once gr_watchdog_release returns, the
 * watchdog will never signal that group, so the driver releases a group
 * before it reaps the group's leader (after which the id could be reused).
 * A slot never holds 0, 1, a negative id, or the grader's own pid or group:
 * kill(-0) and kill(-1) would hit the grader itself or every process. */
#ifndef GR_WATCHDOG_H
#define GR_WATCHDOG_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Slots: one per instance of the submission (instance i is in slot
 * GR_WATCHDOG_SUBMISSION + i, for i < GR_WATCHDOG_MAX_INSTANCES), then one
 * per baseline (baseline i in slot GR_WATCHDOG_BASELINE + i, for i <
 * GR_WATCHDOG_MAX_BASELINES). */
#define GR_WATCHDOG_MAX_INSTANCES 4
#define GR_WATCHDOG_MAX_BASELINES 8
enum {
    GR_WATCHDOG_SUBMISSION,
    GR_WATCHDOG_BASELINE = GR_WATCHDOG_SUBMISSION + GR_WATCHDOG_MAX_INSTANCES,
    GR_WATCHDOG_NSLOTS = GR_WATCHDOG_BASELINE + GR_WATCHDOG_MAX_BASELINES
};

typedef struct gr_watchdog {
    pthread_mutex_t mu;               /* guards groups, armed, stop */
    pthread_cond_t cond;              /* wakes the thread on disarm */
    pid_t groups[GR_WATCHDOG_NSLOTS]; /* > 1 and not ours, or 0: empty */
    pthread_t thread;
    bool armed;        /* the thread runs (join it) */
    bool stop;         /* disarm asked the thread to return */
    int64_t until_ns;  /* CLOCK_MONOTONIC instant to fire */
    atomic_bool fired; /* set once, before the kills */
} gr_watchdog;

/* Prepares |w| (caller memory) with every slot empty and no thread. */
void gr_watchdog_init(gr_watchdog *w);

/* True if |pgid| may ever be signalled as a group: > 1 and neither the
 * grader's pid nor its process group. */
bool gr_watchdog_killable(pid_t pgid);

/* Publishes |pgid| in |slot|. The caller guarantees the group's leader is
 * not reaped until gr_watchdog_release(|slot|) returned. Returns 0, or
 * RL_EINVAL (slot left empty) for a slot out of range or an id that
 * gr_watchdog_killable refuses. */
int gr_watchdog_guard(gr_watchdog *w, int slot, pid_t pgid);

/* Empties |slot|. When it returns, no kill of the old group is in flight
 * and none will follow. */
void gr_watchdog_release(gr_watchdog *w, int slot);

/* Starts the thread: |ms| from now it sets fired and SIGKILLs every group
 * published at that moment, unless disarmed first. Returns 0 or RL_ESYS. */
int gr_watchdog_arm(gr_watchdog *w, int64_t ms);

/* Stops and joins the thread if armed. Safe to call when not armed. */
void gr_watchdog_disarm(gr_watchdog *w);

/* True once the watchdog fired (any thread may ask). */
bool gr_watchdog_fired(gr_watchdog *w);

/* Disarms and releases the mutex and condition. */
void gr_watchdog_fini(gr_watchdog *w);

#endif
