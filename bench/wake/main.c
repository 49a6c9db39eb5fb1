/* bench-wake: what waking another loop costs (docs/grpc-facts.md, "Waking
 * another loop"). Two rl_loops on two threads play ping-pong with
 * rl_loop_wake (an empty batch on a lame channel's call bound to the other
 * loop's queue) for N round trips; then one loop polls with a 1 ms timer,
 * as the relay's gate did before, for the same wall time. Prints the
 * one-way latency (half a round trip) and the CPU per wake-up, and the CPU
 * per second of polling.
 *
 * usage: bench-wake [--round-trips N]   (default 20000, at most 10000000)
 * Exit status 0 when both were measured, 1 when gRPC would not create the
 * wake-up calls, 2 for a bad command line. */
#include "rl_deadline.h"
#include "rl_loop.h"

#include <grpc/grpc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

/* bench-wake's exit statuses. */
enum {
    BENCH_EXIT_CLEAN = 0,  /* both figures measured */
    BENCH_EXIT_FAILED = 1, /* gRPC would not create the wake-up calls */
    BENCH_EXIT_USAGE = 2,  /* the command line was wrong */
};

typedef struct player {
    rl_loop loop;
    struct player *other;
    long left; /* wake-ups still to send; the pinger's counts round trips */
    atomic_bool done;
} player;

static void on_woken(rl_loop *loop, void *user)
{
    (void)loop;
    player *p = user;
    if (p->left-- > 0)
        rl_loop_wake(&p->other->loop);
    else
        atomic_store(&p->done, true);
}

static void *run(void *arg)
{
    player *p = arg;
    while (!atomic_load(&p->done))
        rl_loop_run_until(&p->loop, rl_now_ns() + 100 * RL_NS_PER_MS);
    return NULL;
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
           ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6;
}

typedef struct poller {
    rl_timer t;
    long fired;
} poller;

static void poll_fired(rl_timer *t)
{
    RL_CONTAINER_OF(t, poller, t)->fired++;
}

int main(int argc, char **argv)
{
    long n = 20000;
    if (argc == 3 && strcmp(argv[1], "--round-trips") == 0) {
        char *end;
        n = strtol(argv[2], &end, 10);
        if (*end || n < 1 || n > 10000000) {
            fprintf(stderr, "bench-wake: --round-trips wants 1 to 10000000, not '%s'\n", argv[2]);
            return BENCH_EXIT_USAGE;
        }
    } else if (argc != 1) {
        fprintf(stderr, "usage: bench-wake [--round-trips N]\n");
        return BENCH_EXIT_USAGE;
    }
    grpc_init();
    player a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    rl_loop_init(&a.loop);
    rl_loop_init(&b.loop);
    a.other = &b;
    b.other = &a;
    a.left = n; /* a wakes b n times, b answers each */
    b.left = n; /* b answers each; a ends at the n-th answer */
    if (rl_loop_wake_init(&a.loop, on_woken, &a) || rl_loop_wake_init(&b.loop, on_woken, &b)) {
        fprintf(stderr, "bench-wake: gRPC would not create the wake-up calls\n");
        return BENCH_EXIT_FAILED;
    }
    pthread_t ta, tb;
    double c0 = cpu_s();
    int64_t t0 = rl_now_ns();
    pthread_create(&tb, NULL, run, &b);
    pthread_create(&ta, NULL, run, &a);
    rl_loop_wake(&a.loop); /* serve */
    pthread_join(ta, NULL);
    atomic_store(&b.done, true);
    pthread_join(tb, NULL);
    double wall = (double)(rl_now_ns() - t0) / 1e9, cpu = cpu_s() - c0;
    long wakes = 2 * n + 1;
    printf("wake-ups: %ld round trips in %.3f s: one way %.1f us on average; CPU %.2f us per wake-up "
           "(both threads, %.2f cores)\n",
           n, wall, wall / (double)wakes * 1e6, cpu / (double)wakes * 1e6, cpu / wall);
    fflush(stdout);

    /* The old way: a loop with a waiter polled every millisecond. */
    poller p = {.fired = 0};
    double pc0 = cpu_s();
    int64_t until = rl_now_ns() + (int64_t)(wall * 1e9 > 1e9 ? wall * 1e9 : 1e9);
    rl_timer_start(&a.loop, &p.t, rl_now_ns() + RL_NS_PER_MS, poll_fired);
    while (rl_now_ns() < until) {
        rl_loop_run_until(&a.loop, rl_now_ns() + RL_NS_PER_MS);
        if (!rl_timer_armed(&p.t))
            rl_timer_start(&a.loop, &p.t, rl_now_ns() + RL_NS_PER_MS, poll_fired);
    }
    rl_timer_stop(&a.loop, &p.t);
    double pcpu = cpu_s() - pc0;
    double secs = wall > 1.0 ? wall : 1.0;
    printf("1 ms polling: %ld polls in %.3f s: CPU %.2f us per poll, %.3f cores while a call waits\n", p.fired, secs,
           pcpu / (double)(p.fired ? p.fired : 1) * 1e6, pcpu / secs);

    grpc_completion_queue_shutdown(a.loop.cq);
    grpc_completion_queue_shutdown(b.loop.cq);
    rl_loop_run(&a.loop);
    rl_loop_run(&b.loop);
    rl_loop_fini(&a.loop);
    rl_loop_fini(&b.loop);
    grpc_shutdown();
    return BENCH_EXIT_CLEAN;
}
