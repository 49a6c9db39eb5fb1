/* rl_server_flags: the flags and environment every server of the kit shares,
 * parsed in one place (docs/DESIGN.md, "Conventions every server follows"):
 * --listen ADDR ($RELAYLAB_LISTEN, else 127.0.0.1:0), --threads N,
 * --grace-ms MS ($RELAYLAB_GRACE_MS, else the program's default) and
 * --drain-delay-ms MS. A program says which it takes, parses its own flags
 * around them (offering each flag to rl_server_flags_take first), and
 * checks the timing once at the end. Messages go into the caller's buffer,
 * prefixed with the program's name, ready for stderr. */
#ifndef RL_SERVER_FLAGS_H
#define RL_SERVER_FLAGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Which shared flags a program takes (rl_server_flags.which). */
enum {
    RL_FLAG_LISTEN = 1u << 0,    /* --listen ADDR and $RELAYLAB_LISTEN */
    RL_FLAG_THREADS = 1u << 1,   /* --threads N, 1..threads_max */
    RL_FLAG_GRACE = 1u << 2,     /* --grace-ms MS */
    RL_FLAG_GRACE_ENV = 1u << 3, /* $RELAYLAB_GRACE_MS, below --grace-ms */
    RL_FLAG_DRAIN = 1u << 4,     /* --drain-delay-ms MS, below the grace */
    RL_FLAG_SERVER = RL_FLAG_LISTEN | RL_FLAG_THREADS | RL_FLAG_GRACE | RL_FLAG_GRACE_ENV | RL_FLAG_DRAIN,
};

typedef struct rl_server_flags {
    const char *program;    /* "relay": the messages' prefix (borrowed) */
    unsigned which;         /* RL_FLAG_* this program takes */
    int threads_max;        /* the largest --threads */
    const char *listen;     /* never NULL or "" after rl_server_flags_done
                             * (borrowed from argv or the environment) */
    int threads;            /* --threads, else the program's default */
    int64_t grace_ms;       /* --grace-ms, else $RELAYLAB_GRACE_MS, else the
                             * program's default */
    int64_t drain_delay_ms; /* --drain-delay-ms, else 0; below grace_ms */
} rl_server_flags;

/* Sets |f| to the program's defaults and reads the environment the flags in
 * |which| stand for. Returns 0, or RL_EINVAL with |err| saying which value
 * is wrong ("relay: RELAYLAB_GRACE_MS wants whole milliseconds ..."). */
int rl_server_flags_init(rl_server_flags *f, const char *program, unsigned which, int threads_default, int threads_max,
                         int64_t grace_default_ms, char *err, size_t errlen);

/* Takes |name| ("--grace-ms") with |value| when it is one of the shared
 * flags this program takes. Returns 0 when taken, RL_ENOTFOUND when |name|
 * is none of them (the program's own, or unknown), RL_EINVAL with |err|
 * filled when the value is wrong. */
int rl_server_flags_take(rl_server_flags *f, const char *name, const char *value, char *err, size_t errlen);

/* After the last flag: the default address, and the drain delay against the
 * grace. Returns 0, or RL_EINVAL with |err| filled. */
int rl_server_flags_done(rl_server_flags *f, char *err, size_t errlen);

#endif
