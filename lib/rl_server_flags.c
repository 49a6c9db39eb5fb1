/* rl_server_flags: the flags every server shares, parsed once; see
 * rl_server_flags.h. */
#include "rl_server_flags.h"

#include "rl_err.h"
#include "rl_server.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The longest grace or drain delay a server takes: an hour. */
#define MAX_MS 3600000

/* Whole milliseconds, 0..MAX_MS, into *out (untouched on error): digits
 * only, no sign, space, unit or trailing text. */
static int parse_ms(const char *text, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = isdigit((unsigned char)text[0]) ? strtoll(text, &end, 10) : -1;
    if (v < 0 || errno || *end || v > MAX_MS)
        return RL_EINVAL;
    *out = v;
    return RL_OK;
}

static int bad_ms(const rl_server_flags *f, const char *what, const char *text, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s: %s wants whole milliseconds from 0 to %d, not '%s'", f->program, what, MAX_MS, text);
    return RL_EINVAL;
}

int rl_server_flags_init(rl_server_flags *f, const char *program, unsigned which, int threads_default, int threads_max,
                         int64_t grace_default_ms, char *err, size_t errlen)
{
    *f = (rl_server_flags){
        .program = program,
        .which = which,
        .threads_max = threads_max,
        .threads = threads_default,
        .grace_ms = grace_default_ms,
    };
    if (which & RL_FLAG_LISTEN)
        f->listen = getenv("RELAYLAB_LISTEN");
    const char *grace = (which & RL_FLAG_GRACE_ENV) ? getenv("RELAYLAB_GRACE_MS") : NULL;
    if (grace && *grace && parse_ms(grace, &f->grace_ms) != RL_OK)
        return bad_ms(f, "RELAYLAB_GRACE_MS", grace, err, errlen);
    return RL_OK;
}

int rl_server_flags_take(rl_server_flags *f, const char *name, const char *value, char *err, size_t errlen)
{
    if ((f->which & RL_FLAG_LISTEN) && strcmp(name, "--listen") == 0) {
        f->listen = value;
        return RL_OK;
    }
    if ((f->which & RL_FLAG_THREADS) && strcmp(name, "--threads") == 0) {
        char *end;
        errno = 0;
        long n = strtol(value, &end, 10);
        if (errno || end == value || *end || n < 1 || n > f->threads_max) {
            snprintf(err, errlen, "%s: --threads wants a number from 1 to %d, not '%s'", f->program, f->threads_max,
                     value);
            return RL_EINVAL;
        }
        f->threads = (int)n;
        return RL_OK;
    }
    int64_t *ms = (f->which & RL_FLAG_GRACE) && strcmp(name, "--grace-ms") == 0         ? &f->grace_ms
                  : (f->which & RL_FLAG_DRAIN) && strcmp(name, "--drain-delay-ms") == 0 ? &f->drain_delay_ms
                                                                                        : NULL;
    if (!ms)
        return RL_ENOTFOUND;
    return parse_ms(value, ms) == RL_OK ? RL_OK : bad_ms(f, name, value, err, errlen);
}

int rl_server_flags_done(rl_server_flags *f, char *err, size_t errlen)
{
    if (!f->listen || !*f->listen)
        f->listen = "127.0.0.1:0";
    char why[160];
    if (rl_server_check_timing(f->grace_ms, f->drain_delay_ms, why, sizeof why) != RL_OK) {
        snprintf(err, errlen, "%s: %s", f->program, why);
        return RL_EINVAL;
    }
    return RL_OK;
}
