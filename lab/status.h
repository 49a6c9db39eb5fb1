/* status: lab's exit statuses. They are a contract: a student repository's
 * workflow (scripts/ci/relaylab.yml) exits with the worst `lab check` gave,
 * and the integration tests read them, so the values below never change.
 * Every command (main.c's table) returns one of them; a header alone,
 * beneath every module of lab/. */
#ifndef LAB_STATUS_H
#define LAB_STATUS_H

/* lab's exit status. `lab check` passes the grader's on (grader/main.h:
 * 0 passed, 1 failed, 2 error), which these values keep. */
typedef enum lab_exit {
    LAB_EXIT_OK = 0,     /* the command did what was asked (or --help); lab check: every scenario passed */
    LAB_EXIT_FAILED = 1, /* it could not: a program it runs did not start or answer, a tool or a kit
                          * folder was missing, a starter or a picture was not written;
                          * lab check: a scenario did not pass */
    LAB_EXIT_USAGE = 2,  /* the command line asks for what lab cannot do (an unknown command,
                          * exercise, demo, language or option) */
    LAB_EXIT_ERROR = 2,  /* lab check: the folder is not a starter, its build failed, or the
                          * grader could not grade (its own 2, or a signal) */
    /* Not a status: a command's arguments did not parse; main prints that
     * command's usage line and exits LAB_EXIT_USAGE. */
    LAB_EXIT_SHOW_USAGE = -1,
} lab_exit;

#endif
