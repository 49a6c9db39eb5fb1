/* verdict: what a scenario run concludes, and the one place its wording is
 * made safe to show.
 *
 * A verdict is one of six kinds, from best to worst, with one line of
 * feedback that names the numbers and the likely mistake. Feedback quotes
 * what a submission said (status details, tags, its output), so it is made
 * printable where it is written (gr_result, gr_feedback_append) and marked
 * when cut, never cut silently. The crash wording every scenario and the
 * driver share lives here too, as a function of what was observed. */
#ifndef GR_VERDICT_H
#define GR_VERDICT_H

#include "figure.h"

#include <stdbool.h>
#include <stddef.h>

/* Verdicts, from best to worst. Only PASS scores points. */
typedef enum gr_verdict {
    GR_PASS,
    GR_FAIL,      /* the submission answered, and broke the rule */
    GR_TIMEOUT,   /* the submission did not answer within the grader's limit */
    GR_CRASH,     /* the submission process exited or died during the scenario */
    GR_NOT_READY, /* the submission never started listening */
    GR_ERROR,     /* the grader itself could not run the scenario */
} gr_verdict;

/* "PASS", "FAIL", "TIMEOUT", "CRASH", "NOT-READY", "ERROR". */
const char *gr_verdict_name(gr_verdict v);

/* The worse of two verdicts (the enum orders them best to worst): the one a
 * scenario of several runs reports. */
gr_verdict gr_verdict_worse(gr_verdict a, gr_verdict b);

/* Points a scenario's verdicts earn: all of |points| when every one of
 * |runs| runs passed (and there was at least one), else 0. What the rubric
 * adds on top (a guard's "needs") is report.h's. */
double gr_verdict_points(int runs, int passed, double points);

/* Room for one scenario's feedback. A config that breaks many rules lists
 * every one (about 300 bytes each), so this is sized for a dozen or more;
 * gr_result marks text cut at this size instead of losing it silently. */
#define GR_FEEDBACK_MAX 4096

typedef struct gr_scenario_result {
    gr_verdict verdict;
    char feedback[GR_FEEDBACK_MAX]; /* one line: measured numbers and the likely mistake */
    gr_figure figure;               /* what was measured, as a picture for --html
                                     * (figure.h); kind GR_FIG_NONE when none */
} gr_scenario_result;

/* What gr_result returns, and every step of a scenario once |out| holds the
 * verdict (scenario.h): positive, so it never reads as an RL_E code, and the
 * same whether a step or a scenario's run function returns it, so that
 * `return gr_result(...)` means "decided" everywhere. */
#define GR_DECIDED 1

/* Fills |out| with |v| and a printf-formatted feedback line; returns
 * GR_DECIDED, so a step or a scenario can `return gr_result(...)`. Text longer than
 * GR_FEEDBACK_MAX - 1 is cut and ends with GR_FEEDBACK_CUT, so a reader
 * knows something is missing. */
int gr_result(gr_scenario_result *out, gr_verdict v, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#define GR_FEEDBACK_CUT " [... feedback cut]"

/* Appends "; " and |text| to |out|'s feedback, with the same marking when
 * it does not fit. */
void gr_feedback_append(gr_scenario_result *out, const char *text);

/* The last line or two of |text|, on one line (newlines shown as " | "),
 * at most |max| chars of it, "..." first when the start was dropped; into
 * |buf| of |len| bytes, always NUL-terminated. A line naming why a program
 * failed ("Cannot find module 'x'", ModuleNotFoundError, ...) that the end
 * alone would drop is kept first: "LINE | ...END". */
void gr_last_lines(const char *text, char *buf, size_t len, size_t max);

/* The CRASH verdict for a submission that died: "|who| |how| |what|" and
 * the last lines of |tail| (its output). When |tail| says it could not
 * start another thread, the feedback names the sandbox's task limit
 * (|tasks_max|) and the likely mistake, a thread per call. */
void gr_crash_result(gr_scenario_result *out, const char *who, const char *how, const char *what, const char *tail,
                     int tasks_max);

#endif
