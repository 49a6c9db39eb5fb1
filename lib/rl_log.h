/* rl_log: one-line log records on stderr, "prog LEVEL message". The level
 * comes from RELAYLAB_LOG (error, warn, info, debug; default info). Safe from
 * any thread: each record is one write. */
#ifndef RL_LOG_H
#define RL_LOG_H

#include <grpc/support/log.h>

enum rl_log_level { RL_LOG_ERROR, RL_LOG_WARN, RL_LOG_INFO, RL_LOG_DEBUG };

/* Sets the program name shown in every record; |prog| must outlive logging. */
void rl_log_init(const char *prog);
int rl_log_enabled(enum rl_log_level level);
void rl_log(enum rl_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A gpr_log_func that writes gRPC's own records as rl_log lines ("grpc
 * ERROR file:line message"). gRPC has no public default to restore after
 * gpr_set_log_function; pass this instead. */
void rl_log_grpc(gpr_log_func_args *args);

#define RL_ERROR(...) rl_log(RL_LOG_ERROR, __VA_ARGS__)
#define RL_WARN(...)  rl_log(RL_LOG_WARN, __VA_ARGS__)
#define RL_INFO(...)  rl_log(RL_LOG_INFO, __VA_ARGS__)
#define RL_DEBUG(...)                                                                                                  \
    do {                                                                                                               \
        if (rl_log_enabled(RL_LOG_DEBUG))                                                                              \
            rl_log(RL_LOG_DEBUG, __VA_ARGS__);                                                                         \
    } while (0)

#endif
