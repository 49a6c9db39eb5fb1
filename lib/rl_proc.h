/* rl_proc: child processes in their own process group, under resource
 * limits, with their output captured (/proc sampling of a whole group is
 * rl_proc_sample.h; starting a shell command the grader's way is
 * rl_proc_spawn.h).
 *
 * A child is started with fork+exec (only async-signal-safe calls between
 * the two) as the leader of a new process group, so one kill reaches every
 * process it forks that stays in the group. Its stdout and stderr go to one
 * pipe that a private thread drains at once, keeping the first and the last
 * few KiB and counting the rest: a child that floods output never blocks and
 * never fills a disk. A grader that calls rl_proc_become_subreaper gets
 * back the processes that escape the group (setsid, double fork) and kills
 * them with rl_proc_reap_orphans (rl_proc_sample.h). */
#ifndef RL_PROC_H
#define RL_PROC_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Sampling a group through /proc and reaping escaped children moved to
 * their own module; included here so that their callers need one header. */
#include "rl_proc_sample.h"

/* The exit status of a child that could not become its command (a failed
 * exec, or a set-up step before it), as a shell reports one it cannot
 * run; the reason goes to the child's stderr. */
#define RL_PROC_EXEC_FAILED 127

#define RL_CAPTURE_HEAD 4096
#define RL_CAPTURE_TAIL 4096

/* What the child wrote: the first RL_CAPTURE_HEAD bytes, the last
 * RL_CAPTURE_TAIL bytes (a ring) and the total count. */
typedef struct rl_capture {
    char head[RL_CAPTURE_HEAD];
    size_t nhead; /* bytes in head */
    char tail[RL_CAPTURE_TAIL];
    size_t tail_pos; /* next write index in the ring */
    uint64_t total;  /* every byte read */
} rl_capture;

/* Limits applied with setrlimit in the child before exec; 0 leaves a limit
 * as inherited. Core dumps are always disabled. */
typedef struct rl_proc_limits {
    uint64_t data_bytes;  /* RLIMIT_DATA: private writable memory */
    uint64_t as_bytes;    /* RLIMIT_AS: all mappings (too blunt for most runtimes) */
    uint64_t cpu_seconds; /* RLIMIT_CPU soft; the hard limit is 5 s above */
    uint64_t nofile;      /* RLIMIT_NOFILE */
    uint64_t nproc;       /* RLIMIT_NPROC (per user; not enforced for root) */
    uint64_t fsize_bytes; /* RLIMIT_FSIZE */
} rl_proc_limits;

typedef struct rl_proc_options {
    const char *const *argv;         /* argv[0] is looked up in PATH; NULL-terminated */
    const char *const *setenv;       /* "NAME=VALUE" added to (or replacing in) the
                                      * environment; NULL-terminated; may be NULL */
    const rl_proc_limits *limits;    /* may be NULL */
    bool kill_with_parent;           /* PR_SET_PDEATHSIG SIGKILL on the leader */
    bool clean_env;                  /* the environment is |setenv| alone */
    bool no_new_privs;               /* PR_SET_NO_NEW_PRIVS before exec */
    const char *const *join_cgroups; /* cgroup.procs files the child writes
                                      * itself into before exec (so it and all it
                                      * starts are counted there); NULL-terminated;
                                      * may be NULL. A failed write fails the start
                                      * (exit status RL_PROC_EXEC_FAILED with the reason). */
    int fd3;                         /* when > 0, the child gets this descriptor as
                                      * its fd 3 (every other one above 2 is
                                      * closed): a private line back from what it
                                      * execs; 0: none */
    int fd4;                         /* when > 0, the child gets this descriptor as
                                      * its fd 4 (with fd3 set): what it execs is
                                      * handed (the sandbox's submission folder);
                                      * 0: none */
} rl_proc_options;

typedef struct rl_proc {
    pid_t pid;        /* leader, == process group id; 0 when none */
    int out_fd;       /* read end of the output pipe, owned by the thread */
    pthread_t reader; /* drains out_fd into |cap| */
    bool reader_running;
    pthread_mutex_t mu;  /* guards cap, eof and the condition */
    pthread_cond_t cond; /* signalled when output arrives or at EOF */
    rl_capture cap;
    bool eof;                 /* every writer closed the pipe */
    volatile int stop_reader; /* asks the thread to give up (orphan holds pipe) */
    bool exited;              /* the leader has exited (it stays a zombie,
                               * holding the group id, until rl_proc_stop) */
    bool reaped;              /* waitpid collected it */
    int exit_code;            /* exit status, or -1 if killed by a signal */
    int term_sig;             /* the killing signal, 0 if it exited */
    int64_t exit_ns;          /* CLOCK_MONOTONIC when the exit was seen */
} rl_proc;

/* Starts |opt->argv| with its output captured. |p| is caller memory. Returns
 * 0, or RL_ESYS (errno set; a failed exec shows as exit status RL_PROC_EXEC_FAILED with the
 * reason in the captured output instead). */
int rl_proc_spawn(rl_proc *p, const rl_proc_options *opt);

/* Checks without blocking whether the leader exited (recording how, but not
 * reaping it, so the group id cannot be reused before rl_proc_stop). Returns
 * true while it runs. */
bool rl_proc_alive(rl_proc *p);

/* Waits up to |timeout_ms| for the leader to exit. Returns true if it did. */
bool rl_proc_wait_exit(rl_proc *p, int64_t timeout_ms);

/* Waits up to |timeout_ms| for a captured line containing |needle|, copying
 * that line (without newline) to |line|. Returns 0, RL_ECHILD when the child
 * exited or closed its output first, or RL_ETIMEOUT. Only the first
 * RL_CAPTURE_HEAD bytes are searched: meant for readiness lines. */
int rl_proc_wait_line(rl_proc *p, const char *needle, int64_t timeout_ms, char *line, size_t linelen);

/* Stops the whole group: SIGTERM, up to |grace_ms| for the leader to exit,
 * then SIGKILL to the group, and reaps the leader. Then stops the reader
 * (bounded) and closes the pipe. Returns true if SIGKILL was needed. Safe to
 * call twice. */
bool rl_proc_stop(rl_proc *p, int64_t grace_ms);

/* Releases the thread and pipe; kills the group first if still running.
 * Accepts a zeroed or stopped struct. */
void rl_proc_fini(rl_proc *p);

/* "exited with status 3", "was killed by SIGSEGV", "running". */
void rl_proc_describe(const rl_proc *p, char *buf, size_t len);

/* The signal that ended the leader, also when a shell leader reported its
 * child's death as status 128+N; 0 if it exited normally or still runs. */
int rl_proc_death_signal(const rl_proc *p);

/* The short signal name "SIGSEGV" ("SIG42" if unknown); static storage. */
const char *rl_signal_name(int sig);

/* The last |len|-1 bytes at most of the output (NUL-terminated; control
 * bytes other than newline and tab are shown as '?'). Returns the total
 * byte count so far. */
uint64_t rl_proc_output_tail(rl_proc *p, char *buf, size_t len);

/* The whole capture as text: head, a "[... N bytes skipped ...]" marker if
 * bytes were dropped, and tail. Same escaping. Returns the total count. */
uint64_t rl_proc_output_text(rl_proc *p, char *buf, size_t len);

/* Appends |n| bytes to |cap| (exposed for unit tests). */
void rl_capture_add(rl_capture *cap, const char *data, size_t n);

/* ---- servers ---- */

/* Waits up to |timeout_ms| for |p|'s readiness line, "NAME listening on
 * HOST:PORT" (the convention every relaylab server follows; rl_server prints
 * it), and copies HOST:PORT to |addr|. Returns 0, RL_ECHILD (the child
 * exited or closed its output first), RL_ETIMEOUT, or RL_EINVAL (no address
 * after the words, or one longer than |addrlen| - 1). */
int rl_proc_wait_ready(rl_proc *p, int64_t timeout_ms, char *addr, size_t addrlen);

/* rl_proc_wait_ready for a server |p| just started (|name| names it in
 * |err|): returns 0 with HOST:PORT in |addr|, or RL_ECHILD / RL_ETIMEOUT /
 * RL_EINVAL with one line in |err|: what went wrong and the tail of the
 * child's output. */
int rl_proc_await_server(rl_proc *p, const char *name, int64_t ready_ms, char *addr, size_t addrlen, char *err,
                         size_t errlen);

/* Starts a server: rl_proc_spawn(|p|, |opt|), then rl_proc_await_server with
 * |ready_ms|. Returns 0 with HOST:PORT in |addr|, or RL_ESYS / RL_ECHILD /
 * RL_ETIMEOUT / RL_EINVAL with one line in |err|: what went wrong and the
 * tail of the child's output. Whatever it returns, the caller stops and
 * finalises |p| (rl_proc_stop, rl_proc_fini), which is safe after a failed
 * spawn too. */
int rl_proc_start_server(rl_proc *p, const rl_proc_options *opt, int64_t ready_ms, char *addr, size_t addrlen,
                         char *err, size_t errlen);

/* Async-signal-safe: sends |sig| to every group spawned by rl_proc_spawn and
 * not yet stopped. For a signal handler that must not leave children. */
void rl_proc_signal_all(int sig);

#endif
