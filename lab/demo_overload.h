/* demo_overload: `lab demo overload` runs the reference relay
 * and each overload mistake (unbounded-queue, wait-for-ready) in front of a
 * baseline with a Work capacity, offers each a load from half to ten times
 * that capacity, and prints side by side the goodput, p50/p99, calls
 * refused and calls that failed late, the baseline's wasted work and the
 * relay's peak RSS; then how fast each fails with the backend's port
 * closed. It writes an SVG plot of goodput against offered load
 * (RELAYLAB_DEMO_SVG names the file). */
#ifndef LAB_DEMO_OVERLOAD_H
#define LAB_DEMO_OVERLOAD_H

/* Where the plot goes: `lab demo overload --svg FILE` (which sets
 * $RELAYLAB_DEMO_SVG), else this file under the kit's build/demos/, never
 * the current folder unasked. */
#define LAB_DEMO_OVERLOAD_SVG "overload-goodput.svg"
#define LAB_DEMO_SVG_ENV      "RELAYLAB_DEMO_SVG"

/* Returns LAB_EXIT_OK when the demo ran, LAB_EXIT_FAILED when a program could not be started or
 * did not answer (the message says which). |svg_path| NULL: no plot. */
int lab_demo_overload(const char *svg_path);

/* lab_demo_overload with the path from the environment (the demo table's
 * signature). */
int lab_demo_overload_main(void);

#endif
