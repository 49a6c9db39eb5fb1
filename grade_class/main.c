/* grade-class: grades a class folder (one subfolder a student) on one or
 * all exercises with bin/grader, N graders at once, and writes one
 * results.json a student, a CSV and a summary. Every grading is a grader
 * process of its own, exactly as one by one, so --jobs changes no verdict;
 * a grading that gave verdicts, with the same options, is not run again
 * (resume).
 *
 * Exit status: 0 every grading finished (whatever its verdicts), 2 usage
 * error, or a grading that could not finish (interrupted: run the same
 * command again to resume). */
#include "pool.h"
#include "roster.h"
#include "tally.h"
#include "upload.h"

#include "rl_alloc.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_marker.h"
#include "rl_file.h"
#include "rl_path.h"
#include "rl_text.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_EXERCISES 32
#define MAX_STARTERS  32
#define MAX_WORLDS    16
/* Graders at once a core without a verdict changing: a grading mostly
 * waits (idle gaps, deadlines, a submission's start), so the known class
 * of 40 students, every exercise, ran right at --jobs 8 and 10 on 2 cores
 * (bench/results/class.md). Beyond that is not measured. */
#define GC_JOBS_PER_CORE 5

static void usage(FILE *f)
{
    fprintf(f, "usage: grade-class CLASS_DIR --out DIR [options]\n"
               "       grade-class --student DIR --out DIR [--results FILE] [options]\n"
               "\n"
               "Grades every student of CLASS_DIR (one subfolder a student, named by the student's\n"
               "id) on the exercises, with bin/grader, and writes into DIR: STUDENT/results.json\n"
               "(Gradescope's schema, every exercise), STUDENT/EXERCISE.json and .log (each\n"
               "grading), grades.csv and summary.txt. A student's folder holds the folders\n"
               "`lab init` made (or is one): each names its exercises, its submission (the `run`\n"
               "script, or the config file) and its variant in its .relaylab file. An exercise\n"
               "no folder names is MISSING (no points). Run again after an interruption: every\n"
               "grading with complete results (same options) is kept, the rest is graded.\n"
               "A student folder that is a symlink, or holds a folder, .relaylab, config or run\n"
               "leading outside it, is refused (ERROR rows say which), never followed; a folder\n"
               "name the results cannot use skips that student, not the class.\n"
               "\n"
               "  --out DIR            where the results go (made if missing)\n"
               "  --exercises LIST     comma-separated exercises, or all (default; `grader list`)\n"
               "  --jobs N             graders at once (default 1); a grading mostly waits, so up to\n"
               "                       5 a core (measured: 10 on 2 cores) changes no verdict\n"
               "  --runs N             the grader's --runs (default 1)\n"
               "  --ready-timeout S    the grader's --ready-timeout\n"
               "  --memory-limit MB    the grader's --memory-limit\n"
               "  --world EX=FILE      config exercise EX is judged in FILE's deployments\n"
               "  --exercises EX/ID    one scenario of an exercise (the grader's --only), e.g.\n"
               "                       keepalive/check,deadline\n"
               "  --variant-from W     the grading identity (the config exercises' deployment):\n"
               "                       folder (the roster: the student folder's name, or --roster's\n"
               "                       id for it; the default with CLASS_DIR), marker (each folder's\n"
               "                       own .relaylab: a copy then grades for its copier), or none\n"
               "  --roster FILE        CSV lines FOLDER,ID: the identity of each student folder\n"
               "  --student DIR        grade one student's folder (Gradescope's submission)\n"
               "  --identity ID        with --student: the grading identity (Gradescope's submitter;\n"
               "                       without it, the folder's own .relaylab)\n"
               "  --results FILE       with --student: also write its results.json to FILE\n"
               "  --unsafe             the grader's --unsafe: grade unsandboxed where the sandbox\n"
               "                       cannot be built (a container without namespaces); the\n"
               "                       submissions could then reach the grader: a last resort\n"
               "  --fresh              grade everything again, keeping nothing\n"
               "  --quiet              no progress lines\n"
               "  --show-logs N        at the end, print the last N lines of the gradings' logs, every\n"
               "                       byte a submission could have put there made printable\n"
               "  --help               this text\n");
}

typedef struct batch {
    char grader[PATH_MAX];
    char out[PATH_MAX];
    char class_dir[PATH_MAX]; /* real path: messages name folders relative to it */
    gc_exercise ex[MAX_EXERCISES];
    size_t nex;
    bool want[MAX_EXERCISES];
    int jobs, runs;
    const char *ready_timeout, *memory_limit;
    char worlds[MAX_WORLDS][PATH_MAX + GC_NAME_MAX];
    size_t nworlds;
    const char *variant_from;
    char only[MAX_EXERCISES][1024]; /* --exercises EX/ID: the grader's --only, or "" */
    bool fresh, quiet, tty, unsafe;
    long show_logs; /* --show-logs N: lines of the logs printed at the end; 0: none */
    /* progress */
    size_t total, done;
    int64_t t0;
} batch;

typedef struct job_info {
    char student[GC_NAME_MAX];
    size_t ex;
    char json[PATH_MAX + 300];
    char args_file[PATH_MAX + 300];
    char args_text[8192];
    char error[4096]; /* set instead of a job: cannot be graded (bad marker, refused folder) */
    bool missing;
    /* argv storage */
    char submission[PATH_MAX + 1100];
    char dir[PATH_MAX];
    char variant[GC_NAME_MAX];
    char runs[16];
    char inferred[512]; /* the folder had no .relaylab: how it was recognised */
} job_info;

/* Runs `grader list` and parses it. */
static int read_exercises(batch *b, char *err, size_t errlen)
{
    char cmd[PATH_MAX + 32];
    snprintf(cmd, sizeof cmd, "'%s' list", b->grader);
    FILE *p = popen(cmd, "r");
    if (!p) {
        snprintf(err, errlen, "cannot run %s list: %s", b->grader, strerror(errno));
        return RL_ESYS;
    }
    size_t cap = 1 << 16, len = 0, n;
    char *text = rl_xmalloc(cap);
    while ((n = fread(text + len, 1, cap - 1 - len, p)) > 0)
        len += n;
    text[len] = '\0';
    int st = pclose(p);
    int rc = st == 0 ? gc_roster_parse_list(text, b->ex, MAX_EXERCISES, &b->nex, err, errlen) : RL_ESYS;
    if (st != 0)
        snprintf(err, errlen, "%s list failed (status %d)", b->grader, st);
    free(text);
    return rc;
}

static int find_exercise(const batch *b, const char *name)
{
    for (size_t i = 0; i < b->nex; i++)
        if (strcmp(b->ex[i].name, name) == 0)
            return (int)i;
    return -1;
}

static const char *world_for(const batch *b, const char *ex)
{
    size_t n = strlen(ex);
    for (size_t i = 0; i < b->nworlds; i++)
        if (strncmp(b->worlds[i], ex, n) == 0 && b->worlds[i][n] == '=')
            return b->worlds[i] + n + 1;
    return NULL;
}

/* A grading is kept on resume when its results file reads as complete and
 * the command that made it was this one. */
static bool already_done(const job_info *ji)
{
    FILE *f = fopen(ji->args_file, "r");
    if (!f)
        return false;
    char prev[sizeof ji->args_text] = "";
    size_t n = fread(prev, 1, sizeof prev - 1, f);
    prev[n] = '\0';
    fclose(f);
    if (strcmp(prev, ji->args_text) != 0)
        return false;
    json_t *root = json_load_file(ji->json, 0, NULL);
    const char *error = json_string_value(json_object_get(json_object_get(root, "extra_data"), "error"));
    bool ok =
        root && json_is_array(json_object_get(root, "tests")) && !(error && strncmp(error, "interrupted", 11) == 0);
    json_decref(root);
    return ok;
}

static int make_dir(const char *path)
{
    return mkdir(path, 0755) == 0 || errno == EEXIST ? RL_OK : RL_ESYS;
}

/* |path| as the rows show it: relative to the class folder when inside it. */
static const char *shown_path(const batch *b, const char *path)
{
    size_t n = strlen(b->class_dir);
    return strncmp(path, b->class_dir, n) == 0 && path[n] == '/' ? path + n + 1 : path;
}

/* Why |s|'s submission for exercise |e| is refused, into |why|: a config
 * that is not a regular file of its folder (a symlink to a classmate's, a
 * FIFO, /dev/zero, a huge file), or a command naming a file that leads out
 * of the folder (`run -> ../../bob/deadline/run`). The grader refuses the
 * same (its --dir and --submission); refusing here puts it in the row.
 * Returns true when refused. */
static bool refuse_submission(const batch *b, const gc_exercise *e, const gc_starter *s, const char *submission,
                              char *why, size_t whylen)
{
    char err[PATH_MAX + 512];
    if (e->config) {
        char *text = NULL;
        size_t len;
        int rc = rl_file_read_untrusted(submission, s->dir, GC_CONFIG_MAX, &text, &len, err, sizeof err);
        free(text);
        if (rc == RL_OK || rc == RL_ENOTFOUND)
            return false; /* a missing config is the grader's to report, as `lab check` does */
        snprintf(why, whylen, "refused: the config %.1000s/%.200s %.500s: not read", shown_path(b, s->dir),
                 s->submission, err); /* err names no path */
        return true;
    }
    if (rl_path_command_within(s->dir, s->dir, s->submission, err, sizeof err) == RL_OK)
        return false;
    snprintf(why, whylen,
             "refused: the .relaylab of %.1000s runs '%.200s', and its '%.200s' leads outside that folder (a symlink, or "
             "a path to a classmate's files): not followed; hand in the file itself",
             shown_path(b, s->dir), s->submission, err);
    return true;
}

/* Fills |job| and |ji| for |student| (folder |sdir|) on exercise |ex|;
 * |notes| says why folders of the student were refused (or ""). */
static void plan(batch *b, const char *student, const char *identity, const char *sdir, const gc_starter *st,
                 size_t nst, size_t ex, const char *notes, gc_job *job, job_info *ji)
{
    memset(ji, 0, sizeof *ji);
    snprintf(ji->student, sizeof ji->student, "%s", student);
    ji->ex = ex;
    const gc_exercise *e = &b->ex[ex];
    snprintf(ji->json, sizeof ji->json, "%s/%s/%s.json", b->out, student, e->name);
    snprintf(ji->args_file, sizeof ji->args_file, "%s/%s/%s.args", b->out, student, e->name);
    job->user = ji;
    job->state = GC_JOB_SKIPPED;
    const gc_starter *s = NULL;
    for (size_t i = 0; i < nst && !s; i++)
        if (gc_starter_has(&st[i], e->name))
            s = &st[i];
    if (!s && notes[0]) {
        /* One of the refused folders may have been this exercise's: say
         * what was refused rather than "missing". */
        snprintf(ji->error, sizeof ji->error, "no folder for %s could be graded: %s", e->name, notes);
        return;
    }
    if (!s) {
        ji->missing = true;
        snprintf(ji->error, sizeof ji->error,
                 "no folder for %s in %.200s: a folder `lab init %s` made (its .relaylab lists %s) was expected",
                 e->name, shown_path(b, sdir), e->name, e->name);
        return;
    }
    if (s->inferred[0])
        snprintf(ji->inferred, sizeof ji->inferred,
                 "%.120s has no .relaylab (zip tools and drag-and-drop drop hidden files): it was recognised by "
                 "%.240s",
                 shown_path(b, s->dir), s->inferred);
    /* The folder's names are the student's: shown in the CSV and the terminal. */
    if (ji->inferred[0]) {
        char raw[sizeof ji->inferred];
        memcpy(raw, ji->inferred, sizeof raw);
        rl_printable(raw, ji->inferred, sizeof ji->inferred);
    }
    if (e->config && (strchr(s->submission, '/') || strcmp(s->submission, "..") == 0)) {
        snprintf(ji->error, sizeof ji->error,
                 "the .relaylab of %.200s names '%.100s': a config must be a file of its folder", s->dir,
                 s->submission);
        return;
    }
    int n = 0;
    job->argv[n++] = b->grader;
    job->argv[n++] = b->ex[ex].name;
    job->argv[n++] = "--submission";
    if (e->config)
        snprintf(ji->submission, sizeof ji->submission, "%s/%s", s->dir, s->submission);
    else
        snprintf(ji->submission, sizeof ji->submission, "%s", s->submission);
    if (refuse_submission(b, e, s, ji->submission, ji->error, sizeof ji->error)) {
        fprintf(stderr, "grade-class: %s: %s\n", student, ji->error);
        return;
    }
    job->argv[n++] = ji->submission;
    /* The sandbox shows the submission this folder and nothing else of the
     * class or the kit, whatever its command names. */
    snprintf(ji->dir, sizeof ji->dir, "%s", s->dir);
    job->argv[n++] = "--dir";
    job->argv[n++] = ji->dir;
    job->argv[n++] = "--json";
    job->argv[n++] = ji->json;
    job->argv[n++] = "--quiet";
    snprintf(ji->runs, sizeof ji->runs, "%d", b->runs);
    job->argv[n++] = "--runs";
    job->argv[n++] = ji->runs;
    if (b->ready_timeout) {
        job->argv[n++] = "--ready-timeout";
        job->argv[n++] = b->ready_timeout;
    }
    if (b->memory_limit) {
        job->argv[n++] = "--memory-limit";
        job->argv[n++] = b->memory_limit;
    }
    if (b->unsafe)
        job->argv[n++] = "--unsafe";
    if (b->only[ex][0]) {
        job->argv[n++] = "--only";
        job->argv[n++] = b->only[ex];
    }
    if (e->config) {
        const char *w = world_for(b, e->name);
        if (w) {
            job->argv[n++] = "--world";
            job->argv[n++] = w;
        }
        /* The identity rule (lib/rl_marker.h): the grading identity picks
         * the deployment; the grader compares it with the folder's own
         * and says so first when they differ. */
        const char *v = strcmp(b->variant_from, "folder") == 0   ? identity
                        : strcmp(b->variant_from, "marker") == 0 ? s->variant
                                                                 : "";
        snprintf(ji->variant, sizeof ji->variant, "%s", v);
        if (ji->variant[0]) {
            job->argv[n++] = "--student";
            job->argv[n++] = ji->variant;
        }
    }
    job->argv[n] = NULL;
    snprintf(job->cwd, sizeof job->cwd, "%s", s->dir);
    snprintf(job->log, sizeof job->log, "%s/%s/%s.log", b->out, student, e->name);
    /* Beyond the grader's own bounds (a 60 s watchdog a scenario run, the
     * ready timeout, a stop): only a grader that hangs meets it. */
    job->timeout_ms = (int64_t)b->runs * (int64_t)e->nscenarios * 150000 + 60000;
    size_t len = 0;
    for (int i = 1; i < n && len < sizeof ji->args_text; i++)
        len += (size_t)snprintf(ji->args_text + len, sizeof ji->args_text - len, "%s\n", job->argv[i]);
    job->state = !b->fresh && already_done(ji) ? GC_JOB_SKIPPED : GC_JOB_PENDING;
    if (job->state == GC_JOB_PENDING) {
        unlink(ji->args_file); /* written again once this grading completes */
        unlink(ji->json);
    }
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
    size_t start = len;
    for (long k = 0; start > 0; start--)
        if (all[start - 1] == '\n' && k++ == nlines)
            break;
    fwrite(all + start, 1, len - start, stdout);
    fflush(stdout);
    free(all);
}

static void fmt_dur(double s, char *buf, size_t len)
{
    int t = (int)(s + 0.5);
    snprintf(buf, len, "%d:%02d", t / 60, t % 60);
}

static void on_event(gc_job *job, void *arg)
{
    batch *b = arg;
    if (b->quiet && !job)
        return;
    double el = (double)(rl_now_ns() - b->t0) / 1e9;
    char e[16], left[16] = "?";
    fmt_dur(el, e, sizeof e);
    if (b->done)
        fmt_dur(el / (double)b->done * (double)(b->total - b->done), left, sizeof left);
    if (!job) {
        if (b->tty)
            fprintf(stderr, "\rgrade-class: %zu/%zu graded, %s elapsed, ~%s left ", b->done, b->total, e, left);
        return;
    }
    job_info *ji = job->user;
    /* Recorded as soon as it ends, so that a batch stopped in any way
     * (even SIGKILL) keeps it on resume; only verdicts are kept (status 0
     * or 1): a grader error (2) is tried again. */
    if (!job->interrupted && !job->timed_out && (job->status == 0 || job->status == 1)) {
        FILE *f = fopen(ji->args_file, "w");
        if (f) {
            fputs(ji->args_text, f);
            fclose(f);
        }
    }
    b->done++;
    if (b->done)
        fmt_dur(el / (double)b->done * (double)(b->total - b->done), left, sizeof left);
    if (b->quiet)
        return;
    /* A folder's name is its student's choice: printable before a terminal
     * sees it (rl_text.h). */
    char student[sizeof ji->student * 4];
    rl_text_printable(student, sizeof student, ji->student, strlen(ji->student), 0);
    fprintf(stderr, "%sgrade-class: %zu/%zu graded, %s elapsed, ~%s left: %s/%s %s (%.0f s)\n", b->tty ? "\r" : "",
            b->done, b->total, e, left, student, b->ex[ji->ex].name,
            job->interrupted   ? "interrupted"
            : job->timed_out   ? "stopped at the time limit"
            : job->status == 0 ? "all passed"
            : job->status == 1 ? "some failed"
                               : "grader error (see its .log)",
            (double)(job->ended_ns - job->started_ns) / 1e9);
}

/* The rows of one planned grading. Returns true when it finished. */
static bool tally_job(gc_tally *t, const gc_job *job, const job_info *ji)
{
    if (ji->error[0]) {
        gc_tally_add_all(t, ji->student, ji->ex, ji->missing ? "MISSING" : "ERROR", ji->error);
        return true;
    }
    if (job->state == GC_JOB_PENDING || job->interrupted) {
        /* Not a verdict: what the stopped grader wrote is incomplete, and a
         * resume grades it again from the start. */
        gc_tally_add_all(t, ji->student, ji->ex, GC_NOT_GRADED,
                         job->interrupted ? "not graded: the batch was interrupted during this grading (run it "
                                            "again to resume)"
                                          : "not graded: the batch was interrupted first (run it again to resume)");
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

/* Adds scenario |id| of exercise |ex| to its --only list. */
static int add_only(batch *b, size_t ex, const char *id)
{
    bool known = false;
    for (size_t i = 0; i < b->ex[ex].nscenarios; i++)
        known |= strcmp(b->ex[ex].scenarios[i], id) == 0;
    size_t n = strlen(b->only[ex]);
    if (!known || n + strlen(id) + 2 > sizeof b->only[ex])
        return RL_EINVAL;
    snprintf(b->only[ex] + n, sizeof b->only[ex] - n, "%s%s", n ? "," : "", id);
    return RL_OK;
}

/* An exercise named with scenarios keeps only those (rows, points, the
 * grader's --only), in the grader's order. */
static void trim_to_only(batch *b)
{
    for (size_t e = 0; e < b->nex; e++) {
        if (!b->only[e][0])
            continue;
        gc_exercise *x = &b->ex[e];
        size_t k = 0;
        for (size_t i = 0; i < x->nscenarios; i++) {
            char list[sizeof b->only[e]], *save = NULL;
            bool keep = false;
            snprintf(list, sizeof list, "%s", b->only[e]);
            for (char *w = strtok_r(list, ",", &save); w && !keep; w = strtok_r(NULL, ",", &save))
                keep = strcmp(w, x->scenarios[i]) == 0;
            if (!keep)
                continue;
            if (k != i) {
                memcpy(x->scenarios[k], x->scenarios[i], sizeof x->scenarios[k]);
                x->points[k] = x->points[i];
                memcpy(x->visibility[k], x->visibility[i], sizeof x->visibility[k]);
            }
            k++;
        }
        x->nscenarios = k;
    }
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
    size_t n = strlen(why) + (was ? strlen(was) : 0) + 4;
    char *text = rl_xmalloc(n);
    snprintf(text, n, "%s. %s", why, was ? was : "");
    json_object_set_new(root, "output", json_string(text));
    free(text);
    char tmp[PATH_MAX + 8];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    if (json_dump_file(root, tmp, JSON_INDENT(2)) != 0 || rename(tmp, path) != 0)
        unlink(tmp);
    json_decref(root);
}

/* --student DIR with nothing gradable in it: one results.json entry that
 * says what was uploaded and what was expected (upload.h), worth every
 * wanted scenario's points, so the score reads 0 of the assignment. */
static int unexpected_upload(const batch *b, const char *sdir, const char *student, const char *results)
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
    char own[PATH_MAX + GC_NAME_MAX + 32];
    snprintf(own, sizeof own, "%s/%s/results.json", b->out, student);
    int rc = 0;
    const char *paths[] = {own, results};
    for (size_t i = 0; i < 2; i++) {
        char tmp[PATH_MAX + GC_NAME_MAX + 40];
        if (!paths[i])
            continue;
        snprintf(tmp, sizeof tmp, "%s.tmp", paths[i]);
        if (json_dump_file(root, tmp, JSON_INDENT(2)) != 0 || rename(tmp, paths[i]) != 0) {
            fprintf(stderr, "grade-class: cannot write %s: %s\n", paths[i], strerror(errno));
            unlink(tmp);
            rc = 2;
        }
    }
    json_decref(root);
    if (!b->quiet)
        fprintf(stderr, "grade-class: %s\n", msg);
    return rc;
}

int main(int argc, char **argv)
{
    enum {
        O_OUT = 256,
        O_EX,
        O_JOBS,
        O_RUNS,
        O_READY,
        O_MEM,
        O_WORLD,
        O_VFROM,
        O_STUDENT,
        O_RESULTS,
        O_FRESH,
        O_QUIET,
        O_SHOW_LOGS,
        O_UNSAFE,
        O_ROSTER,
        O_IDENTITY
    };
    static const struct option longopts[] = {
        {"out", required_argument, NULL, O_OUT},
        {"exercises", required_argument, NULL, O_EX},
        {"jobs", required_argument, NULL, O_JOBS},
        {"runs", required_argument, NULL, O_RUNS},
        {"ready-timeout", required_argument, NULL, O_READY},
        {"memory-limit", required_argument, NULL, O_MEM},
        {"world", required_argument, NULL, O_WORLD},
        {"variant-from", required_argument, NULL, O_VFROM},
        {"student", required_argument, NULL, O_STUDENT},
        {"results", required_argument, NULL, O_RESULTS},
        {"fresh", no_argument, NULL, O_FRESH},
        {"unsafe", no_argument, NULL, O_UNSAFE},
        {"roster", required_argument, NULL, O_ROSTER},
        {"identity", required_argument, NULL, O_IDENTITY},
        {"quiet", no_argument, NULL, O_QUIET},
        {"show-logs", required_argument, NULL, O_SHOW_LOGS},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    static batch b;
    b.jobs = 1;
    b.runs = 1;
    const char *out = NULL, *exercises = "all", *student_dir = NULL, *results = NULL, *roster = NULL,
               *identity = NULL;
    int c;
    char err[PATH_MAX + 1024];
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        char *end;
        long v;
        switch (c) {
        case O_OUT: out = optarg; break;
        case O_EX: exercises = optarg; break;
        case O_JOBS:
        case O_RUNS:
            v = strtol(optarg, &end, 10);
            if (!*optarg || *end || v < 1 || v > 64) {
                fprintf(stderr, "grade-class: %s takes a number from 1 to 64, not '%s'\n",
                        c == O_JOBS ? "--jobs" : "--runs", optarg);
                return 2;
            }
            *(c == O_JOBS ? &b.jobs : &b.runs) = (int)v;
            break;
        case O_READY: b.ready_timeout = optarg; break;
        case O_MEM: b.memory_limit = optarg; break;
        case O_WORLD: {
            char *eq = strchr(optarg, '=');
            char real[PATH_MAX];
            if (!eq || eq == optarg || b.nworlds == MAX_WORLDS || !realpath(eq + 1, real)) {
                fprintf(stderr, "grade-class: --world takes EXERCISE=FILE with an existing FILE, not '%s'\n", optarg);
                return 2;
            }
            snprintf(b.worlds[b.nworlds++], sizeof b.worlds[0], "%.*s=%s", (int)(eq - optarg), optarg, real);
            break;
        }
        case O_VFROM:
            if (strcmp(optarg, "folder") && strcmp(optarg, "marker") && strcmp(optarg, "none")) {
                fprintf(stderr, "grade-class: --variant-from takes folder, marker or none, not '%s'\n", optarg);
                return 2;
            }
            b.variant_from = optarg;
            break;
        case O_STUDENT: student_dir = optarg; break;
        case O_RESULTS: results = optarg; break;
        case O_FRESH: b.fresh = true; break;
        case O_QUIET: b.quiet = true; break;
        case O_SHOW_LOGS:
            v = strtol(optarg, &end, 10);
            if (*optarg < '0' || *optarg > '9' || *end || v > 100000) {
                fprintf(stderr, "grade-class: --show-logs takes a number of lines from 0 to 100000, not '%s'\n",
                        optarg);
                return 2;
            }
            b.show_logs = v;
            break;
        case O_UNSAFE: b.unsafe = true; break;
        case O_ROSTER: roster = optarg; break;
        case O_IDENTITY:
            /* Gradescope's sid or email; "" (no metadata) leaves the marker's. */
            if (*optarg && !gc_roster_name_ok(optarg)) {
                fprintf(stderr, "grade-class: --identity takes an id (letters, digits and ._-@+), not '%s'\n", optarg);
                return 2;
            }
            identity = *optarg ? optarg : NULL;
            break;
        case 'h': usage(stdout); return 0;
        default:
            fprintf(stderr, "grade-class: unknown or incomplete option '%s'\n\n", argv[optind - 1]);
            usage(stderr);
            return 2;
        }
    }
    const char *class_arg = optind < argc ? argv[optind++] : NULL;
    if (optind < argc || (!class_arg == !student_dir) || !out || (results && !student_dir)) {
        fprintf(stderr, "grade-class: name a CLASS_DIR or --student DIR (one), and --out DIR%s\n\n",
                results && !student_dir ? "; --results goes with --student" : "");
        usage(stderr);
        return 2;
    }
    if ((identity && !student_dir) || (roster && student_dir)) {
        fprintf(stderr, "grade-class: --identity goes with --student DIR, --roster with CLASS_DIR\n");
        return 2;
    }
    /* One student without an identity of its own: the folder's (lab check's). */
    if (!b.variant_from)
        b.variant_from = student_dir && !identity ? "marker" : "folder";
    char class_dir[PATH_MAX], one_name[GC_NAME_MAX] = "";
    if (!realpath(class_arg ? class_arg : student_dir, class_dir)) {
        fprintf(stderr, "grade-class: cannot find %s: %s\n", class_arg ? class_arg : student_dir, strerror(errno));
        return 2;
    }
    if (student_dir) {
        /* One student: the folder is the student's, named by its basename. */
        char *slash = strrchr(class_dir, '/');
        snprintf(one_name, sizeof one_name, "%s", slash[1] ? slash + 1 : "student");
        if (slash == class_dir)
            slash[1] = '\0';
        else
            *slash = '\0';
    }
    if (make_dir(out) != RL_OK || !realpath(out, b.out)) {
        fprintf(stderr, "grade-class: cannot make the results folder %s: %s\n", out, strerror(errno));
        return 2;
    }
    char rubric[PATH_MAX];
    if (rl_path_sibling("grader", b.grader, sizeof b.grader) != RL_OK || access(b.grader, X_OK) != 0 ||
        rl_path_find_data("grader/rubric.json", rubric, sizeof rubric) != RL_OK) {
        fprintf(stderr, "grade-class: cannot find bin/grader and grader/rubric.json next to this program\n");
        return 2;
    }
    if (read_exercises(&b, err, sizeof err) != RL_OK || gc_roster_read_points(rubric, b.ex, b.nex, err, sizeof err)) {
        fprintf(stderr, "grade-class: %s\n", err);
        return 2;
    }
    if (strcmp(exercises, "all") == 0) {
        for (size_t i = 0; i < b.nex; i++)
            b.want[i] = true;
    } else {
        char list[1024];
        snprintf(list, sizeof list, "%s", exercises);
        char *save = NULL;
        for (char *w = strtok_r(list, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
            char *slash = strchr(w, '/');
            if (slash)
                *slash++ = '\0';
            int i = find_exercise(&b, w);
            if (i < 0) {
                fprintf(stderr, "grade-class: no exercise '%s' (see `grader list`)\n", w);
                return 2;
            }
            b.want[i] = true;
            if (slash && add_only(&b, (size_t)i, slash) != RL_OK) {
                fprintf(stderr, "grade-class: %s has no scenario '%s' (see `grader list`)\n", w, slash);
                return 2;
            }
        }
        trim_to_only(&b);
    }
    for (size_t i = 0; i < b.nworlds; i++) {
        char name[GC_NAME_MAX];
        snprintf(name, sizeof name, "%.*s", (int)(strchr(b.worlds[i], '=') - b.worlds[i]), b.worlds[i]);
        int e = find_exercise(&b, name);
        if (e < 0 || !b.ex[e].config) {
            fprintf(stderr, "grade-class: --world is for the config exercises, not '%s'\n", name);
            return 2;
        }
    }

    char **students = NULL;
    size_t nstudents = 0;
    if (student_dir) {
        students = rl_xcalloc(1, sizeof *students);
        students[0] = rl_xstrdup(one_name);
        nstudents = 1;
    } else if (gc_roster_students(class_dir, &students, &nstudents, err, sizeof err) != RL_OK) {
        fprintf(stderr, "grade-class: %s\n", err);
        return 2;
    }
    if (!nstudents) {
        fprintf(stderr, "grade-class: %s holds no student folder\n", class_dir);
        return 2;
    }
    if (gc_pool_install_guards() != RL_OK) {
        fprintf(stderr, "grade-class: cannot install signal handlers or become a subreaper\n");
        return 2;
    }

    size_t njobs = nstudents * b.nex;
    gc_job *jobs = rl_xcalloc(njobs, sizeof *jobs);
    job_info *info = rl_xcalloc(njobs, sizeof *info);
    bool *has_out = rl_xcalloc(nstudents, sizeof *has_out); /* STUDENT/ of --out made: results.json goes there */
    gc_starter *st = rl_xcalloc(MAX_STARTERS, sizeof *st);
    char config_names[MAX_EXERCISES * (GC_NAME_MAX + 1)] = "";
    for (size_t e = 0; e < b.nex; e++)
        if (b.ex[e].config)
            snprintf(config_names + strlen(config_names), sizeof config_names - strlen(config_names), "%s%s",
                     config_names[0] ? " " : "", b.ex[e].name);
    char *notes = rl_xmalloc(4096);
    snprintf(b.class_dir, sizeof b.class_dir, "%s", class_dir);
    for (size_t s = 0; s < nstudents; s++) {
        char sdir[PATH_MAX + GC_NAME_MAX + 2], odir[PATH_MAX + GC_NAME_MAX + 2], shown[GC_NAME_MAX];
        gc_roster_name_shown(students[s], shown, sizeof shown);
        snprintf(sdir, sizeof sdir, "%s/%s", class_dir, students[s]);
        notes[0] = '\0';
        const char *refused = NULL;
        if (gc_pool_interrupted()) {
            refused = ""; /* not planned: its gradings stay PENDING, "not graded" */
        } else if (!gc_roster_name_ok(students[s])) {
            /* The results cannot name it (a folder of --out, a CSV cell):
             * skip this student, never the class. */
            snprintf(notes, 4096,
                     "not graded: the student folder '%s' has a name the results cannot use (letters, digits and "
                     "._-@+ only, not starting with '.'): rename it and run again",
                     shown);
            refused = notes;
        } else if (gc_roster_refuse_folder(sdir, students[s], notes, 4096) != RL_OK) {
            refused = notes;
        }
        if (refused && refused[0])
            fprintf(stderr, "grade-class: %s: %s\n", shown, refused);
        if (gc_roster_name_ok(students[s])) {
            snprintf(odir, sizeof odir, "%s/%s", b.out, students[s]);
            if (make_dir(odir) != RL_OK) {
                fprintf(stderr, "grade-class: cannot make %s: %s\n", odir, strerror(errno));
                return 2;
            }
            has_out[s] = true;
        }
        size_t nst = refused ? 0 : gc_roster_starters(sdir, students[s], config_names, st, MAX_STARTERS, notes, 4096);
        char inner[PATH_MAX];
        if (student_dir && !refused && nst == 0 && !notes[0] && gc_upload_wrapper(sdir, inner, sizeof inner) == RL_OK)
            nst = gc_roster_starters(inner, students[s], config_names, st, MAX_STARTERS, notes, 4096); /* a zip of their parent folder */
        if (!refused && notes[0])
            fprintf(stderr, "grade-class: %s: %s\n", shown, notes);
        if (student_dir && !refused && nst == 0 && !notes[0]) {
            /* Gradescope's upload holds nothing gradable: one entry that
             * says what came and what was expected, not a MISSING line a
             * scenario. */
            return unexpected_upload(&b, sdir, students[s], results);
        }
        char who[GC_NAME_MAX];
        snprintf(who, sizeof who, "%s", identity ? identity : students[s]);
        if (roster && !refused) {
            int irc = gc_roster_identity(roster, students[s], who, sizeof who, err, sizeof err);
            if (irc == RL_ENOTFOUND)
                fprintf(stderr, "grade-class: %s is not in the roster %s: graded as its folder's name\n", shown,
                        roster);
            else if (irc != RL_OK) {
                fprintf(stderr, "grade-class: %s\n", err);
                return 2;
            }
        }
        for (size_t e = 0; e < b.nex; e++) {
            gc_job *j = &jobs[s * b.nex + e];
            job_info *ji = &info[s * b.nex + e];
            if (!b.want[e]) {
                j->state = GC_JOB_SKIPPED;
                continue;
            }
            if (refused) {
                memset(ji, 0, sizeof *ji);
                snprintf(ji->student, sizeof ji->student, "%s", shown);
                ji->ex = e;
                snprintf(ji->error, sizeof ji->error, "%s", refused);
                j->user = ji;
                j->state = refused[0] ? GC_JOB_SKIPPED : GC_JOB_PENDING;
                continue;
            }
            plan(&b, students[s], who, sdir, st, nst, e, notes, j, ji);
            b.total += j->state == GC_JOB_PENDING;
        }
    }
    free(notes);
    free(st);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores > 0 && b.jobs > GC_JOBS_PER_CORE * cores)
        fprintf(stderr,
                "grade-class: warning: --jobs %d on %ld cores: the verdicts were measured to hold up to %d graders "
                "a core (bench/results/class.md), not beyond; use --jobs %ld or fewer for grades\n",
                b.jobs, cores, GC_JOBS_PER_CORE, GC_JOBS_PER_CORE * cores);
    b.tty = isatty(STDERR_FILENO);
    b.t0 = rl_now_ns();
    size_t kept = 0;
    for (size_t i = 0; i < njobs; i++)
        kept += jobs[i].state == GC_JOB_SKIPPED && jobs[i].user && !info[i].error[0];
    if (!b.quiet)
        fprintf(stderr, "grade-class: %zu students, %zu gradings to run (%zu kept from an earlier run), --jobs %d\n",
                nstudents, b.total, kept, b.jobs);
    int prc = gc_pool_run(jobs, njobs, b.jobs, 15000, on_event, &b);
    double wall = (double)(rl_now_ns() - b.t0) / 1e9;

    gc_tally t;
    gc_tally_init(&t, b.ex, b.nex);
    bool complete = prc == RL_OK && !gc_pool_interrupted();
    for (size_t i = 0; i < njobs; i++) {
        size_t before = t.n;
        if (jobs[i].user && !tally_job(&t, &jobs[i], &info[i]))
            complete = false;
        if (jobs[i].user && info[i].inferred[0])
            for (size_t r = before; r < t.n; r++)
                prefix_feedback(&t.rows[r], info[i].inferred);
    }
    gc_tally_sort(&t);
    int rc = complete ? 0 : 2;
    char path[PATH_MAX + 300];
    char **ex_paths = rl_xcalloc(b.nex, sizeof *ex_paths);
    for (size_t s = 0; s < nstudents; s++) {
        for (size_t e = 0; e < b.nex; e++) {
            job_info *ji = &info[s * b.nex + e];
            const gc_job *j = &jobs[s * b.nex + e];
            /* Not from a grading that never ran or was stopped: its file is
             * incomplete, and the rows say "not graded". */
            bool graded = j->state != GC_JOB_PENDING && !j->interrupted;
            ex_paths[e] = j->user && !ji->error[0] && graded ? ji->json : NULL;
        }
        /* A name the results cannot use has no folder of --out (its rows,
         * named as shown, are in the CSV); --results (Gradescope's) is
         * written all the same. */
        char shown[GC_NAME_MAX];
        gc_roster_name_shown(students[s], shown, sizeof shown);
        snprintf(path, sizeof path, "%s/%s/results.json", b.out, students[s]);
        if (has_out[s] && gc_tally_write_student(&t, students[s], ex_paths, path) != RL_OK) {
            fprintf(stderr, "grade-class: cannot write %s: %s\n", path, strerror(errno));
            rc = 2;
        }
        if (results && gc_tally_write_student(&t, shown, ex_paths, results) != RL_OK) {
            fprintf(stderr, "grade-class: cannot write %s: %s\n", results, strerror(errno));
            rc = 2;
        }
        /* A folder recognised by its files: its results say so first. */
        for (size_t e = 0; e < b.nex; e++) {
            const char *why = info[s * b.nex + e].inferred;
            if (!jobs[s * b.nex + e].user || !why[0])
                continue;
            prefix_output(path, why);
            if (results)
                prefix_output(results, why);
            break;
        }
    }
    free(ex_paths);
    snprintf(path, sizeof path, "%s/grades.csv", b.out);
    if (gc_tally_write_csv(&t, path) != RL_OK) {
        fprintf(stderr, "grade-class: cannot write %s: %s\n", path, strerror(errno));
        rc = 2;
    }
    snprintf(path, sizeof path, "%s/summary.txt", b.out);
    char stmp[sizeof path + 32];
    FILE *sf = rl_file_tmp_open(path, 0644, stmp, sizeof stmp);
    if (sf) {
        gc_tally_summary(&t, sf, wall, b.jobs);
        if (rl_file_tmp_commit(sf, stmp, path) != 0) {
            fprintf(stderr, "grade-class: cannot write %s: %s\n", path, strerror(errno));
            rc = 2;
        }
    } else {
        fprintf(stderr, "grade-class: cannot write %s: %s\n", path, strerror(errno));
        rc = 2;
    }
    if (!b.quiet)
        gc_tally_summary(&t, stdout, wall, b.jobs);
    if (b.show_logs)
        show_logs(jobs, njobs, b.show_logs);
    if (!complete)
        fprintf(stderr, "grade-class: %s: run the same command again to resume\n",
                prc != RL_OK ? "a grader could not be started" : "interrupted");
    gc_tally_fini(&t);
    gc_roster_free_names(students, nstudents);
    free(jobs);
    free(info);
    free(has_out);
    return rc;
}
