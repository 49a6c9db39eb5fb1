/* mistake: how the relay treats deadlines, cancellation and SIGTERM, as a
 * table of modes. "none" is the correct relay; every other row reproduces one
 * classic student bug so instructors can show (and the grader can be tested
 * against) what it looks like from the client and downstream sides. A mode is
 * data, not code paths: the propagation mask and deadline handed to
 * grpc_channel_create_call, whether the relay checks the upstream before
 * starting Work, how often it calls Work, what its server does at SIGTERM
 * (the shutdown mistakes are rl_server's shutdown hooks, defined here so
 * that lib/rl_server.c carries only the rule), and how it admits calls under
 * overload and outages. */
#ifndef RELAY_MISTAKE_H
#define RELAY_MISTAKE_H

#include "rl_server.h"

#include <grpc/support/time.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* The |deadline| argument for a downstream call created at |now_ns| for an
 * upstream call that arrived at |arrival_ns| with deadline |upstream|
 * (infinite when the client set none). */
typedef gpr_timespec (*relay_deadline_fn)(gpr_timespec upstream, int64_t arrival_ns, int64_t now_ns);

typedef struct relay_mistake {
    const char *name;
    const char *description;           /* one line, for --mistake list */
    uint32_t propagate;                /* GRPC_PROPAGATE_* bits; 0: no parent call at all */
    relay_deadline_fn deadline;        /* combined by gRPC with the parent's when propagate has DEADLINE */
    bool check_before_work;            /* no Work once the upstream is cancelled or out of time */
    unsigned work_calls;               /* times Work is called per Process */
    const rl_shutdown_hooks *shutdown; /* NULL (the rule) but in the shutdown mistakes:
                                        * rl_server_options.shutdown_hooks */
    bool unbounded_queue;              /* calls wait for a slot in a queue with no bound and no deadline
                                        * check, and are forwarded whatever time they have left */
    bool wait_for_ready;               /* downstream calls wait for a ready connection instead of
                                        * failing UNAVAILABLE at once */
} relay_mistake;

/* The shutdown mistakes' hooks (static; installed by the relay as
 * rl_server_options.shutdown_hooks, all run on rl_server_wait's thread):
 * no-handler: before the wait, SIGTERM and SIGINT get their default action
 *   back and the thread waits for one to end the process mid-call;
 * stop-now: at the signal, a grace of 0 (admission closes and every call in
 *   flight is cancelled at once);
 * wait-forever: at the signal, no grace, no second signal, no bound on the
 *   loops' stop: a call that never ends holds the exit until SIGKILL;
 * listener-last: at the signal, Watch streams end; then new calls are
 *   admitted until none is in flight (or the grace): admission closes last,
 *   so under load the drain never ends. */
extern const rl_shutdown_hooks relay_shutdown_no_handler;
extern const rl_shutdown_hooks relay_shutdown_stop_now;
extern const rl_shutdown_hooks relay_shutdown_wait_forever;
extern const rl_shutdown_hooks relay_shutdown_listener_last;

/* The correct relay ("none"). */
const relay_mistake *relay_mistake_default(void);

/* The mode called |name|, or NULL when there is none. */
const relay_mistake *relay_mistake_find(const char *name);

/* Prints every mode with its description, one a line, to |f|. */
void relay_mistake_print_list(FILE *f);

/* The deadline a downstream call of mode |m| ends up with: the mode's own
 * deadline, and with GRPC_PROPAGATE_DEADLINE the earlier of it and the
 * parent's (what grpc_channel_create_call does). For tests and logs. */
gpr_timespec relay_mistake_effective_deadline(const relay_mistake *m, gpr_timespec upstream, int64_t arrival_ns,
                                              int64_t now_ns);

#endif
