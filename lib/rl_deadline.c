/* rl_deadline: monotonic instants and deadline arithmetic; see rl_deadline.h. */
#include "rl_deadline.h"

#include "rl_err.h"

#include <errno.h>
#include <time.h>

int64_t rl_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * RL_NS_PER_SEC + ts.tv_nsec;
}

void rl_sleep_ms(int64_t ms, const volatile sig_atomic_t *stop)
{
    if (ms <= 0)
        return;
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR && !(stop && *stop))
        ;
}

bool rl_deadline_is_infinite(gpr_timespec d)
{
    return gpr_time_cmp(d, gpr_inf_future(d.clock_type)) == 0;
}

int rl_deadline_to_ns(gpr_timespec d, int64_t *out_ns)
{
    if (rl_deadline_is_infinite(d))
        return RL_EINVAL;
    if (d.clock_type != GPR_CLOCK_MONOTONIC)
        d = gpr_convert_clock_type(d, GPR_CLOCK_MONOTONIC);
    *out_ns = d.tv_sec * RL_NS_PER_SEC + d.tv_nsec;
    return RL_OK;
}

gpr_timespec rl_ns_to_deadline(int64_t ns)
{
    gpr_timespec t;
    t.tv_sec = ns / RL_NS_PER_SEC;
    t.tv_nsec = (int32_t)(ns % RL_NS_PER_SEC);
    t.clock_type = GPR_CLOCK_MONOTONIC;
    return t;
}

gpr_timespec rl_deadline_after_ms(int64_t ms)
{
    if (ms < 0)
        return gpr_inf_future(GPR_CLOCK_MONOTONIC);
    return rl_ns_to_deadline(rl_now_ns() + ms * RL_NS_PER_MS);
}

int rl_deadline_remaining_ms(gpr_timespec d, int64_t now_ns, int64_t *out_ms)
{
    int64_t d_ns;
    if (rl_deadline_to_ns(d, &d_ns) != RL_OK)
        return RL_EINVAL;
    int64_t left = d_ns - now_ns;
    *out_ms = left > 0 ? left / RL_NS_PER_MS : 0;
    return RL_OK;
}

int64_t rl_wire_rounding_ms(int64_t ms)
{
    if (ms < 1000)
        return 0;
    if (ms < 10000)
        return 10;
    if (ms < 100000)
        return 100;
    return 1000;
}
