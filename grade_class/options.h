/* options: grade-class's command line, read into a batch (batch.h), and
 * what it names made ready: the class folder and the results folder
 * resolved (b->class_dir: with --student, its parent), bin/grader and its rubric found, the exercises read from
 * `grader list` and narrowed to --exercises. Every refusal is one line on
 * stderr that says what to give instead. */
#ifndef GC_OPTIONS_H
#define GC_OPTIONS_H

#include "batch.h"

#include <limits.h>
#include <stdio.h>

/* The options that are not the batch's: strings borrowed from argv. */
typedef struct gc_options {
    const char *out, *exercises, *student_dir, *results, *roster, *identity;
    const char *identity_from;  /* --identity-from: where --identity came from (sid, email), or NULL */
    char identity_note[320];    /* --identity-note, printable: why a fallback was taken, or "" */
    const char *class_arg;      /* CLASS_DIR, or NULL with --student */
    const char *slurm_task;     /* --slurm-task NAMES (slurm.h): this is an array task of --slurm */
    int argc;                   /* the command line as given (getopt only reorders it): */
    char **argv;                /* an array task runs it again (slurm.h) */
    char one_name[GC_NAME_MAX]; /* --student: the student, its folder's basename */
} gc_options;

/* The usage text, on |f|. */
void gc_options_usage(FILE *f);

/* Reads |argv| into |b| (defaults first) and |o|. Returns 0 when the
 * command asks for a batch; otherwise RL_EINVAL, with |*code| the exit
 * status: GC_EXIT_OK after --help, GC_EXIT_USAGE after a message on
 * stderr. */
int gc_options_read(int argc, char **argv, gc_batch *b, gc_options *o, int *code);

/* Makes what |o| names ready in |b|: b->class_dir the class folder's
 * real path (with --student: its parent, and o->one_name the student), --out made, bin/grader and the rubric
 * found, the exercises listed and narrowed to o->exercises, --world
 * checked. Returns 0, or RL_EINVAL with a message on stderr and |*code|
 * GC_EXIT_USAGE or GC_EXIT_SETUP. */
int gc_options_prepare(gc_batch *b, gc_options *o, int *code);

#endif
