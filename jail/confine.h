/* confine: what the submission may no longer do once the jail has built its
 * view (docs/sandbox.md, "What the submission cannot do").
 *
 * Two ways in, one per sandbox mode. As root (the grader ran as root), the
 * jail becomes an unprivileged user, which leaves every capability behind.
 * As an unprivileged grader, the jail is root only inside the grader's own
 * user namespace, where there is no other user to become: it moves into a
 * user namespace of its own (so the task limit counts the submission's tasks
 * alone) and throws every capability away for good instead. Either way a
 * seccomp filter then refuses the calls that make or enter namespaces: a
 * process in a namespace of its own would leave the PID namespace whose
 * members the grader measures when no cgroup does, and a user namespace
 * would give capabilities back over whatever it creates.
 *
 * Every function either succeeds or reports through the jail's fail() and
 * exits: a half-confined submission must never run. */
#ifndef JAIL_CONFINE_H
#define JAIL_CONFINE_H

#include <sys/types.h>

/* Leaves root for |uid|:|gid| with no supplementary groups; no capability
 * survives and none can come back. */
void confine_become_user(uid_t uid, gid_t gid);

/* Empties the bounding and ambient sets, locks root's special treatment at
 * exec off, then clears the permitted, effective and inheritable sets, and
 * checks that none is left: nothing the process or a program it runs can
 * regain. For a process that is root in a user namespace. */
void confine_drop_capabilities(void);

/* RLIMIT_NPROC |nproc|. The kernel counts it per user and user namespace,
 * so in the submission's own namespace it counts the submission's tasks
 * alone, not the grader's or the baseline's (same user outside). */
void confine_limit_tasks(long nproc);

/* Sets no_new_privs and installs the seccomp filter that refuses unshare,
 * setns and clone with a CLONE_NEW* flag (EPERM), and clone3 (ENOSYS, so
 * the C library falls back to clone, where the flags can be checked). */
void confine_syscalls(void);

/* Implemented in main.c: reports |fmt| on the status descriptor and exits. */
__attribute__((format(printf, 1, 2), noreturn)) void jail_fail(const char *fmt, ...);

#endif
