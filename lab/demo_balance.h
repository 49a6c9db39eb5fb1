/* demo_balance: `lab demo balance` runs the connection-age lab's world four
 * ways and prints calls per second per backend, window by window: an L4
 * balancer without max_connection_age (a joining backend starves), with it
 * (the backend fills up, no call fails), client-side round_robin over all
 * backends (calls spread evenly), and one busy client among quiet ones
 * (balanced connections are not balanced calls). `lab compare-balance --svg
 * FILE` runs the same and also plots the joining backend's share. */
#ifndef LAB_DEMO_BALANCE_H
#define LAB_DEMO_BALANCE_H

/* Returns LAB_EXIT_OK when the demo ran, LAB_EXIT_FAILED when a program could not be started or did
 * not answer (the message says which). */
int lab_demo_balance(void);

/* `lab compare-balance [--svg FILE] [--case N] [--connections]`: the demo,
 * plus the plot, or case N alone, and every connection's backend, first and
 * last call (how docs/grpc-facts.md measured the age's jitter). argv[0] is
 * the command name. Returns as lab_demo_balance, LAB_EXIT_USAGE for a bad
 * combination, LAB_EXIT_SHOW_USAGE for a usage error. */
int lab_compare_balance_main(int argc, char **argv);

#endif
