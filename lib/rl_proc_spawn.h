/* rl_proc_spawn: starts a submission-like command line the way the grader
 * starts a submission, so that the grader, the benches and the lab run one
 * line alike. The line goes to `/bin/sh -c TEXT`, where TEXT is the line
 * with `exec ` put before it when it is one simple command: then the shell
 * replaces itself with the program, which leads its own process group and
 * whose exit status or killing signal reaches the caller unaltered. `exec`
 * takes no leading NAME=value words, so a line that starts with one gets
 * `exec env ` instead (env sets them and execs the program in turn). A line
 * holding ; & | ( ) ` or a newline, or one that already starts with `exec `,
 * goes to the shell as it is. Everything else (the process group, the
 * environment additions, the limits, the captured output) is rl_proc's. */
#ifndef RL_PROC_SPAWN_H
#define RL_PROC_SPAWN_H

#include "rl_proc.h"

/* What to start. Every pointer is borrowed for the call only: the child has
 * its own copy once rl_proc_spawn_command returns, so the caller may free
 * or reuse them at once. */
typedef struct rl_proc_command {
    const char *line;           /* the command line as a user typed it,
                                 * e.g. "PORT=1 python3 relay.py"; not empty */
    const char *const *wrapper; /* argv run in front of "/bin/sh -c TEXT"
                                 * (e.g. a sandbox: "unshare ... --"), which
                                 * it must exec in turn; NULL-terminated;
                                 * NULL: /bin/sh is the child itself */
    rl_proc_options opt;        /* environment additions, limits, capture
                                 * and the rest, as for rl_proc_spawn (see
                                 * rl_proc.h for each field's ownership);
                                 * opt.argv must be NULL: it is built here */
} rl_proc_command;

/* Starts |c->line| as described above into |p| (caller memory, filled as
 * by rl_proc_spawn): p->pid is the program itself when the line is simple
 * and there is no wrapper, else the shell or the wrapper, and in every case
 * the leader of a new process group. Returns 0; RL_EINVAL (|p| left safe to
 * rl_proc_fini) when |c->line| is NULL or empty or |c->opt.argv| is set; or
 * RL_ESYS with errno (a line the shell cannot run shows as exit status 127
 * with the shell's reason in the captured output instead). The caller stops
 * and finalises |p| (rl_proc_stop, rl_proc_fini) in every case. */
int rl_proc_spawn_command(rl_proc *p, const rl_proc_command *c);

/* The TEXT that rl_proc_spawn_command gives `/bin/sh -c` for |line|, in
 * |*text| (heap; the caller frees it). For a caller that builds its own
 * argv and for tests. Returns 0, or RL_EINVAL when |line| is NULL. */
int rl_proc_command_text(const char *line, char **text);

#endif
