/* lanes: the scenarios of one grading run at once, one worker process a
 * lane.
 *
 * An exercise puts each scenario in a lane (gr_scenario.lane). A lane's
 * scenarios run one after another in table order, as they always did; the
 * lanes run at the same time, each in a worker forked from the grader
 * before gRPC starts. A worker is a whole driver: its own gRPC, subreaper,
 * cgroups and signal flag, the submission's folder and sandbox as the
 * grader checked them (inherited, never opened again by path) and,
 * sandboxed, a network namespace of its own, so that no submission can
 * connect to another lane's world (run.c runs an unsandboxed command
 * submission's scenarios one at a time for that reason). It writes
 * its outcomes into memory the grader shares with it, in the slots of the
 * grader's table order, so the report reads the same whatever ran when.
 *
 * Why processes and not threads: a run's teardown kills every child of its
 * process that it does not wait for, the CPU and memory sampler follows
 * one cgroup a process, and gRPC's log hook (keepalive's GOAWAY count) is
 * process-wide. Why fork before gRPC: a fork of a process with gRPC's
 * threads running is unusable. Which scenarios may share the machine is
 * the exercise's decision, written beside its table with the reason. */
#ifndef GR_LANES_H
#define GR_LANES_H

#include "run.h"

#include <stdbool.h>
#include <stddef.h>

/* How many lanes |ex| has among the scenarios |only| selects (NULL: all);
 * past gr_lanes_run's 64, 65. */
size_t gr_lanes_count(const gr_exercise *ex, const char *only);

/* Runs the selected scenarios of |ex| lane by lane, at most |parallel|
 * lanes at once (>= 1), each lane in a forked worker; must be called
 * before grpc_init (the workers start gRPC themselves). |outcomes| (room
 * for ex->nscenarios) is filled in table order, *noutcomes the number
 * filled. A worker that dies or overstays its bound leaves its unfinished
 * scenarios ERROR with the reason; an interrupted grader passes SIGTERM
 * on to its workers and waits for their teardown. Returns 0; RL_ECHILD
 * with the reason in |err| when every outcome is filled but a worker did
 * not end cleanly (a sanitizer's report at its exit: the grader's error,
 * never hidden); or, when nothing ran (the caller may run the scenarios
 * itself), RL_ESYS when the shared slots could not be made and RL_EINVAL
 * for more than 64 lanes, with the reason in |err|. */
int gr_lanes_run(const gr_exercise *ex, const gr_options *opt, int parallel, gr_outcome *outcomes, size_t *noutcomes,
                 char *err, size_t errlen);

/* True when this process has no thread but its own, so a fork of it can
 * start gRPC: read from /proc/self/status. */
bool gr_lanes_single_threaded(void);

#endif
