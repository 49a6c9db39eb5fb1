/* main: the grader's command line. Its exit status is a contract: scripts,
 * grade-class (grade_class/) and the integration tests read it, so the
 * values below never change. */
#ifndef GR_MAIN_H
#define GR_MAIN_H

/* The grader's exit status. Results (the table, --json, --html) are
 * written whatever it is. */
typedef enum gr_exit_code {
    GR_EXIT_PASSED = 0, /* every scenario passed every run (also: --help, list) */
    GR_EXIT_FAILED = 1, /* some scenario did not pass: the student's verdict */
    GR_EXIT_ERROR = 2,  /* a usage error, a grader error (a scenario the grader could
                         * not judge, a setup that failed) or an interrupted run */
} gr_exit_code;

#endif
