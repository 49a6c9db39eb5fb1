/* cancel_judge: the cancellation exercise's rules, apart from its scenarios
 * (ex_cancel.c) so that they are unit-tested without a process
 * (tests/unit/grader/test_cancel_judge.c): how soon a downstream call must
 * stop after the client's cancel, how many steps of Work fit until then, a
 * cancel passed on late by a starved machine, and each scenario's verdict
 * as a pure function of what it measured (facts in, a verdict and its
 * feedback out). Times are ms. */
#ifndef GR_CANCEL_JUDGE_H
#define GR_CANCEL_JUDGE_H

#include "verdict.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* From the client's cancel to the downstream call's end at the baseline
 * (cancel_judge.c says how it was measured); tests/integration/tolerances.py
 * reads it. */
#define GR_CANCEL_MS 150

typedef struct gr_cancel_check {
    const char *method;         /* the downstream call that should stop */
    int64_t latency_ms;         /* its end minus the client's cancel instant;
                                 * <0 if it had not ended when last observed */
    int64_t observed_ms;        /* how long after the cancel it was last seen */
    bool ended, cancelled;      /* from the baseline's record */
    uint32_t steps_done, steps; /* Work only; steps 0 for Lookup */
    uint32_t max_steps;         /* most steps possible had it stopped in time; 0: unchecked */
    int64_t waited_ms;          /* the chain's wait for a CPU meanwhile; <0 unknown */
    bool pass;
    bool starved; /* late only by |waited_ms|: not judged (ERROR) */
} gr_cancel_check;

/* Judges how fast |method| stopped after the cancel: it must have ended with
 * the baseline seeing it cancelled within GR_CANCEL_MS and, for Work,
 * done no more steps than fit until then. */
void gr_cancel_judge_stop(const char *method, bool ended, bool cancelled, int64_t end_minus_cancel_ms,
                          int64_t observed_ms, uint32_t steps_done, uint32_t steps, uint32_t max_steps,
                          gr_cancel_check *out);

/* A cancel passed on late, while the processes it had to cross (the
 * relay, the baseline) waited |waited_ms| for a CPU: when it would have been
 * in time without that wait, the lateness is the machine's, and |c| is
 * marked starved (grade again), never FAIL. A cancel never passed on (the
 * call ran on, or ended uncancelled) stays a FAIL whatever the wait: a
 * starved relay still passes it on, if late. |waited_ms| < 0: unknown,
 * nothing changes. */
void gr_cancel_starved(gr_cancel_check *c, int64_t waited_ms);

/* The most steps of |step_ms| a Work that arrived |ran_ms| before the cancel
 * can have completed if it stopped within GR_CANCEL_MS (+1 for a step
 * finishing as the cancel lands). */
uint32_t gr_cancel_max_steps(int64_t ran_ms, int64_t step_ms, uint32_t steps);

/* "Work kept running 1890 ms after the cancel (200/200 steps): cancellation
 * is not propagated", the passing numbers, or, starved, the wait and
 * "grade again". */
int gr_cancel_feedback(const gr_cancel_check *c, char *buf, size_t len);

/* The verdict on a cancel |cc| (gr_cancel_judge_stop, then
 * gr_cancel_starved): PASS, ERROR when starved (*starved set: the scenario
 * is measured again), else FAIL. Feedback into |buf|: gr_cancel_feedback,
 * and |more| after a PASS's. */
gr_verdict gr_cancel_verdict(const gr_cancel_check *cc, const char *more, bool *starved, char *buf, size_t len);

/* during-lookup: the cancel |cc| of Lookup, and whether the baseline then
 * saw a Work (|work_called|, |work_after_ms| after the cancel). FAIL for a
 * Work after the cancel, else gr_cancel_verdict noting none came. */
gr_verdict gr_cancel_judge_lookup(const gr_cancel_check *cc, bool work_called, int64_t work_after_ms, bool *starved,
                                  char *buf, size_t len);

/* keeps-serving: the Process after a cancelled one: PASS when it was
 * answered right (|ok|, in |ms|), else FAIL with |why|. */
gr_verdict gr_cancel_judge_keeps_serving(bool ok, const char *why, int64_t ms, char *buf, size_t len);

#endif
