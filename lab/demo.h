/* demo: `lab demo deadline|cancel|shutdown` runs the reference relay and its
 * --mistake variants side by side against one baseline, makes the same calls
 * through each, and prints what the client and the baseline saw, so an
 * instructor can show a class the rule and the classic ways to break it.
 * The shutdown demo sends each relay SIGTERM with calls in flight and adds
 * how, and how fast, the process ended. */
#ifndef LAB_DEMO_H
#define LAB_DEMO_H

#include "rl_proc.h"

#include <grpc/grpc.h>

/* A kit server a demo started: bin/PROG, its address and a channel to it. */
typedef struct lab_server {
    const char *label;
    rl_proc proc;
    char addr[64];
    grpc_channel *ch; /* owned */
} lab_server;

/* Starts bin/|prog| (next to lab) with |args| (NULL-terminated, at most 14)
 * and waits for its "listening on" line; |label| names it in messages.
 * Returns LAB_EXIT_OK, or LAB_EXIT_FAILED with the reason on stderr and
 * nothing left running. */
int lab_server_start(lab_server *s, const char *label, const char *prog, const char *const *args);

/* Closes the channel, stops the server (SIGTERM, then SIGKILL after 2 s)
 * and releases it. Accepts a zeroed struct. */
void lab_server_stop(lab_server *s);

/* Each returns lab's exit status (status.h): LAB_EXIT_OK when the demo ran,
 * LAB_EXIT_FAILED when a program
 * could not be started or did not answer (the message says which). */
/* Where a demo writes its picture NAME (e.g. "overload-goodput.svg"): the
 * file $RELAYLAB_DEMO_SVG names (`lab demo X --svg FILE` sets it), else
 * NAME under the kit's build/demos/ (made when missing), never the current
 * folder unasked. Writes it into |out| (|len| bytes); returns 0, or -1 when
 * no folder could be had (then no picture is drawn). */
int lab_demo_picture_path(const char *name, char *out, size_t len);

int lab_demo_deadline(void);
int lab_demo_cancel(void);
int lab_demo_shutdown(void);

#endif
