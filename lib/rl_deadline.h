/* rl_deadline: time and deadline arithmetic. Every instant is CLOCK_MONOTONIC
 * in nanoseconds (int64), which is also gRPC's GPR_CLOCK_MONOTONIC, so
 * processes on one machine can compare what they saw. "No deadline" is kept
 * distinct from every finite one: converting it naively would give the huge
 * finite 2147483647 ms that the deadline lab teaches students to avoid. */
#ifndef RL_DEADLINE_H
#define RL_DEADLINE_H

#include <grpc/support/time.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#define RL_NS_PER_MS  INT64_C(1000000)
#define RL_NS_PER_SEC INT64_C(1000000000)

/* The current CLOCK_MONOTONIC instant in nanoseconds. */
int64_t rl_now_ns(void);

/* Sleeps |ms| milliseconds (none when |ms| <= 0), going back to sleep for
 * the rest after a signal handler ran, unless |*stop| (may be NULL) became
 * non-zero meanwhile: a handler that asks the program to stop is obeyed at
 * once instead of after the sleep. */
void rl_sleep_ms(int64_t ms, const volatile sig_atomic_t *stop);

/* True when |d| is gRPC's "no deadline" (infinite future on any clock). */
bool rl_deadline_is_infinite(gpr_timespec d);

/* Converts a monotonic gpr_timespec to nanoseconds. Returns RL_EINVAL for
 * an infinite or non-monotonic |d|; *out_ns is set only on success. */
int rl_deadline_to_ns(gpr_timespec d, int64_t *out_ns);

/* The gpr_timespec for the monotonic instant |ns|. */
gpr_timespec rl_ns_to_deadline(int64_t ns);

/* The deadline |ms| milliseconds after now; |ms| < 0 means no deadline. */
gpr_timespec rl_deadline_after_ms(int64_t ms);

/* Remaining milliseconds of |d| at instant |now_ns|, rounded down and never
 * negative. Returns 0 and sets *out_ms, or RL_EINVAL when |d| is infinite
 * (the caller must then forward no deadline at all). */
int rl_deadline_remaining_ms(gpr_timespec d, int64_t now_ns, int64_t *out_ms);

/* The largest amount by which gRPC's grpc-timeout encoding may round a
 * timeout of |ms| up on the wire: exact below 1 s, 10 ms steps below 10 s,
 * 100 ms steps below 100 s, 1 s steps above (timeout_encoding.cc). */
int64_t rl_wire_rounding_ms(int64_t ms);

#endif
