/* rl_handler: the count of server calls in handlers' hands; see rl_handler.h. */
#include "rl_handler.h"

#include <stdatomic.h>

/* Server calls handed to handlers and not yet released, across the process
 * (every program here runs one server). */
static atomic_long calls_in_flight;

void rl_server_call_end(void)
{
    atomic_fetch_sub(&calls_in_flight, 1);
}

void rl_server_hold(void)
{
    atomic_fetch_add(&calls_in_flight, 1);
}

long rl_server_calls_in_flight(void)
{
    return atomic_load(&calls_in_flight);
}
