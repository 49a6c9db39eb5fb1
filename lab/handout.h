/* handout: the student handouts in lab/exercises/NAME.md, listed by their
 * first heading and printed whole. */
#ifndef RL_LAB_HANDOUT_H
#define RL_LAB_HANDOUT_H

/* `lab list`. Returns an exit code: 0, or 1 when the folder is missing. */
int rl_handout_list(void);

/* `lab show NAME`. Returns 0, 1 when the folder is missing, or 2 for an
 * unknown NAME (after listing the known ones). */
int rl_handout_show(const char *name);

#endif
