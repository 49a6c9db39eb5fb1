/* rl_wait_tally: how long a process group waited for a CPU since a given
 * moment, counting the threads that end on the way.
 *
 * rl_proc_group_sched sums the wait of the threads alive now, so the
 * difference of two sums loses what a thread that ended in between had
 * waited, and even subtracts what it had waited before the first: a
 * process that is exiting ends its threads one by one, and a relay starved
 * through its shutdown read as having waited almost nothing (measured:
 * docs/DESIGN.md, beside gr_await_submission_exit).
 * A tally keeps each thread's wait at its last reading instead: read it
 * often (every 50 ms) and a thread that ends loses only the wait of its
 * last interval. Owns its table; not thread-safe. */
#ifndef RL_WAIT_TALLY_H
#define RL_WAIT_TALLY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct rl_wait_thread rl_wait_thread; /* rl_wait_tally.c */

typedef struct rl_wait_tally {
    pid_t pgid;
    rl_wait_thread *threads; /* the threads seen at the last reading */
    size_t n, cap;
    int64_t ended_ns; /* what the threads no longer seen had waited */
} rl_wait_tally;

/* Starts a tally of group |pgid| (as rl_proc_group_sched counts its
 * members) from now: each thread's wait so far is its base. Returns 0,
 * RL_ENOTFOUND (no member) or RL_ESYS; end it with rl_wait_tally_fini
 * either way. */
int rl_wait_tally_start(rl_wait_tally *w, pid_t pgid);

/* Reads the group again and sets *waited_ns to its wait since the start:
 * each thread's growth from its base (from 0 for a thread born since), a
 * thread that ended counted to its last reading. Returns 0, or
 * RL_ENOTFOUND when no member is left (*waited_ns is then the tally of
 * the readings before), or RL_ESYS. */
int rl_wait_tally_read(rl_wait_tally *w, int64_t *waited_ns);

void rl_wait_tally_fini(rl_wait_tally *w);

#endif
