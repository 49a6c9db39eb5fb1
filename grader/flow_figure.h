/* flow_figure: the flow-control exercise's pictures (figure.h), drawn from
 * what ex_flow.c measured: the group's RSS over a watch against the
 * budget, the stall and the resumed read, and the CPU before and after a
 * cancel. Nothing here judges (the captions follow the verdict's facts)
 * and nothing samples; nothing is owned. */
#ifndef GR_FLOW_FIGURE_H
#define GR_FLOW_FIGURE_H

#include "exercise.h"
#include "flow_judge.h"
#include "rl_flow.h"

#include <stdbool.h>
#include <stdint.h>

/* The picture of a watch (|w|, with options |o| and result |res|): the
 * group's RSS over time against the budget line (the RSS at the start
 * plus |budget_mib|), with the moment the reader stalled (or began to read
 * slowly) marked; the caption by |pass|. */
void gr_flow_figure(gr_scenario_result *out, const rl_memwatch *w, const rl_flow_stall_opts *o,
                    const rl_flow_stall_result *res, double budget_mib, bool pass);

/* resume's picture: the stall's RSS against the budget (gr_flow_figure),
 * with the sample taken once the rest was read (or the read failed), and
 * the moments |t0| the reader began again and that sample marked. The
 * caption speaks of the chunks alone: memory is stall's rule, and an
 * unbounded producer passes resume. */
void gr_flow_resume_figure(gr_scenario_result *out, const rl_memwatch *w, const rl_flow_stall_opts *o,
                           const rl_flow_stall_result *res, int64_t t0, bool ok);

/* cancel's picture after the cancel at |cn|: the CPU the group used since
 * Produce was called, from every sample of the watch |w|, with the cancel
 * and the judged window [|win0|, |win1|] marked: a producer that stopped
 * is flat from the cancel on. */
void gr_flow_cancel_figure(gr_scenario_result *out, const rl_memwatch *w, int64_t cn, int64_t win0, int64_t win1,
                           int64_t cpu_ms, int64_t window_ms, gr_flow_cancel_verdict cv);

#endif
