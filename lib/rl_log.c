/* rl_log: stderr logging; see rl_log.h. */
#include "rl_log.h"

#include "rl_text.h"

#include <grpc/support/log.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *prog_name = "relaylab";
static int max_level = -1;

static const char *const level_names[] = {"ERROR", "WARN", "INFO", "DEBUG"};

void rl_log_init(const char *prog)
{
    prog_name = prog;
    max_level = RL_LOG_INFO;
    const char *env = getenv("RELAYLAB_LOG");
    if (!env)
        return;
    for (int i = 0; i <= RL_LOG_DEBUG; i++)
        if (strcasecmp(env, level_names[i]) == 0 || (i == RL_LOG_WARN && strcasecmp(env, "warning") == 0))
            max_level = i;
}

int rl_log_enabled(enum rl_log_level level)
{
    if (max_level < 0)
        rl_log_init(prog_name);
    return (int)level <= max_level;
}

void rl_log(enum rl_log_level level, const char *fmt, ...)
{
    if (!rl_log_enabled(level))
        return;
    char line[1024], raw[1024];
    int n = snprintf(line, sizeof line, "%s %s ", prog_name, level_names[level]);
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    /* A record may quote a peer (a tag, status details, gRPC's own text on
     * a submission's bytes): one printable line, whatever it holds, so a log
     * printed later rewrites no terminal (rl_text.h). */
    line[n] = '\0';
    if (m > 0)
        rl_text_printable(line + n, sizeof line - (size_t)n - 1, raw, strlen(raw), 0);
    size_t len = strlen(line);
    line[len++] = '\n';
    /* One write per record keeps lines from different threads whole. */
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
}

void rl_log_grpc(gpr_log_func_args *a)
{
    enum rl_log_level level = a->severity == GPR_LOG_SEVERITY_ERROR  ? RL_LOG_ERROR
                              : a->severity == GPR_LOG_SEVERITY_INFO ? RL_LOG_INFO
                                                                     : RL_LOG_DEBUG;
    rl_log(level, "grpc %s:%d %s", a->file, a->line, a->message);
}
