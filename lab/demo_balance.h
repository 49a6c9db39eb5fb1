/* demo_balance: `lab demo balance` runs the connection-age lab's world four
 * ways and prints calls per second per backend, window by window: an L4
 * balancer without max_connection_age (a joining backend starves), with it
 * (the backend fills up, no call fails), client-side round_robin over all
 * backends (calls spread evenly), and one busy client among quiet ones
 * (balanced connections are not balanced calls). `lab compare-balance --svg
 * FILE` runs the same and also plots the joining backend's share. */
#ifndef LAB_DEMO_BALANCE_H
#define LAB_DEMO_BALANCE_H

/* Returns 0 when the demo ran, 1 when a program could not be started or did
 * not answer (the message says which). */
int lab_demo_balance(void);

/* `lab compare-balance [--svg FILE] [--case N] [--connections]`: the demo,
 * plus the plot, or case N alone, and every connection's backend, first and
 * last call (how docs/grpc-facts.md measured the age's jitter). argv[0] is
 * the command name. Returns 0, 1 as lab_demo_balance, 2 for a bad
 * combination, -1 for a usage error. */
int lab_compare_balance_main(int argc, char **argv);

#endif
