/* rl_err: names for librelaylab's error codes. */
#include "rl_err.h"

const char *rl_strerror(int code)
{
    switch (code) {
    case RL_OK: return "success";
    case RL_EINVAL: return "invalid argument";
    case RL_ESYS: return "system call failed";
    case RL_EGRPC: return "gRPC refused the operation";
    case RL_ETIMEOUT: return "timed out";
    case RL_ETOOBIG: return "too large";
    case RL_ENOTFOUND: return "not found";
    case RL_EPARSE: return "parse error";
    case RL_ECHILD: return "child process ended";
    case RL_ENOMEM: return "out of memory";
    default: return "unknown error";
    }
}
