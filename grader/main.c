/* grader: runs a student's submission through an exercise's scenarios and
 * reports verdicts, feedback and points (table, and Gradescope JSON).
 *
 * Exit status (main.h's gr_exit_code): 0 every scenario passed, 1 some did
 * not, 2 usage or grader error (including an interrupted run). Results are
 * written even then. */
#include "config_check.h"
#include "exercise.h"
#include "html.h"
#include "main.h"
#include "report.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_file.h"
#include "rl_log.h"
#include "rl_marker.h"
#include "rl_path.h"
#include "rl_text.h"
#include "run.h"
#include "sandbox.h"

#include <getopt.h>
#include <grpc/grpc.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: grader EXERCISE --submission 'COMMAND' [options]\n"
               "       grader list\n"
               "\n"
               "Runs every scenario of EXERCISE in its world (a fresh baseline; for coverage,\n"
               "tunnel servers behind an L7 proxy) against a fresh copy of the submission, and\n"
               "prints a verdict, points and feedback for each.\n"
               "\n"
               "  --submission CMD   what is graded, by exercise:\n"
               "                     deadline, cancel, shutdown, overload: a shell command that\n"
               "                       starts the relay (it listens on $RELAYLAB_LISTEN and calls\n"
               "                       the baseline at $RELAYLAB_BASELINE);\n"
               "                     flow: a command that starts the streamer (it listens on\n"
               "                       $RELAYLAB_LISTEN);\n"
               "                     coverage: a command that starts the tunnel agent (it dials\n"
               "                       $RELAYLAB_TUNNEL and listens on nothing);\n"
               "                     keepalive, retry, balance: the channel config file (JSON)\n"
               "  --json FILE        also write Gradescope's results.json to FILE\n"
               "  --html FILE        also write a report page with a picture of what each scenario\n"
               "                     measured (self-contained; results.json's output then carries\n"
               "                     the pictures too, as HTML)\n"
               "  --runs N           run every scenario N times (default 1); a scenario scores\n"
               "                     only if every run passed\n"
               "  --only IDS         run only these scenarios (comma-separated ids)\n"
               "  --parallel N       run at most N lanes of scenarios at once (default: every lane\n"
               "                     the exercise has, each in its own worker and, sandboxed, its\n"
               "                     own network; 1, or a command graded unsandboxed: one scenario\n"
               "                     at a time, in table order)\n"
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
    return GR_EXIT_ERROR;
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

/* Builds the submission's view (its folder, held open as |sub_fd|, -1:
 * none, at |sub_real|) and enters the sandbox. Returns 0, or an error with
 * the reason in |err|. */
static int sandbox_up(gr_sandbox_view *view, int sub_fd, const char *sub_real, const char *rubric_path,
                      const gr_options *opt, char *err, size_t errlen)
{
    const char *private_files[] = {rubric_path, NULL};
    if (gr_sandbox_view_init(view, opt->bin_dir, sub_fd, sub_real, private_files, err, errlen) != RL_OK)
        return RL_EINVAL;
    return gr_sandbox_enter(view, err, errlen);
}

/* "NODE_PATH=DIR" for the kit's Node packages (build/node-packages, made by
 * `make node-deps` and Gradescope's setup.sh), when they are there. */
static int kit_node_packages(char *buf, size_t len)
{
    char found[PATH_MAX], real[PATH_MAX];
    if (rl_path_find_data("build/node-packages/node_modules", found, sizeof found) != RL_OK || !realpath(found, real))
        return RL_ENOTFOUND;
    snprintf(buf, len, "NODE_PATH=%s", real);
    return RL_OK;
}

/* True when the submission's folder (held open as |dir_fd|) is a Node
 * folder without its packages. */
static bool no_node_modules(int dir_fd)
{
    struct stat st;
    return dir_fd > 0 && fstatat(dir_fd, "package.json", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
           fstatat(dir_fd, "node_modules", &st, AT_SYMLINK_NOFOLLOW) != 0;
}

/* The packages the package.json of a Node folder without node_modules
 * (no_node_modules) asks for, comma-separated into |buf|; "" when it asks
 * for none or cannot be read (then nothing is missing that we can name). */
static void node_dependencies(int dir_fd, char *buf, size_t len)
{
    buf[0] = '\0';
    char *text = NULL;
    size_t n = 0;
    if (dir_fd <= 0 || rl_file_read_untrusted_at(dir_fd, "package.json", 1u << 20, &text, &n, NULL, 0) != RL_OK)
        return;
    json_t *root = json_loadb(text, n, 0, NULL);
    free(text);
    const char *name;
    json_t *v;
    size_t used = 0;
    json_object_foreach(json_object_get(root, "dependencies"), name, v)
    {
        if (used + 3 < len)
            used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "", name);
    }
    json_decref(root);
    /* Its words reach the results: printable, as everything there. */
    char *p = rl_text_printable_dup(buf, 0);
    snprintf(buf, len, "%s", p);
    free(p);
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
    static rl_marker m;
    char err[PATH_MAX + 200];
    /* The marker of the folder that was checked, held open: never one a
     * swapped path names by now. */
    if (opt->dir_fd <= 0 || rl_marker_read_at(opt->dir_fd, opt->dir ? opt->dir : ".", &m, err, sizeof err) != RL_OK ||
        !marker_lists(&m, exercise) || !rl_identity_differs(opt->variant, m.student))
        return;
    opt->made_for = m.student;
    rl_identity_note(exercise, opt->variant, m.student, buf, len);
    opt->identity_note = buf;
    *note = buf;
}

/* The command line, parsed. */
typedef struct cli {
    gr_options opt;
    const gr_exercise *ex;
    const char *name; /* the exercise as named */
    const char *json_path, *rubric_path, *dir, *html_path;
    bool quiet, verbose, no_sandbox, unsafe;
} cli;

enum {
    OPT_SUBMISSION = 256,
    OPT_JSON,
    OPT_RUNS,
    OPT_READY,
    OPT_RUBRIC,
    OPT_QUIET,
    OPT_ONLY,
    OPT_VERBOSE,
    OPT_MEMORY,
    OPT_HELP,
    OPT_WORLD,
    OPT_VARIANT,
    OPT_SANDBOX,
    OPT_NO_SANDBOX,
    OPT_UNSAFE,
    OPT_DIR,
    OPT_HTML,
    OPT_PARALLEL
};

static const struct option longopts[] = {
    {"submission", required_argument, NULL, OPT_SUBMISSION},
    {"json", required_argument, NULL, OPT_JSON},
    {"html", required_argument, NULL, OPT_HTML},
    {"runs", required_argument, NULL, OPT_RUNS},
    {"ready-timeout", required_argument, NULL, OPT_READY},
    {"rubric", required_argument, NULL, OPT_RUBRIC},
    {"only", required_argument, NULL, OPT_ONLY},
    {"parallel", required_argument, NULL, OPT_PARALLEL},
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

/* One option |c| with argument |arg| into |cl|. Returns -1 to go on, or
 * the exit status (after --help, or a usage error). */
static int parse_option(int argc, char **argv, int c, const char *arg, cli *cl)
{
    long v;
    switch (c) {
    case OPT_SUBMISSION: cl->opt.submission = arg; break;
    case OPT_JSON: cl->json_path = arg; break;
    case OPT_HTML: cl->html_path = arg; break;
    case OPT_RUNS:
        if (parse_positive(arg, 1000, &v) != RL_OK)
            return usage_error(argc, argv, "--runs takes a number from 1 to 1000, not '%s'", arg);
        cl->opt.runs = (int)v;
        break;
    case OPT_READY:
        if (parse_positive(arg, 600, &v) != RL_OK)
            return usage_error(argc, argv, "--ready-timeout takes seconds from 1 to 600, not '%s'", arg);
        cl->opt.ready_timeout_ms = v * 1000;
        break;
    case OPT_MEMORY:
        /* 0 turns the limit off: sanitizer builds reserve terabytes of
         * shadow memory, which RLIMIT_DATA counts. */
        if (strcmp(arg, "0") == 0)
            v = 0;
        else if (parse_positive(arg, 1 << 20, &v) != RL_OK)
            return usage_error(argc, argv, "--memory-limit takes MiB (0: no limit), not '%s'", arg);
        cl->opt.data_limit_mb = v;
        break;
    case OPT_RUBRIC: cl->rubric_path = arg; break;
    case OPT_ONLY: cl->opt.only = arg; break;
    case OPT_PARALLEL:
        if (parse_positive(arg, 64, &v) != RL_OK)
            return usage_error(argc, argv, "--parallel takes a number from 1 to 64, not '%s'", arg);
        cl->opt.parallel = (int)v;
        break;
    case OPT_SANDBOX:
        /* The default since the sandbox left its experiment; accepted
         * so that scripts which asked for it keep working. */
        break;
    case OPT_NO_SANDBOX: cl->no_sandbox = true; break;
    case OPT_UNSAFE: cl->unsafe = true; break;
    case OPT_DIR:
        cl->dir = arg;
        cl->opt.dir = arg;
        break;
    case OPT_QUIET: cl->quiet = true; break;
    case OPT_WORLD: cl->opt.world = arg; break;
    case OPT_VARIANT: cl->opt.variant = arg; break;
    case OPT_VERBOSE: cl->verbose = true; break;
    case OPT_HELP:
    case 'h': usage(stdout); return GR_EXIT_PASSED;
    default: return usage_error(argc, argv, "unknown or incomplete option '%s'", argv[optind - 1]);
    }
    return -1;
}

/* Parses the command line into |cl| and checks it before any grading.
 * Returns -1 to go on and grade, or the exit status (usage error, --help,
 * `grader list`). */
static int parse_args(int argc, char **argv, cli *cl)
{
    memset(cl, 0, sizeof *cl);
    cl->opt = (gr_options){.runs = 1, .ready_timeout_ms = 15000, .data_limit_mb = 1024};
    int c, rc;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1)
        if ((rc = parse_option(argc, argv, c, optarg, cl)) >= 0)
            return rc;
    if (optind >= argc)
        return usage_error(argc, argv, "no exercise named (try `grader list`)");
    const char *name = cl->name = argv[optind++];
    if (strcmp(name, "list") == 0 && optind == argc) {
        list_exercises();
        return GR_EXIT_PASSED;
    }
    const gr_exercise *ex = cl->ex = gr_exercise_find(name);
    if (!ex)
        return usage_error(argc, argv, "no exercise '%s'", name);
    if (optind < argc)
        return usage_error(argc, argv, "unexpected argument '%s'", argv[optind]);
    if ((cl->opt.world || cl->opt.variant) && ex->kind != GR_SUBMISSION_CONFIG)
        return usage_error(argc, argv, "--world and --variant are for the config exercises, not %s", name);
    if (!cl->opt.submission || !*cl->opt.submission)
        return usage_error(argc, argv, "%s needs --submission %s", name,
                           ex->kind == GR_SUBMISSION_CONFIG ? "FILE" : "'COMMAND'");
    struct stat dir_st;
    if (cl->dir && (stat(cl->dir, &dir_st) != 0 || !S_ISDIR(dir_st.st_mode)))
        return usage_error(argc, argv, "--dir %s is not a folder", cl->dir);
    char only_err[256];
    if (gr_check_only(ex, cl->opt.only, only_err, sizeof only_err) != RL_OK)
        return usage_error(argc, argv, "%s", only_err);
    /* Before any grading: a results file that cannot be written would lose
     * the whole run, and nothing else can be written in its place. */
    if (cl->json_path) {
        char jerr[512];
        if (gr_report_json_writable(cl->json_path, jerr, sizeof jerr) != RL_OK) {
            fprintf(stderr, "grader: %s\n", jerr);
            return GR_EXIT_ERROR;
        }
    }
    return -1;
}

/* One grading: what was set up, what came out, and what to report. */
typedef struct grading {
    int64_t t0;
    char bin[PATH_MAX], rubric_buf[PATH_MAX + 64], err[512], note_buf[1024], identity_buf[512];
    char node_path[PATH_MAX + 16]; /* opt.node_path points here */
    char sub_real[PATH_MAX];       /* the submission's folder's real path when it was opened */
    char config_rel[PATH_MAX];     /* opt.config_rel points here */
    char notes[2048];
    const char *note; /* what the report says first, or NULL */
    gr_sandbox_view view;
    gr_outcome *outcomes; /* room for every scenario */
    size_t n;             /* outcomes filled */
    gr_rubric *rubric;
    const char *error;   /* why grading stopped, or NULL */
    bool bad_submission; /* |error| is the submission's, not the setup's */
} grading;

/* Command exercises: builds the sandbox (g->view), or says why the
 * submission is graded without it (g->note). Returns false with g->error
 * set when grading cannot go on. */
static bool choose_sandbox(cli *cl, grading *g)
{
    int src;
    if (cl->no_sandbox) {
        g->note = "graded without the sandbox (--no-sandbox, for debugging): the submission could have reached "
                  "the grader's instruments";
    } else if ((src = sandbox_up(&g->view, cl->opt.dir_fd > 0 ? cl->opt.dir_fd : -1, g->sub_real, cl->rubric_path,
                                 &cl->opt, g->err, sizeof g->err)) == RL_OK) {
        cl->opt.sandbox = &g->view;
        g->note = gr_sandbox_mode_note();
    } else if (gr_was_interrupted()) {
        g->error = "interrupted: the grader was asked to stop before it finished";
        return false;
    } else if (src == RL_EINVAL) {
        g->error = g->err; /* where the submission is, not what the machine can do */
        return false;
    } else if (cl->unsafe) {
        snprintf(g->note_buf, sizeof g->note_buf,
                 "graded WITHOUT the sandbox (--unsafe), which cannot be built here: %s", g->err);
        g->note = g->note_buf;
        if (!cl->quiet)
            fprintf(stderr, "grader: %s\n", g->note);
    } else {
        snprintf(g->note_buf, sizeof g->note_buf,
                 "%s. Submissions are graded only in the sandbox; to grade your own code on your own machine "
                 "without it, add --unsafe",
                 g->err);
        g->error = g->note_buf;
        return false;
    }
    return true;
}

/* The config's path inside the held folder (g->sub_real) into
 * g->config_rel: what follows --dir in |submission|, or, named another way,
 * its folder's place below the held one now; "" when it is not below it
 * (then it is read by its path, and refused as leading out). */
static void config_inside(const char *dir, const char *submission, grading *g)
{
    g->config_rel[0] = '\0';
    const char *base = strrchr(submission, '/');
    base = base ? base + 1 : submission;
    size_t n = dir ? strlen(dir) : 0;
    while (n > 1 && dir[n - 1] == '/')
        n--;
    if (!dir) {
        snprintf(g->config_rel, sizeof g->config_rel, "%s", base);
        return;
    }
    if (strncmp(submission, dir, n) == 0 && submission[n] == '/' && submission[n + 1]) {
        snprintf(g->config_rel, sizeof g->config_rel, "%s", submission + n + 1);
        return;
    }
    char parent[PATH_MAX], real[PATH_MAX];
    snprintf(parent, sizeof parent, "%.*s", (int)(base - submission), submission);
    if (!parent[0])
        snprintf(parent, sizeof parent, ".");
    if (!realpath(parent, real))
        return;
    size_t m = strlen(g->sub_real);
    if (strcmp(real, g->sub_real) == 0)
        snprintf(g->config_rel, sizeof g->config_rel, "%s", base);
    else if (strncmp(real, g->sub_real, m) == 0 && real[m] == '/')
        snprintf(g->config_rel, sizeof g->config_rel, "%s/%s", real + m + 1, base);
}

/* Opens the submission's folder once (rl_file_open_dir): --dir, else the
 * config's folder, else the folder of the command's script or program.
 * Everything after this is built from that handle: the sandbox's view,
 * the config and the marker (docs/sandbox.md). Returns false with g->error
 * (the submission's fault) when the folder is a link or not a folder. */
static bool hold_folder(cli *cl, grading *g)
{
    gr_options *opt = &cl->opt;
    char path[PATH_MAX];
    if (cl->dir) {
        snprintf(path, sizeof path, "%s", cl->dir);
    } else if (cl->ex->kind == GR_SUBMISSION_CONFIG) {
        const char *slash = strrchr(opt->submission, '/');
        if (!slash)
            snprintf(path, sizeof path, ".");
        else
            snprintf(path, sizeof path, "%.*s", slash == opt->submission ? 1 : (int)(slash - opt->submission),
                     opt->submission);
    } else if (gr_sandbox_submission_dir(opt->submission, path, sizeof path) != RL_OK) {
        return true; /* a command of shell words alone: no folder to show */
    }
    int fd, rc = rl_file_open_dir(path, &fd, g->sub_real, sizeof g->sub_real);
    if (rc == RL_EINVAL) {
        snprintf(g->err, sizeof g->err,
                 "%s%.300s is a symbolic link, not a folder: not followed (grade the folder itself, not a link to one)",
                 cl->dir ? "--dir " : "the submission's folder ", path);
        g->error = g->err;
        g->bad_submission = true;
        return false;
    }
    if (rc != RL_OK) {
        snprintf(g->err, sizeof g->err, "cannot open the submission's folder %.300s: %s", path, strerror(errno));
        g->error = g->err;
        g->bad_submission = true;
        return false;
    }
    opt->dir_fd = fd;
    if (cl->ex->kind == GR_SUBMISSION_CONFIG) {
        config_inside(cl->dir, opt->submission, g);
        opt->config_rel = g->config_rel[0] ? g->config_rel : NULL;
    }
    return true;
}

/* Everything before the scenarios: the kit's folder, the rubric, the
 * submission's file and folder, the world, the guards, the sandbox.
 * Returns false with g->error set (and g->bad_submission when it is the
 * submission's fault) when grading cannot go on. */
static bool prepare(cli *cl, grading *g)
{
    const gr_exercise *ex = cl->ex;
    gr_options *opt = &cl->opt;
    if (rl_path_exe_dir(g->bin, sizeof g->bin) != RL_OK) {
        snprintf(g->err, sizeof g->err, "cannot find the grader's own folder");
        g->error = g->err;
        return false;
    }
    opt->bin_dir = g->bin;
    if (!cl->rubric_path) {
        /* bin/../grader/rubric.json, also from build/address/bin. */
        if (rl_path_find_data("grader/rubric.json", g->rubric_buf, sizeof g->rubric_buf) != RL_OK)
            snprintf(g->rubric_buf, sizeof g->rubric_buf, "%s/../grader/rubric.json", g->bin);
        cl->rubric_path = g->rubric_buf;
    }
    if (gr_rubric_load(cl->rubric_path, &g->rubric, g->err, sizeof g->err) != RL_OK ||
        gr_rubric_check(g->rubric, ex, g->err, sizeof g->err) != RL_OK) {
        gr_rubric_free(g->rubric);
        g->rubric = NULL;
        g->error = g->err;
        return false;
    }
    if (handed_out_of_folder(ex, cl->dir, opt->submission, g->err, sizeof g->err)) {
        g->error = g->err;
        g->bad_submission = true;
        return false;
    }
    /* NOLINTNEXTLINE(clang-analyzer-core.NonNullParamChecker): parse_args refused a missing --submission */
    if (ex->kind == GR_SUBMISSION_CONFIG && access(opt->submission, R_OK) != 0) {
        /* Still a report (and results.json): the student sees why it scored 0. */
        snprintf(g->err, sizeof g->err, "cannot read the submission file %s: %s", opt->submission, strerror(errno));
        g->error = g->err;
        g->bad_submission = true;
        return false;
    }
    if (!hold_folder(cl, g))
        return false;
    if (ex->kind == GR_SUBMISSION_CONFIG) {
        /* A world the grader cannot use is the instructor's error: say so once. */
        rl_chancfg_world w;
        if (gr_config_world(ex->name, opt->world, opt->variant, &w, g->err, sizeof g->err) != RL_OK) {
            g->error = g->err;
            return false;
        }
        rl_chancfg_world_fini(&w);
        identity_check(ex->name, opt, g->identity_buf, sizeof g->identity_buf, &g->note);
    }
    if (gr_install_guards() != RL_OK) {
        snprintf(g->err, sizeof g->err, "cannot install signal handlers or become a subreaper");
        g->error = g->err;
        return false;
    }
    opt->progress = cl->verbose || (!cl->quiet && isatty(STDERR_FILENO));
    if (ex->kind == GR_SUBMISSION_COMMAND && kit_node_packages(g->node_path, sizeof g->node_path) == RL_OK)
        opt->node_path = g->node_path;
    if (ex->kind == GR_SUBMISSION_COMMAND && !choose_sandbox(cl, g))
        return false;
    char deps[256];
    if (ex->kind == GR_SUBMISSION_COMMAND && !opt->node_path && no_node_modules(opt->dir_fd) &&
        (node_dependencies(opt->dir_fd, deps, sizeof deps), deps[0])) {
        /* The upload relies on the kit's packages, as uploads do, and this
         * kit was built without them: the kit's fault, not a verdict on the
         * student (it would not start: "Cannot find module"). */
        char kit[PATH_MAX];
        const char *home = getenv("RELAYLAB_HOME"); /* rl_path_find_data's */
        snprintf(kit, sizeof kit, "%.4000s%s", home && *home ? home : g->bin, home && *home ? "/." : "");
        snprintf(g->err, sizeof g->err,
                 "this kit (%s) has no Node packages (build/node-packages/node_modules), and the submission's "
                 "folder has a package.json asking for %s but no node_modules: run `make node-deps` in the kit "
                 "(Gradescope's setup.sh does), then grade again",
                 dirname(kit), deps);
        g->error = g->err;
        return false;
    }
    if (opt->node_path && no_node_modules(opt->dir_fd)) {
        /* What Gradescope uploads are: say how it was run. */
        snprintf(g->notes, sizeof g->notes,
                 "%s%sthe submission's folder has a package.json but no node_modules: it ran "
                 "with the packages the starters pin (the kit's build/node-packages)",
                 g->note ? g->note : "", g->note ? "; " : "");
        g->note = g->notes;
    }
    return true;
}

/* Runs the scenarios. Returns -1 to go on and report, or the exit status
 * of a usage error found only now. */
static int grade(int argc, char **argv, cli *cl, grading *g)
{
    int rc = gr_run_exercise(cl->ex, &cl->opt, g->outcomes, &g->n, g->err, sizeof g->err);
    if (rc == RL_EINVAL)
        return usage_error(argc, argv, "%s", g->err);
    if (rc != RL_OK)
        g->error = g->err;
    else if (gr_was_interrupted())
        g->error = "interrupted: the grader was asked to stop before it finished";
    return -1;
}

/* Writes the results (--json first, --html, the table, the error on
 * stderr) and returns the exit status they give. */
static gr_exit_code report(const cli *cl, grading *g)
{
    gr_report rep = {
        .ex = cl->ex,
        .submission = cl->opt.submission,
        .outcomes = g->outcomes,
        .noutcomes = g->n,
        .rubric = g->rubric,
        .runs = cl->opt.runs,
        .seconds = (double)(rl_now_ns() - g->t0) / 1e9,
        .error = g->error,
        .note = g->note,
        .gradescope_html = cl->html_path != NULL,
    };
    const char *error = g->error;
    /* The file before the table: a closed stdout must not cost the results. */
    if (cl->json_path) {
        char jerr[512];
        /* Nothing graded (rubric or setup error): say so, not "0 of 0". */
        int jrc = g->n == 0 && error ? gr_report_json_error(cl->json_path, error, !g->bad_submission, jerr, sizeof jerr)
                                     : gr_report_json(cl->json_path, &rep, jerr, sizeof jerr);
        if (jrc != RL_OK) {
            fprintf(stderr, "grader: %s\n", jerr);
            error = error ? error : "cannot write the JSON results";
        }
    }
    if (cl->html_path) {
        char herr[512];
        if (gr_html_save(cl->html_path, &rep, herr, sizeof herr) != RL_OK)
            fprintf(stderr, "grader: %s\n", herr);
    }
    gr_report_table(stdout, &rep);
    fflush(stdout);
    if (error) {
        /* It may name the submission's folder or quote the submission:
         * printable, as everything the grader prints (rl_text.h). */
        char *shown = rl_text_printable_dup(error, 0);
        fprintf(stderr, "grader: %s\n", shown);
        free(shown);
        return GR_EXIT_ERROR;
    }
    gr_exit_code status = GR_EXIT_PASSED;
    for (size_t i = 0; i < g->n; i++)
        if (g->outcomes[i].passed != g->outcomes[i].runs || g->outcomes[i].runs == 0)
            status = GR_EXIT_FAILED;
    /* A scenario the grader could not judge is not the student's fail. */
    for (size_t i = 0; i < g->n; i++)
        if (g->outcomes[i].verdict == GR_ERROR)
            status = GR_EXIT_ERROR;
    return status;
}

int main(int argc, char **argv)
{
    rl_log_init("grader");
    cli cl;
    int status = parse_args(argc, argv, &cl);
    if (status >= 0)
        return status;
    grading g;
    memset(&g, 0, sizeof g);
    g.t0 = rl_now_ns();
    g.outcomes = calloc(cl.ex->nscenarios ? cl.ex->nscenarios : 1, sizeof *g.outcomes);
    if (!g.outcomes)
        return GR_EXIT_ERROR;
    if (prepare(&cl, &g) && (status = grade(argc, argv, &cl, &g)) >= 0) {
        gr_rubric_free(g.rubric);
        free(g.outcomes);
        return status;
    }
    status = report(&cl, &g);
    gr_rubric_free(g.rubric);
    gr_sandbox_view_fini(&g.view);
    if (cl.opt.dir_fd > 0)
        close(cl.opt.dir_fd);
    free(g.outcomes);
    return status;
}
