/* child: start a relaylab server as a child process and wait for its
 * readiness line. Small on purpose: the bench starts two servers before
 * grpc_init (forking after gRPC started threads is unsafe) and must kill
 * exactly those pids at the end, whatever happened in between. */
#ifndef BENCH_CHILD_H
#define BENCH_CHILD_H

#include <stddef.h>
#include <sys/types.h>

typedef struct bench_child {
    pid_t pid;       /* 0 when not running */
    char addr[128];  /* HOST:PORT from the readiness line */
} bench_child;

/* Runs |argv| (argv[0] is a path) with stdout on a pipe and waits up to
 * |timeout_ms| for "NAME listening on HOST:PORT". The child gets SIGTERM if
 * the bench dies first. Returns 0, or a negative RL_E* code with a message
 * in |err|; on failure the child, if started, has been killed and reaped. */
int bench_child_start(bench_child *c, char *const argv[], int timeout_ms, char *err, size_t errlen);

/* Sends SIGTERM, waits up to |grace_ms| for the exit, then SIGKILL. Returns
 * the exit status as from waitpid, or -1 if nothing was running. Safe on a
 * child that is not running. */
int bench_child_stop(bench_child *c, int grace_ms);

#endif
