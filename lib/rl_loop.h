/* rl_loop: one completion queue driven by one thread, plus timers.
 *
 * Every batch posted on the queue carries an embedded rl_tag; when the batch
 * completes the loop calls tag->done(tag, ok) on the loop thread. Timers fire
 * on the same thread, so per-call state owned by a loop needs no locks. gRPC's
 * C API has no alarm, so the loop sleeps in grpc_completion_queue_next only
 * until the earliest timer is due.
 *
 * Threads: the rule of docs/DESIGN.md ("Threads") starts here. rl_loop_init
 * and rl_loop_fini run on any thread, before and after the loop runs;
 * rl_loop_run(_until) makes the calling thread the loop's thread; the timer
 * functions run on that thread only (the heap has no lock); rl_loop_wake is
 * the one call any thread may make.
 *
 * Waking a loop from another thread: gRPC 1.51's C API has no alarm, but an
 * empty batch on a call puts its tag on that call's queue at once
 * (grpc/grpc.h, grpc_call_start_batch), so the loop keeps a call on a lame
 * channel bound to its own queue and starts an empty batch on it to wake
 * up (docs/grpc-facts.md, "Waking another loop", says what it costs). */
#ifndef RL_LOOP_H
#define RL_LOOP_H

#include <grpc/grpc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The struct of type |type| whose member |member| is at |ptr|: how a done
 * callback or timer finds the per-call state its tag is embedded in. */
#define RL_CONTAINER_OF(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

typedef struct rl_tag rl_tag;
/* |ok| is the event's success flag: false is a normal outcome (a cancelled
 * call, a shutting-down server), not a crash. */
typedef void (*rl_tag_done)(rl_tag *tag, bool ok);
struct rl_tag {
    rl_tag_done done;
};

typedef struct rl_timer rl_timer;
typedef void (*rl_timer_cb)(rl_timer *timer);
struct rl_timer {
    int64_t due_ns; /* CLOCK_MONOTONIC instant it fires at */
    size_t slot;    /* 1 + index in the loop's heap; 0 when not armed */
    rl_timer_cb fire;
};

typedef struct rl_loop rl_loop;
/* Runs on the loop's thread after one or more rl_loop_wake calls. */
typedef void (*rl_loop_woken)(rl_loop *loop, void *user);

struct rl_loop {
    grpc_completion_queue *cq; /* owned; created by rl_loop_init */
    rl_timer **heap;           /* min-heap on due_ns, armed timers only */
    size_t nheap, capheap;
    uint64_t events; /* completions dispatched, for tests and stats */
    /* Wake-ups (rl_loop_wake_init); all NULL until then. */
    rl_tag wake_tag;            /* the empty batch's tag */
    grpc_channel *wake_channel; /* owned: a lame channel */
    grpc_call *wake_call;       /* owned: on |wake_channel|, bound to |cq| */
    pthread_mutex_t wake_mu;    /* serializes the empty batches: gRPC calls
                                 * them thread-compatible, not thread-safe */
    atomic_bool wake_pending;   /* a wake-up is on the queue, not yet run */
    rl_loop_woken woken;
    void *woken_user;
    uint64_t wakes; /* wake-ups run, for tests and stats */
};

/* Creates the loop's completion queue. Returns 0. */
int rl_loop_init(rl_loop *loop);

/* Runs until the queue has been shut down (grpc_completion_queue_shutdown)
 * and drained. Timers still armed then are dropped without firing. */
void rl_loop_run(rl_loop *loop);

/* Runs at most until |until_ns|, dispatching events and due timers. Returns
 * false once the queue is shut down. For tests and single-threaded clients. */
bool rl_loop_run_until(rl_loop *loop, int64_t until_ns);

/* Destroys the queue; call after rl_loop_run returned. */
void rl_loop_fini(rl_loop *loop);

/* Lets other threads wake the loop: after rl_loop_wake, |woken|(loop,
 * |user|) runs once on the loop's thread, at once. Call it once, on the
 * loop's thread or before the loop runs. Returns 0, or RL_EGRPC when gRPC
 * would not create the call. rl_loop_fini releases what it took. */
int rl_loop_wake_init(rl_loop *loop, rl_loop_woken woken, void *user);

/* Wakes |loop| (set up by rl_loop_wake_init). Any thread. Wake-ups that
 * come before the loop ran the previous one coalesce into one |woken|
 * call, which therefore must look for all there is to do. Only while the
 * queue is not shut down: it posts a completion to it. */
void rl_loop_wake(rl_loop *loop);

/* Arms |timer| (memory owned by the caller, typically embedded in a call's
 * state) to call |fire| at |due_ns|. Re-arming an armed timer moves it. */
void rl_timer_start(rl_loop *loop, rl_timer *timer, int64_t due_ns, rl_timer_cb fire);

/* Disarms |timer|; a no-op when it is not armed. */
void rl_timer_stop(rl_loop *loop, rl_timer *timer);

static inline bool rl_timer_armed(const rl_timer *timer)
{
    return timer->slot != 0;
}

#endif
