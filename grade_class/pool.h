/* pool: runs grader processes, at most N at once, each in its own process
 * group with its output in a log file, each bounded by a time limit (a
 * backstop: the grader bounds itself), and stops them all when the batch is
 * interrupted. The grader writes its results.json even when stopped by
 * SIGTERM, so a stop is always SIGTERM first, SIGKILL only after a grace. */
#ifndef GC_POOL_H
#define GC_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef enum gc_job_state { GC_JOB_PENDING, GC_JOB_RUNNING, GC_JOB_DONE, GC_JOB_SKIPPED } gc_job_state;

typedef struct gc_job {
    const char *argv[40]; /* NULL-terminated; strings owned by the caller */
    char cwd[4096];       /* the folder the grader starts in, as messages name it */
    int cwd_fd;           /* that folder held open since it was checked (> 0): the
                           * grader starts in it whatever |cwd| names by then; owned
                           * by the caller; 0: enter |cwd| by name */
    char log[4200];       /* its stdout and stderr go here (truncated first) */
    int64_t timeout_ms;   /* after this, SIGTERM, then SIGKILL after the grace */
    void *user;           /* the caller's */
    /* Set by the pool: */
    gc_job_state state;
    pid_t pid; /* == its process group while it runs */
    int64_t started_ns, ended_ns;
    int64_t stop_ns;  /* when it was sent SIGTERM (time limit or
                       * interrupt), 0 before: SIGKILL at + the grace */
    int status;       /* exit status, or 128 + the signal that ended it */
    bool timed_out;   /* the pool stopped it at its time limit */
    bool interrupted; /* the pool stopped it because the batch was interrupted */
} gc_job;

/* Called in the pool's thread when |job| ends, and about once a second with
 * |job| NULL (for a progress line). */
typedef void (*gc_pool_event_fn)(gc_job *job, void *arg);

/* Installs SIGINT/SIGTERM/SIGHUP handlers that mark the batch interrupted,
 * and makes this process a child subreaper so that a process escaping a
 * grader comes back to the batch and is killed at the end. Returns 0 or
 * RL_ESYS. */
int gc_pool_install_guards(void);

/* Raises this process's soft RLIMIT_NOFILE to its hard limit (planned
 * gradings hold their folders open); each grader is started with the soft
 * limit as it was before. */
void gc_pool_raise_nofile(void);

/* True once SIGINT, SIGTERM or SIGHUP arrived. */
bool gc_pool_interrupted(void);

/* Runs the PENDING jobs of |jobs| (|n|), |max_running| at once, in order.
 * Returns when every started job has ended; once interrupted it starts no
 * more and stops the running ones (SIGTERM to each group, SIGKILL after
 * |grace_ms|); the jobs not started stay PENDING. Then kills and reaps any
 * process left that was re-parented to the batch. Returns 0, or RL_ESYS
 * when a grader could not be started at all (fork failed). */
int gc_pool_run(gc_job *jobs, size_t n, int max_running, int64_t grace_ms, gc_pool_event_fn ev, void *arg);

#endif
