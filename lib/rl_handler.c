/* rl_handler: the count of server calls in handlers' hands; see rl_handler.h. */
#include "rl_handler.h"

#include "rl_alloc.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

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

/* A refused call: its one batch, freed when it completes. */
typedef struct reject_state {
    rl_tag tag;
    grpc_call *call;
    int cancelled;
    grpc_slice detail;
} reject_state;

static void reject_done(rl_tag *tag, bool ok)
{
    (void)ok;
    reject_state *r = (reject_state *)tag;
    grpc_slice_unref(r->detail);
    grpc_call_unref(r->call);
    rl_server_call_end();
    free(r);
}

void rl_server_reject(grpc_call *call, grpc_status_code code, const char *msg)
{
    reject_state *r = rl_xcalloc(1, sizeof *r);
    r->tag.done = reject_done;
    r->call = call;
    r->detail = grpc_slice_from_copied_string(msg);
    grpc_op ops[3];
    memset(ops, 0, sizeof ops);
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[1].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
    ops[1].data.recv_close_on_server.cancelled = &r->cancelled;
    ops[2].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
    ops[2].data.send_status_from_server.status = code;
    ops[2].data.send_status_from_server.status_details = &r->detail;
    if (grpc_call_start_batch(call, ops, 3, &r->tag, NULL) != GRPC_CALL_OK)
        reject_done(&r->tag, false);
}
