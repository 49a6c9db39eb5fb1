/* rl_life: the counted lifetime of an object with batches in flight; see
 * rl_life.h. */
#include "rl_life.h"

#include "rl_log.h"

#include <stdlib.h>

void rl_life_init(rl_life *life, rl_life_release release)
{
    life->refs = 0;
    life->closing = false;
    life->released = false;
    life->release = release;
}

static void maybe_release(rl_life *life)
{
    if (!life->closing || life->refs || life->released)
        return;
    life->released = true;
    if (life->release)
        life->release(life);
}

grpc_call_error rl_life_start_batch(rl_life *life, grpc_call *call, const grpc_op *ops, size_t n, rl_tag *tag)
{
    grpc_call_error e = grpc_call_start_batch(call, ops, n, tag, NULL);
    if (e == GRPC_CALL_OK)
        rl_life_ref(life);
    return e;
}

void rl_life_ref(rl_life *life)
{
    /* A reference after the release would keep nothing alive: the memory
     * may be gone already. Crash here, not in a completion later. */
    if (life->released) {
        RL_ERROR("rl_life: a reference taken after the release");
        abort();
    }
    life->refs++;
}

void rl_life_unref(rl_life *life)
{
    if (!life->refs) {
        RL_ERROR("rl_life: more references dropped than taken");
        abort();
    }
    life->refs--;
    maybe_release(life);
}

void rl_life_close(rl_life *life)
{
    life->closing = true;
    maybe_release(life);
}
