/* rl_err: the one error-code enum of librelaylab. Functions return 0 or a
 * negative RL_E* code; rl_strerror names it for messages. */
#ifndef RL_ERR_H
#define RL_ERR_H

enum {
    RL_OK = 0,
    RL_EINVAL = -1,    /* bad argument or malformed input */
    RL_ESYS = -2,      /* a system call failed; errno says why */
    RL_EGRPC = -3,     /* gRPC refused an operation */
    RL_ETIMEOUT = -4,  /* a deadline passed before the condition held */
    RL_ETOOBIG = -5,   /* input above a size limit */
    RL_ENOTFOUND = -6, /* no such file, entry or method */
    RL_EPARSE = -7,    /* a file could not be parsed */
    RL_ECHILD = -8,    /* a child process exited or died */
    RL_ENOMEM = -9,    /* out of memory: only reusable libraries return it (see rl_alloc.h) */
};

/* Returns a static, human-readable name for |code|. */
const char *rl_strerror(int code);

#endif
