/* keepalive_figure: the keepalive exercise's live pictures (figure.h),
 * drawn from what ex_keepalive.c measured: the connection through the
 * lab's NAT over a silence, and no-goaway's calls and idle gaps against
 * the ping periods as the run gave them (the lab's time). Nothing here
 * judges or reads the config: the scenario hands over the periods it ran
 * with. Nothing is owned. */
#ifndef GR_KEEPALIVE_FIGURE_H
#define GR_KEEPALIVE_FIGURE_H

#include "exercise.h"
#include "keepalive_judge.h"

#include <stdbool.h>
#include <stdint.h>

/* What both pictures draw besides the calls. */
typedef struct gr_ka_picture {
    double k;            /* world time / lab time, >= 1 */
    int64_t nat_ms;      /* the lab NAT's idle timeout */
    int64_t real_ka;     /* the config's client keepalive time (world ms), INT_MAX: off */
    int64_t lab_ka;      /* the NAT picture's: that time as the run gave it
                          * (scaled), 0 when off or not positive: not drawn */
    const char *ka;      /* the config's client keepalive time in words */
    int dropped;         /* connections the NAT went silent on */
    bool too_many_pings; /* the server sent GOAWAY too_many_pings */
} gr_ka_picture;

/* The picture of the connection through the lab's NAT: the first call
 * |first|, the silence (between calls, or a call that sends nothing), the
 * instant the NAT forgets a connection idle that long, the client's
 * keepalive period, and how the next call |next| (or the silent call)
 * ended. Durations as measured; the silence as the grader held it. */
void gr_ka_nat_figure(gr_scenario_result *out, const gr_ka_picture *p, const gr_ka_call *first, const gr_ka_call *next,
                      bool between_calls);

/* no-goaway's calls and idle gaps, kept for its picture. */
#define GR_KA_GOAWAY_MAX_CALLS 8
typedef struct gr_ka_goaway_run {
    int64_t t0;
    int n;
    int64_t start_ns[GR_KA_GOAWAY_MAX_CALLS], call_ms[GR_KA_GOAWAY_MAX_CALLS], idle_end_ns[GR_KA_GOAWAY_MAX_CALLS];
    bool ok[GR_KA_GOAWAY_MAX_CALLS];
    int calls, failed; /* all the calls made, and failed */
    int64_t lab_ka;    /* the client's keepalive time as run; 0: none drawn */
    int64_t lab_min;   /* the server's min ping interval as run (else the default) */
    bool min_drawn;    /* ... drawn */
    int64_t goaway_ns; /* when the GOAWAY too_many_pings came, 0: none */
} gr_ka_goaway_run;

/* no-goaway's picture (ms since the first call started): each call and
 * idle gap of |m| as they ran, the client's ping period against the most
 * often the server permits one (both as run, scaled to the lab's time),
 * and the GOAWAY too_many_pings when it came. A period longer than the run
 * is drawn to the run's end and says so. */
void gr_ka_goaway_figure(gr_scenario_result *out, const gr_ka_picture *p, const gr_ka_goaway_run *m);

#endif
