/* ports: the submission's listening port: how the grader picks it, and
 * whose socket holds it when the submission does not become ready.
 *
 * The grader can only name a free port and hope: between its check and the
 * submission's bind, another process (a second grader grading in parallel,
 * anything calling connect or bind(0)) can take it. So the pick avoids the
 * ports the kernel hands out by itself, and the driver asks, before judging
 * a submission NOT-READY or talking to what listens there, whether a socket
 * on that port belongs to someone else: that is a clash, not a verdict. */
#ifndef GR_PORTS_H
#define GR_PORTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Test hook: when the environment has GR_PORTS_TEST_CLASH_ENV=PORT, the
 * first gr_ports_pick of each submission start returns PORT unchecked, so an
 * integration test can hold that port and watch the grader recover. Never
 * set it for real grading. */
#define GR_PORTS_TEST_CLASH_ENV "RELAYLAB_GRADER_TEST_PORT_CLASH"

/* A port on 127.0.0.1 that was free a moment ago, chosen at random below
 * the kernel's ephemeral range (ip_local_port_range), where only an
 * explicit bind can take it; from inside that range if it leaves too little
 * room below. |first| says this is a start's first pick (the test hook
 * applies). Returns 0 with *port set, or RL_ESYS when no free port was
 * found in many tries (errno from the last bind). */
int gr_ports_pick(bool first, int *port);

/* One line of /proc/net/tcp or tcp6: local port, state (0x0A is LISTEN)
 * and socket inode (0 for TIME_WAIT and other ownerless sockets). Returns
 * 0, or RL_EPARSE for the header or a malformed line. */
int gr_ports_parse_line(const char *line, int *port, int *state, uint64_t *inode);

#define GR_PORTS_LISTEN 0x0A

/* Whose sockets use |port| as their local port, on any address.
 * |listeners_only| looks at LISTEN sockets only. "Ours" are the sockets
 * held by the submission: processes in group |pgid|, their descendants, and
 * children of this process (escaped orphans come back to the subreaper)
 * other than the |nexcept| pids of |except| and their descendants (the
 * baselines). Sets *ours and
 * *foreign to the counts. Ownerless sockets (inode 0: TIME_WAIT, closed by
 * their process and still closing) are not counted: they are what is left
 * of connections already gone, including the grader's own probes of the
 * submission. Returns 0 or RL_ESYS when /proc/net/tcp cannot be read. */
int gr_ports_holders(int port, bool listeners_only, pid_t pgid, const pid_t *except, size_t nexcept, int *ours,
                     int *foreign);

/* How many TCP connections have |port| as their local port and are open
 * or opening (ESTABLISHED or SYN_RECV, accepted or still queued): a
 * listener's incoming connections, whoever holds the other end. Sets
 * *count. Returns 0 or RL_ESYS when /proc/net/tcp cannot be read. */
int gr_ports_connections(int port, int *count);

#define GR_PORTS_ESTABLISHED 0x01
#define GR_PORTS_SYN_RECV    0x03

#endif
