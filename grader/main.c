/* grader: runs a student's submission through an exercise's scenarios and
 * reports verdicts, feedback and points (table, and Gradescope JSON).
 *
 * Exit status: 0 every scenario passed, 1 some did not, 2 usage or grader
 * error (including an interrupted run). Results are written even then. */
#include "config_check.h"
#include "exercise.h"
#include "report.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_log.h"
#include "rl_marker.h"
#include "rl_path.h"
#include "rl_text.h"
#include "run.h"
#include "sandbox.h"

#include <getopt.h>
#include <grpc/grpc.h>
#include <limits.h>
#include <stdarg.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: grader EXERCISE --submission 'COMMAND' [options]\n"
            "       grader list\n"
            "\n"
            "Runs every scenario of EXERCISE against a fresh baseline and a fresh copy of the\n"
            "submission, and prints a verdict, points and feedback for each.\n"
            "\n"
            "  --submission CMD   shell command that starts the relay (it must listen on\n"
            "                     $RELAYLAB_LISTEN and call the baseline at $RELAYLAB_BASELINE);\n"
            "                     for config exercises, the submitted file\n"
            "  --json FILE        also write Gradescope's results.json to FILE\n"
            "  --runs N           run every scenario N times (default 1); a scenario scores\n"
            "                     only if every run passed\n"
            "  --only IDS         run only these scenarios (comma-separated ids)\n"
            "  --ready-timeout S  seconds to wait for the submission to listen (default 15)\n"
            "  --memory-limit MB  private memory the submission may use (RLIMIT_DATA, default\n"
            "                     1024; 0: no limit, e.g. for sanitizer builds)\n"
            "  --rubric FILE      points per scenario (default: grader/rubric.json next to bin/)\n"
            "  --world FILE       config exercises: the deployment to judge in (default:\n"
            "                     grader/worlds/EXERCISE.json); the submission's own is ignored\n"
            "  --variant SEED     config exercises: pick one of the world file's deployments by\n"
            "                     name, or by a seed such as a student id (FNV-1a-64 mod count)\n"
            "  --student ID       the same: the grading identity. A config whose folder's\n"
            "                     .relaylab was made for another identity is graded as ID,\n"
            "                     and its feedback says so first\n"
            "  --dir DIR          the submission's folder, the one the sandbox shows it\n"
            "                     (default: the folder of the command's script or program)\n"
            "  --unsafe           grade even where the sandbox cannot be built (no namespaces,\n"
            "                     or root without cgroups): only for your own code, on your own\n"
            "                     machine; the report says it was unsandboxed\n"
            "  --no-sandbox       never sandbox (debugging the grader); the report says so\n"
            "\n"
            "A command submission runs sandboxed (docs/sandbox.md): as nobody, with no new\n"
            "privileges, no way to make namespaces and a clean environment, in its own PID and\n"
            "mount namespace (a read-only view of the system's folders in which the kit is\n"
            "hidden but its folder is shown, and a 64 MiB tmpfs /tmp), in its own cgroups\n"
            "(pids, memory, cpuacct), and the grader and its baselines in a network namespace\n"
            "with loopback alone. Not root, the grader makes a user namespace of its own\n"
            "instead and goes without cgroups (a note says so). Without the sandbox, a\n"
            "submission could reach the grader's instruments.\n"
            "  --quiet            no progress lines\n"
            "  --verbose          a progress line per run even when stderr is not a terminal\n"
            "  --help             this text\n"
            "\n"
            "Exit status: 0 all passed, 1 some failed, 2 usage or grader error.\n"
            "Exercises: ");
    for (size_t i = 0; gr_exercises[i]; i++)
        fprintf(f, "%s%s", i ? ", " : "", gr_exercises[i]->name);
    fprintf(f, " (see `grader list`).\n");
}

static void list_exercises(void)
{
    for (size_t i = 0; gr_exercises[i]; i++) {
        const gr_exercise *ex = gr_exercises[i];
        printf("%s: %s (%s)\n", ex->name, ex->summary,
               ex->kind == GR_SUBMISSION_CONFIG ? "--submission FILE" : "--submission 'COMMAND'");
        for (size_t j = 0; j < ex->nscenarios; j++)
            printf("  %-20s %s\n", ex->scenarios[j].id, ex->scenarios[j].title);
    }
}

/* The --json FILE of |argv|, found by hand: a usage error can stop getopt
 * before it reaches --json, and Gradescope shows a missing results.json as
 * "autograder failed" instead of the reason. Accepts what getopt_long does:
 * "--json F", "--json=F" and unambiguous prefixes ("--js F"). NULL if none. */
static const char *scan_json_path(int argc, char **argv)
{
    const char *found = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0)
            break;
        if (strncmp(a, "--j", 3) != 0)
            continue;
        const char *eq = strchr(a, '=');
        size_t n = eq ? (size_t)(eq - a) : strlen(a);
        if (n > strlen("--json") || strncmp(a, "--json", n) != 0)
            continue;
        if (eq)
            found = eq + 1;
        else if (i + 1 < argc)
            found = argv[++i];
    }
    return found;
}

/* Reports a usage error: the message and the usage on stderr, and a
 * results.json saying it when --json was given. Returns exit status 2. */
static int usage_error(int argc, char **argv, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int usage_error(int argc, char **argv, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* The file first: a closed stderr must not cost the results. */
    const char *json = scan_json_path(argc, argv);
    char err[512] = "";
    if (json && gr_report_json_error(json, msg, true, err, sizeof err) != RL_OK)
        fprintf(stderr, "grader: %s\n", err);
    fprintf(stderr, "grader: %s\n\n", msg);
    usage(stderr);
    return 2;
}

static int parse_positive(const char *s, long max, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < 1 || v > max)
        return RL_EINVAL;
    *out = v;
    return RL_OK;
}

/* Whether the link |path| (when it is one) leads out of the folder it is in
 * (`erin/deadline -> ../bob/deadline`). */
static bool link_leads_out(const char *path)
{
    char p[PATH_MAX], parent[PATH_MAX];
    snprintf(p, sizeof p, "%s", path);
    for (size_t n = strlen(p); n > 1 && p[n - 1] == '/'; n--)
        p[n - 1] = '\0'; /* "erin/deadline/" names the link too */
    struct stat st;
    if (lstat(p, &st) != 0 || !S_ISLNK(st.st_mode))
        return false;
    char *slash = strrchr(p, '/');
    if (!slash)
        snprintf(parent, sizeof parent, ".");
    else if (slash == p)
        snprintf(parent, sizeof parent, "/");
    else
        snprintf(parent, sizeof parent, "%.*s", (int)(slash - p), p);
    return rl_path_within(parent, p, NULL, 0) != RL_OK;
}

/* Whether what the grader was handed leads out of the folder it was handed
 * in: --dir a symlink out of its own folder, a config file a symlink out of
 * its folder, a command naming a file of its folder (--dir, else the
 * working folder) that leads out (`run -> ../bob/run`). A symlinked folder
 * would be graded as a classmate's work; grade-class refuses the same
 * first, and lab check and Gradescope reach the grader too. Returns true
 * with the reason in |err|. */
static bool handed_out_of_folder(const gr_exercise *ex, const char *dir, const char *submission, char *err,
                                 size_t errlen)
{
    if (dir && link_leads_out(dir)) {
        snprintf(err, errlen,
                 "--dir %s is a symlink that leads outside its folder: not followed (grade the folder itself, not a "
                 "link to one)",
                 dir);
        return true;
    }
    /* A config is read by the config reader (rl_file_read_untrusted), which
     * refuses a link leading out of its folder in the check scenario's
     * feedback: the student sees it there, with the score. */
    if (ex->kind == GR_SUBMISSION_CONFIG)
        return false;
    char bad[PATH_MAX];
    if (rl_path_command_within(dir ? dir : ".", ".", submission, bad, sizeof bad) != RL_OK) {
        snprintf(err, errlen,
                 "the submission '%.100s' names %.100s, which leads outside %s%.80s (a symlink, or a path to "
                 "another's files): not followed; hand in the file itself",
                 submission, bad, dir ? "--dir " : "the folder it runs in", dir ? dir : "");
        return true;
    }
    return false;
}

/* Builds the submission's view (its folder: |dir|, else the command's) and
 * enters the sandbox. Returns 0, or an error with the reason in |err|. */
static int sandbox_up(gr_sandbox_view *view, const char *dir, const char *rubric_path, const gr_options *opt,
                      char *err, size_t errlen)
{
    char sub_dir[PATH_MAX];
    bool have_dir = true;
    if (dir)
        snprintf(sub_dir, sizeof sub_dir, "%s", dir);
    else
        have_dir = gr_sandbox_submission_dir(opt->submission, sub_dir, sizeof sub_dir) == RL_OK;
    const char *private_files[] = {rubric_path, NULL};
    if (gr_sandbox_view_init(view, opt->bin_dir, have_dir ? sub_dir : NULL, private_files, err, errlen) != RL_OK)
        return RL_EINVAL;
    return gr_sandbox_enter(view, err, errlen);
}

/* "NODE_PATH=DIR" for the kit's Node packages (build/node-packages, made by
 * `make node-deps` and Gradescope's setup.sh), when they are there. */
static int kit_node_packages(char *buf, size_t len)
{
    char found[PATH_MAX], real[PATH_MAX];
    if (rl_path_find_data("build/node-packages/node_modules", found, sizeof found) != RL_OK ||
        !realpath(found, real))
        return RL_ENOTFOUND;
    snprintf(buf, len, "NODE_PATH=%s", real);
    return RL_OK;
}

/* True when the submission's folder (|dir|, else the command's) is a Node
 * folder without its packages. */
static bool no_node_modules(const char *dir, const char *submission)
{
    char sub[PATH_MAX], path[PATH_MAX + 32];
    struct stat st;
    if (dir)
        snprintf(sub, sizeof sub, "%s", dir);
    else if (gr_sandbox_submission_dir(submission, sub, sizeof sub) != RL_OK)
        return false;
    snprintf(path, sizeof path, "%s/package.json", sub);
    if (lstat(path, &st) != 0)
        return false;
    snprintf(path, sizeof path, "%s/node_modules", sub);
    return lstat(path, &st) != 0;
}

static bool marker_lists(const rl_marker *m, const char *exercise)
{
    char list[sizeof m->exercises];
    snprintf(list, sizeof list, "%s", m->exercises);
    char *save = NULL;
    for (char *w = strtok_r(list, " ", &save); w; w = strtok_r(NULL, " ", &save))
        if (strcmp(w, exercise) == 0)
            return true;
    return false;
}

/* The identity rule (rl_marker.h): a config whose folder's .relaylab was
 * made for another identity than the grading one (--student/--variant, or
 * none) is graded in the grading one's deployment, and the feedback says so
 * first. A marker that cannot be read changes nothing: the grading identity
 * alone decides the deployment. */
static void identity_check(const char *exercise, gr_options *opt, char *buf, size_t len, const char **note)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", opt->submission);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    static rl_marker m;
    char err[PATH_MAX + 200];
    if (rl_marker_read(dir, &m, err, sizeof err) != RL_OK || !marker_lists(&m, exercise) ||
        !rl_identity_differs(opt->variant, m.student))
        return;
    opt->made_for = m.student;
    rl_identity_note(exercise, opt->variant, m.student, buf, len);
    opt->identity_note = buf;
    *note = buf;
}

int main(int argc, char **argv)
{
    rl_log_init("grader");
    enum { OPT_SUBMISSION = 256, OPT_JSON, OPT_RUNS, OPT_READY, OPT_RUBRIC, OPT_QUIET, OPT_ONLY, OPT_VERBOSE, OPT_MEMORY, OPT_HELP, OPT_WORLD, OPT_VARIANT, OPT_SANDBOX, OPT_NO_SANDBOX, OPT_UNSAFE, OPT_DIR };
    static const struct option longopts[] = {
        {"submission", required_argument, NULL, OPT_SUBMISSION},
        {"json", required_argument, NULL, OPT_JSON},
        {"runs", required_argument, NULL, OPT_RUNS},
        {"ready-timeout", required_argument, NULL, OPT_READY},
        {"rubric", required_argument, NULL, OPT_RUBRIC},
        {"only", required_argument, NULL, OPT_ONLY},
        {"quiet", no_argument, NULL, OPT_QUIET},
        {"verbose", no_argument, NULL, OPT_VERBOSE},
        {"memory-limit", required_argument, NULL, OPT_MEMORY},
        {"sandbox", no_argument, NULL, OPT_SANDBOX},
        {"no-sandbox", no_argument, NULL, OPT_NO_SANDBOX},
        {"unsafe", no_argument, NULL, OPT_UNSAFE},
        {"dir", required_argument, NULL, OPT_DIR},
        {"help", no_argument, NULL, OPT_HELP},
        {"world", required_argument, NULL, OPT_WORLD},
        {"variant", required_argument, NULL, OPT_VARIANT},
        {"student", required_argument, NULL, OPT_VARIANT},
        {NULL, 0, NULL, 0},
    };
    gr_options opt = {.runs = 1, .ready_timeout_ms = 15000, .data_limit_mb = 1024};
    const char *json_path = NULL, *rubric_path = NULL, *dir = NULL;
    bool quiet = false, verbose = false, no_sandbox = false, unsafe = false;
    int c;
    long v;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_SUBMISSION:
            opt.submission = optarg;
            break;
        case OPT_JSON:
            json_path = optarg;
            break;
        case OPT_RUNS:
            if (parse_positive(optarg, 1000, &v) != RL_OK)
                return usage_error(argc, argv, "--runs takes a number from 1 to 1000, not '%s'", optarg);
            opt.runs = (int)v;
            break;
        case OPT_READY:
            if (parse_positive(optarg, 600, &v) != RL_OK)
                return usage_error(argc, argv, "--ready-timeout takes seconds from 1 to 600, not '%s'", optarg);
            opt.ready_timeout_ms = v * 1000;
            break;
        case OPT_MEMORY:
            /* 0 turns the limit off: sanitizer builds reserve terabytes of
             * shadow memory, which RLIMIT_DATA counts. */
            if (strcmp(optarg, "0") == 0)
                v = 0;
            else if (parse_positive(optarg, 1 << 20, &v) != RL_OK)
                return usage_error(argc, argv, "--memory-limit takes MiB (0: no limit), not '%s'", optarg);
            opt.data_limit_mb = v;
            break;
        case OPT_RUBRIC:
            rubric_path = optarg;
            break;
        case OPT_ONLY:
            opt.only = optarg;
            break;
        case OPT_SANDBOX:
            /* The default since the sandbox left its experiment; accepted
             * so that scripts which asked for it keep working. */
            break;
        case OPT_NO_SANDBOX:
            no_sandbox = true;
            break;
        case OPT_UNSAFE:
            unsafe = true;
            break;
        case OPT_DIR:
            dir = optarg;
            opt.dir = optarg;
            break;
        case OPT_QUIET:
            quiet = true;
            break;
        case OPT_WORLD:
            opt.world = optarg;
            break;
        case OPT_VARIANT:
            opt.variant = optarg;
            break;
        case OPT_VERBOSE:
            verbose = true;
            break;
        case OPT_HELP:
        case 'h':
            usage(stdout);
            return 0;
        default:
            return usage_error(argc, argv, "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return usage_error(argc, argv, "no exercise named (try `grader list`)");
    const char *name = argv[optind++];
    if (strcmp(name, "list") == 0 && optind == argc) {
        list_exercises();
        return 0;
    }
    const gr_exercise *ex = gr_exercise_find(name);
    if (!ex)
        return usage_error(argc, argv, "no exercise '%s'", name);
    if (optind < argc)
        return usage_error(argc, argv, "unexpected argument '%s'", argv[optind]);
    if ((opt.world || opt.variant) && ex->kind != GR_SUBMISSION_CONFIG)
        return usage_error(argc, argv, "--world and --variant are for the config exercises, not %s", name);
    if (!opt.submission || !*opt.submission)
        return usage_error(argc, argv, "%s needs --submission %s", name,
                           ex->kind == GR_SUBMISSION_CONFIG ? "FILE" : "'COMMAND'");
    struct stat dir_st;
    if (dir && (stat(dir, &dir_st) != 0 || !S_ISDIR(dir_st.st_mode)))
        return usage_error(argc, argv, "--dir %s is not a folder", dir);
    char only_err[256];
    if (gr_check_only(ex, opt.only, only_err, sizeof only_err) != RL_OK)
        return usage_error(argc, argv, "%s", only_err);
    /* Before any grading: a results file that cannot be written would lose
     * the whole run, and nothing else can be written in its place. */
    if (json_path) {
        char jerr[512];
        if (gr_report_json_writable(json_path, jerr, sizeof jerr) != RL_OK) {
            fprintf(stderr, "grader: %s\n", jerr);
            return 2;
        }
    }

    int64_t t0 = rl_now_ns();
    char bin[PATH_MAX], rubric_buf[PATH_MAX + 64], err[512] = "", note_buf[1024], identity_buf[512];
    const char *note = NULL;
    gr_sandbox_view view = {0};
    gr_outcome *outcomes = calloc(ex->nscenarios ? ex->nscenarios : 1, sizeof *outcomes);
    size_t n = 0;
    gr_rubric *rubric = NULL;
    int status = 2;
    const char *error = NULL;
    bool bad_submission = false; /* |error| is the submission's, not the setup's */
    if (!outcomes)
        return 2;
    if (rl_path_exe_dir(bin, sizeof bin) != RL_OK) {
        snprintf(err, sizeof err, "cannot find the grader's own folder");
        error = err;
        goto report;
    }
    opt.bin_dir = bin;
    if (!rubric_path) {
        /* bin/../grader/rubric.json, also from build/address/bin. */
        if (rl_path_find_data("grader/rubric.json", rubric_buf, sizeof rubric_buf) != RL_OK)
            snprintf(rubric_buf, sizeof rubric_buf, "%s/../grader/rubric.json", bin);
        rubric_path = rubric_buf;
    }
    if (gr_rubric_load(rubric_path, &rubric, err, sizeof err) != RL_OK ||
        gr_rubric_check(rubric, ex, err, sizeof err) != RL_OK) {
        gr_rubric_free(rubric);
        rubric = NULL;
        error = err;
        goto report;
    }
    if (handed_out_of_folder(ex, dir, opt.submission, err, sizeof err)) {
        error = err;
        bad_submission = true;
        goto report;
    }
    if (ex->kind == GR_SUBMISSION_CONFIG && access(opt.submission, R_OK) != 0) {
        /* Still a report (and results.json): the student sees why it scored 0. */
        snprintf(err, sizeof err, "cannot read the submission file %s: %s", opt.submission, strerror(errno));
        error = err;
        bad_submission = true;
        goto report;
    }
    if (ex->kind == GR_SUBMISSION_CONFIG) {
        /* A world the grader cannot use is the instructor's error: say so once. */
        rl_chancfg_world w;
        if (gr_config_world(ex->name, opt.world, opt.variant, &w, err, sizeof err) != RL_OK) {
            error = err;
            goto report;
        }
        rl_chancfg_world_fini(&w);
        identity_check(ex->name, &opt, identity_buf, sizeof identity_buf, &note);
    }
    if (gr_install_guards() != RL_OK) {
        snprintf(err, sizeof err, "cannot install signal handlers or become a subreaper");
        error = err;
        goto report;
    }
    opt.progress = verbose || (!quiet && isatty(STDERR_FILENO));
    static char node_path[PATH_MAX + 16];
    if (ex->kind == GR_SUBMISSION_COMMAND && kit_node_packages(node_path, sizeof node_path) == RL_OK)
        opt.node_path = node_path;
    int src;
    if (ex->kind == GR_SUBMISSION_COMMAND) {
        if (no_sandbox) {
            note = "graded without the sandbox (--no-sandbox, for debugging): the submission could have reached "
                   "the grader's instruments";
        } else if ((src = sandbox_up(&view, dir, rubric_path, &opt, err, sizeof err)) == RL_OK) {
            opt.sandbox = &view;
            note = gr_sandbox_mode_note();
        } else if (gr_was_interrupted()) {
            error = "interrupted: the grader was asked to stop before it finished";
            goto report;
        } else if (src == RL_EINVAL) {
            error = err; /* where the submission is, not what the machine can do */
            goto report;
        } else if (unsafe) {
            snprintf(note_buf, sizeof note_buf, "graded WITHOUT the sandbox (--unsafe), which cannot be built here: %s",
                     err);
            note = note_buf;
            if (!quiet)
                fprintf(stderr, "grader: %s\n", note);
        } else {
            snprintf(note_buf, sizeof note_buf,
                     "%s. Submissions are graded only in the sandbox; to grade your own code on your own machine "
                     "without it, add --unsafe",
                     err);
            error = note_buf;
            goto report;
        }
    }

    static char notes[2048];
    if (opt.node_path && no_node_modules(dir, opt.submission)) {
        /* What Gradescope uploads are: say how it was run. */
        snprintf(notes, sizeof notes, "%s%sthe submission's folder has a package.json but no node_modules: it ran "
                 "with the packages the starters pin (the kit's build/node-packages)",
                 note ? note : "", note ? "; " : "");
        note = notes;
    }
    grpc_init();
    int rc = gr_run_exercise(ex, &opt, outcomes, &n, err, sizeof err);
    grpc_shutdown();
    if (rc == RL_EINVAL) {
        gr_rubric_free(rubric);
        free(outcomes);
        return usage_error(argc, argv, "%s", err);
    }
    if (rc != RL_OK)
        error = err;
    else if (gr_was_interrupted())
        error = "interrupted: the grader was asked to stop before it finished";

report:;
    gr_report rep = {
        .ex = ex,
        .submission = opt.submission,
        .outcomes = outcomes,
        .noutcomes = n,
        .rubric = rubric,
        .runs = opt.runs,
        .seconds = (double)(rl_now_ns() - t0) / 1e9,
        .error = error,
        .note = note,
    };
    /* The file before the table: a closed stdout must not cost the results. */
    if (json_path) {
        char jerr[512];
        /* Nothing graded (rubric or setup error): say so, not "0 of 0". */
        int jrc = n == 0 && error ? gr_report_json_error(json_path, error, !bad_submission, jerr, sizeof jerr)
                                  : gr_report_json(json_path, &rep, jerr, sizeof jerr);
        if (jrc != RL_OK) {
            fprintf(stderr, "grader: %s\n", jerr);
            error = error ? error : "cannot write the JSON results";
        }
    }
    gr_report_table(stdout, &rep);
    fflush(stdout);
    if (error) {
        /* It may name the submission's folder or quote the submission:
         * printable, as everything the grader prints (rl_text.h). */
        char *shown = rl_text_printable_dup(error, 0);
        fprintf(stderr, "grader: %s\n", shown);
        free(shown);
        status = 2;
    } else {
        status = 0;
        for (size_t i = 0; i < n; i++)
            if (outcomes[i].passed != outcomes[i].runs || outcomes[i].runs == 0)
                status = 1;
        /* A scenario the grader could not judge is not the student's fail. */
        for (size_t i = 0; i < n; i++)
            if (outcomes[i].verdict == GR_ERROR)
                status = 2;
    }
    gr_rubric_free(rubric);
    gr_sandbox_view_fini(&view);
    free(outcomes);
    return status;
}
