/* report: rubric points, the results table and Gradescope's JSON; see
 * report.h. Feedback may quote a submission's output, so every string that
 * goes into JSON or the table is made printable ASCII first (rl_text.h:
 * jansson rejects invalid UTF-8, a cut-off multibyte character would lose
 * the whole result, and an ESC or a CR would rewrite a reader's terminal). */
#include "report.h"

#include "html.h"
#include "rubric.h"
#include "rl_alloc.h"
#include "rl_err.h"
#include "rl_file.h"
#include "rl_text.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void gr_report_score(const gr_report *r, double *score, double *max_score)
{
    gr_rubric_total(r->rubric, r->ex, r->outcomes, r->noutcomes, score, max_score);
}

/* "PASS", or "FAIL 19/20" when several runs were made. */
static void verdict_text(const gr_report *r, const gr_outcome *o, char *buf, size_t len)
{
    if (r->runs > 1 || o->runs != 1)
        snprintf(buf, len, "%s %d/%d", gr_verdict_name(o->verdict), o->passed, o->runs);
    else
        snprintf(buf, len, "%s", gr_verdict_name(o->verdict));
}

/* |s| on one line, printable (rl_text.h), to |f|. Feedback is made so
 * where it is written (gr_result); this holds for every other string too. */
static void put_line(FILE *f, const char *s)
{
    char *p = rl_text_printable_dup(s, 0);
    fputs(p, f);
    free(p);
}

void gr_report_table(FILE *f, const gr_report *r)
{
    fprintf(f, "%s: %s\n", r->ex->name, r->ex->summary);
    if (r->note) {
        fputs("note: ", f);
        put_line(f, r->note);
        fputc('\n', f);
    }
    fprintf(f, "%-20s %-14s %-7s %s\n", "SCENARIO", "VERDICT", "POINTS", "FEEDBACK");
    for (size_t i = 0; i < r->noutcomes; i++) {
        const gr_outcome *o = &r->outcomes[i];
        char v[32], pts[32], held[GR_POINTS_NOTE_MAX];
        gr_points p;
        gr_rubric_earned(r->rubric, r->ex, r->outcomes, r->noutcomes, o, &p);
        verdict_text(r, o, v, sizeof v);
        snprintf(pts, sizeof pts, "%g/%g", p.earned, p.max);
        fprintf(f, "%-20s %-14s %-7s ", o->scenario->id, v, pts);
        if (gr_rubric_held_note(r->rubric, r->ex, r->outcomes, r->noutcomes, o, held, sizeof held)[0])
            fprintf(f, "(%s) ", held);
        put_line(f, o->feedback);
        fputc('\n', f);
    }
    double score, max;
    gr_report_score(r, &score, &max);
    fprintf(f, "%-20s %-14s %-7s (%.1f s)\n", "TOTAL", "", "", r->seconds);
    fprintf(f, "score %g/%g\n", score, max);
    if (r->error) {
        fputs("grader error: ", f);
        put_line(f, r->error);
        fputc('\n', f);
    }
}

static void set_string(json_t *obj, const char *key, const char *value)
{
    char *a = rl_text_printable_dup(value, RL_TEXT_MULTILINE);
    json_object_set_new(obj, key, json_string(a));
    free(a);
}

/* Dumps |root| (consumed) to |path| through a fresh temporary file and a
 * rename, so a reader never sees half a file, and a link planted at any
 * name beside |path| is never written through (rl_file_tmp_open). */
static int write_json(json_t *root, const char *path, char *err, size_t errlen)
{
    char tmp[PATH_MAX + 32];
    int rc = RL_OK;
    FILE *f = rl_file_tmp_open(path, 0644, tmp, sizeof tmp);
    if (f && json_dumpf(root, f, JSON_INDENT(2)) != 0) {
        fclose(f);
        unlink(tmp);
        f = NULL;
    }
    if (!f || rl_file_tmp_commit(f, tmp, path) != 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        rc = RL_ESYS;
    }
    json_decref(root);
    return rc;
}

int gr_report_json(const char *path, const gr_report *r, char *err, size_t errlen)
{
    double score, max;
    gr_report_score(r, &score, &max);
    json_t *root = json_object();
    json_object_set_new(root, "score", json_real(score));
    json_object_set_new(root, "max_score", json_real(max));
    json_object_set_new(root, "execution_time", json_integer((json_int_t)(r->seconds + 0.5)));
    char summary[2048];
    int passed_all = 0;
    for (size_t i = 0; i < r->noutcomes; i++)
        passed_all += r->outcomes[i].runs > 0 && r->outcomes[i].passed == r->outcomes[i].runs;
    snprintf(summary, sizeof summary, "%s (%s): %d of %zu scenarios passed%s%s%s%s%s", r->ex->name, r->ex->summary,
             passed_all, r->noutcomes, r->runs > 1 ? " in every run" : "", r->error ? ". Grader error: " : "",
             r->error ? r->error : "", r->note ? ". Note: " : "", r->note ? r->note : "");
    if (r->gradescope_html) {
        /* Gradescope renders the output as HTML when output_format says
         * so: the summary here, each scenario's picture in its test. */
        char *h = gr_html_gradescope(r, summary);
        set_string(root, "output", h);
        free(h);
        json_object_set_new(root, "output_format", json_string("html"));
    } else {
        set_string(root, "output", summary);
    }
    json_t *tests = json_array();
    for (size_t i = 0; i < r->noutcomes; i++) {
        const gr_outcome *o = &r->outcomes[i];
        json_t *t = json_object();
        char name[256], v[32];
        snprintf(name, sizeof name, "%s/%s: %s", r->ex->name, o->scenario->id, o->scenario->title);
        set_string(t, "name", name);
        gr_points p;
        char held[GR_POINTS_NOTE_MAX];
        gr_rubric_earned(r->rubric, r->ex, r->outcomes, r->noutcomes, o, &p);
        gr_rubric_held_note(r->rubric, r->ex, r->outcomes, r->noutcomes, o, held, sizeof held);
        json_object_set_new(t, "score", json_real(p.earned));
        json_object_set_new(t, "max_score", json_real(p.max));
        bool pass = o->runs > 0 && o->passed == o->runs;
        json_object_set_new(t, "status", json_string(pass ? "passed" : "failed"));
        verdict_text(r, o, v, sizeof v);
        /* The verdict, and why a guard's points were held, before the
         * feedback: "PASS (its 2 points count once in-flight passes: ...)". */
        char label[sizeof v + sizeof held + 4];
        snprintf(label, sizeof label, "%s%s%s%s", v, held[0] ? " (" : "", held, held[0] ? ")" : "");
        if (r->gradescope_html) {
            /* Its feedback, picture and output as HTML (html.h). */
            char *h = gr_html_test_output(o, label);
            set_string(t, "output", h);
            free(h);
            json_object_set_new(t, "output_format", json_string("html"));
        } else {
            size_t olen = strlen(label) + strlen(o->feedback) + strlen(o->output) + 96;
            char *text = rl_xmalloc(olen);
            snprintf(text, olen, "%s: %s%s%s", label, o->feedback, o->output[0] ? "\n\nSubmission output:\n" : "",
                     o->output);
            set_string(t, "output", text);
            free(text);
        }
        const char *vis = r->rubric ? gr_rubric_visibility(r->rubric, r->ex->name, o->scenario->id) : NULL;
        if (vis)
            json_object_set_new(t, "visibility", json_string(vis));
        /* What was measured, apart from the prose: Gradescope keeps it,
         * and bin/grade-class reads verdicts from here, not from text. */
        json_t *extra = json_object();
        json_object_set_new(extra, "exercise", json_string(r->ex->name));
        set_string(extra, "scenario", o->scenario->id);
        json_object_set_new(extra, "verdict", json_string(gr_verdict_name(o->verdict)));
        json_object_set_new(extra, "runs", json_integer(o->runs));
        json_object_set_new(extra, "passed", json_integer(o->passed));
        json_object_set_new(extra, "seconds", json_real(o->seconds));
        json_object_set_new(extra, "cpu_grader_seconds", json_real(o->cpu_grader_s));
        json_object_set_new(extra, "cpu_others_seconds", json_real(o->cpu_others_s));
        set_string(extra, "feedback", o->feedback);
        if (held[0])
            set_string(extra, "points_held", held);
        json_object_set_new(t, "extra_data", extra);
        json_array_append_new(tests, t);
    }
    json_object_set_new(root, "tests", tests);
    json_t *extra = json_object();
    json_object_set_new(extra, "exercise", json_string(r->ex->name));
    json_object_set_new(extra, "runs", json_integer(r->runs));
    json_object_set_new(extra, "seconds", json_real(r->seconds));
    if (r->error)
        set_string(extra, "error", r->error);
    json_object_set_new(root, "extra_data", extra);
    return write_json(root, path, err, errlen);
}

int gr_report_json_error(const char *path, const char *message, bool setup, char *err, size_t errlen)
{
    json_t *root = json_object();
    json_object_set_new(root, "score", json_real(0));
    /* As an ordinary report with nothing graded: no points were at stake. */
    json_object_set_new(root, "max_score", json_real(0));
    json_object_set_new(root, "execution_time", json_integer(0));
    size_t n = strlen(message) + 160;
    char *text = rl_xmalloc(n);
    snprintf(text, n, "Grader error: %s. Nothing was graded%s", message,
             setup ? ": the autograder's setup is at fault, this is no verdict on the submission." : ".");
    set_string(root, "output", text);
    free(text);
    json_object_set_new(root, "tests", json_array());
    return write_json(root, path, err, errlen);
}

int gr_report_json_writable(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (!*path || (stat(path, &st) == 0 && S_ISDIR(st.st_mode))) {
        snprintf(err, errlen, "cannot write the results file '%s': it is a folder (--json takes a file name)", path);
        return RL_ESYS;
    }
    char tmp[PATH_MAX + 32];
    FILE *f = rl_file_tmp_open(path, 0644, tmp, sizeof tmp);
    if (!f) {
        snprintf(err, errlen,
                 "cannot write the results file %s: %s (--json needs a file in an existing, writable folder)", path,
                 strerror(errno));
        return RL_ESYS;
    }
    fclose(f);
    unlink(tmp);
    return RL_OK;
}
