/* shutdown_judge: the shutdown exercise's rules, apart from its scenarios
 * (ex_shutdown.c) so that they are unit-tested without a process
 * (tests/unit/grader/test_shutdown_judge.c): what a refusal is, when a
 * signal came in time to tell a drain from a stop(0), what an exit says,
 * and each scenario's verdict as a pure function of what it measured
 * (facts in, a verdict and its feedback out). Times are ms unless named
 * _ns. Nothing is owned: every pointer in a facts struct is read during
 * the call only. */
#ifndef GR_SHUTDOWN_JUDGE_H
#define GR_SHUTDOWN_JUDGE_H

#include "run.h"
#include "verdict.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* At a shutdown's grace the downstream Work must end with it: this bounds
 * how late (the submission's own grace timer on a loaded machine, then the
 * cancel's 1-3 ms), and GRACE_EARLY_MS how early (the server starts its
 * grace a moment after the grader's signal). The tests of the known
 * submissions hold them too (tests/integration/tolerances.py reads them). */
#define GR_SHUTDOWN_GRACE_LATE_MS  750
#define GR_SHUTDOWN_GRACE_EARLY_MS 100

/* ---- refusals at shutdown ---- */

/* After SIGTERM a server closes its listener within GR_SHUTDOWN_ADMISSION_MS
 * (a handler runs within milliseconds; a second is a loaded machine's
 * scheduling delay many times over), and refuses every call it did not
 * admit. A refusal is a call that fails within GR_SHUTDOWN_REFUSE_MS (1-2 ms
 * measured, docs/grpc-facts.md) with any status but the ones in
 * GR_SHUTDOWN_NOT_REFUSALS. Which status is gRPC's, not the server's code: a
 * stream that reached the draining connection before the client saw its
 * GOAWAY is cancelled (CANCELLED), one on a new connection is refused
 * (UNAVAILABLE); being served, or left to the deadline, is the mistake.
 * tests/integration/tolerances.py reads these three definitions, so the
 * integration tests judge the same rule as the shutdown exercise. */
#define GR_SHUTDOWN_ADMISSION_MS 1000
#define GR_SHUTDOWN_REFUSE_MS    1000
#define GR_SHUTDOWN_NOT_REFUSALS GRPC_STATUS_OK, GRPC_STATUS_DEADLINE_EXCEEDED

/* True when a call that ended with gRPC status |status| |took_ms| after it
 * started was refused, as above. */
bool gr_shutdown_refused(int status, int64_t took_ms);

/* ---- the call in flight at SIGTERM ----
 *
 * A server that stops at once at SIGTERM (stop(0)) fails the call in flight
 * only if that call's downstream Work still runs when the server acts on the
 * signal; a Work that ends before then is answered by either kind of server.
 * So a call that completed OK shows a drain only when its Work ran on long
 * enough after the signal for a stop(0) to have cut it. What a stop(0) needs
 * is the signal's delivery, its handler and the cancel reaching the
 * downstream server: milliseconds on a quiet machine (docs/grpc-facts.md:
 * a server's on_cancel runs within milliseconds), but a loaded machine
 * delays the relay as it delays the grader. The margin is a share of the call's own plan (steps
 * x step_ms), so that it follows the Work it judges: half the plan, 400 ms
 * of an 8 x 100 ms Work, hundreds of times what a stop(0) takes, while a
 * grader that signals once a step is done normally leaves (steps - 1) steps,
 * 700 ms, and so may lag 300 ms before a run has to be taken again. */
#define GR_SHUTDOWN_STOP_MARGIN_PCT 50

/* The margin above for a Work of |steps| x |step_ms|, in ms. */
int64_t gr_shutdown_stop_margin(uint32_t steps, int64_t step_ms);

/* True when the signal came in time to tell a drain from a stop(0): the
 * call's Work ended |work_left_ms| after the grader sent SIGTERM (its end,
 * from the baseline's record, minus the signal's instant on the same
 * monotonic clock; negative when it had ended before), and that is at least
 * gr_shutdown_stop_margin(steps, step_ms). False: the run cannot tell, and is
 * to be taken again, never passed. */
bool gr_shutdown_signal_in_time(int64_t work_left_ms, uint32_t steps, int64_t step_ms);

/* The words for an exit |ex| that is not the graceful one (status 0), or
 * NULL: a death by SIGTERM is the missing handler; another signal, a
 * crash; still running when the grader killed it, a held exit. Static
 * strings. */
const char *gr_shutdown_exit_mistake(const gr_exit *ex);

/* ---- the scenarios' verdicts ---- */

/* The ERROR when every one of |n| runs of a scenario with a call in flight
 * saw the signal too late to tell (gr_shutdown_signal_in_time false):
 * |left_ms|[i] how long each run's Work ran on after SIGTERM, its plan
 * |steps| x |step_ms|. Feedback into |buf|; returns GR_ERROR. */
gr_verdict gr_shutdown_judge_too_late(const int64_t *left_ms, int n, uint32_t steps, int64_t step_ms, char *buf,
                                      size_t len);

/* What one run of in-flight saw of the call in flight at SIGTERM. */
typedef struct gr_shutdown_in_flight_facts {
    int grace_ms;
    int waited_ms;      /* how long after SIGTERM the grader waited for the answer */
    bool answered;      /* the call had its status within |waited_ms| */
    bool ok;            /* ... and it was Process's right reply */
    int64_t ms;         /* SIGTERM to that status */
    int64_t left_ms;    /* (ok) its Work ran on this long after SIGTERM,
                         * which gr_shutdown_signal_in_time already held
                         * long enough */
    const char *status; /* (not ok) the status, as gr_process_status_text */
    const gr_exit *ex;  /* (not ok) the exit awaited after it */
} gr_shutdown_in_flight_facts;

/* in-flight: PASS when the call completed OK, else FAIL: no answer by
 * the grace (the drain never ends), killed by SIGTERM (no handler), or
 * failed (no grace). Feedback into |buf|. */
gr_verdict gr_shutdown_judge_in_flight(const gr_shutdown_in_flight_facts *f, char *buf, size_t len);

/* What refuses-new saw after SIGTERM. */
typedef struct gr_shutdown_refuses_facts {
    bool closed;             /* the listener closed within GR_SHUTDOWN_ADMISSION_MS */
    const gr_exit *ex;       /* (not closed) the exit when the process had
                              * exited by then, else NULL */
    int64_t closed_ms;       /* (closed) SIGTERM to the close */
    bool told;               /* a GOAWAY was read on the open connection */
    int64_t after_ms;        /* SIGTERM to the new call's start */
    int status;              /* the new call's gRPC status */
    int64_t took_ms;         /* its start to that status */
    const char *status_text; /* the same, as gr_process_status_text */
    const gr_exit *died;     /* the process had died of SIGTERM once the
                              * admitted call was over, else NULL */
    bool admitted_ended;     /* the admitted call had ended by the verdict */
} gr_shutdown_refuses_facts;

/* refuses-new: FAIL when the listener stayed open (or the process died at
 * once), when only the dead process refused, when the new call was served
 * (named on a connection without a GOAWAY) or refused slowly
 * (gr_shutdown_refused); else PASS. Feedback into |buf|. */
gr_verdict gr_shutdown_judge_refuses_new(const gr_shutdown_refuses_facts *f, char *buf, size_t len);

/* What exits saw: the exit after SIGTERM and the call in flight. */
typedef struct gr_shutdown_exits_facts {
    int grace_ms;
    const gr_exit *ex;
    bool call_done;  /* the call in flight had a status */
    bool call_ok;    /* ... and it was Process's right reply */
    const char *why; /* (done, not ok) why the reply was not right */
    int survivors;   /* processes of its group left once it exited */
    int64_t call_ms; /* SIGTERM to the call's status */
} gr_shutdown_exits_facts;

/* exits: FAIL when it had to be killed, exited otherwise than 0 (CRASH for
 * a signal other than SIGTERM), before the call in flight completed, or
 * left processes behind; else PASS, which the scenario writes only once
 * gr_shutdown_signal_in_time held. Feedback into |buf|. */
gr_verdict gr_shutdown_judge_exits(const gr_shutdown_exits_facts *f, char *buf, size_t len);

/* What grace-ends saw of the call that outlived the grace. */
typedef struct gr_shutdown_grace_facts {
    int grace_ms, steps;
    int64_t end_ms;      /* SIGTERM to the end of its Work at the baseline; -1: not ended (or not seen) */
    bool cancelled;      /* (ended) the baseline saw the Work cancelled */
    uint32_t steps_done; /* (ended) its steps done */
    int64_t now_ms;      /* SIGTERM to the verdict, for a Work still running */
    int64_t waited_ms;   /* the relay's and the baseline's CPU wait over it; -1 unread */
    const gr_exit *ex;
} gr_shutdown_grace_facts;

/* grace-ends: FAIL when the Work ended more than GR_SHUTDOWN_GRACE_EARLY_MS
 * before the grace, ran past GR_SHUTDOWN_GRACE_LATE_MS after it or to its
 * end uncancelled, or the process was killed or exited badly; else PASS.
 * A cancel late past the allowance but in time without |waited_ms| is
 * ERROR (the machine too busy to judge), as the cancel judge's starved
 * cancel. Feedback into |buf|. */
gr_verdict gr_shutdown_judge_grace(const gr_shutdown_grace_facts *f, char *buf, size_t len);

/* One call of rolling's load that failed. */
typedef struct gr_shutdown_failed_call {
    int64_t admitted_ns; /* the baseline's first downstream arrival for it; 0: never admitted */
    int64_t took_ms;     /* its start to its status */
    const char *status;  /* as gr_process_status_text */
} gr_shutdown_failed_call;

/* What rolling saw: the call held on instance 1 across SIGTERM, then the
 * load's calls through both instances. */
typedef struct gr_shutdown_rolling_facts {
    bool held_ok;                            /* the held call completed OK */
    const char *held_why;                    /* (not ok) why not */
    int ok, failed;                          /* the load's calls that succeeded and failed */
    int before;                              /* of them, ended before SIGTERM */
    const gr_shutdown_failed_call *failures; /* the first |nkept| failed ones */
    int nkept;                               /* min(failed, what was kept) */
    int64_t sig_ns;                          /* SIGTERM, on the baseline's clock */
    const gr_exit *ex;                       /* instance 1's exit */
    int64_t listen_ms;                       /* its replacement's start to listening */
} gr_shutdown_rolling_facts;

/* rolling: FAIL when the held call failed, when more calls failed than
 * were kept, when a call admitted before SIGTERM failed (the grace), when
 * one never admitted failed slowly (not gr_shutdown_refused's time), or
 * instance 1 exited badly; else PASS. Calls admitted after SIGTERM are
 * not judged (which instance admitted them the baseline cannot tell).
 * Feedback into |buf|. */
gr_verdict gr_shutdown_judge_rolling(const gr_shutdown_rolling_facts *f, char *buf, size_t len);

#endif
