/* handout: the student handouts in lab/exercises/NAME.md, listed by their
 * first heading and printed whole. A passage that names what only the
 * instructor's kit holds (a reference program, a known submission, a bench)
 * sits between LAB_INSTRUCTOR_OPEN and LAB_INSTRUCTOR_CLOSE, each alone on
 * its line for a block or inline for a phrase: the student kit drops it
 * (scripts/student-kit.sh), and `lab show` prints it without the marks. */
#ifndef LAB_HANDOUT_H
#define LAB_HANDOUT_H

#define LAB_INSTRUCTOR_OPEN  "<!--instructor-->"
#define LAB_INSTRUCTOR_CLOSE "<!--/instructor-->"

/* `lab list`. Returns LAB_EXIT_OK, or LAB_EXIT_FAILED when the folder is
 * missing (status.h). */
int lab_handout_list(void);

/* `lab show NAME`. Returns LAB_EXIT_OK, LAB_EXIT_FAILED when the folder is
 * missing, or LAB_EXIT_USAGE for an
 * unknown NAME (after listing the known ones). */
int lab_handout_show(const char *name);

#endif
