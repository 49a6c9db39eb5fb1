/* rubric: the points file (grader/rubric.json or --rubric FILE) and what a
 * grading's verdicts score by it: a scenario's points, its Gradescope
 * visibility, and a regression guard's points held until the lesson it
 * "needs" passed. The report and the page read the points from here. */
#ifndef GR_RUBRIC_H
#define GR_RUBRIC_H

#include "exercise.h"
#include "run.h"

#include <stddef.h>

typedef struct gr_rubric gr_rubric;

/* Reads |path|: {"EXERCISE": {"SCENARIO": ENTRY, ...}, ...}; keys starting
 * with '_' are comments. An ENTRY is a number of points >= 0, or an object
 * {"points": N, "visibility": V} where V is one of Gradescope's test
 * visibilities (visible, hidden, after_due_date, after_published; absent:
 * Gradescope's default), "needs" is a scenario id or an array of them (a
 * regression guard's points count only once the lesson's scenarios it
 * names passed: gr_rubric_earned) and "_"-keys are comments. Returns 0 and sets *out
 * (free with gr_rubric_free), RL_ENOTFOUND when the file cannot be read, or
 * RL_EPARSE when it is not such JSON; |err| then says what and where. */
int gr_rubric_load(const char *path, gr_rubric **out, char *err, size_t errlen);

/* Checks that every scenario of |ex| has points, nothing else is listed
 * for it, and every "needs" names another scenario of |ex| that needs none
 * itself (one level: no chain or circle). Returns 0 or RL_EPARSE with |err|
 * naming the key. */
int gr_rubric_check(const gr_rubric *r, const gr_exercise *ex, char *err, size_t errlen);

/* The points of |exercise|/|scenario|; 0 if absent (check first). */
double gr_rubric_points(const gr_rubric *r, const char *exercise, const char *scenario);

/* The visibility of |exercise|/|scenario| ("visible", "hidden",
 * "after_due_date" or "after_published"), or NULL when the rubric gives
 * none (a plain number). Borrowed from |r|. */
const char *gr_rubric_visibility(const gr_rubric *r, const char *exercise, const char *scenario);

void gr_rubric_free(gr_rubric *r);

/* What one outcome of a grading (|o|, among the |n| |outcomes| of |ex|)
 * scores; nothing when |r| is NULL. A scenario scores its rubric points when
 * every run passed and, where the rubric says it "needs" others, when each
 * of them is among the outcomes and passed every run too: a regression
 * guard that a starter passes as handed out (it refuses calls because it
 * does nothing) scores only with the lesson it guards. */
typedef struct gr_points {
    double earned, max;
    char held_for[128]; /* the needed scenarios that did not pass ("a and
                         * b"), when they held back points its runs earned;
                         * "" otherwise */
} gr_points;

void gr_rubric_earned(const gr_rubric *r, const gr_exercise *ex, const gr_outcome *outcomes, size_t n,
                      const gr_outcome *o, gr_points *out);

/* Room for gr_rubric_held_note's text. */
#define GR_POINTS_NOTE_MAX 320

/* Into |buf|: why |o|'s points were held back ("its 2 points count once
 * in-flight passes: ..."), or "" when they were not. Returns |buf|. */
const char *gr_rubric_held_note(const gr_rubric *r, const gr_exercise *ex, const gr_outcome *outcomes, size_t n,
                                const gr_outcome *o, char *buf, size_t len);

/* Sum of points earned and available over |n| |outcomes|. */
void gr_rubric_total(const gr_rubric *r, const gr_exercise *ex, const gr_outcome *outcomes, size_t n, double *score,
                     double *max_score);

#endif
