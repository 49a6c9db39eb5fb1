/* config_figure: the picture of a config exercise's `check` scenario
 * (figure.h). A config is numbers, and the rules it must keep are numbers
 * of the world it runs in; the picture puts both on one time axis:
 *   keepalive  the ping period of each side against the server's minimum
 *              interval and the intermediary's idle cut-off;
 *   retry      Lookup's attempts and the longest wait before each, against
 *              the call's deadline and the world's restarting backend;
 *   balance    the connection's age, its grace and the world's longest call.
 * It reads the config only through rl_chancfg's public readers and judges
 * nothing: the verdict is lib/chancfg's rules'. Where a rule the picture
 * does not draw is broken, the caption names it. A config that lacks what
 * a picture needs (no intermediary, a service config gRPC would refuse)
 * gets a picture of what it has, or none (GR_FIG_NONE). Nothing is owned
 * or kept. */
#ifndef GR_CONFIG_FIGURE_H
#define GR_CONFIG_FIGURE_H

#include "chancfg/rl_chancfg.h"
#include "figure.h"

#include <stdint.h>

/* What the picture is drawn from. */
typedef struct gr_config_fig_in {
    const rl_chancfg *cfg;    /* the config in its world (rl_chancfg_in_world) */
    int unavailable_in_a_row; /* the world's restarting backend (retry); 0: not stated */
    const char *broken;       /* the first broken rule's id, or NULL when none is */
} gr_config_fig_in;

/* Draws |exercise|'s check picture ("keepalive", "retry", "balance") into
 * |f|; another exercise, or a config without the numbers, leaves |f| as
 * GR_FIG_NONE. */
void gr_config_figure(gr_figure *f, const char *exercise, const gr_config_fig_in *in);

/* The longest wait gRPC 1.51 makes before retry |retry| (1: the first
 * retry, the call's second attempt) of a method with |m|'s retryPolicy:
 * the initial backoff for the first, then min(initial x multiplier^(n-1),
 * maxBackoff) with up to 20 % jitter added (docs/grpc-facts.md). In ms;
 * 0 for |retry| < 1. */
int64_t gr_retry_longest_wait_ms(const rl_chancfg_method *m, int retry);

#endif
