/* sandbox_cgroup: the per-run cgroups of the grader's sandbox (sandbox.h
 * says what the sandbox is; docs/sandbox.md what each piece defends
 * against).
 *
 * cgroup v1 (one hierarchy per controller) is used when the pids, memory
 * and cpuacct hierarchies exist; else cgroup v2 (Debian 12's default: one
 * hierarchy) when its root offers pids, memory and cpu. The files differ
 * (pids.max is the same; memory.limit_in_bytes or memory.max; cpuacct.usage
 * in ns or cpu.stat's usage_usec; memory.oom_control or memory.events), so
 * each run records which it got. Which mode the grader runs in is
 * sandbox.c's; this module is told it. gr_sandbox_set_cgroup_paths,
 * gr_sandbox_oom_kills and gr_sandbox_memory_hits (sandbox.h) live here
 * too. */
#ifndef GR_SANDBOX_CGROUP_H
#define GR_SANDBOX_CGROUP_H

#include "sandbox.h"

#include <stddef.h>
#include <stdint.h>

/* Points the module at |root| and |self| (NULL: /sys/fs/cgroup and
 * /proc/self/cgroup); gr_sandbox_set_cgroup_paths calls it. */
void gr_cgroup_set_paths(const char *root, const char *self);

/* Which cgroups the sandbox can use here: GR_SANDBOX_CGROUP_V1 or _V2, or
 * GR_SANDBOX_NONE with the reason in |err|. Enabling v2's controllers for
 * the root's children is its one side effect. */
gr_sandbox_mode gr_cgroup_mode(char *err, size_t errlen);

/* Removes the empty cgroups "relaylab-PID-N" of |mode|'s hierarchies whose
 * grader PID is gone (one killed with SIGKILL cannot remove its own). A
 * cgroup that still holds a task, or whose PID lives (perhaps reused), is
 * left alone. Nothing for a mode without cgroups. */
void gr_cgroup_sweep_stale(gr_sandbox_mode mode);

/* Creates run |r|'s cgroups for |mode| (pids.max GR_SANDBOX_PIDS_MAX; memory
 * limited to |mem_limit_bytes| unless 0; CPU accounted) and fills its
 * cg_*, join, joins, cpu_usage and v2 fields; |r| is zeroed by the caller.
 * Returns 0, or RL_ESYS with errno set and |*what| naming the cgroup that
 * failed. What was made before a failure is left in |r| for
 * gr_cgroup_release. Nothing for a mode without cgroups. */
int gr_cgroup_prepare(gr_sandbox_run *r, gr_sandbox_mode mode, uint64_t mem_limit_bytes, const char **what);

/* Kills every process left in the run's pids cgroup (for up to 3 s, until
 * it is empty), then removes the run's cgroups and clears their names. */
void gr_cgroup_release(gr_sandbox_run *r);

#endif
