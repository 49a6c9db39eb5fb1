/* compare_memory: `lab compare-memory` and `lab demo flow`. Both run the
 * reference streamer paced and --unbounded (and, for compare-memory, a
 * student's producer) through the flow exercise's stall: ask for 3000 x 64
 * KiB, read one chunk, stop reading, and sample the producer's RSS. */
#ifndef LAB_COMPARE_MEMORY_H
#define LAB_COMPARE_MEMORY_H

/* `lab compare-memory [--submission CMD] [--svg FILE] [--seconds S]
 * [--count N] [--size BYTES]`; |argv|[0] is the command name. Prints a
 * table (producer, baseline RSS, peak RSS, growth) and, with --svg, writes
 * the RSS-over-time plot. Returns LAB_EXIT_OK when every producer ran, LAB_EXIT_FAILED when one
 * could not be started or read, LAB_EXIT_USAGE for a usage error (message printed). */
int lab_compare_memory_main(int argc, char **argv);

/* `lab demo flow`: the same stall for the two reference producers, with the
 * table and an RSS-over-time chart drawn in the terminal. Returns LAB_EXIT_OK, or LAB_EXIT_FAILED
 * when a producer could not be started. */
int lab_flow_demo(void);

#endif
