/* demo: `lab demo deadline|cancel|shutdown` runs the reference relay and its
 * --mistake variants side by side against one baseline, makes the same calls
 * through each, and prints what the client and the baseline saw, so an
 * instructor can show a class the rule and the classic ways to break it.
 * The shutdown demo sends each relay SIGTERM with calls in flight and adds
 * how, and how fast, the process ended. */
#ifndef LAB_DEMO_H
#define LAB_DEMO_H

/* Each returns a process exit code: 0 when the demo ran, 1 when a program
 * could not be started or did not answer (the message says which). */
int lab_demo_deadline(void);
int lab_demo_cancel(void);
int lab_demo_shutdown(void);

#endif
