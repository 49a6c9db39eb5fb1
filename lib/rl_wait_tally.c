/* rl_wait_tally: a group's CPU wait since a moment, thread by thread (see
 * rl_wait_tally.h). */
#include "rl_wait_tally.h"

#include "rl_alloc.h"
#include "rl_err.h"
#include "rl_proc_sample.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct rl_wait_thread {
    pid_t tid;
    int64_t base_ns; /* its wait when first seen (0: born since the start) */
    int64_t last_ns; /* its wait at the last reading */
    bool seen;       /* in the reading under way */
};

typedef struct reading {
    rl_wait_tally *w;
    bool at_start; /* the threads alive at the start: their wait so far is the base */
} reading;

static void see_thread(void *user, pid_t tid, int64_t run_ns, int64_t wait_ns)
{
    (void)run_ns;
    reading *r = user;
    rl_wait_tally *w = r->w;
    for (size_t i = 0; i < w->n; i++) {
        rl_wait_thread *t = &w->threads[i];
        if (t->tid != tid)
            continue;
        if (wait_ns < t->last_ns) {
            /* A thread's wait never falls: this id was given to a new
             * thread after the old one ended. */
            w->ended_ns += t->last_ns - t->base_ns;
            t->base_ns = 0;
        }
        t->last_ns = wait_ns;
        t->seen = true;
        return;
    }
    if (w->n == w->cap) {
        w->cap = w->cap ? 2 * w->cap : 32;
        w->threads = rl_xrealloc(w->threads, w->cap * sizeof *w->threads);
    }
    w->threads[w->n++] = (rl_wait_thread){tid, r->at_start ? wait_ns : 0, wait_ns, true};
}

/* One reading: updates every thread seen, moves the ones not seen any
 * more into ended_ns. */
static int read_group(rl_wait_tally *w, bool at_start)
{
    for (size_t i = 0; i < w->n; i++)
        w->threads[i].seen = false;
    reading r = {w, at_start};
    int rc = rl_proc_group_threads(w->pgid, see_thread, &r);
    if (rc == RL_ESYS)
        return rc;
    size_t kept = 0;
    for (size_t i = 0; i < w->n; i++) {
        if (w->threads[i].seen)
            w->threads[kept++] = w->threads[i];
        else
            w->ended_ns += w->threads[i].last_ns - w->threads[i].base_ns;
    }
    w->n = kept;
    return rc;
}

int rl_wait_tally_start(rl_wait_tally *w, pid_t pgid)
{
    memset(w, 0, sizeof *w);
    w->pgid = pgid;
    return read_group(w, true);
}

int rl_wait_tally_read(rl_wait_tally *w, int64_t *waited_ns)
{
    int rc = read_group(w, false);
    int64_t sum = w->ended_ns;
    for (size_t i = 0; i < w->n; i++)
        sum += w->threads[i].last_ns - w->threads[i].base_ns;
    *waited_ns = sum;
    return rc;
}

void rl_wait_tally_fini(rl_wait_tally *w)
{
    free(w->threads);
    memset(w, 0, sizeof *w);
}
