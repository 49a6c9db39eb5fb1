/* rl_tcp: is anything listening on a loopback port? The grader waits for a
 * submission's listener to open (readiness) and the shutdown exercise and
 * demo wait for it to close (admission closed at SIGTERM); both ask the one
 * question here, with a plain TCP connect that is closed at once (no gRPC,
 * no bytes sent: the listener's program sees at most an accept and a close).
 *
 * A loopback connect is answered at once, accepted or refused; "no answer"
 * means the accept queue is full or the machine is starved, so callers that
 * wait for a change treat it as "not yet".
 *
 * A port whose server was stopped on purpose (a backend that went away)
 * must stay closed until it is started again: rl_tcp_hold keeps it from
 * being given to another program meanwhile. Any thread. */
#ifndef RL_TCP_H
#define RL_TCP_H

typedef enum rl_tcp_answer {
    RL_TCP_ACCEPTED = 0, /* a listener took the connection */
    RL_TCP_REFUSED,      /* nothing listens there (ECONNREFUSED) */
    RL_TCP_NO_ANSWER,    /* neither within |wait_ms|, or another error */
} rl_tcp_answer;

/* Connects to 127.0.0.1:|port|, waiting at most |wait_ms| (>= 0) for the
 * answer, and sets *out. Returns 0, RL_EINVAL for a port outside 1..65535 or
 * a negative wait, or RL_ESYS when no socket could be made. */
int rl_tcp_probe(int port, int wait_ms, rl_tcp_answer *out);

/* The port of a "HOST:PORT" address (the last colon's tail, so "[::1]:80"
 * works too), or RL_EINVAL when it has none in 1..65535. */
int rl_tcp_port_of(const char *addr);

/* Holds 127.0.0.1:|port| with a socket that is bound and never listens, so
 * that while the server there is stopped a connect is refused and no other
 * program is handed the port: the kernel skips a bound port when it picks
 * one for a bind to port 0, which is how every server of the kit and of
 * its tests gets its port (a server of another grader was handed a
 * stopped baseline's port and answered for it). With SO_REUSEADDR the hold
 * can be taken at once after the server stopped (its connections in
 * TIME_WAIT do not stand in the way) and a server that sets SO_REUSEADDR
 * (gRPC's listeners do) binds and listens there again while it is held;
 * with SO_REUSEPORT it can even be taken while the server still listens,
 * if that server set SO_REUSEPORT too (gRPC's default; the kit's servers
 * turn it off, rl_server.h, so theirs is held right after they stop). A
 * program of the same user that binds this very port with SO_REUSEADDR can
 * still listen there: the hold guards against being handed the port, not
 * against one who asks for it. Sets *fd (the caller owns it and closes it
 * to release the port). Returns 0, RL_EINVAL for a port outside 1..65535,
 * or RL_ESYS (errno set: EADDRINUSE while a listener without SO_REUSEPORT,
 * or of another user, is there). */
int rl_tcp_hold(int port, int *fd);

#endif
