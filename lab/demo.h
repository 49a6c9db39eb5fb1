/* demo: `lab demo deadline|cancel` runs the reference relay and its
 * --mistake variants side by side against one baseline, makes the same calls
 * through each, and prints what the baseline saw, so an instructor can show
 * a class the rule and the classic ways to break it. */
#ifndef RL_LAB_DEMO_H
#define RL_LAB_DEMO_H

/* Each returns a process exit code: 0 when the demo ran, 1 when a program
 * could not be started or did not answer (the message says which). */
int rl_demo_deadline(void);
int rl_demo_cancel(void);

#endif
