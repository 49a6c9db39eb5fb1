/* judge: the grader's pure judging functions. Everything that decides a
 * verdict from measured numbers lives here, with its tolerances, so the
 * arithmetic and the feedback wording are unit-tested without any process or
 * network (tests/unit/grader/test_judge.c). Times are milliseconds unless named _ns. */
#ifndef GR_JUDGE_H
#define GR_JUDGE_H

#include "exercise.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Tolerances; judge.c explains how each was derived from measurements. */
#define GR_JUDGE_SCHED_MS            25  /* allowance beyond the rounding and the relay's own time */
#define GR_JUDGE_MARGIN_MIN_MS       100 /* a relay may keep this much back ... */
#define GR_JUDGE_MARGIN_FRAC         10  /* ... or this percentage of what remained */
#define GR_JUDGE_LATE_CALL_WINDOW_MS 500 /* watch for a call that must not come */
/* A deadline to the status that reports it, for the integration tests'
 * own bounds (tests/integration/tolerances.py). No judge uses it: a
 * client's deadline ends its call whatever the server does, so how late
 * the status comes measures the grader's scheduling, not the submission. */
#define GR_JUDGE_EXPIRE_MS 100

/* ---- received deadlines ---- */

typedef enum gr_dl_class {
    GR_DL_OK,        /* within [lower, upper], or absent when none was set */
    GR_DL_MISSING,   /* a deadline was set upstream, none arrived */
    GR_DL_HUGE,      /* a finite deadline far beyond anything the client set */
    GR_DL_UNCHANGED, /* about the client's original budget: forwarded unchanged */
    GR_DL_GREW,      /* more than remained, but not the original budget */
    GR_DL_TOO_SHORT, /* well below what remained: an invented or cut timeout */
    GR_DL_INVENTED,  /* a finite deadline although the client set none */
} gr_dl_class;

typedef struct gr_dl_check {
    const char *method;  /* "Lookup" or "Work", for the wording */
    int64_t budget_ms;   /* the client's timeout when it started; <0: none */
    int64_t true_ms;     /* T = D - arrival at the baseline, what truly remained */
    bool has_deadline;   /* the call arrived with a deadline */
    int64_t received_ms; /* W, what the baseline saw remaining at arrival */
    int64_t relay_ms;    /* time the relay spent on its side before this call
                          * arrived (see gr_judge_deadline_upper) */
    int64_t upper_ms;    /* largest W accepted */
    int64_t lower_ms;    /* smallest W accepted */
    gr_dl_class cls;
} gr_dl_check;

/* The largest W accepted for a call with |true_ms| left whose client started
 * with |budget_ms|: T plus the grpc-timeout rounding of both hops plus
 * |relay_ms| plus GR_JUDGE_SCHED_MS. |relay_ms| is the time the relay itself
 * was busy before the call arrived and outside any downstream call: for
 * Lookup, its arrival minus the client's start; for Work, that plus Work's
 * arrival minus Lookup's end. A runtime that re-anchors a deadline late
 * (grpcio, grpc-js under load) cannot gain more than that. */
int64_t gr_judge_deadline_upper(int64_t budget_ms, int64_t true_ms, int64_t relay_ms);

/* The smallest W accepted: T minus max(GR_JUDGE_MARGIN_MIN_MS,
 * GR_JUDGE_MARGIN_FRAC % of T), never below 0. */
int64_t gr_judge_deadline_lower(int64_t true_ms);

/* Judges one received deadline. |budget_ms| < 0 means the client set none
 * (then |true_ms| and |relay_ms| are ignored and only has_deadline
 * matters). Fills *out. */
void gr_judge_deadline(const char *method, int64_t budget_ms, int64_t true_ms, int64_t relay_ms, bool has_deadline,
                       int64_t received_ms, gr_dl_check *out);

/* One line naming the numbers and the likely mistake, e.g. "Work received
 * 1000 ms but only 702 ms remained: the original timeout was forwarded
 * unchanged". Returns the snprintf length. */
int gr_judge_deadline_feedback(const gr_dl_check *c, char *buf, size_t len);

/* Feedback for a Process whose client set NO deadline but that ended with
 * DEADLINE_EXCEEDED after |after_ms|, the baseline having seen |nlookup|
 * Lookup and |nwork| Work calls. Only the relay can have produced that
 * status: a call without a deadline cannot expire. The usual cause, in any
 * language, is passing "the time left" on as a timeout when there is none
 * (grpcio's time_remaining() then gives ~9.2e18 s, which the library turns
 * into an invalid deadline and fails the call at once, before sending it).
 * Names the hop that never arrived and the fix. Returns the snprintf
 * length. */
int gr_judge_no_deadline_expired_feedback(int64_t after_ms, size_t nlookup, size_t nwork, char *buf, size_t len);

#endif
