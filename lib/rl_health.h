/* rl_health: the standard health service (grpc.health.v1.Health, Check and
 * Watch; proto/health.proto) for an rl_server, which serves it on every
 * listener next to the program's own methods.
 *
 * The status is the process's (every program here runs one server): SERVING
 * once the server listens, NOT_SERVING from the moment the shutdown signal
 * arrives, so probes and load balancers with client-side health checking stop
 * sending before the listener closes (rl_server_options.drain_delay_ms). The
 * server knows "" (itself) and every service its methods belong to; both
 * report the same status. A Watch stream follows the status until the server
 * closes admission, then ends with UNAVAILABLE so it never holds a drain.
 *
 * gRPC's C API cannot wake another thread's completion queue, so a Watch
 * looks at the status on its own loop every RL_HEALTH_POLL_MS: a change
 * reaches watchers within that time, a Check sees it at once.
 *
 * Uses rl_unary and rl_handler; rl_server uses it (never the other way). */
#ifndef RL_HEALTH_H
#define RL_HEALTH_H

#include "rl_handler.h"

#include <stdbool.h>
#include <stddef.h>

#define RL_HEALTH_SERVICE    "grpc.health.v1.Health"
#define RL_HEALTH_CHECK_PATH "/grpc.health.v1.Health/Check"
#define RL_HEALTH_WATCH_PATH "/grpc.health.v1.Health/Watch"
#define RL_HEALTH_POLL_MS    5

/* The services a server reports on: "" and the service part of each method
 * path ("/relaylab.Relay/Process" -> "relaylab.Relay"), without duplicates. */
typedef struct rl_health {
    char **services; /* owned, |nservices| strings */
    size_t nservices;
} rl_health;

/* Fills |h| from |methods|. Returns 0. */
int rl_health_init(rl_health *h, const rl_method *methods, size_t nmethods);

/* Frees the names. Accepts a zeroed struct. */
void rl_health_fini(rl_health *h);

/* True when |h| reports on |service|. */
bool rl_health_knows(const rl_health *h, const char *service);

/* Sets the process's status: SERVING (|serving|) or NOT_SERVING. Thread-safe;
 * Watch streams send the change within RL_HEALTH_POLL_MS. */
void rl_health_set_serving(bool serving);

/* The process's status now. */
bool rl_health_serving(void);

/* Watch streams send the status they have not sent yet, then end with
 * UNAVAILABLE, within RL_HEALTH_POLL_MS; a Watch that starts later ends as
 * soon as it sent the status. rl_health_set_serving(true) undoes it (a new
 * server in the same process). Thread-safe. */
void rl_health_end_watches(void);

/* rl_method_start for Check and Watch; |user| is the server's rl_health,
 * which must outlive every call. Take ownership of |call|. */
void rl_health_check_start(rl_loop *loop, grpc_call *call, const rl_call_info *info, void *user);
void rl_health_watch_start(rl_loop *loop, grpc_call *call, const rl_call_info *info, void *user);

#endif
