/* rl_tcp: is anything listening on a loopback port? The grader waits for a
 * submission's listener to open (readiness) and the shutdown exercise and
 * demo wait for it to close (admission closed at SIGTERM); both ask the one
 * question here, with a plain TCP connect that is closed at once (no gRPC,
 * no bytes sent: the listener's program sees at most an accept and a close).
 *
 * A loopback connect is answered at once, accepted or refused; "no answer"
 * means the accept queue is full or the machine is starved, so callers that
 * wait for a change treat it as "not yet". Any thread. */
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

#endif
