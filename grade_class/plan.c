/* plan: the class folder walked into the pool's jobs (plan.h). What a
 * student folder leads to is refused here, before a grader starts, so the
 * row says why; the grader refuses the same on its own (its --dir and
 * --submission). */
#include "plan.h"

#include "report.h"
#include "slurm.h"
#include "upload.h"

#include "rl_alloc.h"
#include "rl_err.h"
#include "rl_file.h"
#include "rl_marker.h"
#include "rl_path.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NOTES_MAX 4096

/* Whom a student is graded as, where that came from and why a fallback
 * was taken (issue 34: every identity stated in the results). */
typedef struct gc_identity {
    char id[GC_NAME_MAX]; /* "" in marker mode: each folder's own */
    char from[24];        /* sid, email, --identity, roster, folder, marker, none */
    char note[512];       /* why a fallback was taken, or "" */
} gc_identity;

/* A grading is kept on resume when its results file reads as complete and
 * the command that made it was this one. */
static bool already_done(const gc_job_info *ji)
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

/* Why |s|'s submission for exercise |e| is refused, into |why|: a config
 * that is not a regular file of its folder (a symlink to a classmate's, a
 * FIFO, /dev/zero, a huge file), or a command naming a file that leads out
 * of the folder (`run -> ../../bob/deadline/run`). The grader refuses the
 * same (its --dir and --submission); refusing here puts it in the row.
 * Returns true when refused. */
static bool refuse_submission(const gc_batch *b, const gc_exercise *e, const gc_starter *s, const char *submission,
                              char *why, size_t whylen)
{
    char err[PATH_MAX + 512];
    (void)submission;
    if (e->config) {
        char *text = NULL;
        size_t len;
        /* Beneath the folder held since its marker was read. */
        int rc = rl_file_read_untrusted_at(s->fd, s->submission, GC_CONFIG_MAX, &text, &len, err, sizeof err);
        free(text);
        if (rc == RL_OK || rc == RL_ENOTFOUND)
            return false; /* a missing config is the grader's to report, as `lab check` does */
        snprintf(why, whylen, "refused: the config %.1000s/%.200s %.500s: not read", gc_batch_shown_path(b, s->dir),
                 s->submission, err); /* err names no path */
        return true;
    }
    char held[64];
    snprintf(held, sizeof held, "/proc/self/fd/%d", s->fd);
    if (rl_path_command_within(held, held, s->submission, err, sizeof err) == RL_OK)
        return false;
    snprintf(
        why, whylen,
        "refused: the .relaylab of %.1000s runs '%.200s', and its '%.200s' leads outside that folder (a symlink, or "
        "a path to a classmate's files): not followed; hand in the file itself",
        gc_batch_shown_path(b, s->dir), s->submission, err);
    return true;
}

/* The starter folder of |sdir| (|st|, |nst|) that names exercise |e|, or
 * NULL with ji->error (and ji->missing) saying why there is none to grade.
 * Sets ji->inferred when the folder was recognised by its files. */
static const gc_starter *find_starter(const gc_batch *b, const gc_exercise *e, const char *sdir, const gc_starter *st,
                                      size_t nst, const char *notes, gc_job_info *ji)
{
    const gc_starter *s = NULL;
    for (size_t i = 0; i < nst && !s; i++)
        if (gc_starter_has(&st[i], e->name))
            s = &st[i];
    if (!s && notes[0]) {
        /* One of the refused folders may have been this exercise's: say
         * what was refused rather than "missing". */
        snprintf(ji->error, sizeof ji->error, "no folder for %s could be graded: %s", e->name, notes);
        return NULL;
    }
    if (!s) {
        ji->missing = true;
        int n = snprintf(ji->error, sizeof ji->error,
                         "no folder for %s in %.200s: a folder `lab init %s` made (its .relaylab lists %s) was "
                         "expected",
                         e->name, gc_batch_shown_path(b, sdir), e->name, e->name);
        /* An upload for another assignment: say what it was. */
        for (size_t i = 0; i < nst && n > 0 && (size_t)n < sizeof ji->error; i++) {
            char shown[320], exs[256];
            rl_printable(gc_batch_shown_path(b, st[i].dir), shown, sizeof shown);
            rl_printable(st[i].exercises, exs, sizeof exs);
            n += snprintf(ji->error + n, sizeof ji->error - (size_t)n, "%s %s (a folder for %s)",
                          i ? "," : "; found instead:", shown, exs);
        }
        return NULL;
    }
    if (s->inferred[0])
        snprintf(ji->inferred, sizeof ji->inferred,
                 "%.120s has no .relaylab (zip tools and drag-and-drop drop hidden files): it was recognised by "
                 "%.240s",
                 gc_batch_shown_path(b, s->dir), s->inferred);
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
        return NULL;
    }
    return s;
}

/* The batch's options for the grader of exercise |ex|, from argv[n];
 * returns the new n. */
static int add_batch_options(const gc_batch *b, size_t ex, gc_job *job, gc_job_info *ji, int n)
{
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
    /* Graders side by side each grade one scenario at a time: a class is
     * bound by the CPU, which a grading's lanes (grader/lanes.h) do not
     * add to, and ten graders with their lanes put a load of 20 on two
     * cores (measured: 30 verdicts changed at --jobs 10, a wrong FAIL among
     * them; bench/results/class.md). One grader at a time runs its lanes. */
    if (b->jobs > 1) {
        job->argv[n++] = "--parallel";
        job->argv[n++] = "1";
    }
    if (b->only[ex][0]) {
        job->argv[n++] = "--only";
        job->argv[n++] = b->only[ex];
    }
    return n;
}

/* A config exercise's world and grading identity, from argv[n]; returns
 * the new n. */
static int add_identity(const gc_batch *b, const gc_exercise *e, const gc_starter *s, const char *identity, gc_job *job,
                        gc_job_info *ji, int n)
{
    const char *w = gc_batch_world_for(b, e->name);
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
    return n;
}

/* The grader's command line for |student|'s folder |s| on exercise |ex|
 * into |job|, its strings in |ji|. Returns false (ji->error set) when the
 * submission is refused. */
static bool build_command(const gc_batch *b, const char *student, const char *identity, const gc_starter *s, size_t ex,
                          gc_job *job, gc_job_info *ji)
{
    const gc_exercise *e = &b->ex[ex];
    int n = 0;
    job->argv[n++] = b->grader;
    job->argv[n++] = e->name;
    job->argv[n++] = "--submission";
    /* The grader starts in the folder held since it was checked (the
     * pool enters it through its handle) and is told `--dir .`: it opens
     * that very folder again, never a path that may lead elsewhere by now. */
    if (e->config)
        snprintf(ji->submission, sizeof ji->submission, "./%s", s->submission);
    else
        snprintf(ji->submission, sizeof ji->submission, "%s", s->submission);
    if (refuse_submission(b, e, s, ji->submission, ji->error, sizeof ji->error)) {
        fprintf(stderr, "grade-class: %s: %s\n", student, ji->error);
        return false;
    }
    job->argv[n++] = ji->submission;
    /* The sandbox shows the submission this folder and nothing else of the
     * class or the kit, whatever its command names. */
    snprintf(ji->dir, sizeof ji->dir, ".");
    job->argv[n++] = "--dir";
    job->argv[n++] = ji->dir;
    job->argv[n++] = "--json";
    job->argv[n++] = ji->json;
    /* The student's page, linked from class.html (html.h). */
    snprintf(ji->html, sizeof ji->html, "%s/%s/%s.html", b->out, student, e->name);
    job->argv[n++] = "--html";
    job->argv[n++] = ji->html;
    n = add_batch_options(b, ex, job, ji, n);
    if (e->config)
        n = add_identity(b, e, s, identity, job, ji, n);
    job->argv[n] = NULL;
    ji->args_text[0] = '\0';
    size_t len = 0;
    for (int i = 1; i < n && len < sizeof ji->args_text; i++)
        len += (size_t)snprintf(ji->args_text + len, sizeof ji->args_text - len, "%s\n", job->argv[i]);
    return true;
}

/* Fills |job| and |ji| for |student| (folder |sdir|) on exercise |ex|;
 * |notes| says why folders of the student were refused (or ""). */
static void plan(const gc_batch *b, const char *student, const gc_identity *idn, const char *sdir, const gc_starter *st,
                 size_t nst, size_t ex, const char *notes, gc_job *job, gc_job_info *ji)
{
    const char *identity = idn->id;
    memset(ji, 0, sizeof *ji);
    snprintf(ji->student, sizeof ji->student, "%s", student);
    ji->ex = ex;
    const gc_exercise *e = &b->ex[ex];
    snprintf(ji->json, sizeof ji->json, "%s/%s/%s.json", b->out, student, e->name);
    snprintf(ji->args_file, sizeof ji->args_file, "%s/%s/%s.args", b->out, student, e->name);
    job->user = ji;
    job->state = GC_JOB_SKIPPED;
    const gc_starter *s = find_starter(b, e, sdir, st, nst, notes, ji);
    if (!s || !build_command(b, student, identity, s, ex, job, ji))
        return;
    /* The id graded, for the results (a command exercise passes none). */
    if (!ji->variant[0])
        snprintf(ji->variant, sizeof ji->variant, "%s", strcmp(b->variant_from, "folder") == 0 ? identity : s->variant);
    snprintf(ji->identity_from, sizeof ji->identity_from, "%s",
             strcmp(b->variant_from, "folder") == 0 ? idn->from : b->variant_from);
    snprintf(ji->identity_note, sizeof ji->identity_note, "%s", idn->note);
    if (strcmp(b->variant_from, "marker") == 0 && !s->variant[0])
        snprintf(ji->identity_note, sizeof ji->identity_note,
                 "%.300s%sthe folder's .relaylab names no student: graded with no identity (the world's default "
                 "deployment)",
                 idn->note, idn->note[0] ? "; " : "");
    snprintf(job->cwd, sizeof job->cwd, "%s", s->dir);
    job->cwd_fd = fcntl(s->fd, F_DUPFD_CLOEXEC, 3);
    if (job->cwd_fd < 0) {
        snprintf(ji->error, sizeof ji->error, "cannot hold the folder %.200s: %s", gc_batch_shown_path(b, s->dir),
                 strerror(errno));
        job->cwd_fd = 0;
        job->state = GC_JOB_SKIPPED;
        return;
    }
    snprintf(job->log, sizeof job->log, "%s/%s/%s.log", b->out, student, e->name);
    /* Beyond the grader's own bounds (a 60 s watchdog a scenario run, the
     * ready timeout, a stop): only a grader that hangs meets it. */
    job->timeout_ms = (int64_t)b->runs * (int64_t)e->nscenarios * 150000 + 60000;
    job->state = !b->fresh && already_done(ji) ? GC_JOB_SKIPPED : GC_JOB_PENDING;
    if (job->state == GC_JOB_PENDING) {
        unlink(ji->args_file); /* written again once this grading completes */
        unlink(ji->json);
    }
}

int gc_plan_students(const gc_batch *b, const gc_options *o, gc_plan *p, int *code)
{
    memset(p, 0, sizeof *p);
    *code = GC_EXIT_SETUP;
    char err[PATH_MAX + 1024];
    char task_student[GC_NAME_MAX];
    if (o->slurm_task && gc_slurm_task_student(o->slurm_task, task_student, sizeof task_student, err, sizeof err)) {
        fprintf(stderr, "grade-class: %s\n", err);
        return RL_EINVAL;
    }
    if (o->student_dir || o->slurm_task) {
        /* An array task of --slurm grades one student of the class as the
         * class is graded (slurm.h); --student, an upload of its own. */
        p->students = rl_xcalloc(1, sizeof *p->students);
        p->students[0] = rl_xstrdup(o->slurm_task ? task_student : o->one_name);
        p->nstudents = 1;
    } else if (gc_roster_students(b->class_dir, &p->students, &p->nstudents, err, sizeof err) != RL_OK) {
        fprintf(stderr, "grade-class: %s\n", err);
        return RL_EINVAL;
    }
    if (!p->nstudents) {
        fprintf(stderr, "grade-class: %s holds no student folder\n", b->class_dir);
        return RL_EINVAL;
    }
    return RL_OK;
}

/* Why student folder |name| (at |sdir|) is not planned: NULL when it is
 * (|*fd| then holds it open: everything of it is read through that handle),
 * "" when the batch was interrupted first (its gradings stay PENDING, "not
 * graded"), else the reason, in |notes|. */
static const char *refuse_student(const char *name, const char *sdir, const char *shown, char *notes, int *fd)
{
    *fd = -1;
    if (gc_pool_interrupted())
        return "";
    if (!gc_roster_name_ok(name)) {
        /* The results cannot name it (a folder of --out, a CSV cell):
         * skip this student, never the class. */
        snprintf(notes, NOTES_MAX,
                 "not graded: the student folder '%s' has a name the results cannot use (letters, digits and "
                 "._-@+ only, not starting with '.'): rename it and run again",
                 shown);
        return notes;
    }
    /* Opened once, not followed: a symlink now or at any later moment is
     * not what is graded. */
    int rc = rl_file_open_dir(sdir, fd, NULL, 0);
    if (rc == RL_OK)
        return NULL;
    if (gc_roster_refuse_folder(sdir, name, notes, NOTES_MAX) == RL_OK)
        snprintf(notes, NOTES_MAX, "refused: the student folder %s could not be opened as a folder (%s): not graded",
                 shown, rc == RL_EINVAL ? "a symlink, or replaced by one while it was checked" : strerror(errno));
    return notes;
}

/* The starter folders of student |name| (at |sdir|) into |st|; with
 * --student, also those of the one folder a zip of their parent folder
 * wraps them in. |notes| gets why folders were refused. */
static size_t find_starters(const gc_options *o, const char *sdir, const char *name, const char *config_names,
                            gc_starter *st, char *notes)
{
    size_t nst = gc_roster_starters(sdir, name, config_names, st, GC_MAX_STARTERS, notes, NOTES_MAX);
    char inner[PATH_MAX];
    if (o->student_dir && nst == 0 && !notes[0] && gc_upload_wrapper(sdir, inner, sizeof inner) == RL_OK)
        nst = gc_roster_starters(inner, name, config_names, st, GC_MAX_STARTERS, notes, NOTES_MAX);
    return nst;
}

/* Whether a folder two levels under |sdir| (|sdir|/A/B) holds a .relaylab
 * when |sdir| had none of its own: |sdir| is then a class, or a folder of
 * classes, not a student. Names and types only (lstat), bounded; the first
 * such A/B into |example|. */
static bool markers_below(const char *sdir, char *example, size_t len)
{
    DIR *d = opendir(sdir);
    if (!d)
        return false;
    bool found = false;
    struct dirent *e;
    for (int n = 0; !found && n < 200 && (e = readdir(d)); n++) {
        char a[PATH_MAX];
        struct stat st;
        if (e->d_name[0] == '.' || snprintf(a, sizeof a, "%s/%s", sdir, e->d_name) >= (int)sizeof a ||
            lstat(a, &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        DIR *d2 = opendir(a);
        struct dirent *e2;
        for (int m = 0; d2 && !found && m < 200 && (e2 = readdir(d2)); m++) {
            char b[PATH_MAX];
            if (e2->d_name[0] == '.' || snprintf(b, sizeof b, "%s/%s/.relaylab", a, e2->d_name) >= (int)sizeof b ||
                lstat(b, &st) != 0 || !S_ISREG(st.st_mode))
                continue;
            char raw[600], shown[600];
            snprintf(raw, sizeof raw, "%.250s/%.250s", e->d_name, e2->d_name);
            rl_printable(raw, shown, sizeof shown);
            snprintf(example, len, "%s", shown);
            found = true;
        }
        if (d2)
            closedir(d2);
    }
    closedir(d);
    return found;
}

/* The grading identity of student folder |name| into |who|: --identity
 * (run_autograder's sid or email, --identity-from), the roster's id for
 * it (when |use_roster|), or its name; in marker mode none (each folder's
 * own), with --identity-note saying why. */
static int find_identity(const gc_batch *b, const gc_options *o, const char *name, const char *shown, bool use_roster,
                         gc_identity *who)
{
    char err[PATH_MAX + 1024];
    memset(who, 0, sizeof *who);
    snprintf(who->note, sizeof who->note, "%s", o->identity_note);
    if (strcmp(b->variant_from, "folder") != 0) {
        snprintf(who->from, sizeof who->from, "%s", b->variant_from);
        return RL_OK;
    }
    snprintf(who->id, sizeof who->id, "%s", o->identity ? o->identity : name);
    snprintf(who->from, sizeof who->from, "%s",
             o->identity ? (o->identity_from ? o->identity_from : "--identity") : "folder");
    if (!o->roster || !use_roster)
        return RL_OK;
    int irc = gc_roster_identity(o->roster, name, who->id, sizeof who->id, err, sizeof err);
    if (irc == RL_ENOTFOUND) {
        fprintf(stderr, "grade-class: %s is not in the roster %s: graded as its folder's name\n", shown, o->roster);
        snprintf(who->note, sizeof who->note, "the folder is not in the roster: graded as its name");
    } else if (irc != RL_OK) {
        fprintf(stderr, "grade-class: %s\n", err);
        return irc;
    } else {
        snprintf(who->from, sizeof who->from, "roster");
    }
    return RL_OK;
}

/* Plans student |s| on every exercise wanted: |refused| (refuse_student)
 * gives each the same row; otherwise plan(). */
static void plan_exercises(gc_batch *b, gc_plan *p, size_t s, const char *shown, const char *refused,
                           const gc_identity *who, const char *sdir, const gc_starter *st, size_t nst,
                           const char *notes)
{
    for (size_t e = 0; e < b->nex; e++) {
        gc_job *j = &p->jobs[s * b->nex + e];
        gc_job_info *ji = &p->info[s * b->nex + e];
        if (!b->want[e]) {
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
        plan(b, p->students[s], who, sdir, st, nst, e, notes, j, ji);
        b->total += j->state == GC_JOB_PENDING;
    }
}

/* plan_student's part once the student folder |sdir| is held (or
 * |refused|). */
static int plan_held(gc_batch *b, const gc_options *o, gc_plan *p, size_t s, const char *sdir, const char *shown,
                     const char *refused, const char *config_names, gc_starter *st, char *notes, int *code)
{
    const char *name = p->students[s];
    char odir[PATH_MAX + GC_NAME_MAX + 2];
    if (refused && refused[0])
        fprintf(stderr, "grade-class: %s: %s\n", shown, refused);
    if (gc_roster_name_ok(name)) {
        snprintf(odir, sizeof odir, "%s/%s", b->out, name);
        if (gc_batch_make_dir(odir) != RL_OK) {
            fprintf(stderr, "grade-class: cannot make %s: %s\n", odir, strerror(errno));
            *code = GC_EXIT_SETUP;
            return RL_EINVAL;
        }
        p->has_out[s] = true;
    }
    size_t nst = refused ? 0 : find_starters(o, sdir, name, config_names, st, notes);
    if (!refused && notes[0])
        fprintf(stderr, "grade-class: %s: %s\n", shown, notes);
    char below[600];
    if (!o->student_dir && !refused && nst == 0 && markers_below(sdir, below, sizeof below))
        /* DEST instead of DEST/class (scripts/known-class.py), or a folder
         * of classes: this "student" would be all MISSING. */
        fprintf(stderr,
                "grade-class: warning: student folder %s holds no folder with a .relaylab, but its subfolders do "
                "(%s/%s/.relaylab): is %s a folder of classes? Grade the class inside it (e.g. %s/%s)\n",
                shown, shown, below, b->class_dir, b->class_dir, shown);
    int rc = RL_OK;
    gc_identity who;
    if (find_identity(b, o, name, shown, !refused, &who) != RL_OK) {
        *code = GC_EXIT_SETUP;
        rc = RL_EINVAL;
    } else if (o->student_dir && !refused && nst == 0 && !notes[0]) {
        /* Gradescope's upload holds nothing gradable: one entry that
         * says what came and what was expected, not a MISSING line a
         * scenario. */
        *code = gc_report_upload(b, sdir, name, o->results, who.id, who.from, who.note);
        rc = RL_EINVAL;
    } else {
        plan_exercises(b, p, s, shown, refused, &who, sdir, st, nst, notes);
    }
    gc_roster_starters_fini(st, nst);
    return rc;
}

/* Plans student |s| of |p|, the space-separated |config_names| the config
 * exercises, |st| and |notes| scratch. Returns 0, or RL_EINVAL with |*code|. */
static int plan_student(gc_batch *b, const gc_options *o, gc_plan *p, size_t s, const char *config_names,
                        gc_starter *st, char *notes, int *code)
{
    const char *name = p->students[s];
    char sdir[PATH_MAX + GC_NAME_MAX + 2], shown[GC_NAME_MAX];
    gc_roster_name_shown(name, shown, sizeof shown);
    snprintf(sdir, sizeof sdir, "%s/%s", b->class_dir, name);
    notes[0] = '\0';
    int held = -1;
    const char *refused = refuse_student(name, sdir, shown, notes, &held);
    if (held >= 0) /* from here on, the folder checked: through its handle */
        snprintf(sdir, sizeof sdir, "/proc/self/fd/%d", held);
    int rc = plan_held(b, o, p, s, sdir, shown, refused, config_names, st, notes, code);
    if (held >= 0)
        close(held);
    return rc;
}

int gc_plan_walk(gc_batch *b, const gc_options *o, gc_plan *p, int *code)
{
    /* A planned grading holds its folder open until it runs (plan()): a
     * class of hundreds needs more than the default 1024 descriptors. */
    gc_pool_raise_nofile();
    p->njobs = p->nstudents * b->nex;
    p->jobs = rl_xcalloc(p->njobs, sizeof *p->jobs);
    p->info = rl_xcalloc(p->njobs, sizeof *p->info);
    p->has_out = rl_xcalloc(p->nstudents, sizeof *p->has_out);
    char config_names[GC_MAX_EXERCISES * (GC_NAME_MAX + 1)] = "";
    for (size_t e = 0; e < b->nex; e++)
        if (b->ex[e].config)
            snprintf(config_names + strlen(config_names), sizeof config_names - strlen(config_names), "%s%s",
                     config_names[0] ? " " : "", b->ex[e].name);
    gc_starter *st = rl_xcalloc(GC_MAX_STARTERS, sizeof *st);
    char *notes = rl_xmalloc(NOTES_MAX);
    int rc = RL_OK;
    for (size_t s = 0; s < p->nstudents && rc == RL_OK; s++)
        rc = plan_student(b, o, p, s, config_names, st, notes, code);
    free(notes);
    free(st);
    return rc;
}

void gc_plan_fini(gc_plan *p)
{
    for (size_t i = 0; p->jobs && i < p->njobs; i++)
        if (p->jobs[i].cwd_fd > 0)
            close(p->jobs[i].cwd_fd);
    gc_roster_free_names(p->students, p->nstudents);
    free(p->jobs);
    free(p->info);
    free(p->has_out);
    memset(p, 0, sizeof *p);
}
