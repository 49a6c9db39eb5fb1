/* rl_life: the lifetime of an object with gRPC batches in flight, counted
 * once for every state machine of the kit.
 *
 * An object (a server call, a stream, a proxied call) embeds an rl_life.
 * Each batch it starts takes a reference (rl_life_start_batch), each
 * completion drops one (rl_life_unref at the end of the tag's done
 * callback), and anything else that must keep the object (an armed timer,
 * a downstream call, a place in a queue) takes one the same way. When the
 * owner has asked to close (rl_life_close) and the count is zero, |release|
 * runs, once: it frees the object or hands it back, as libuv's close_cb
 * does for a handle after uv_close. Until then a completion can never find
 * its memory gone, and nothing is freed while a batch still writes into it.
 *
 * Threads: no lock; every function runs on the thread that owns the object
 * (its loop's, or the one thread of a blocking client). */
#ifndef RL_LIFE_H
#define RL_LIFE_H

#include "rl_loop.h"

#include <grpc/grpc.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct rl_life rl_life;
/* Frees or hands back the object that embeds |life|; find it with
 * RL_CONTAINER_OF. Runs once, on the owner's thread. */
typedef void (*rl_life_release)(rl_life *life);

struct rl_life {
    unsigned refs;           /* batches in flight and other holders */
    bool closing;            /* rl_life_close was called */
    bool released;           /* |release| ran (or is running) */
    rl_life_release release; /* may be NULL: see rl_life_init */
};

/* Starts |life| with no reference, not closing. |release| may be NULL for
 * an owner that waits for rl_life_released itself (a blocking client
 * draining its own queue) and frees nothing at zero. */
void rl_life_init(rl_life *life, rl_life_release release);

/* Starts a batch of |n| |ops| on |call| under |tag| and, when gRPC took it,
 * a reference that the tag's done callback drops. Returns what
 * grpc_call_start_batch returned; on an error nothing was taken and the
 * tag will never complete. */
grpc_call_error rl_life_start_batch(rl_life *life, grpc_call *call, const grpc_op *ops, size_t n, rl_tag *tag);

/* Takes a reference for something other than a batch (a timer, another
 * call, a queue); the holder drops it with rl_life_unref. Never after
 * |release| ran. */
void rl_life_ref(rl_life *life);

/* Drops a reference. The last one after rl_life_close runs |release|, so
 * the caller must not touch the object after this returns unless it holds
 * another reference: drop at the very end of a done callback. */
void rl_life_unref(rl_life *life);

/* The owner's word that the object may go: |release| runs as soon as no
 * reference is left, at once (inside this call) when none is. Batches and
 * references may still be taken while one is held. Idempotent. */
void rl_life_close(rl_life *life);

/* Whether the count reached zero after the close (|release| ran). */
static inline bool rl_life_released(const rl_life *life)
{
    return life->released;
}

#endif
