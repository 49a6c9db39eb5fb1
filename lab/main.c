/* lab: the students' and instructors' front door. `lab list` and `lab show`
 * give the handouts; `lab demo` runs the reference programs next to their
 * classic mistakes and shows what the baseline saw; `lab compare-memory`
 * plots producer memory under a stalled reader; `lab init`, `lab stubs` and
 * `lab check` give a student a starter folder and grade it. Each command is a row in one
 * table: name, usage, and the function that runs it. */
#include "compare_memory.h"
#include "demo.h"
#include "demo_balance.h"
#include "demo_coverage.h"
#include "demo_overload.h"
#include "handout.h"
#include "init.h"
#include "status.h"
#include "rl_err.h"
#include "rl_log.h"
#include "rl_path.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct command {
    const char *name;
    const char *usage;
    int (*run)(int argc, char **argv); /* argv[0] is the command name */
} command;

static int cmd_list(int argc, char **argv)
{
    (void)argv;
    return argc == 1 ? lab_handout_list() : LAB_EXIT_SHOW_USAGE;
}

static int cmd_show(int argc, char **argv)
{
    return argc == 2 ? lab_handout_show(argv[1]) : LAB_EXIT_SHOW_USAGE;
}

typedef struct demo {
    const char *name;
    int (*run)(void);
    const char *needs; /* the reference program it runs beside the baseline (bin/NAME), or NULL */
} demo;

static const demo demos[] = {
    {"deadline", lab_demo_deadline, "relay"}, {"cancel", lab_demo_cancel, "relay"},
    {"shutdown", lab_demo_shutdown, "relay"}, {"flow", lab_flow_demo, "streamer"},
    {"balance", lab_demo_balance, NULL},      {"overload", lab_demo_overload_main, "relay"},
    {"coverage", lab_demo_coverage, "agent"},
};

/* `lab demo NAME [--svg FILE]`. A demo runs a reference program, which
 * the student kit does not hold (it would answer the exercise): there it
 * says so and runs nothing, rather than failing halfway and printing a
 * conclusion it did not measure. */
static int cmd_demo(int argc, char **argv)
{
    if (argc != 2 && !(argc == 4 && strcmp(argv[2], "--svg") == 0))
        return LAB_EXIT_SHOW_USAGE;
    for (size_t i = 0; i < sizeof demos / sizeof *demos; i++) {
        if (strcmp(argv[1], demos[i].name) != 0)
            continue;
        char prog[PATH_MAX];
        if (demos[i].needs &&
            (rl_path_sibling(demos[i].needs, prog, sizeof prog) != RL_OK || access(prog, X_OK) != 0)) {
            fprintf(stderr,
                    "lab: `lab demo %s` runs the reference %s (bin/%s), which only the instructor's kit holds: this "
                    "kit has no bin/%s, so the demo cannot run here. `lab show %s` gives what it measured; "
                    "`lab demo balance` runs in every kit.\n",
                    demos[i].name, demos[i].needs, demos[i].needs, demos[i].needs, demos[i].name);
            return LAB_EXIT_USAGE;
        }
        if (argc == 4) {
            if (strcmp(demos[i].name, "overload") != 0 && strcmp(demos[i].name, "coverage") != 0) {
                fprintf(stderr, "lab: only `lab demo overload` and `lab demo coverage` draw pictures (--svg FILE)\n");
                return LAB_EXIT_USAGE;
            }
            setenv(LAB_DEMO_SVG_ENV, argv[3], 1);
        }
        return demos[i].run();
    }
    fprintf(stderr, "lab: no demo named '%s'; demos:", argv[1]);
    for (size_t i = 0; i < sizeof demos / sizeof *demos; i++)
        fprintf(stderr, " %s", demos[i].name);
    fprintf(stderr, "\n");
    return LAB_EXIT_USAGE;
}

static const command commands[] = {
    {"list", "lab list                       the exercises", cmd_list},
    {"show", "lab show EXERCISE              an exercise's handout", cmd_show},
    {"demo",
     "lab demo deadline|cancel|shutdown|flow|balance|overload|coverage [--svg FILE]  the reference next to its "
     "classic mistakes (the instructor's kit; balance in every kit; overload's and coverage's plots go to FILE, "
     "else build/demos/)",
     cmd_demo},
    {"init", "lab init EXERCISE [--lang python|node|c|go] [--student ID] [DIR]  a starter folder", lab_init_main},
    {"stubs", "lab stubs python|node|c|go DIR make a starter's generated code (or packages) again", lab_stubs_main},
    {"check", "lab check [EXERCISE] [--student ID] [GRADER OPTIONS]  grade the starter folder you are in",
     lab_check_main},
    {"compare-memory",
     "lab compare-memory [--submission CMD] [--svg FILE] [--seconds S]  producer RSS "
     "under a stalled reader",
     lab_compare_memory_main},
    {"compare-balance",
     "lab compare-balance [--svg FILE] [--case N] [--connections]  calls per backend behind an "
     "L4 balancer, as a plot; every connection's life",
     lab_compare_balance_main},
};

static void usage(FILE *f)
{
    fprintf(f, "usage:\n");
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(f, "  %s\n", commands[i].usage);
    fprintf(f, "exit status: 0 done (lab check: every scenario passed); 1 a program, tool or file it needed failed\n"
               "(lab check: a scenario did not pass); 2 a usage error (lab check: not a starter folder, or the\n"
               "grader could not grade)\n");
}

int main(int argc, char **argv)
{
    rl_log_init("lab");
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? LAB_EXIT_USAGE : LAB_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) {
        if (strcmp(argv[1], commands[i].name) == 0) {
            int rc = commands[i].run(argc - 1, argv + 1);
            if (rc == LAB_EXIT_SHOW_USAGE) {
                fprintf(stderr, "usage: %s\n", commands[i].usage);
                return LAB_EXIT_USAGE;
            }
            return rc;
        }
    }
    fprintf(stderr, "lab: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return LAB_EXIT_USAGE;
}
