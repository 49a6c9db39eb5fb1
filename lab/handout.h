/* handout: the student handouts in lab/exercises/NAME.md, listed by their
 * first heading and printed whole. */
#ifndef LAB_HANDOUT_H
#define LAB_HANDOUT_H

/* `lab list`. Returns an exit code: 0, or 1 when the folder is missing. */
int lab_handout_list(void);

/* `lab show NAME`. Returns 0, 1 when the folder is missing, or 2 for an
 * unknown NAME (after listing the known ones). */
int lab_handout_show(const char *name);

#endif
