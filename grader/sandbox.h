/* sandbox: the world a command submission is graded in (docs/sandbox.md).
 *
 * The grader enters a network namespace with loopback alone; every run of a
 * submission gets fresh cgroups (pids, memory, cpuacct) and starts through
 * util-linux unshare (its own PID and mount namespace) and bin/jail, which
 * builds a read-only view with the kit's private parts hidden, drops to
 * nobody and execs the command. This module holds the grader's side: the
 * check that the sandbox can be built, the per-run cgroups, the argv and
 * the jail's status line. As root it needs cgroups, v1 or v2; not root, it
 * needs unprivileged user namespaces and runs without cgroups (weaker
 * memory and task limits, said in a note). Where neither works the grader
 * says so and grades only with --unsafe. */
#ifndef GR_SANDBOX_H
#define GR_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The unprivileged user the submission runs as: nobody/nogroup on Debian. */
#define GR_SANDBOX_UID 65534
#define GR_SANDBOX_GID 65534
/* Tasks (processes and threads) a submission may have: grpcio and grpc-js
 * run 20-40 threads; a fork bomb stops here, also as root. */
#define GR_SANDBOX_PIDS_MAX 512
/* Size of each writable tmpfs (/tmp, /var/tmp, /dev/shm); the memory
 * cgroup counts its pages too. */
#define GR_SANDBOX_SCRATCH_MB 64

/* How the sandbox is built here. */
typedef enum gr_sandbox_mode {
    GR_SANDBOX_NONE = 0,  /* not decided, or impossible */
    GR_SANDBOX_CGROUP_V1, /* root; pids, memory, cpuacct hierarchies */
    GR_SANDBOX_CGROUP_V2, /* root; one cgroup per run under v2's root */
    GR_SANDBOX_USERNS,    /* not root: the grader's own user namespace,
                           * no cgroups; the jail gets --userns */
} gr_sandbox_mode;

/* A note for the report when the mode is weaker than root's (the user
 * namespace mode), else NULL. Static text. */
const char *gr_sandbox_mode_note(void);

/* What the submission sees: the jail's --hide and --show paths. Owns its
 * strings; gr_sandbox_view_fini frees them. */
typedef struct gr_sandbox_view {
    char *jail;     /* bin/jail */
    char *hide[16]; /* made empty in the view */
    size_t nhide;
    char *show[8]; /* visible (read-only) even under a hidden path */
    size_t nshow;
    int sub_fd;  /* the submission's folder, held open since it was checked
                  * (rl_file_open_dir; borrowed: the caller closes it), or -1 */
    char *tree;  /* where the view shows it: its real path when it was
                  * opened; NULL when there is none */
    bool own_fd; /* sub_fd is the view's own (opened again by
                  * gr_sandbox_enter in the grader's mount namespace) */
} gr_sandbox_view;

/* Builds the view for a submission graded by the kit whose programs are in
 * |bin_dir|: the kit's folder (bin/.., with its rubric, worlds, sources and
 * model solutions) and every file of |private_files| (NULL-terminated, may
 * hold NULLs to skip: --rubric, --world) are hidden; the kit's protocol
 * (proto/, and the stubs generated from it in build/gen) stays visible, and
 * so does the submission's folder held open as |submission_fd| (-1: none),
 * shown at |submission_real| (its real path when it was opened): every run
 * gets a fresh clone of that folder's mount (gr_sandbox_tree), never a path
 * looked up again, so a folder swapped after the check is not what runs.
 * Returns 0, or RL_EINVAL when the submission's folder is the kit's folder
 * itself (message in |err|: a submission must be in a folder of its own). */
int gr_sandbox_view_init(gr_sandbox_view *v, const char *bin_dir, int submission_fd, const char *submission_real,
                         const char *const *private_files, char *err, size_t errlen);

/* A detached copy of the submission's folder's mounts for one run (open_tree
 * OPEN_TREE_CLONE of v->sub_fd, close-on-exec), which the jail attaches in
 * its view (--tree, on the child's fd 4). Returns the descriptor; -1 with
 * errno 0 when the view has no submission folder, -1 with errno set when the
 * kernel refused. The caller closes it once the run is spawned. */
int gr_sandbox_tree(const gr_sandbox_view *v);
void gr_sandbox_view_fini(gr_sandbox_view *v);

/* The folder a command submission lives in: the folder of the last word of
 * |cmd| that names an existing file (the script after its interpreter, or
 * the program). Writes an absolute path to |buf|. Returns 0, or
 * RL_ENOTFOUND when no word names a file (a command of shell words alone). */
int gr_sandbox_submission_dir(const char *cmd, char *buf, size_t len);

/* Checks that the sandbox can be built here (as root: cgroups that can be
 * made; not root: a user namespace) and moves the whole grader into a
 * network namespace of its own with only loopback up: its submissions
 * reach nothing outside, and no other grader's ports exist. Not root, the
 * grader first enters a user namespace where it is root (mapped to its own
 * user), and a mount namespace of its own, where the submission's folder
 * is opened again by its real path and kept only if it is the same folder
 * (else RL_EINVAL: it changed since it was checked). Call before grpc_init
 * (no threads yet: the kernel refuses a user namespace to a threaded
 * process). Returns 0, or RL_ESYS with the reason in |err|. As root
 * nothing changed then; not root, the grader may be left in its own user,
 * network and mount namespaces, which only narrows what an --unsafe
 * grading can reach. */
int gr_sandbox_enter(gr_sandbox_view *v, char *err, size_t errlen);

/* Moves this process (a lane's worker, lanes.h, after gr_sandbox_enter
 * succeeded in the grader) into a network namespace of its own inside the
 * grader's, loopback alone up: what its runs start listens where no other
 * lane's submission can connect (a submission that scans loopback's ports
 * finds its own scenario's world, never a neighbour's). Call before
 * grpc_init. Returns 0, or RL_ESYS with the reason in |err|. */
int gr_sandbox_enter_lane_network(char *err, size_t errlen);

/* One run's sandbox: its cgroups and the jail's status pipe. Caller memory;
 * gr_sandbox_prepare fills it, and gr_sandbox_teardown releases it after
 * any prepare, failed or not (and only then). */
typedef struct gr_sandbox_run {
    char cg_pids[256], cg_mem[256], cg_cpu[256]; /* the cgroups' folders, "" when none */
    char join[3][320];                           /* their cgroup.procs files, for rl_proc's join_cgroups */
    const char *joins[4];                        /* NULL-terminated pointers into |join| */
    char cpu_usage[320];                         /* cpuacct.usage of the run, "" when none */
    int status_r;                                /* read end of the jail's status pipe, -1 when none */
    int status_w;                                /* write end, the child's fd 3; closed after the spawn */
    int tree_fd;                                 /* the run's gr_sandbox_tree, the child's fd 4; closed
                                                  * after the spawn; -1 when none */
    bool v2;                                     /* cgroup v2: cg_pids is the one cgroup (cg_mem and
                                                  * cg_cpu ""), cpu_usage is its cpu.stat */
} gr_sandbox_run;

/* Where the cgroup hierarchies are mounted and where this process's own
 * cgroups are listed: /sys/fs/cgroup and /proc/self/cgroup unless a unit
 * test points them at a fake tree (NULL: back to those). */
void gr_sandbox_set_cgroup_paths(const char *root, const char *self);

/* Removes the empty cgroups a grader that is gone left behind (one killed
 * with SIGKILL cannot remove its own): "relaylab-PID-N" where no process
 * PID exists. gr_sandbox_enter calls it. */
void gr_sandbox_sweep_stale(void);

/* Initialises |r|, then creates the run's cgroups (pids.max
 * GR_SANDBOX_PIDS_MAX; memory limited to |mem_limit_bytes| unless 0, which
 * counts MAP_SHARED and tmpfs pages too; CPU accounted) and the status
 * pipe. Returns 0 or RL_ESYS with |err|. */
int gr_sandbox_prepare(gr_sandbox_run *r, uint64_t mem_limit_bytes, char *err, size_t errlen);

/* The argv that runs `/bin/sh -c |cmd|` in the sandbox: unshare, then the
 * jail with |v|. Heap array of heap strings; free with gr_sandbox_argv_free. */
char **gr_sandbox_argv(const gr_sandbox_view *v, const char *cmd);
void gr_sandbox_argv_free(char **argv);

/* Call after spawning the argv: closes the grader's copy of the write end. */
void gr_sandbox_spawned(gr_sandbox_run *r);

/* Waits up to |timeout_ms| for the jail's status line. Returns 0 once it
 * ran the command, or RL_ESYS with the jail's reason (or "the jail did not
 * report") in |err|: a failure of the sandbox, never of the submission. */
int gr_sandbox_wait_started(gr_sandbox_run *r, int64_t timeout_ms, char *err, size_t errlen);

/* Makes rl_proc_group_sample(|pid|) measure the whole sandbox of the run
 * whose unshare is |pid|: its cgroup, or without cgroups its PID
 * namespace. Call once the jail reported it started. */
void gr_sandbox_measure(const gr_sandbox_run *r, pid_t pid);

/* How many of the run's processes the memory cgroup's OOM killer ended
 * (memory.oom_control's oom_kill); 0 when unknown. */
int gr_sandbox_oom_kills(const gr_sandbox_run *r);

/* How many times the run's memory cgroup hit its limit so far
 * (memory.failcnt, or memory.events' max on v2), in |*hits|. Returns 0, or
 * RL_ESYS when it cannot be read. */
int gr_sandbox_memory_hits(const gr_sandbox_run *r, uint64_t *hits);

/* How many forks or clones the run's pids cgroup refused at its limit
 * (GR_SANDBOX_PIDS_MAX; pids.events' max), in |*hits|. Returns 0, or
 * RL_ESYS when it cannot be read (no cgroups). */
int gr_sandbox_task_limit_hits(const gr_sandbox_run *r, uint64_t *hits);

/* Sends |sig| to the command of a sandboxed run: the process the jail
 * started (pid 2 of the run's PID namespace), whose parent is the jail
 * (pid 1 there), whose parent is |launcher|, the unshare process the grader
 * spawned and has not reaped. Only that process, not its group: as a
 * platform stops a server. Through a pidfd that is checked, once open, to
 * still be that process, so a pid reused meanwhile is never signalled.
 * Returns 0, RL_ENOTFOUND when the command is gone (or the chain is not
 * there yet), or RL_ESYS. */
int gr_sandbox_signal_command(pid_t launcher, int sig);

/* Kills every process left in the run's pids cgroup (its PID namespace took
 * them when its init died; this catches anything else), removes the
 * cgroups and closes the pipe. */
void gr_sandbox_teardown(gr_sandbox_run *r);

#endif
