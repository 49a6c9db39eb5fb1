/* fd_guard: the baseline's file descriptors kept for its observer, whatever
 * a submission does to its public port. The baseline is the grader's
 * instrument: a submission that opens thousands of idle connections to the
 * public port (21,600 in the measured attack) used to take every
 * descriptor, and gRPC 1.51's listener stops for good at its first EMFILE
 * (docs/grpc-facts.md): the grader's next connection to the private unix
 * socket was never accepted, and the grader reported an ERROR of its own.
 *
 * gRPC 1.51 has no cap on incoming connections, so the guard sits where
 * every connection comes in: this file defines accept4(), which takes the
 * place of libc's for libgrpc (the executable's definition comes first in
 * the dynamic linker's search), accepts, and closes at once a TCP connection
 * whose descriptor would leave fewer than BL_FD_RESERVE free. Unix-socket
 * connections (the observer's) are always kept. */
#ifndef BL_FD_GUARD_H
#define BL_FD_GUARD_H

#include <stdint.h>

/* Descriptors kept free of public connections: the observer's connections,
 * the record file, gRPC's own wakeup and timer descriptors. */
#define BL_FD_RESERVE 256
/* And no public connection gets a descriptor numbered this or above, even
 * with a higher limit: thousands of idle connections the baseline has
 * accepted still cost it work (each is an HTTP/2 handshake waiting for its
 * preface), and the observer's calls wait behind that work. An honest
 * relay, or the balance exercise's six clients through their balancer,
 * holds a handful. */
#define BL_FD_PUBLIC_MAX 4096

/* Raises the soft RLIMIT_NOFILE to the hard limit (more room for honest
 * connections too) and arms the guard below the resulting limit. Call once,
 * before gRPC listens. Returns 0, or -1 when the limit cannot be read (the
 * guard then stays off). */
int bl_fd_guard_init(void);

#endif
