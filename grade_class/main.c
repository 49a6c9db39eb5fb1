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
#include "html.h"
#include "pool.h"
#include "roster.h"
#include "tally.h"

#include "rl_alloc.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_path.h"

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
               "grading, and .html: its report page), grades.csv, summary.txt and class.html\n"
               "(histogram, pass rates, commonest feedback, links to the pages). A student's folder holds the folders\n"
               "`lab init` made (or is one): each names its exercises, its submission (the `run`\n"
               "script, or the config file) and its variant in its .relaylab file. An exercise\n"
               "no folder names is MISSING (no points). Run again after an interruption: every\n"
               "grading with complete results (same options) is kept, the rest is graded.\n"
               "\n"
               "  --out DIR            where the results go (made if missing)\n"
               "  --exercises LIST     comma-separated exercises, or all (default; `grader list`)\n"
               "  --jobs N             graders at once (default 1); a grading mostly waits, so up to\n"
               "                       5 a core (measured: 10 on 2 cores) changes no verdict\n"
               "  --runs N             the grader's --runs (default 1)\n"
               "  --ready-timeout S    the grader's --ready-timeout\n"
               "  --memory-limit MB    the grader's --memory-limit\n"
               "  --world EX=FILE      config exercise EX is judged in FILE's deployments\n"
               "  --variant-from W     config exercises' --variant: folder (the student folder's\n"
               "                       name: the default with CLASS_DIR), marker (what `lab init\n"
               "                       --variant` wrote: the default with --student), or none\n"
               "  --student DIR        grade one student's folder (Gradescope's submission)\n"
               "  --results FILE       with --student: also write its results.json to FILE\n"
               "  --unsafe             the grader's --unsafe: grade unsandboxed where the sandbox\n"
               "                       cannot be built (a container without namespaces); the\n"
               "                       submissions could then reach the grader: a last resort\n"
               "  --fresh              grade everything again, keeping nothing\n"
               "  --quiet              no progress lines\n"
               "  --help               this text\n");
}

typedef struct batch {
    char grader[PATH_MAX];
    char out[PATH_MAX];
    gc_exercise ex[MAX_EXERCISES];
    size_t nex;
    bool want[MAX_EXERCISES];
    int jobs, runs;
    const char *ready_timeout, *memory_limit;
    char worlds[MAX_WORLDS][PATH_MAX + GC_NAME_MAX];
    size_t nworlds;
    const char *variant_from;
    bool fresh, quiet, tty, unsafe;
    /* progress */
    size_t total, done;
    int64_t t0;
} batch;

typedef struct job_info {
    char student[GC_NAME_MAX];
    size_t ex;
    char json[PATH_MAX + 300];
    char html[PATH_MAX + 300]; /* the grader's --html page */
    char args_file[PATH_MAX + 300];
    char args_text[8192];
    char error[1024]; /* set instead of a job: cannot be graded (bad marker) */
    bool missing;
    /* argv storage */
    char submission[PATH_MAX + 1100];
    char dir[PATH_MAX];
    char variant[GC_NAME_MAX];
    char runs[16];
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

/* Fills |job| and |ji| for |student| (folder |sdir|) on exercise |ex|. */
static void plan(batch *b, const char *student, const char *sdir, const gc_starter *st, size_t nst, size_t ex,
                 gc_job *job, job_info *ji)
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
    if (!s) {
        ji->missing = true;
        snprintf(ji->error, sizeof ji->error,
                 "no folder for %s in %.200s: a folder `lab init %s` made (its .relaylab lists %s) was expected",
                 e->name, sdir, e->name, e->name);
        return;
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
    job->argv[n++] = ji->submission;
    /* The sandbox shows the submission this folder and nothing else of the
     * class or the kit, whatever its command names. */
    snprintf(ji->dir, sizeof ji->dir, "%s", s->dir);
    job->argv[n++] = "--dir";
    job->argv[n++] = ji->dir;
    job->argv[n++] = "--json";
    job->argv[n++] = ji->json;
    /* The student's page, linked from class.html (html.h). */
    snprintf(ji->html, sizeof ji->html, "%s/%s/%s.html", b->out, student, e->name);
    job->argv[n++] = "--html";
    job->argv[n++] = ji->html;
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
    if (e->config) {
        const char *w = world_for(b, e->name);
        if (w) {
            job->argv[n++] = "--world";
            job->argv[n++] = w;
        }
        const char *v = strcmp(b->variant_from, "folder") == 0   ? student
                        : strcmp(b->variant_from, "marker") == 0 ? s->variant
                                                                 : "";
        snprintf(ji->variant, sizeof ji->variant, "%s", v);
        if (ji->variant[0]) {
            job->argv[n++] = "--variant";
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
    fprintf(stderr, "%sgrade-class: %zu/%zu graded, %s elapsed, ~%s left: %s/%s %s (%.0f s)\n", b->tty ? "\r" : "",
            b->done, b->total, e, left, ji->student, b->ex[ji->ex].name,
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
    if (job->state == GC_JOB_PENDING) {
        gc_tally_add_all(t, ji->student, ji->ex, "ERROR",
                         "not graded: the batch was interrupted first (run it again to resume)");
        return false;
    }
    bool finished = !job->interrupted;
    if (job->timed_out) {
        gc_tally_add_all(t, ji->student, ji->ex, "ERROR",
                         "the grader did not finish within the batch's time limit (see its .log)");
        return true;
    }
    gc_tally_add_results(t, ji->student, ji->ex, ji->json);
    return finished;
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
        O_UNSAFE
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
        {"quiet", no_argument, NULL, O_QUIET},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    static batch b;
    b.jobs = 1;
    b.runs = 1;
    const char *out = NULL, *exercises = "all", *student_dir = NULL, *results = NULL;
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
        case O_UNSAFE: b.unsafe = true; break;
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
    if (!b.variant_from)
        b.variant_from = student_dir ? "marker" : "folder";
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
            int i = find_exercise(&b, w);
            if (i < 0) {
                fprintf(stderr, "grade-class: no exercise '%s' (see `grader list`)\n", w);
                return 2;
            }
            b.want[i] = true;
        }
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
    for (size_t s = 0; s < nstudents; s++)
        if (!gc_roster_name_ok(students[s])) {
            fprintf(stderr,
                    "grade-class: the student folder '%s' has a name the results cannot use (letters, digits and "
                    "._-@+ only): rename it\n",
                    students[s]);
            return 2;
        }
    if (gc_pool_install_guards() != RL_OK) {
        fprintf(stderr, "grade-class: cannot install signal handlers or become a subreaper\n");
        return 2;
    }

    size_t njobs = nstudents * b.nex;
    gc_job *jobs = rl_xcalloc(njobs, sizeof *jobs);
    job_info *info = rl_xcalloc(njobs, sizeof *info);
    gc_starter *st = rl_xcalloc(MAX_STARTERS, sizeof *st);
    for (size_t s = 0; s < nstudents; s++) {
        char sdir[PATH_MAX + GC_NAME_MAX + 2], odir[PATH_MAX + GC_NAME_MAX + 2];
        snprintf(sdir, sizeof sdir, "%s/%s", class_dir, students[s]);
        snprintf(odir, sizeof odir, "%s/%s", b.out, students[s]);
        if (make_dir(odir) != RL_OK) {
            fprintf(stderr, "grade-class: cannot make %s: %s\n", odir, strerror(errno));
            return 2;
        }
        size_t nst = gc_roster_starters(sdir, st, MAX_STARTERS);
        for (size_t e = 0; e < b.nex; e++) {
            gc_job *j = &jobs[s * b.nex + e];
            if (!b.want[e]) {
                j->state = GC_JOB_SKIPPED;
                continue;
            }
            plan(&b, students[s], sdir, st, nst, e, j, &info[s * b.nex + e]);
            b.total += j->state == GC_JOB_PENDING;
        }
    }
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
    for (size_t i = 0; i < njobs; i++)
        if (jobs[i].user && !tally_job(&t, &jobs[i], &info[i]))
            complete = false;
    gc_tally_sort(&t);
    int rc = complete ? 0 : 2;
    char path[PATH_MAX + 300];
    char **ex_paths = rl_xcalloc(b.nex, sizeof *ex_paths);
    for (size_t s = 0; s < nstudents; s++) {
        for (size_t e = 0; e < b.nex; e++) {
            job_info *ji = &info[s * b.nex + e];
            ex_paths[e] = jobs[s * b.nex + e].user && !ji->error[0] ? ji->json : NULL;
        }
        snprintf(path, sizeof path, "%s/%s/results.json", b.out, students[s]);
        if (gc_tally_write_student(&t, students[s], ex_paths, path) != RL_OK) {
            fprintf(stderr, "grade-class: cannot write %s: %s\n", path, strerror(errno));
            rc = 2;
        }
        if (results && gc_tally_write_student(&t, students[s], ex_paths, results) != RL_OK) {
            fprintf(stderr, "grade-class: cannot write %s: %s\n", results, strerror(errno));
            rc = 2;
        }
    }
    free(ex_paths);
    snprintf(path, sizeof path, "%s/grades.csv", b.out);
    if (gc_tally_write_csv(&t, path) != RL_OK) {
        fprintf(stderr, "grade-class: cannot write %s: %s\n", path, strerror(errno));
        rc = 2;
    }
    snprintf(path, sizeof path, "%s/class.html", b.out);
    if (gc_html_write_class(&t, students, nstudents, path) != RL_OK) {
        fprintf(stderr, "grade-class: cannot write %s: %s\n", path, strerror(errno));
        rc = 2;
    }
    snprintf(path, sizeof path, "%s/summary.txt", b.out);
    FILE *sf = fopen(path, "w");
    if (sf) {
        gc_tally_summary(&t, sf, wall, b.jobs);
        fclose(sf);
    } else {
        fprintf(stderr, "grade-class: cannot write %s: %s\n", path, strerror(errno));
        rc = 2;
    }
    if (!b.quiet)
        gc_tally_summary(&t, stdout, wall, b.jobs);
    if (!complete)
        fprintf(stderr, "grade-class: %s: run the same command again to resume\n",
                prc != RL_OK ? "a grader could not be started" : "interrupted");
    gc_tally_fini(&t);
    gc_roster_free_names(students, nstudents);
    free(jobs);
    free(info);
    return rc;
}
