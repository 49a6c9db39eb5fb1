/* intermediary: a TCP relay that behaves like a NAT or L4 load balancer with
 * an idle timeout. It forwards bytes both ways; once a connection has been
 * idle (no byte either way) for longer than the timeout it silently stops
 * forwarding that connection: bytes from either side are read and dropped,
 * nothing is closed or reset, just as when a NAT has forgotten the mapping.
 * Only the keepalive lab uses it. One thread serves every connection. */
#ifndef RL_GRADER_INTERMEDIARY_H
#define RL_GRADER_INTERMEDIARY_H

#include <stddef.h>
#include <stdint.h>

typedef struct rl_intermediary rl_intermediary;

typedef struct rl_intermediary_stats {
    int connections;     /* accepted so far */
    int dropped;         /* connections it went silent on */
    int64_t longest_idle_ms; /* longest idle gap seen on a live connection */
} rl_intermediary_stats;

/* Listens on 127.0.0.1:0 and forwards to 127.0.0.1:|upstream_port|.
 * Returns 0 and sets *out, or RL_ESYS with the reason in |err|. */
int rl_intermediary_start(int upstream_port, int64_t idle_timeout_ms, rl_intermediary **out, char *err,
                          size_t errlen);

/* The port it listens on. */
int rl_intermediary_port(const rl_intermediary *im);

/* A consistent copy of its counters. */
void rl_intermediary_stats_get(rl_intermediary *im, rl_intermediary_stats *out);

/* Stops the thread and closes every socket. Accepts NULL. */
void rl_intermediary_stop(rl_intermediary *im);

#endif
