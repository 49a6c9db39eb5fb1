/* The coverage lab's rules and their lab scale, shared by the reference agent
 * (which follows them) and the grader (which judges by them). Real deployments
 * count in minutes; the lab scales each time so that a grading takes seconds:
 * the handout (lab/exercises/coverage.md) prints this table.
 *
 *   rule                                   real        lab
 *   sizing tick                            ~1 s        250 ms
 *   short and idle before "overdue"        30 s        3 s
 *   evacuations, at most one per           30 s        3 s
 *   an evacuated server is left alone for  10 min      6 s
 *   a stream may be pruned once older than 2 min       2 s
 *   ... and unused for                     10 min      6 s
 */
#ifndef RL_COVERAGE_H
#define RL_COVERAGE_H

#define RL_COV_TICK_MS           250  /* the agent sizes its streams once a tick */
#define RL_COV_RESERVE           2    /* covered: streams >= busy + RL_COV_RESERVE, per server */
#define RL_COV_GROW_MIN          8    /* growing opens at least this many in a tick */
#define RL_COV_PAUSE_FACTOR      4    /* growth pauses while idle streams elsewhere >= 4x demand */
#define RL_COV_FILL_PER_TICK     4    /* filling opens at most this many a tick, per server */
#define RL_COV_CAP_PER_SERVER    1200 /* never more streams than this on one server */
#define RL_COV_CAP_TOTAL         4000 /* nor than this in all */
#define RL_COV_OVERDUE_MS        3000 /* short and idle this long: overdue */
#define RL_COV_EVACUATE_EVERY_MS 3000 /* at most one evacuation per this */
#define RL_COV_EVACUATED_MS      6000 /* an evacuated server: recycle idle, no grow or fill */
#define RL_COV_PRUNE_AGE_MS      2000 /* prunable once this old ... */
#define RL_COV_PRUNE_UNUSED_MS   6000 /* ... and unused this long, never below the reserve */

#endif
