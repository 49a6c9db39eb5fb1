/* deadline_judge: the deadline exercise's rules, apart from its scenarios
 * (ex_deadline.c) so that they are unit-tested without a process
 * (tests/unit/grader/test_deadline_judge.c): the bounds on a received
 * deadline (deadline_judge.c says how they were measured), the mistake a
 * wrong one shows, and each scenario's verdict as a pure function of what
 * it measured (facts in, a verdict and its feedback out). Times are ms. */
#ifndef GR_DEADLINE_JUDGE_H
#define GR_DEADLINE_JUDGE_H

#include "verdict.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Tolerances; deadline_judge.c explains how each was derived from
 * measurements (tests/integration/tolerances.py reads them). */
#define GR_DL_SCHED_MS      25  /* allowance beyond the rounding and the relay's own time */
#define GR_DL_MARGIN_MIN_MS 100 /* a relay may keep this much back ... */
#define GR_DL_MARGIN_FRAC   10  /* ... or this percentage of what remained */
#define GR_DL_ONCE_WORK_MS  250 /* once's Work: a hedged second copy leaves before the first answers */

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
                          * arrived (see gr_dl_upper) */
    int64_t upper_ms;    /* largest W accepted */
    int64_t lower_ms;    /* smallest W accepted */
    gr_dl_class cls;
} gr_dl_check;

/* The largest W accepted for a call with |true_ms| left whose client started
 * with |budget_ms|: T plus the grpc-timeout rounding of both hops plus
 * |relay_ms| plus GR_DL_SCHED_MS. |relay_ms| is the time the relay itself
 * was busy before the call arrived and outside any downstream call: for
 * Lookup, its arrival minus the client's start; for Work, that plus Work's
 * arrival minus Lookup's end. A runtime that re-anchors a deadline late
 * (grpcio, grpc-js under load) cannot gain more than that. */
int64_t gr_dl_upper(int64_t budget_ms, int64_t true_ms, int64_t relay_ms);

/* The smallest W accepted: T minus max(GR_DL_MARGIN_MIN_MS,
 * GR_DL_MARGIN_FRAC % of T), never below 0. */
int64_t gr_dl_lower(int64_t true_ms);

/* Judges one received deadline. |budget_ms| < 0 means the client set none
 * (then |true_ms| and |relay_ms| are ignored and only has_deadline
 * matters). Fills *out. */
void gr_dl_judge_hop(const char *method, int64_t budget_ms, int64_t true_ms, int64_t relay_ms, bool has_deadline,
                     int64_t received_ms, gr_dl_check *out);

/* One line naming the numbers and the likely mistake, e.g. "Work received
 * 1000 ms but only 702 ms remained: the original timeout was forwarded
 * unchanged". Returns the snprintf length. */
int gr_dl_feedback(const gr_dl_check *c, char *buf, size_t len);

/* ---- the scenarios' verdicts ---- */

/* What one Process call showed: the baseline's hops judged, the calls it
 * saw, and the client's status. */
typedef struct gr_dl_process_facts {
    int64_t budget_ms;         /* the client's deadline (shrinks) */
    const gr_dl_check *lookup; /* Lookup's received deadline judged; NULL: no Lookup seen */
    const gr_dl_check *work;   /* Work's; NULL: no Work seen */
    size_t nlookup, nwork;     /* the calls the baseline saw */
    int status;                /* Process's gRPC status */
    const char *status_text;   /* the same, as gr_process_status_text */
    bool past_deadline;        /* it ended at or after the client's deadline */
    bool reply_ok;             /* Process's reply was the right one */
    const char *why;           /* (not reply_ok) why not */
    int64_t ms;                /* Process's start to its status */
} gr_dl_process_facts;

/* shrinks: FAIL for Work's received deadline wrong (with Lookup's when it
 * is wrong differently), then Lookup's; TIMEOUT when a hop is missing and
 * the client's deadline ended the call, FAIL when missing otherwise or the
 * reply was wrong; else PASS with both hops' numbers. */
gr_verdict gr_dl_judge_shrinks(const gr_dl_process_facts *f, char *buf, size_t len);

/* none: FAIL for a deadline on Work, then on Lookup; for an expiry
 * although the client set no deadline (judge.h's feedback), a missing
 * hop, or a wrong reply; else PASS. */
gr_verdict gr_dl_judge_none(const gr_dl_process_facts *f, char *buf, size_t len);

/* once: FAIL for Work or Lookup called more than once; TIMEOUT when the
 * deadline ended a call with no Work; FAIL for a missing hop or a wrong
 * reply; else PASS. |lookup| and |work| are not read. */
gr_verdict gr_dl_judge_once(const gr_dl_process_facts *f, char *buf, size_t len);

/* expires-in-lookup, one try in which the baseline saw no Lookup: true
 * with the verdict in *v (FAIL) when that decides (a Work with no Lookup,
 * or Process ended otherwise than by its deadline, |status_text| |ms|
 * after its start); false when the try tested nothing and is made again
 * with more time. */
bool gr_dl_judge_no_lookup(bool work_seen, int status, bool past_deadline, const char *status_text, int64_t ms,
                           gr_verdict *v, char *buf, size_t len);

/* expires-in-lookup, when no Lookup came in |ntries| tries of |first_ms|
 * to |last_ms|: TIMEOUT. */
gr_verdict gr_dl_judge_never_looked_up(size_t ntries, int64_t first_ms, int64_t last_ms, char *buf, size_t len);

/* What expires-in-lookup saw once Lookup came. */
typedef struct gr_dl_expiry_facts {
    int64_t budget_ms;       /* the client's deadline, shorter than Lookup */
    bool lookup_cancelled;   /* the baseline saw Lookup cancelled */
    int64_t lookup_ms;       /* Lookup's arrival to its end */
    bool work_called;        /* a Work came within GR_JUDGE_LATE_CALL_WINDOW_MS of Lookup's end */
    int64_t work_after_ms;   /* (work_called) its arrival after the client's deadline */
    int status;              /* Process's gRPC status */
    const char *status_text; /* the same, as gr_process_status_text */
    int64_t ms;              /* Process's start to its status */
    int64_t late_ms;         /* the client's deadline to that status (reported, not judged) */
} gr_dl_expiry_facts;

/* expires-in-lookup: FAIL for a Work after the deadline, or a status other
 * than DEADLINE_EXCEEDED; else PASS. */
gr_verdict gr_dl_judge_expiry(const gr_dl_expiry_facts *f, char *buf, size_t len);

#endif
