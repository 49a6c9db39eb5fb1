/* options: grade-class's command line and the setup it names
 * (options.h). The messages here are the ones a user sees for a mistyped
 * command: each names the option and what it takes. */
#include "options.h"

#include "rl_alloc.h"
#include "rl_err.h"
#include "rl_path.h"
#include "rl_text.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void gc_options_usage(FILE *f)
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
               "A student folder that is a symlink, or holds a folder, .relaylab, config or run\n"
               "leading outside it, is refused (ERROR rows say which), never followed; a folder\n"
               "name the results cannot use skips that student, not the class.\n"
               "\n"
               "  --out DIR            where the results go (made if missing)\n"
               "  --exercises LIST     comma-separated exercises, or all (default; `grader list`)\n"
               "  --jobs N             graders at once (default 1); a grading mostly waits, so up to\n"
               "                       5 a core (measured: 10 on 2 cores) changes no verdict; with\n"
               "                       N > 1 each grades one scenario at a time (--parallel 1),\n"
               "                       with 1 its scenarios' lanes run at once\n"
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
               "  --roster FILE        CSV lines FOLDER,ID: the identity of each student folder; a\n"
               "                       folder listed with two ids or an id given to two folders\n"
               "                       stops the batch (the line named), a UTF-8 BOM, a blank or\n"
               "                       repeated line is a warning\n"
               "  --student DIR        grade one student's folder (Gradescope's submission)\n"
               "  --identity ID        with --student: the grading identity (Gradescope's submitter;\n"
               "                       without it, the folder's own .relaylab)\n"
               "  --identity-from W    where --identity came from (sid, email), and\n"
               "  --identity-note T    why a fallback was taken: both stated in results.json\n"
               "                       with the id graded (extra_data graded_as, identity_from)\n"
               "  --results FILE       with --student: also write its results.json to FILE\n"
               "  --unsafe             the grader's --unsafe: grade unsandboxed where the sandbox\n"
               "                       cannot be built (a container without namespaces); the\n"
               "                       submissions could then reach the grader: a last resort\n"
               "  --slurm              grade on a Slurm cluster: the class as one job array, a task a\n"
               "                       student (each the same grader runs, --jobs at once on\n"
               "                       ceil(jobs/5) CPUs), waited for and merged into the same\n"
               "                       files; run it from a folder the nodes share with the class,\n"
               "                       DIR and bin/ (README.md, \"Slurm\")\n"
               "  --slurm-wait MIN     with --slurm: cancel the array (scancel) when it has not ended\n"
               "                       after MIN minutes (default: every task's time limit one after\n"
               "                       another, at most 24 hours)\n"
               "  --sbatch-option OPT  with --slurm: one more sbatch option, as is (e.g.\n"
               "                       --sbatch-option=--partition=grading); repeat for more\n"
               "  --fresh              grade everything again, keeping nothing\n"
               "  --quiet              no progress lines\n"
               "  --show-logs N        at the end, print the last N lines of the gradings' logs, every\n"
               "                       byte a submission could have put there made printable\n"
               "  --help               this text\n");
}

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
    O_SLURM,
    O_SLURM_WAIT,
    O_SBATCH,
    O_SLURM_TASK,
    O_IDENTITY,
    O_IDENTITY_FROM,
    O_IDENTITY_NOTE
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
    {"identity-from", required_argument, NULL, O_IDENTITY_FROM},
    {"identity-note", required_argument, NULL, O_IDENTITY_NOTE},
    {"slurm", no_argument, NULL, O_SLURM},
    {"slurm-wait", required_argument, NULL, O_SLURM_WAIT},
    {"sbatch-option", required_argument, NULL, O_SBATCH},
    /* Internal: what an array task of --slurm runs (slurm.h). */
    {"slurm-task", required_argument, NULL, O_SLURM_TASK},
    {"quiet", no_argument, NULL, O_QUIET},
    {"show-logs", required_argument, NULL, O_SHOW_LOGS},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* --world EX=FILE: kept as "EX=/real/path/FILE" (checked against the
 * exercises once they are read). */
static int take_world(gc_batch *b, const char *arg)
{
    const char *eq = strchr(arg, '=');
    char real[PATH_MAX];
    if (!eq || eq == arg || b->nworlds == GC_MAX_WORLDS || !realpath(eq + 1, real)) {
        fprintf(stderr, "grade-class: --world takes EXERCISE=FILE with an existing FILE, not '%s'\n", arg);
        return RL_EINVAL;
    }
    snprintf(b->worlds[b->nworlds++], sizeof b->worlds[0], "%.*s=%s", (int)(eq - arg), arg, real);
    return RL_OK;
}

/* The options that take a number or a word from a fixed set. */
static int take_checked(int c, const char *arg, gc_batch *b, gc_options *o)
{
    char *end;
    long v;
    switch (c) {
    case O_JOBS:
    case O_RUNS:
        v = strtol(arg, &end, 10);
        if (!*arg || *end || v < 1 || v > 64) {
            fprintf(stderr, "grade-class: %s takes a number from 1 to 64, not '%s'\n",
                    c == O_JOBS ? "--jobs" : "--runs", arg);
            return RL_EINVAL;
        }
        *(c == O_JOBS ? &b->jobs : &b->runs) = (int)v;
        return RL_OK;
    case O_VFROM:
        if (strcmp(arg, "folder") != 0 && strcmp(arg, "marker") != 0 && strcmp(arg, "none") != 0) {
            fprintf(stderr, "grade-class: --variant-from takes folder, marker or none, not '%s'\n", arg);
            return RL_EINVAL;
        }
        b->variant_from = arg;
        return RL_OK;
    case O_SLURM_WAIT:
        v = strtol(arg, &end, 10);
        if (!*arg || *end || v < 1 || v > 100000) {
            fprintf(stderr, "grade-class: --slurm-wait takes minutes from 1 to 100000, not '%s'\n", arg);
            return RL_EINVAL;
        }
        b->slurm_wait_min = v;
        return RL_OK;
    case O_SBATCH:
        if (b->nsbatch == GC_MAX_SBATCH || arg[0] != '-') {
            fprintf(stderr,
                    "grade-class: --sbatch-option takes one sbatch option (at most %d), such as "
                    "--sbatch-option=--partition=short, not '%s'\n",
                    GC_MAX_SBATCH, arg);
            return RL_EINVAL;
        }
        b->sbatch_opts[b->nsbatch++] = arg;
        return RL_OK;
    case O_SHOW_LOGS:
        v = strtol(arg, &end, 10);
        if (*arg < '0' || *arg > '9' || *end || v > 100000) {
            fprintf(stderr, "grade-class: --show-logs takes a number of lines from 0 to 100000, not '%s'\n", arg);
            return RL_EINVAL;
        }
        b->show_logs = v;
        return RL_OK;
    default: /* O_IDENTITY */
        /* Gradescope's sid or email; "" (no metadata) leaves the marker's. */
        if (*arg && !gc_roster_name_ok(arg)) {
            fprintf(stderr, "grade-class: --identity takes an id (letters, digits and ._-@+), not '%s'\n", arg);
            return RL_EINVAL;
        }
        o->identity = *arg ? arg : NULL;
        return RL_OK;
    }
}

/* One option |c| with argument |arg|. Returns RL_OK, or RL_EINVAL after a
 * message. */
static int take_option(int c, char *arg, gc_batch *b, gc_options *o)
{
    switch (c) {
    case O_OUT: o->out = arg; break;
    case O_EX: o->exercises = arg; break;
    case O_READY: b->ready_timeout = arg; break;
    case O_MEM: b->memory_limit = arg; break;
    case O_WORLD: return take_world(b, arg);
    case O_STUDENT: o->student_dir = arg; break;
    case O_RESULTS: o->results = arg; break;
    case O_FRESH: b->fresh = true; break;
    case O_QUIET: b->quiet = true; break;
    case O_UNSAFE: b->unsafe = true; break;
    case O_ROSTER: o->roster = arg; break;
    case O_IDENTITY_FROM:
        /* A word: where run_autograder found --identity (sid, email). */
        if (!*arg || strlen(arg) > 16 || strspn(arg, "abcdefghijklmnopqrstuvwxyz-") != strlen(arg)) {
            fprintf(stderr, "grade-class: --identity-from takes a word such as sid or email, not '%s'\n", arg);
            return RL_EINVAL;
        }
        o->identity_from = arg;
        break;
    case O_IDENTITY_NOTE: rl_text_printable(o->identity_note, sizeof o->identity_note, arg, strlen(arg), 0); break;
    case O_SLURM: b->slurm = true; break;
    case O_SLURM_TASK: o->slurm_task = arg; break;
    default: return take_checked(c, arg, b, o);
    }
    return RL_OK;
}

/* --slurm's options go with --slurm and a class. */
static int check_slurm(const gc_batch *b, const gc_options *o)
{
    if (!b->slurm && (b->slurm_wait_min || b->nsbatch)) {
        fprintf(stderr, "grade-class: --slurm-wait and --sbatch-option go with --slurm\n");
        return RL_EINVAL;
    }
    if (b->slurm && o->student_dir) {
        fprintf(stderr, "grade-class: --slurm grades a CLASS_DIR, not --student (grade one student locally)\n");
        return RL_EINVAL;
    }
    return RL_OK;
}

/* The options that go together, and the one without its partner. */
static int check_combination(const gc_batch *b, const gc_options *o, bool extra_operand)
{
    if (extra_operand || !o->class_arg == !o->student_dir || !o->out || (o->results && !o->student_dir)) {
        fprintf(stderr, "grade-class: name a CLASS_DIR or --student DIR (one), and --out DIR%s\n\n",
                o->results && !o->student_dir ? "; --results goes with --student" : "");
        gc_options_usage(stderr);
        return RL_EINVAL;
    }
    if ((o->identity && !o->student_dir) || (o->roster && o->student_dir)) {
        fprintf(stderr, "grade-class: --identity goes with --student DIR, --roster with CLASS_DIR\n");
        return RL_EINVAL;
    }
    return check_slurm(b, o);
}

int gc_options_read(int argc, char **argv, gc_batch *b, gc_options *o, int *code)
{
    memset(o, 0, sizeof *o);
    o->argc = argc;
    o->argv = argv;
    o->exercises = "all";
    b->jobs = 1;
    b->runs = 1;
    *code = GC_EXIT_USAGE;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (c == 'h') {
            gc_options_usage(stdout);
            *code = GC_EXIT_OK;
            return RL_EINVAL;
        }
        if (c < O_OUT || c > O_IDENTITY_NOTE) {
            fprintf(stderr, "grade-class: unknown or incomplete option '%s'\n\n", argv[optind - 1]);
            gc_options_usage(stderr);
            return RL_EINVAL;
        }
        if (take_option(c, optarg, b, o) != RL_OK)
            return RL_EINVAL;
    }
    o->class_arg = optind < argc ? argv[optind++] : NULL;
    if (check_combination(b, o, optind < argc) != RL_OK)
        return RL_EINVAL;
    /* An array task grades what the submitter planned: --fresh was done
     * there, once (its files removed), and the task is no submitter. */
    if (o->slurm_task) {
        b->fresh = false;
        b->slurm = false;
    }
    /* One student without an identity of its own: the folder's (lab check's). */
    if (!b->variant_from)
        b->variant_from = o->student_dir && !o->identity ? "marker" : "folder";
    return RL_OK;
}

/* Runs `grader list` and parses it. */
static int read_exercises(gc_batch *b, char *err, size_t errlen)
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
    int rc = st == 0 ? gc_roster_parse_list(text, b->ex, GC_MAX_EXERCISES, &b->nex, err, errlen) : RL_ESYS;
    if (st != 0)
        snprintf(err, errlen, "%s list failed (status %d)", b->grader, st);
    free(text);
    return rc;
}

/* The class folder's real path into b->class_dir; with --student, the
 * folder is the student's, named by its basename, and its parent is the
 * class. */
static int find_class(gc_batch *b, gc_options *o)
{
    const char *dir = o->class_arg ? o->class_arg : o->student_dir;
    if (!realpath(dir, b->class_dir)) {
        fprintf(stderr, "grade-class: cannot find %s: %s\n", dir, strerror(errno));
        return RL_EINVAL;
    }
    if (o->student_dir) {
        char *slash = strrchr(b->class_dir, '/');
        snprintf(o->one_name, sizeof o->one_name, "%s", slash[1] ? slash + 1 : "student");
        if (slash == b->class_dir)
            slash[1] = '\0';
        else
            *slash = '\0';
    }
    return RL_OK;
}

/* b->want from --exercises: all, or a list of EX and EX/ID. */
static int choose_exercises(gc_batch *b, const char *exercises)
{
    if (strcmp(exercises, "all") == 0) {
        for (size_t i = 0; i < b->nex; i++)
            b->want[i] = true;
        return RL_OK;
    }
    char list[1024];
    snprintf(list, sizeof list, "%s", exercises);
    char *save = NULL;
    for (char *w = strtok_r(list, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        char *slash = strchr(w, '/');
        if (slash)
            *slash++ = '\0';
        int i = gc_batch_find_exercise(b, w);
        if (i < 0) {
            fprintf(stderr, "grade-class: no exercise '%s' (see `grader list`)\n", w);
            return RL_EINVAL;
        }
        b->want[i] = true;
        if (slash && gc_batch_add_only(b, (size_t)i, slash) != RL_OK) {
            fprintf(stderr, "grade-class: %s has no scenario '%s' (see `grader list`)\n", w, slash);
            return RL_EINVAL;
        }
    }
    gc_batch_trim_to_only(b);
    return RL_OK;
}

/* Every --world names a config exercise. */
static int check_worlds(const gc_batch *b)
{
    for (size_t i = 0; i < b->nworlds; i++) {
        char name[GC_NAME_MAX];
        snprintf(name, sizeof name, "%.*s", (int)(strchr(b->worlds[i], '=') - b->worlds[i]), b->worlds[i]);
        int e = gc_batch_find_exercise(b, name);
        if (e < 0 || !b->ex[e].config) {
            fprintf(stderr, "grade-class: --world is for the config exercises, not '%s'\n", name);
            return RL_EINVAL;
        }
    }
    return RL_OK;
}

int gc_options_prepare(gc_batch *b, gc_options *o, int *code)
{
    *code = GC_EXIT_SETUP;
    if (find_class(b, o) != RL_OK)
        return RL_EINVAL;
    /* --out is the instructor's own: a link there is theirs to follow.
     * What grade-class makes inside it is checked (gc_batch_make_dir). */
    if ((mkdir(o->out, 0755) != 0 && errno != EEXIST) || !realpath(o->out, b->out)) {
        fprintf(stderr, "grade-class: cannot make the results folder %s: %s\n", o->out, strerror(errno));
        return RL_EINVAL;
    }
    if (b->slurm && strpbrk(b->out, "%\\")) {
        /* sbatch reads them in --output's file name as patterns. */
        fprintf(stderr,
                "grade-class: with --slurm, the results folder cannot hold %% or \\ (Slurm reads them in "
                "a log's name): not %s\n",
                b->out);
        return RL_EINVAL;
    }
    char rubric[PATH_MAX], err[PATH_MAX + 1024];
    if (rl_path_sibling("grader", b->grader, sizeof b->grader) != RL_OK || access(b->grader, X_OK) != 0 ||
        rl_path_find_data("grader/rubric.json", rubric, sizeof rubric) != RL_OK) {
        fprintf(stderr, "grade-class: cannot find bin/grader and grader/rubric.json next to this program\n");
        return RL_EINVAL;
    }
    if (read_exercises(b, err, sizeof err) != RL_OK || gc_roster_read_points(rubric, b->ex, b->nex, err, sizeof err)) {
        fprintf(stderr, "grade-class: %s\n", err);
        return RL_EINVAL;
    }
    *code = GC_EXIT_USAGE;
    if (choose_exercises(b, o->exercises) != RL_OK || check_worlds(b) != RL_OK)
        return RL_EINVAL;
    /* The whole roster before any grading: a misread one grades students
     * as the wrong identity without a word. */
    if (o->roster && gc_roster_check(o->roster, stderr, err, sizeof err) != RL_OK) {
        fprintf(stderr, "grade-class: %s\n", err);
        *code = GC_EXIT_SETUP;
        return RL_EINVAL;
    }
    return RL_OK;
}
