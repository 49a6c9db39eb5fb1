/* rl_channel: channels with a subchannel pool of their own; see rl_channel.h. */
#include "rl_channel.h"

#include "rl_alloc.h"

#include <grpc/grpc_security.h>
#include <stdlib.h>

grpc_channel *rl_channel_isolated(const char *target, const grpc_channel_args *extra)
{
    size_t n = extra ? extra->num_args : 0;
    grpc_arg *args = rl_xcalloc(n + 1, sizeof *args);
    for (size_t i = 0; i < n; i++)
        args[i] = extra->args[i];
    args[n].type = GRPC_ARG_INTEGER;
    args[n].key = (char *)GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL;
    args[n].value.integer = 1;
    grpc_channel_args ca = {.num_args = n + 1, .args = args};
    grpc_channel_credentials *creds = grpc_insecure_credentials_create();
    grpc_channel *ch = grpc_channel_create(target, creds, &ca);
    grpc_channel_credentials_release(creds);
    free(args);
    return ch;
}
