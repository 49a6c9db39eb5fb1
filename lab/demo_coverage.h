/* demo_coverage: `lab demo coverage` runs the reference agent (bin/agent)
 * and then the incident (`bin/agent --mistake total`) in the coverage lab's
 * world (lib/worlds/rl_tworld.h: three tunnel servers behind the L7 proxy), each on
 * the same skewed placement: the first streams spread evenly, then 80 % of
 * new streams on the busy server, as the grader's burst-skewed scenario.
 * It prints side by side how long the burst's calls waited at the busy
 * server and what each agent held there and elsewhere, and writes one SVG
 * plot per agent of streams per server, calls in flight and calls queued at
 * the busy server, and the oldest queued call's wait, over time. */
#ifndef LAB_DEMO_COVERAGE_H
#define LAB_DEMO_COVERAGE_H

/* The plots go to BASE-reference.svg and BASE-total.svg, BASE being
 * $RELAYLAB_DEMO_SVG (`--svg FILE`) without its ".svg", else this under the
 * kit's build/demos/ (lab_demo_picture_path), never the current folder. */
#define LAB_DEMO_COVERAGE_SVG "coverage"

/* Returns LAB_EXIT_OK when the demo ran, LAB_EXIT_FAILED when a program could not be started or did
 * not answer (the message says which). */
int lab_demo_coverage(void);

#endif
