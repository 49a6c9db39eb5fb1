/* rl_proc_sample: what /proc says about a process group and about our own
 * children. Sums a group's RSS, CPU time, threads and descriptors (or a
 * cgroup's or PID namespace's, for members that left the group) and its
 * threads' time on and waiting for a CPU (the judges' sign of a machine
 * too busy to show what a submission does), and finds
 * and kills the processes that escaped their group and were re-parented to
 * us. Reads /proc only; it starts nothing (rl_proc.h starts processes). */
#ifndef RL_PROC_SAMPLE_H
#define RL_PROC_SAMPLE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct rl_proc_sample {
    int nprocs;         /* live (non-zombie) processes in the group */
    int nthreads;       /* their threads */
    int nfds;           /* their open file descriptors (/proc/PID/fd
                         * entries; -1 for a member we may not read) */
    uint64_t rss_bytes; /* sum of resident set sizes */
    int64_t cpu_ns;     /* user+system CPU time so far, including children
                         * the members already reaped (10 ms ticks) */
} rl_proc_sample;

/* Sums RSS, CPU time, threads and open descriptors over every process whose
 * process group is |pgid| (from /proc/PID/stat and /proc/PID/fd), or, when
 * rl_proc_sample_by_cgroup or rl_proc_sample_by_pidns registered |pgid|,
 * over every process in that cgroup or PID namespace: a member that left
 * the group (setsid) still counts. Returns 0, RL_ENOTFOUND when no member
 * exists any more, or RL_ESYS when /proc cannot be read. */
int rl_proc_group_sample(pid_t pgid, rl_proc_sample *out);

/* The state letter, parent and process group of the process whose /proc
 * entry is |name| (a pid in decimal, as readdir gives it), from
 * /proc/NAME/stat, where the command name may hold spaces and ')'. Returns
 * 0, or RL_ENOTFOUND when |name| is not a process or it has gone. */
int rl_proc_stat_ids(const char *name, char *state, pid_t *ppid, pid_t *pgrp);

/* The scheduler's account of group |pgid| (every thread of every member,
 * from /proc/PID/task/TID/schedstat; members as rl_proc_group_sample counts
 * them, so a registered cgroup's or PID namespace's include those that left
 * the group): time spent on a CPU and time spent runnable but waiting for
 * one, in ns since each thread started. run + wait is the CPU the group
 * asked for; on a loaded machine it can be far more than the CPU it was
 * given. Threads that ended between two calls drop out, so compare two
 * calls only as a lower bound. Returns 0, RL_ENOTFOUND (no member) or
 * RL_ESYS. */
int rl_proc_group_sched(pid_t pgid, int64_t *run_ns, int64_t *wait_ns);

/* The same account thread by thread: calls |each| once for every thread of
 * every member of group |pgid| with its id and its run and wait times (ns
 * since it started). Returns 0, RL_ENOTFOUND (no member) or RL_ESYS. */
typedef void (*rl_thread_sched_fn)(void *user, pid_t tid, int64_t run_ns, int64_t wait_ns);
int rl_proc_group_threads(pid_t pgid, rl_thread_sched_fn each, void *user);

/* The largest RSS of a process group seen so far: rl_proc_peak_sample
 * (void * for a periodic callback, e.g. rl_load's tick) samples |pgid| and
 * raises |peak_rss|; a failed sample leaves it. */
typedef struct rl_proc_peak {
    pid_t pgid;
    uint64_t peak_rss;
} rl_proc_peak;
void rl_proc_peak_sample(void *peak);

/* From now on rl_proc_group_sample(|pgid|) counts the processes listed in
 * |procs_path| (a cgroup.procs file, copied) other than |exclude| (a
 * wrapper that is not the measured program; 0: none), and takes cpu_ns from
 * |cpu_usage_path| (cgroup v1 cpuacct.usage in ns, or v2 cpu.stat's
 * usage_usec; either counts members that already exited) unless NULL. |procs_path| NULL removes the
 * registration. One registration at a time. */
void rl_proc_sample_by_cgroup(pid_t pgid, const char *procs_path, pid_t exclude, const char *cpu_usage_path);

/* From now on rl_proc_group_sample(|pgid|) counts every process in the PID
 * namespace whose nsfs inode is |pidns| (stat of /proc/PID/ns/pid) other
 * than |exclude|; cpu_ns then sums each live member's own time and that of
 * the children it reaped (a member that exited before its parent reaped it
 * is missed until then). Replaces any registration; rl_proc_sample_by_cgroup
 * with NULL removes it. */
void rl_proc_sample_by_pidns(pid_t pgid, ino_t pidns, pid_t exclude);

/* ---- escaped processes ---- */

/* prctl(PR_SET_CHILD_SUBREAPER): orphans of our descendants are re-parented
 * to us instead of init. Returns 0 or RL_ESYS. */
int rl_proc_become_subreaper(void);

/* SIGKILLs and reaps every child of ours other than the ones listed in
 * |keep| (|nkeep| pids), repeating until none is left or |timeout_ms| has
 * passed. Returns how many it killed. Use after every group was stopped. */
int rl_proc_reap_orphans(const pid_t *keep, size_t nkeep, int64_t timeout_ms);

#endif
