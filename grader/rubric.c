/* rubric: the points file and what a grading's verdicts score by it; see
 * rubric.h. Beneath the report and the page (report.c, html.c), which both
 * show the points and read them from here. */
#include "rubric.h"

#include "rl_alloc.h"
#include "rl_err.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct gr_rubric {
    json_t *root; /* object of objects of entries (a number, or an object
                   * with points and visibility), validated at load */
};

/* Gradescope's test visibilities, the only words results.json may carry. */
static const char *const visibilities[] = {"visible", "hidden", "after_due_date", "after_published", NULL};

/* Checks one scenario's entry: a number of points >= 0, or an object with
 * "points" (such a number), an optional "visibility" (one of the above) and
 * an optional "needs" (a scenario id, or an array of them: gr_rubric_check
 * checks that they are the exercise's); other keys must be "_" comments, so
 * a typo ("visiblity") is caught. */
static int check_entry(json_t *e, const char *path, const char *ex, const char *id, char *err, size_t errlen)
{
    json_t *pts = json_is_object(e) ? json_object_get(e, "points") : e;
    if (!json_is_number(pts) || json_number_value(pts) < 0) {
        snprintf(err, errlen,
                 "the rubric %s: %s/%s must be a number of points >= 0, or {\"points\": N, \"visibility\": V, "
                 "\"needs\": IDS}",
                 path, ex, id);
        return RL_EPARSE;
    }
    if (!json_is_object(e))
        return RL_OK;
    const char *key;
    json_t *v;
    json_object_foreach(e, key, v)
    {
        if (key[0] == '_' || strcmp(key, "points") == 0)
            continue;
        if (strcmp(key, "needs") == 0) {
            bool ok = json_is_string(v) || (json_is_array(v) && json_array_size(v) > 0);
            size_t i;
            json_t *n;
            json_array_foreach(v, i, n) ok = ok && json_is_string(n);
            if (!ok) {
                snprintf(err, errlen, "the rubric %s: %s/%s needs must be a scenario id or an array of them", path, ex,
                         id);
                return RL_EPARSE;
            }
            continue;
        }
        if (strcmp(key, "visibility") != 0) {
            snprintf(err, errlen, "the rubric %s: %s/%s has an unknown key \"%s\" (points, visibility, needs)", path,
                     ex, id, key);
            return RL_EPARSE;
        }
        bool known = false;
        for (size_t i = 0; visibilities[i] && json_is_string(v) && !known; i++)
            known = strcmp(json_string_value(v), visibilities[i]) == 0;
        if (!known) {
            snprintf(err, errlen,
                     "the rubric %s: %s/%s visibility must be visible, hidden, after_due_date or after_published", path,
                     ex, id);
            return RL_EPARSE;
        }
    }
    return RL_OK;
}

int gr_rubric_load(const char *path, gr_rubric **out, char *err, size_t errlen)
{
    json_error_t je;
    if (access(path, R_OK) != 0) {
        snprintf(err, errlen, "cannot read the rubric %s: %s (pass --rubric FILE)", path, strerror(errno));
        return RL_ENOTFOUND;
    }
    json_t *root = json_load_file(path, 0, &je);
    if (!root) {
        snprintf(err, errlen, "the rubric %s is not valid JSON: %s at line %d", path, je.text, je.line);
        return RL_EPARSE;
    }
    if (!json_is_object(root)) {
        snprintf(err, errlen, "the rubric %s must be an object of exercises", path);
        goto bad;
    }
    const char *ex;
    json_t *scen;
    json_object_foreach(root, ex, scen)
    {
        if (ex[0] == '_')
            continue;
        if (!json_is_object(scen)) {
            snprintf(err, errlen, "the rubric %s: \"%s\" must map scenario ids to points", path, ex);
            goto bad;
        }
        const char *id;
        json_t *pts;
        json_object_foreach(scen, id, pts)
        {
            if (id[0] == '_')
                continue;
            if (check_entry(pts, path, ex, id, err, errlen) != RL_OK)
                goto bad;
        }
    }
    *out = rl_xcalloc(1, sizeof **out);
    (*out)->root = root;
    return RL_OK;
bad:
    json_decref(root);
    return RL_EPARSE;
}

/* |e|'s "needs": how many scenario ids, and the |i|th (a lone string is one). */
static size_t nneeds(const json_t *e)
{
    json_t *n = json_is_object(e) ? json_object_get(e, "needs") : NULL;
    return json_is_string(n) ? 1 : json_array_size(n);
}

static const char *need_at(const json_t *e, size_t i)
{
    json_t *n = json_object_get(e, "needs");
    return json_string_value(json_is_string(n) ? n : json_array_get(n, i));
}

static bool is_scenario(const gr_exercise *ex, const char *id)
{
    for (size_t i = 0; i < ex->nscenarios; i++)
        if (strcmp(ex->scenarios[i].id, id) == 0)
            return true;
    return false;
}

int gr_rubric_check(const gr_rubric *r, const gr_exercise *ex, char *err, size_t errlen)
{
    json_t *scen = json_object_get(r->root, ex->name);
    if (!scen) {
        snprintf(err, errlen, "the rubric has no entry for exercise '%s'", ex->name);
        return RL_EPARSE;
    }
    for (size_t i = 0; i < ex->nscenarios; i++)
        if (!json_object_get(scen, ex->scenarios[i].id)) {
            snprintf(err, errlen, "the rubric has no points for %s/%s", ex->name, ex->scenarios[i].id);
            return RL_EPARSE;
        }
    const char *id;
    json_t *pts;
    json_object_foreach(scen, id, pts)
    {
        if (id[0] == '_')
            continue;
        if (!is_scenario(ex, id)) {
            snprintf(err, errlen, "the rubric lists %s/%s, which is not a scenario of that exercise", ex->name, id);
            return RL_EPARSE;
        }
        /* One level only: a lesson's scenario needs nothing, so no chain or
         * circle can hold every point back. */
        for (size_t k = 0; k < nneeds(pts); k++) {
            const char *n = need_at(pts, k);
            if (!is_scenario(ex, n) || strcmp(n, id) == 0 || nneeds(json_object_get(scen, n))) {
                snprintf(err, errlen,
                         "the rubric: %s/%s needs \"%s\", which is not another scenario of that exercise "
                         "that needs none itself",
                         ex->name, id, n);
                return RL_EPARSE;
            }
        }
    }
    return RL_OK;
}

double gr_rubric_points(const gr_rubric *r, const char *exercise, const char *scenario)
{
    json_t *pts = json_object_get(json_object_get(r->root, exercise), scenario);
    if (json_is_object(pts))
        pts = json_object_get(pts, "points");
    return json_is_number(pts) ? json_number_value(pts) : 0.0;
}

const char *gr_rubric_visibility(const gr_rubric *r, const char *exercise, const char *scenario)
{
    json_t *e = json_object_get(json_object_get(r->root, exercise), scenario);
    return json_is_object(e) ? json_string_value(json_object_get(e, "visibility")) : NULL;
}

void gr_rubric_free(gr_rubric *r)
{
    if (!r)
        return;
    json_decref(r->root);
    free(r);
}

/* True when |id| is among the |n| |outcomes| and passed every run. */
static bool passed_in(const gr_outcome *outcomes, size_t n, const char *id)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(outcomes[i].scenario->id, id) == 0)
            return outcomes[i].runs > 0 && outcomes[i].passed == outcomes[i].runs;
    return false;
}

void gr_rubric_earned(const gr_rubric *r, const gr_exercise *ex, const gr_outcome *outcomes, size_t n,
                      const gr_outcome *o, gr_points *out)
{
    memset(out, 0, sizeof *out);
    if (!r)
        return;
    json_t *e = json_object_get(json_object_get(r->root, ex->name), o->scenario->id);
    out->max = gr_rubric_points(r, ex->name, o->scenario->id);
    out->earned = gr_verdict_points(o->runs, o->passed, out->max);
    if (out->earned == 0)
        return;
    size_t len = 0;
    for (size_t i = 0; i < nneeds(e); i++) {
        const char *id = need_at(e, i);
        if (passed_in(outcomes, n, id))
            continue;
        out->earned = 0;
        /* Names that do not fit are cut, never written past the buffer. */
        if (len < sizeof out->held_for)
            len += (size_t)snprintf(out->held_for + len, sizeof out->held_for - len, "%s%s", len ? " and " : "", id);
    }
}

const char *gr_rubric_held_note(const gr_rubric *r, const gr_exercise *ex, const gr_outcome *outcomes, size_t n,
                                const gr_outcome *o, char *buf, size_t len)
{
    gr_points p;
    gr_rubric_earned(r, ex, outcomes, n, o, &p);
    if (!p.held_for[0])
        snprintf(buf, len, "%s", "");
    else
        snprintf(buf, len, "its %g points count once %s passes: %s guards that lesson, it does not teach it", p.max,
                 p.held_for, o->scenario->id);
    return buf;
}

void gr_rubric_total(const gr_rubric *r, const gr_exercise *ex, const gr_outcome *outcomes, size_t n, double *score,
                     double *max_score)
{
    *score = *max_score = 0;
    for (size_t i = 0; i < n; i++) {
        gr_points p;
        gr_rubric_earned(r, ex, outcomes, n, &outcomes[i], &p);
        *score += p.earned;
        *max_score += p.max;
    }
}
