/* tally: rows from the grader's results.json files, and the CSV, the
 * per-student results.json and the summary made of them; see tally.h. */
#include "tally.h"

#include "html.h"
#include "rl_alloc.h"
#include "rl_err.h"
#include "rl_file.h"
#include "rl_text.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void gc_tally_init(gc_tally *t, const gc_exercise *exercises, size_t nexercises)
{
    memset(t, 0, sizeof *t);
    t->exercises = exercises;
    t->nexercises = nexercises;
}

void gc_tally_fini(gc_tally *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->rows[i].feedback);
    free(t->rows);
    memset(t, 0, sizeof *t);
}

static gc_row *add_row(gc_tally *t, const char *student, size_t ex, size_t sc)
{
    RL_GROW(t->rows, t->n, t->cap, 64);
    gc_row *r = &t->rows[t->n++];
    memset(r, 0, sizeof *r);
    snprintf(r->student, sizeof r->student, "%s", student);
    r->ex = ex;
    r->sc = sc;
    r->max_points = t->exercises[ex].points[sc];
    return r;
}

void gc_tally_add_all(gc_tally *t, const char *student, size_t ex, const char *verdict, const char *feedback)
{
    for (size_t sc = 0; sc < t->exercises[ex].nscenarios; sc++) {
        gc_row *r = add_row(t, student, ex, sc);
        snprintf(r->verdict, sizeof r->verdict, "%s", verdict);
        r->feedback = rl_text_printable_dup(feedback, 0);
    }
}

int gc_tally_add_results(gc_tally *t, const char *student, size_t ex, const char *path)
{
    const gc_exercise *e = &t->exercises[ex];
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    json_t *tests = json_object_get(root, "tests");
    const char *error = json_string_value(json_object_get(json_object_get(root, "extra_data"), "error"));
    if (!error)
        error = json_string_value(json_object_get(root, "output"));
    char why[1024];
    if (!root)
        snprintf(why, sizeof why, "the grader wrote no readable results (%s): see the log", je.text);
    else
        snprintf(why, sizeof why, "not graded: %s", error ? error : "the grader gave no verdict");
    for (size_t sc = 0; sc < e->nscenarios; sc++) {
        json_t *found = NULL, *test;
        size_t i;
        json_array_foreach(tests, i, test)
        {
            const char *id = json_string_value(json_object_get(json_object_get(test, "extra_data"), "scenario"));
            if (id && strcmp(id, e->scenarios[sc]) == 0)
                found = test;
        }
        gc_row *r = add_row(t, student, ex, sc);
        if (!found) {
            snprintf(r->verdict, sizeof r->verdict, "ERROR");
            r->feedback = rl_text_printable_dup(why, 0);
            continue;
        }
        json_t *x = json_object_get(found, "extra_data");
        const char *v = json_string_value(json_object_get(x, "verdict"));
        const char *fb = json_string_value(json_object_get(x, "feedback"));
        snprintf(r->verdict, sizeof r->verdict, "%s", v ? v : "ERROR");
        r->runs = (int)json_integer_value(json_object_get(x, "runs"));
        r->passed = (int)json_integer_value(json_object_get(x, "passed"));
        r->seconds = json_number_value(json_object_get(x, "seconds"));
        r->points = json_number_value(json_object_get(found, "score"));
        r->max_points = json_number_value(json_object_get(found, "max_score"));
        /* The grader's feedback is printable already; a results.json in a
         * student's reach need not be, and rows reach the CSV, the summary
         * and the terminal (rl_text.h). */
        r->feedback = rl_text_printable_dup(fb ? fb : "", 0);
        char *pv = rl_text_printable_dup(r->verdict, 0);
        snprintf(r->verdict, sizeof r->verdict, "%s", pv);
        free(pv);
    }
    json_decref(root);
    return root ? RL_OK : RL_EPARSE;
}

static int cmp_rows(const void *pa, const void *pb)
{
    const gc_row *a = pa, *b = pb;
    int c = strcmp(a->student, b->student);
    if (c)
        return c;
    if (a->ex != b->ex)
        return a->ex < b->ex ? -1 : 1;
    return a->sc < b->sc ? -1 : a->sc > b->sc;
}

void gc_tally_sort(gc_tally *t)
{
    if (t->n)
        qsort(t->rows, t->n, sizeof *t->rows, cmp_rows);
}

/* True when a spreadsheet would take a cell beginning with |s| for a
 * formula (OWASP's CSV injection list: = + - @, tab, carriage return). */
static bool formula_like(const char *s)
{
    return s[0] && strchr("=+-@\t\r", s[0]) != NULL;
}

/* One CSV cell, quoted when it holds a comma, quote or line break. Every
 * cell is made printable (rl_text.h): a student's folder name is theirs.
 * A |text| cell that a spreadsheet would evaluate as a formula (folder
 * names such as +1+1, -2+3, @A1 are valid roster names; feedback quotes a
 * student's words) gets a leading ' (OWASP's neutralisation): shown as
 * text, never run. The numbers grade-class writes itself are not touched. */
static void csv_cell(FILE *f, const char *raw, bool last, bool text)
{
    char *p = rl_text_printable_dup(raw, 0);
    if (text && (formula_like(raw) || formula_like(p))) {
        size_t n = strlen(p) + 2;
        char *q = rl_xmalloc(n);
        snprintf(q, n, "'%s", p);
        free(p);
        p = q;
    }
    const char *s = p;
    if (strpbrk(s, ",\"\r\n")) {
        fputc('"', f);
        for (; *s; s++) {
            if (*s == '"')
                fputc('"', f);
            fputc(*s, f);
        }
        fputc('"', f);
    } else {
        fputs(s, f);
    }
    fputs(last ? "\r\n" : ",", f);
    free(p);
}

/* Writes through a fresh temporary file and a rename, so a reader never
 * sees half a file and a link planted beside |path| is never written
 * through (rl_file_tmp_open). */
static FILE *open_tmp(const char *path, char *tmp, size_t len)
{
    return rl_file_tmp_open(path, 0644, tmp, len);
}

static int close_tmp(FILE *f, const char *tmp, const char *path)
{
    return rl_file_tmp_commit(f, tmp, path) == 0 ? RL_OK : RL_ESYS;
}

int gc_tally_write_csv(const gc_tally *t, const char *path)
{
    char tmp[4200];
    FILE *f = open_tmp(path, tmp, sizeof tmp);
    if (!f)
        return RL_ESYS;
    fputs("student,exercise,scenario,verdict,points,max_points,runs,passed,feedback\r\n", f);
    for (size_t i = 0; i < t->n; i++) {
        const gc_row *r = &t->rows[i];
        const gc_exercise *e = &t->exercises[r->ex];
        char num[4][32];
        snprintf(num[0], sizeof num[0], "%g", r->points);
        snprintf(num[1], sizeof num[1], "%g", r->max_points);
        snprintf(num[2], sizeof num[2], "%d", r->runs);
        snprintf(num[3], sizeof num[3], "%d", r->passed);
        csv_cell(f, r->student, false, true);
        csv_cell(f, e->name, false, true);
        csv_cell(f, e->scenarios[r->sc], false, true);
        csv_cell(f, r->verdict, false, true);
        for (int k = 0; k < 4; k++)
            csv_cell(f, num[k], false, false);
        csv_cell(f, r->feedback, true, true);
    }
    return close_tmp(f, tmp, path);
}

/* A test made from a tally row (an exercise the grader wrote no full file
 * for), as the grader would have written it. */
static json_t *row_test(const gc_tally *t, const gc_row *r)
{
    const gc_exercise *e = &t->exercises[r->ex];
    json_t *test = json_object();
    char name[512];
    snprintf(name, sizeof name, "%s/%s", e->name, e->scenarios[r->sc]);
    json_object_set_new(test, "name", json_string(name));
    json_object_set_new(test, "score", json_real(r->points));
    json_object_set_new(test, "max_score", json_real(r->max_points));
    json_object_set_new(test, "status", json_string(strcmp(r->verdict, "PASS") == 0 ? "passed" : "failed"));
    size_t n = strlen(r->feedback) + 32;
    char *out = rl_xmalloc(n);
    snprintf(out, n, "%s: %s", r->verdict, r->feedback);
    /* Feedback here is the grader's (ASCII already) or ours. */
    json_t *js = json_string(out);
    json_object_set_new(test, "output", js ? js : json_string("(feedback not UTF-8)"));
    json_object_set_new(test, "output_format", json_string("text"));
    free(out);
    if (e->visibility[r->sc][0])
        json_object_set_new(test, "visibility", json_string(e->visibility[r->sc]));
    json_t *x = json_object();
    json_object_set_new(x, "exercise", json_string(e->name));
    json_object_set_new(x, "scenario", json_string(e->scenarios[r->sc]));
    json_object_set_new(x, "verdict", json_string(r->verdict));
    json_object_set_new(test, "extra_data", x);
    return test;
}

/* The tests of the grader's file |path| when it graded every scenario of
 * |e| (new reference), else NULL. */
static json_t *file_tests(const char *path, const gc_exercise *e)
{
    if (!path)
        return NULL;
    json_t *root = json_load_file(path, 0, NULL);
    json_t *tests = json_object_get(root, "tests");
    json_t *ret = NULL;
    if (json_is_array(tests) && json_array_size(tests) == e->nscenarios)
        ret = json_incref(tests);
    json_decref(root);
    return ret;
}

int gc_tally_write_student(const gc_tally *t, const char *student, const char *id, char *const *ex_paths,
                           const char *path)
{
    json_t *tests = json_array();
    double score = 0, max = 0, secs = 0;
    char output[2048] = "";
    size_t olen = 0;
    for (size_t ex = 0; ex < t->nexercises; ex++) {
        int nrows = 0, npass = 0;
        const char *verdict = NULL;
        for (size_t i = 0; i < t->n; i++) {
            const gc_row *r = &t->rows[i];
            if (r->ex != ex || strcmp(r->student, student) != 0)
                continue;
            nrows++;
            npass += strcmp(r->verdict, "PASS") == 0;
            score += r->points;
            max += r->max_points;
            secs += r->seconds;
            verdict = r->verdict;
        }
        if (!nrows)
            continue; /* not graded in this batch (--exercises) */
        json_t *ft = file_tests(ex_paths[ex], &t->exercises[ex]);
        if (ft) {
            json_array_extend(tests, ft);
            json_decref(ft);
        } else {
            for (size_t i = 0; i < t->n; i++)
                if (t->rows[i].ex == ex && strcmp(t->rows[i].student, student) == 0)
                    json_array_append_new(tests, row_test(t, &t->rows[i]));
        }
        if (olen < sizeof output)
            olen += (size_t)snprintf(output + olen, sizeof output - olen, "%s%s: %d of %d scenarios passed%s",
                                     olen ? "; " : "", t->exercises[ex].name, npass, nrows,
                                     verdict && strcmp(verdict, "MISSING") == 0       ? " (no folder for it)"
                                     : verdict && strcmp(verdict, GC_NOT_GRADED) == 0 ? " (not graded: interrupted)"
                                                                                      : "");
    }
    json_t *root = json_object();
    json_object_set_new(root, "score", json_real(score));
    json_object_set_new(root, "max_score", json_real(max));
    json_object_set_new(root, "execution_time", json_integer((json_int_t)(secs + 0.5)));
    /* HTML, as the grader's tests are (each test says its own format):
     * Gradescope then shows each scenario's picture. */
    char *esc = gc_html_escape_dup(output);
    size_t hn = strlen(esc) + 16;
    char *h = rl_xmalloc(hn);
    snprintf(h, hn, "<p>%s</p>", esc);
    json_object_set_new(root, "output", json_string(h));
    json_object_set_new(root, "output_format", json_string("html"));
    free(h);
    free(esc);
    json_object_set_new(root, "tests", tests);
    json_t *x = json_object();
    char *shown = rl_text_printable_dup(id ? id : student, 0);
    json_object_set_new(x, "student", json_string(shown));
    free(shown);
    json_object_set_new(root, "extra_data", x);
    char tmp[4200];
    int rc = RL_ESYS;
    FILE *f = open_tmp(path, tmp, sizeof tmp);
    if (f && json_dumpf(root, f, JSON_INDENT(2)) != 0) {
        fclose(f);
        unlink(tmp);
    } else if (f) {
        rc = close_tmp(f, tmp, path);
    }
    json_decref(root);
    return rc;
}

/* The students of the tally, in row order (rows sorted), and their totals. */
typedef struct student_total {
    const char *name;
    double score, max;
} student_total;

static bool not_graded(const gc_row *r)
{
    return strcmp(r->verdict, GC_NOT_GRADED) == 0;
}

/* The students with something graded, in row order (rows sorted), and the
 * totals of what was graded. */
static size_t totals(const gc_tally *t, student_total *out)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++) {
        const gc_row *r = &t->rows[i];
        if (not_graded(r))
            continue;
        if (!n || strcmp(out[n - 1].name, r->student) != 0)
            out[n++] = (student_total){r->student, 0, 0};
        out[n - 1].score += r->points;
        out[n - 1].max += r->max_points;
    }
    return n;
}

/* Gradings (a student's exercise) in the rows, and how many of them were
 * graded (no NOT-GRADED row). Rows are sorted, so a grading's rows are
 * adjacent. */
static void gradings(const gc_tally *t, size_t *graded, size_t *all)
{
    *graded = *all = 0;
    for (size_t i = 0; i < t->n;) {
        size_t k = i;
        bool ng = false;
        while (k < t->n && t->rows[k].ex == t->rows[i].ex && strcmp(t->rows[k].student, t->rows[i].student) == 0)
            ng |= not_graded(&t->rows[k++]);
        ++*all;
        *graded += !ng;
        i = k;
    }
}

/* True when |a| and |b| differ only in their numbers: feedback quotes what
 * was measured ("2019 ms but only 1457 ms remained"), and the same mistake
 * must count as one however its numbers fell. */
static bool same_shape(const char *a, const char *b)
{
    while (*a && *b) {
        bool da = (*a >= '0' && *a <= '9'), db = (*b >= '0' && *b <= '9');
        if (da && db) {
            while ((*a >= '0' && *a <= '9') || *a == '.')
                a++;
            while ((*b >= '0' && *b <= '9') || *b == '.')
                b++;
            continue;
        }
        if (*a != *b)
            return false;
        a++;
        b++;
    }
    return *a == *b;
}

void gc_tally_summary(const gc_tally *t, FILE *f, double wall_s, int jobs)
{
    student_total *st = rl_xcalloc(t->n ? t->n : 1, sizeof *st);
    size_t ns = totals(t, st);
    size_t graded, all, nverdicts = 0;
    gradings(t, &graded, &all);
    for (size_t i = 0; i < t->n; i++)
        nverdicts += !not_graded(&t->rows[i]);
    if (graded < all)
        fprintf(f,
                "grade-class: partial: %zu of %zu gradings (the batch was interrupted; run the same command again to "
                "grade the rest). Everything below counts only what was graded.\n",
                graded, all);
    fprintf(f, "grade-class: %zu students%s, %zu verdicts, %.0f s wall time with --jobs %d\n", ns,
            graded < all ? " with something graded" : "", nverdicts, wall_s, jobs);

    /* Histogram of each student's total as a share of the points at stake. */
    int bins[11] = {0};
    double sum = 0;
    for (size_t i = 0; i < ns; i++) {
        double pct = st[i].max > 0 ? 100.0 * st[i].score / st[i].max : 0;
        sum += pct;
        bins[(int)(pct / 10)]++; /* 100 % is a bin of its own */
    }
    fprintf(f, "\nscore histogram (share of the points at stake%s; mean %.0f %%):\n",
            graded < all ? " in what was graded" : "", ns ? sum / (double)ns : 0);
    for (int b = 0; b <= 10; b++) {
        char label[16];
        if (b < 10)
            snprintf(label, sizeof label, "%3d-%3d %%", b * 10, b * 10 + 9);
        else
            snprintf(label, sizeof label, "    100 %%");
        fprintf(f, "  %s %4d ", label, bins[b]);
        for (int k = 0; k < bins[b] && k < 60; k++)
            fputc('#', f);
        fputc('\n', f);
    }

    /* Pass counts per scenario, and the scenario failed (graded, not PASS,
     * not MISSING) by the most students. */
    fprintf(f, "\nscenario                       passed  failed  missing  grading s (all students)\n");
    size_t worst_ex = 0, worst_sc = 0;
    int worst = 0, worst_of = 0; /* failed by |worst| of the |worst_of| students graded on it */
    for (size_t ex = 0; ex < t->nexercises; ex++) {
        double ex_secs = 0;
        bool any = false;
        for (size_t sc = 0; sc < t->exercises[ex].nscenarios; sc++) {
            int pass = 0, fail = 0, miss = 0;
            double secs = 0;
            for (size_t i = 0; i < t->n; i++) {
                const gc_row *r = &t->rows[i];
                if (r->ex != ex || r->sc != sc)
                    continue;
                if (not_graded(r))
                    continue;
                if (strcmp(r->verdict, "PASS") == 0)
                    pass++;
                else if (strcmp(r->verdict, "MISSING") == 0)
                    miss++;
                else
                    fail++;
                secs += r->seconds;
            }
            if (!pass && !fail && !miss)
                continue;
            any = true;
            ex_secs += secs;
            char id[2 * GC_NAME_MAX];
            snprintf(id, sizeof id, "%s/%s", t->exercises[ex].name, t->exercises[ex].scenarios[sc]);
            fprintf(f, "  %-28s %6d  %6d  %7d  %8.1f\n", id, pass, fail, miss, secs);
            if (fail > worst) {
                worst = fail;
                worst_of = pass + fail + miss;
                worst_ex = ex;
                worst_sc = sc;
            }
        }
        if (any)
            fprintf(f, "  %-28s %25s %8.1f\n", t->exercises[ex].name, "exercise total", ex_secs);
    }
    bool any_graded = false;
    for (size_t i = 0; i < t->n && !any_graded; i++)
        any_graded = !not_graded(&t->rows[i]) && strcmp(t->rows[i].verdict, "MISSING") != 0;
    if (!worst) {
        fprintf(f, "\nmost common failing scenario: none (%s)\n",
                any_graded ? "every graded scenario passed"
                           : "nothing was graded: every scenario is MISSING, no student folder held a folder "
                             "`lab init` made");
        free(st);
        return;
    }
    /* Its most common feedback, numbers aside (same_shape); the first of
     * the most frequent is shown, with its numbers. */
    const char *best = NULL;
    int best_n = 0;
    for (size_t i = 0; i < t->n; i++) {
        const gc_row *r = &t->rows[i];
        if (r->ex != worst_ex || r->sc != worst_sc || !strcmp(r->verdict, "PASS") || !strcmp(r->verdict, "MISSING") ||
            not_graded(r))
            continue;
        int c = 0;
        for (size_t k = 0; k < t->n; k++) {
            const gc_row *q = &t->rows[k];
            c += q->ex == worst_ex && q->sc == worst_sc && strcmp(q->verdict, r->verdict) == 0 &&
                 same_shape(q->feedback, r->feedback);
        }
        if (c > best_n) {
            best_n = c;
            best = r->feedback;
        }
    }
    fprintf(f, "\nmost common failing scenario: %s/%s, failed by %d of the %d students graded on it\n",
            t->exercises[worst_ex].name, t->exercises[worst_ex].scenarios[worst_sc], worst, worst_of);
    fprintf(f, "its most common feedback (%d of them, numbers aside), e.g.: %s\n", best_n, best ? best : "");
    free(st);
}
