/* report: the tally of a batch and the files it writes (report.h). */
#include "report.h"

#include "html.h"
#include "tally.h"
#include "upload.h"

#include "rl_alloc.h"
#include "rl_err.h"
#include "rl_file.h"
#include "rl_marker.h"
#include "rl_text.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* |root| to |path| through a fresh temporary file beside it (mkstemp, so a
 * link planted at any name there is never written through) renamed over
 * it. Returns 0, or -1 (errno set) and no file left behind. */
static int dump_json(json_t *root, const char *path)
{
    char tmp[PATH_MAX + GC_NAME_MAX + 40];
    FILE *f = rl_file_tmp_open(path, 0644, tmp, sizeof tmp);
    if (!f)
        return -1;
    if (json_dumpf(root, f, JSON_INDENT(2)) != 0) {
        fclose(f);
        unlink(tmp);
        errno = EIO;
        return -1;
    }
    return rl_file_tmp_commit(f, tmp, path) == 0 ? 0 : -1;
}

/* States in |x| (a test's or the results' extra_data) the id graded
 * (|id|, "" or NULL: none, null), where it came from and why a fallback
 * was taken (|note|, "" or NULL: none). */
static void set_identity(json_t *x, const char *id, const char *from, const char *note)
{
    if (!json_is_object(x))
        return;
    char *shown = id && id[0] ? rl_text_printable_dup(id, 0) : NULL;
    json_object_set_new(x, "graded_as", shown ? json_string(shown) : json_null());
    free(shown);
    json_object_set_new(x, "identity_from", json_string(from && from[0] ? from : "none"));
    if (note && note[0]) {
        char *n = rl_text_printable_dup(note, 0);
        json_object_set_new(x, "identity_note", json_string(n));
        free(n);
    }
}

/* The results.json of an upload with nothing gradable, |max| points. */
static json_t *upload_results(const char *msg, const char *student, double max)
{
    json_t *root = json_object();
    json_t *test = json_object();
    json_object_set_new(test, "name", json_string("Your upload"));
    json_object_set_new(test, "score", json_real(0));
    json_object_set_new(test, "max_score", json_real(max));
    json_object_set_new(test, "status", json_string("failed"));
    json_object_set_new(test, "output", json_string(msg));
    json_t *x = json_object();
    json_object_set_new(x, "verdict", json_string("UPLOAD"));
    json_object_set_new(test, "extra_data", x);
    json_t *tests = json_array();
    json_array_append_new(tests, test);
    json_object_set_new(root, "score", json_real(0));
    json_object_set_new(root, "max_score", json_real(max));
    json_object_set_new(root, "output", json_string("Nothing could be graded: see the entry \"Your upload\"."));
    json_object_set_new(root, "tests", tests);
    json_t *rx = json_object();
    json_object_set_new(rx, "student", json_string(student));
    json_object_set_new(root, "extra_data", rx);
    return root;
}

int gc_report_upload(const gc_batch *b, const char *sdir, const char *student, const char *results, const char *id,
                     const char *from, const char *note)
{
    char names[1024] = "";
    double max = 0;
    for (size_t e = 0; e < b->nex; e++) {
        if (!b->want[e])
            continue;
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", names[0] ? ", " : "", b->ex[e].name);
        for (size_t i = 0; i < b->ex[e].nscenarios; i++)
            max += b->ex[e].points[i];
    }
    static char msg[8192];
    gc_upload_unexpected(sdir, names, msg, sizeof msg);
    json_t *root = upload_results(msg, student, max);
    set_identity(json_object_get(root, "extra_data"), id, from, note);
    set_identity(json_object_get(json_array_get(json_object_get(root, "tests"), 0), "extra_data"), id, from, note);
    char own[PATH_MAX + GC_NAME_MAX + 32];
    snprintf(own, sizeof own, "%s/%s/results.json", b->out, student);
    int rc = GC_EXIT_OK;
    const char *paths[] = {own, results};
    for (size_t i = 0; i < 2; i++) {
        if (paths[i] && dump_json(root, paths[i]) != 0) {
            fprintf(stderr, "grade-class: cannot write %s: %s\n", paths[i], strerror(errno));
            rc = GC_EXIT_INCOMPLETE;
        }
    }
    json_decref(root);
    if (!b->quiet)
        fprintf(stderr, "grade-class: %s\n", msg);
    return rc;
}

size_t gc_report_tail(const char *text, size_t len, long nlines)
{
    size_t start = len;
    for (long k = 0; start > 0; start--)
        if (text[start - 1] == '\n' && k++ == nlines)
            break;
    return start;
}

/* The last |nlines| lines of the gradings' logs, in job order, on stdout.
 * A log holds what a grading printed, a submission's words among them, so
 * each line is made printable here (rl_text.h) whatever made it: what
 * Gradescope's instructor view shows is never a terminal's command. */
static void show_logs(const gc_job *jobs, size_t njobs, long nlines)
{
    char *all = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&all, &len);
    for (size_t i = 0; i < njobs; i++) {
        char *text;
        size_t n;
        char why[200];
        if (!jobs[i].log[0] || rl_file_read_untrusted(jobs[i].log, NULL, 4u << 20, &text, &n, why, sizeof why) != RL_OK)
            continue;
        /* Line by line, NULs included: every line is one printable line. */
        for (size_t at = 0; at < n;) {
            const char *nl = memchr(text + at, '\n', n - at);
            size_t ll = nl ? (size_t)(nl - (text + at)) : n - at;
            size_t need = rl_text_printable(NULL, 0, text + at, ll, 0);
            char *line = rl_xmalloc(need + 1);
            rl_text_printable(line, need + 1, text + at, ll, 0);
            fprintf(m, "%s\n", line);
            free(line);
            at += ll + 1;
        }
        free(text);
    }
    fclose(m);
    size_t start = gc_report_tail(all, len, nlines);
    fwrite(all + start, 1, len - start, stdout);
    fflush(stdout);
    free(all);
}

/* The rows of one planned grading. Returns true when it finished. */
static bool tally_job(gc_tally *t, const gc_job *job, const gc_job_info *ji)
{
    if (ji->error[0]) {
        gc_tally_add_all(t, ji->student, ji->ex, ji->missing ? "MISSING" : "ERROR", ji->error);
        return true;
    }
    if (job->state == GC_JOB_PENDING || job->interrupted) {
        /* Not a verdict: what the stopped grader wrote is incomplete, and a
         * resume grades it again from the start. */
        /* --slurm: the array's task or the array itself ended first. */
        const char *why = job->state == GC_JOB_PENDING && ji->unfinished[0] ? ji->unfinished
                          : job->interrupted ? "not graded: the batch was interrupted during this grading (run it "
                                               "again to resume)"
                                             : "not graded: the batch was interrupted first (run it again to resume)";
        gc_tally_add_all(t, ji->student, ji->ex, GC_NOT_GRADED, why);
        return false;
    }
    if (job->timed_out) {
        gc_tally_add_all(t, ji->student, ji->ex, "ERROR",
                         "the grader did not finish within the batch's time limit (see its .log)");
        return true;
    }
    gc_tally_add_results(t, ji->student, ji->ex, ji->json);
    return true;
}

static void prefix_feedback(gc_row *r, const char *why)
{
    size_t n = strlen(why) + strlen(r->feedback ? r->feedback : "") + 3;
    char *fb = rl_xmalloc(n);
    snprintf(fb, n, "%s. %s", why, r->feedback ? r->feedback : "");
    free(r->feedback);
    r->feedback = fb;
}

/* Puts |why| before the "output" of the results.json at |path|. */
static void prefix_output(const char *path, const char *why)
{
    json_t *root = json_load_file(path, 0, NULL);
    const char *was = json_string_value(json_object_get(root, "output"));
    if (!root)
        return;
    /* An HTML output (gc_tally_write_student's) gets |why| escaped. */
    const char *fmt = json_string_value(json_object_get(root, "output_format"));
    char *shown = fmt && strcmp(fmt, "html") == 0 ? gc_html_escape_dup(why) : rl_xstrdup(why);
    bool html = fmt && strcmp(fmt, "html") == 0;
    size_t n = strlen(shown) + (was ? strlen(was) : 0) + 16;
    char *text = rl_xmalloc(n);
    snprintf(text, n, "%s%s.%s %s", html ? "<p>" : "", shown, html ? "</p>" : "", was ? was : "");
    json_object_set_new(root, "output", json_string(text));
    free(text);
    free(shown);
    dump_json(root, path);
    json_decref(root);
}

/* The rows of every planned grading into |t|, sorted. Returns true when
 * every one finished. */
static bool tally_plan(gc_tally *t, const gc_plan *p)
{
    bool complete = true;
    for (size_t i = 0; i < p->njobs; i++) {
        size_t before = t->n;
        if (p->jobs[i].user && !tally_job(t, &p->jobs[i], &p->info[i]))
            complete = false;
        if (p->jobs[i].user && p->info[i].inferred[0])
            for (size_t r = before; r < t->n; r++)
                prefix_feedback(&t->rows[r], p->info[i].inferred);
    }
    gc_tally_sort(t);
    return complete;
}

/* The planned grading of student |s| whose results name the student: the
 * first with an id graded, else the first planned. NULL when none. */
static const gc_job_info *identity_job(const gc_batch *b, const gc_plan *p, size_t s)
{
    const gc_job_info *first = NULL;
    for (size_t e = 0; e < b->nex; e++) {
        const gc_job_info *ji = &p->info[s * b->nex + e];
        if (!p->jobs[s * b->nex + e].user)
            continue;
        if (ji->variant[0])
            return ji;
        if (!first)
            first = ji;
    }
    return first;
}

/* Says in the results.json at |path| of student |s| which id each test
 * was graded as and where it came from (issue 34): the top level and each
 * test's extra_data (graded_as, identity_from, identity_note). */
static void state_identity(const gc_batch *b, const gc_plan *p, size_t s, const char *path)
{
    json_t *root = json_load_file(path, 0, NULL);
    if (!root)
        return;
    const gc_job_info *top = identity_job(b, p, s);
    if (top)
        set_identity(json_object_get(root, "extra_data"), top->variant, top->identity_from, top->identity_note);
    size_t i;
    json_t *test;
    json_array_foreach(json_object_get(root, "tests"), i, test)
    {
        json_t *x = json_object_get(test, "extra_data");
        const char *ex = json_string_value(json_object_get(x, "exercise"));
        int e = ex ? gc_batch_find_exercise(b, ex) : -1;
        const gc_job_info *ji = e >= 0 && p->jobs[s * b->nex + (size_t)e].user ? &p->info[s * b->nex + (size_t)e] : top;
        if (ji)
            set_identity(x, ji->variant, ji->identity_from, ji->identity_note);
    }
    dump_json(root, path);
    json_decref(root);
}

/* The sentence the results' output opens with: whom |ji|'s student was
 * graded as, where that came from and why a fallback was taken; "" when
 * nothing was planned. */
static void identity_sentence(const gc_job_info *ji, char *buf, size_t len)
{
    buf[0] = '\0';
    if (!ji)
        return;
    static const char *const sources[][2] = {
        {"sid", "the submitter's sid in Gradescope's metadata"},
        {"email", "the submitter's email in Gradescope's metadata"},
        {"--identity", "grade-class's --identity"},
        {"roster", "the roster"},
        {"folder", "the student folder's name"},
        {"marker", "the folder's own .relaylab"},
    };
    const char *whence = NULL;
    for (size_t i = 0; i < sizeof sources / sizeof *sources && !whence; i++)
        if (strcmp(ji->identity_from, sources[i][0]) == 0)
            whence = sources[i][1];
    char id[GC_NAME_MAX];
    rl_printable(ji->variant, id, sizeof id);
    if (id[0])
        snprintf(buf, len, "Graded as \"%s\" (from %s)", id, whence ? whence : ji->identity_from);
    else
        snprintf(buf, len, "Graded with no identity (the world's default deployment)");
    if (ji->identity_note[0]) {
        size_t n = strlen(buf);
        snprintf(buf + n, len - n, ": %.500s", ji->identity_note);
    }
}

/* Student |s|'s results.json (in --out, and o->results). Returns
 * GC_EXIT_OK or GC_EXIT_INCOMPLETE. */
static int write_student(const gc_batch *b, const gc_options *o, const gc_plan *p, const gc_tally *t, size_t s,
                         char **ex_paths)
{
    int rc = GC_EXIT_OK;
    char path[PATH_MAX + 300];
    for (size_t e = 0; e < b->nex; e++) {
        gc_job_info *ji = &p->info[s * b->nex + e];
        const gc_job *j = &p->jobs[s * b->nex + e];
        /* Not from a grading that never ran or was stopped: its file is
         * incomplete, and the rows say "not graded". */
        bool graded = j->state != GC_JOB_PENDING && !j->interrupted;
        ex_paths[e] = j->user && !ji->error[0] && graded ? ji->json : NULL;
    }
    /* A name the results cannot use has no folder of --out (its rows,
     * named as shown, are in the CSV); --results (Gradescope's) is
     * written all the same. */
    char shown[GC_NAME_MAX];
    gc_roster_name_shown(p->students[s], shown, sizeof shown);
    snprintf(path, sizeof path, "%s/%s/results.json", b->out, p->students[s]);
    /* Gradescope's results name the id graded (--identity, else the one
     * the folder's .relaylab gave), not the upload's folder. */
    const char *id = o->identity;
    for (size_t e = 0; e < b->nex && !id; e++)
        if (p->jobs[s * b->nex + e].user && p->info[s * b->nex + e].variant[0])
            id = p->info[s * b->nex + e].variant;
    if (p->has_out[s] && gc_tally_write_student(t, p->students[s], id, ex_paths, path) != RL_OK) {
        fprintf(stderr, "grade-class: cannot write %s: %s\n", path, strerror(errno));
        rc = GC_EXIT_INCOMPLETE;
    }
    if (o->results && gc_tally_write_student(t, shown, id, ex_paths, o->results) != RL_OK) {
        fprintf(stderr, "grade-class: cannot write %s: %s\n", o->results, strerror(errno));
        rc = GC_EXIT_INCOMPLETE;
    }
    char said[1024];
    identity_sentence(identity_job(b, p, s), said, sizeof said);
    if (p->has_out[s]) {
        state_identity(b, p, s, path);
        if (said[0])
            prefix_output(path, said);
    }
    if (o->results) {
        state_identity(b, p, s, o->results);
        if (said[0])
            prefix_output(o->results, said);
    }
    /* A folder recognised by its files: its results say so first. */
    for (size_t e = 0; e < b->nex; e++) {
        const char *why = p->info[s * b->nex + e].inferred;
        if (!p->jobs[s * b->nex + e].user || !why[0])
            continue;
        prefix_output(path, why);
        if (o->results)
            prefix_output(o->results, why);
        break;
    }
    return rc;
}

/* grades.csv, class.html and summary.txt in b->out. Returns GC_EXIT_OK or
 * GC_EXIT_INCOMPLETE. */
static int write_class(const gc_batch *b, const gc_plan *p, const gc_tally *t, double wall_s)
{
    int rc = GC_EXIT_OK;
    char path[PATH_MAX + 300];
    snprintf(path, sizeof path, "%s/grades.csv", b->out);
    if (gc_tally_write_csv(t, path) != RL_OK) {
        fprintf(stderr, "grade-class: cannot write %s: %s\n", path, strerror(errno));
        rc = GC_EXIT_INCOMPLETE;
    }
    snprintf(path, sizeof path, "%s/class.html", b->out);
    if (gc_html_write_class(t, p->students, p->nstudents, path) != RL_OK) {
        fprintf(stderr, "grade-class: cannot write %s: %s\n", path, strerror(errno));
        rc = GC_EXIT_INCOMPLETE;
    }
    snprintf(path, sizeof path, "%s/summary.txt", b->out);
    char stmp[sizeof path + 32];
    FILE *sf = rl_file_tmp_open(path, 0644, stmp, sizeof stmp);
    if (sf) {
        gc_tally_summary(t, sf, wall_s, b->jobs);
        if (rl_file_tmp_commit(sf, stmp, path) != 0) {
            fprintf(stderr, "grade-class: cannot write %s: %s\n", path, strerror(errno));
            rc = GC_EXIT_INCOMPLETE;
        }
    } else {
        fprintf(stderr, "grade-class: cannot write %s: %s\n", path, strerror(errno));
        rc = GC_EXIT_INCOMPLETE;
    }
    return rc;
}

int gc_report_write(const gc_batch *b, const gc_options *o, const gc_plan *p, int prc, double wall_s)
{
    gc_tally t;
    gc_tally_init(&t, b->ex, b->nex);
    bool complete = tally_plan(&t, p) && prc == RL_OK && !gc_pool_interrupted();
    int rc = complete ? GC_EXIT_OK : GC_EXIT_INCOMPLETE;
    char **ex_paths = rl_xcalloc(b->nex, sizeof *ex_paths);
    for (size_t s = 0; s < p->nstudents; s++)
        if (write_student(b, o, p, &t, s, ex_paths) != GC_EXIT_OK)
            rc = GC_EXIT_INCOMPLETE;
    free(ex_paths);
    if (write_class(b, p, &t, wall_s) != GC_EXIT_OK)
        rc = GC_EXIT_INCOMPLETE;
    if (!b->quiet)
        gc_tally_summary(&t, stdout, wall_s, b->jobs);
    if (b->show_logs)
        show_logs(p->jobs, p->njobs, b->show_logs);
    if (!complete)
        fprintf(stderr, "grade-class: %s: run the same command again to resume\n",
                prc == RL_ECHILD ? "the Slurm job array did not grade everything (see above)"
                : prc != RL_OK   ? "a grader could not be started"
                                 : "interrupted");
    gc_tally_fini(&t);
    return rc;
}
