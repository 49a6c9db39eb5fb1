/* flow_judge: the flow-control exercise's rules, apart from its scenarios
 * (ex_flow.c, gr_ex_flow) so that tests/unit/grader/test_flow_judge.c checks
 * them without processes: the memory budgets, the CPU after a cancel, and
 * each scenario's verdict as a pure function of what it measured (facts
 * in, a verdict and its feedback out). */
#ifndef GR_FLOW_JUDGE_H
#define GR_FLOW_JUDGE_H

#include "verdict.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How much the submission's process group may grow while its reader
 * stalls. Measured (bench/results/streamer.md): a producer paced by the
 * window grows ~1 MiB (C reference and Python generator alike), because the
 * 4-9 MiB a window lets out sit in the client, not the server; the
 * unbounded-queue mistake grows 187-198 MiB for 3000 x 64 KiB. 48 MiB is six
 * of the largest windows seen (8 MiB): room for a runtime's own buffers, a
 * small bounded queue or GC slack, and still a quarter of the mistake. */
#define GR_FLOW_BUDGET_MIB 48
/* The same with a slow reader that keeps chunks flowing: every chunk made
 * and sent is garbage a moment later, and a garbage-collected runtime holds
 * some of it. Measured: C and Python ~1 MiB; a correct grpc-js producer
 * 34.6-37.4 MiB (15 runs), 22 MiB of it V8 garbage (a forced GC every 50 ms
 * brings it to 11-15 MiB). 96 MiB is 2.5 times the worst correct figure,
 * and still half of what the unbounded mistake grows here (185-224 MiB). */
#define GR_FLOW_SLOW_BUDGET_MIB 96
/* CPU time the group may use in the window after a cancel. A stopped
 * producer uses almost none (measured: 0-20 ms per second for the C
 * reference and grpcio); one that goes on uses most of a core. */
#define GR_FLOW_CANCEL_WINDOW_MS 1000
#define GR_FLOW_CANCEL_CPU_MS    150
/* CPU the group asks for (run + wait in /proc/PID/task/TID/schedstat) in
 * that window. A producer that goes on has a thread runnable all the time,
 * so it asks for a whole core however little it is given (a starved one
 * that ignored the cancel was given 69 ms in 1259 ms). A stopped one asks
 * for little, but on a loaded machine each of its wake-ups waits: the idle
 * Python reference asked for 10-55 ms per second at load 11.6 on 2 cores,
 * and 391 ms in 1137 ms (4 ms run) with a CPU hog on every core
 * (selftest --load). So: asked for over GR_FLOW_CANCEL_GOES_ON_MS goes on
 * (FAIL); within GR_FLOW_CANCEL_IDLE_MS (and used within
 * GR_FLOW_CANCEL_CPU_MS) stopped; in between undecided (ERROR, grade
 * again), never PASS. */
#define GR_FLOW_CANCEL_IDLE_MS    450
#define GR_FLOW_CANCEL_GOES_ON_MS 700

typedef struct gr_flow_mem_check {
    double base_mib, peak_mib, growth_mib, budget_mib;
    uint64_t read, count; /* chunks read during the watch, and asked for */
    int64_t watched_ms;
    bool settled; /* the RSS had gone flat when the watch ended */
    bool pass;
} gr_flow_mem_check;

/* Judges a watch: pass while the peak stayed within |budget_mib| of the
 * baseline (GR_FLOW_BUDGET_MIB or GR_FLOW_SLOW_BUDGET_MIB). Byte counts in,
 * MiB in |out|. */
void gr_flow_judge_memory(uint64_t base_rss, uint64_t peak_rss, uint64_t read, uint64_t count, int64_t watched_ms,
                          bool settled, double budget_mib, gr_flow_mem_check *out);

/* One line: "RSS grew 187.2 MiB (33.6 -> 220.8 MiB) while the reader was
 * stalled (budget 48 MiB): the producer does not wait for the flow-control
 * window -- a thread filling an unbounded queue?", or the passing numbers.
 * |while_what| is e.g. "while the reader was stalled after 1 chunk".
 * Returns the snprintf length. */
int gr_flow_memory_feedback(const gr_flow_mem_check *c, const char *while_what, char *buf, size_t len);

/* True when a watch that ended with |rc| (an RL_E* code of rl_flow_stall)
 * after |received| of its |read_first| first chunks is judged by the memory
 * rule instead of the clock: the first chunks did not come in time
 * (RL_ETIMEOUT) while the group's RSS grew |growth| bytes, more than
 * |budget| (the scenario's budget in bytes). A producer that makes the
 * whole response before it sends any of it breaks the memory rule whatever
 * the timing, so that is FAIL, never TIMEOUT; within the budget the late
 * chunk stays a TIMEOUT. */
bool gr_flow_first_late_over_budget(int rc, uint64_t received, uint32_t read_first, uint64_t growth, uint64_t budget);

/* True when |cpu_ms| of CPU over |window_ms| after a cancel means the
 * producer stopped (scaled from GR_FLOW_CANCEL_CPU_MS per
 * GR_FLOW_CANCEL_WINDOW_MS). */
bool gr_flow_judge_cancel_cpu(int64_t cpu_ms, int64_t window_ms);

/* What the CPU after a cancel says: the producer stopped, went on, or the
 * machine was too busy to tell. */
typedef enum gr_flow_cancel_verdict {
    GR_FLOW_STOPPED,
    GR_FLOW_WENT_ON,
    GR_FLOW_STARVED, /* undecided: grade again (ERROR), never PASS */
} gr_flow_cancel_verdict;

/* Judges |window_ms| after a cancel in which the group used |cpu_ms| of CPU
 * and waited |wait_ms| runnable for a CPU. WENT_ON when it used more than
 * gr_flow_judge_cancel_cpu allows, or asked for (cpu + wait) more than
 * GR_FLOW_CANCEL_GOES_ON_MS per GR_FLOW_CANCEL_WINDOW_MS; STOPPED when it
 * asked for at most GR_FLOW_CANCEL_IDLE_MS; STARVED in between: it may
 * have wanted more than a stopped producer but was given too little to
 * show it. |wait_ms| < 0 means unknown (no schedstat): judged by CPU alone. */
gr_flow_cancel_verdict gr_flow_judge_cancel(int64_t cpu_ms, int64_t wait_ms, int64_t window_ms);

/* ---- the scenarios' verdicts ---- */

/* stall and slow-reader: PASS when the watch |c| passed its budget, else
 * FAIL; gr_flow_memory_feedback with |while_what|, cut at 400 bytes as it
 * always was. */
gr_verdict gr_flow_judge_watch(const gr_flow_mem_check *c, const char *while_what, char *buf, size_t len);

/* A step of the stream that failed with |rc| (an RL_E* code of rl_flow or
 * rl_stream) once the submission was known alive: TIMEOUT, FAIL for a
 * wrong stream (RL_EINVAL) or a gRPC failure of a call that started
 * (|call_started|), else ERROR (the grader's). "|what|: |err|" into |buf|. */
gr_verdict gr_flow_judge_failed(int rc, bool call_started, const char *what, const char *err, char *buf, size_t len);

/* The first chunks did not come in time (gr_flow_first_late_over_budget
 * held): the FAIL's words, |what| the stalled read, the group's RSS from
 * |base_rss| to |peak_rss| (growth |growth|), against |budget| (bytes). */
gr_verdict gr_flow_judge_grew_before_first(const char *what, uint64_t growth, uint64_t base_rss, uint64_t peak_rss,
                                           uint64_t budget, char *buf, size_t len);

/* A watch that ended with the RSS still rising. */
typedef struct gr_flow_rising_facts {
    bool rising;         /* the watch ended with the peak still rising */
    int starved_pct;     /* the watch's starvation bound, 0: none */
    int wait_pct;        /* the group's wait for a CPU in its last second */
    int64_t watched_ms;  /* how long it watched */
    uint64_t growth;     /* the group's RSS over the start, bytes */
    uint64_t rise_1s;    /* its rise in the last second */
    uint64_t rise_trend; /* ... in the last |trend_ms| */
    int64_t trend_ms;
    uint64_t budget; /* the watch's undecided bound, bytes */
} gr_flow_rising_facts;

/* True, with the ERROR's words in |buf|, when the watch ended with the RSS
 * still rising: that has not shown whether the producer stops (on a quiet
 * machine every producer is flat or past its budget long before), so it
 * is a machine too busy to judge, not a PASS. */
bool gr_flow_judge_rising(const gr_flow_rising_facts *f, char *buf, size_t len);

/* cancel, before the cancel: the stalled watch |c| (|read| chunks read).
 * FAIL when it grew past its budget (nothing left for the cancel to stop),
 * else PASS (go on) with |buf| untouched. */
gr_verdict gr_flow_judge_before_cancel(const gr_flow_mem_check *c, uint64_t read, char *buf, size_t len);

/* cancel, after it: |cpu_ms| used and |wait_ms| waited (-1: unknown) in
 * |window_ms| starting |settle_ms| after the cancel. ERROR when starved
 * (gr_flow_judge_cancel), FAIL when the producer went on (by what it asked
 * for, then by what it used); else PASS (go on) with |buf| untouched. */
gr_verdict gr_flow_judge_cpu_after_cancel(int64_t cpu_ms, int64_t wait_ms, int64_t window_ms, int settle_ms, char *buf,
                                          size_t len);

/* cancel, the RSS watch |c| from before the call to after the cancel:
 * FAIL when it went on growing past its budget, else PASS (go on) with
 * |buf| untouched. */
gr_verdict gr_flow_judge_after_cancel_memory(const gr_flow_mem_check *c, char *buf, size_t len);

/* cancel's PASS, once a new Produce succeeded: |read| chunks before the
 * stall, |growth_mib|, and the CPU after the cancel. */
gr_verdict gr_flow_judge_cancel_pass(uint64_t read, double growth_mib, int64_t cpu_ms, int64_t window_ms, char *buf,
                                     size_t len);

/* resume's PASS: every one of |count| chunks (|bytes|) arrived in order
 * after a |stall_ms| stall, the rest in |rest_ms|. */
gr_verdict gr_flow_judge_resume(int64_t stall_ms, uint32_t count, uint64_t bytes, int64_t rest_ms, char *buf,
                                size_t len);

#endif
