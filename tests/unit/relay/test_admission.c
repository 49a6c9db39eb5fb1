/* test_admission: the relay's admission control (relay/admission.c): the
 * in-flight bound, the queue bound, refusal by deadline, FIFO grants,
 * eviction when the service time grows, leaving the queue, the unbounded
 * mistake, and the hand-over of a slot to a call queued on another loop.
 * One loop and one thread, as a relay loop runs it, plus a second loop on
 * a thread of its own for the hand-over. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "admission.h"
#include "rl_deadline.h"
#include "rl_loop.h"

#include <grpc/grpc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#define MS RL_NS_PER_MS
#define NW 16

static rl_loop loop; /* one for the file: the gate keeps per-thread state */

typedef struct call {
    relay_waiter w;
    int granted, evicted, closing;
} call;

static call calls[NW];
static int order[NW], norder;

static void on_grant(relay_waiter *w)
{
    call *c = RL_CONTAINER_OF(w, call, w);
    if (w->evicted) {
        c->evicted++;
        c->closing += w->closing;
    } else {
        c->granted++;
        order[norder++] = (int)(c - calls);
    }
}

static int group_setup(void **state)
{
    (void)state;
    grpc_init();
    return rl_loop_init(&loop);
}

static int group_teardown(void **state)
{
    (void)state;
    rl_loop_fini(&loop);
    grpc_shutdown();
    return 0;
}

static int setup(void **state)
{
    (void)state;
    memset(calls, 0, sizeof calls);
    norder = 0;
    return 0;
}

static relay_admit admit(relay_gate *g, int i, int64_t left_ms, char *why, size_t len)
{
    int64_t deadline = left_ms < 0 ? INT64_MAX : rl_now_ns() + left_ms * MS;
    return relay_gate_admit(g, &loop, &calls[i].w, on_grant, deadline, why, len);
}

static void bounds_in_flight_then_queue(void **state)
{
    (void)state;
    relay_gate g;
    relay_gate_init(&g, 2, 2, false, false);
    char why[256];
    assert_int_equal(admit(&g, 0, -1, why, sizeof why), RELAY_ADMIT_RUN);
    assert_int_equal(admit(&g, 1, -1, why, sizeof why), RELAY_ADMIT_RUN);
    assert_int_equal(admit(&g, 2, -1, why, sizeof why), RELAY_ADMIT_QUEUED);
    assert_int_equal(admit(&g, 3, -1, why, sizeof why), RELAY_ADMIT_QUEUED);
    assert_int_equal(admit(&g, 4, -1, why, sizeof why), RELAY_ADMIT_REFUSED);
    assert_non_null(strstr(why, "queue is full"));
    /* A slot freed goes to the head of the queue, in arrival order. */
    relay_gate_done(&g, &loop, &calls[0].w, -1, RELAY_RTT_NONE);
    relay_gate_done(&g, &loop, &calls[1].w, -1, RELAY_RTT_NONE);
    assert_int_equal(norder, 2);
    assert_int_equal(order[0], 2);
    assert_int_equal(order[1], 3);
    relay_gate_done(&g, &loop, &calls[2].w, -1, RELAY_RTT_NONE);
    relay_gate_done(&g, &loop, &calls[3].w, -1, RELAY_RTT_NONE);
    assert_int_equal(g.inflight, 0);
    relay_gate_fini(&g);
}

static void refuses_a_call_whose_time_cannot_cover_the_wait(void **state)
{
    (void)state;
    relay_gate g;
    relay_gate_init(&g, 1, 100, false, false);
    char why[256];
    assert_int_equal(admit(&g, 0, -1, why, sizeof why), RELAY_ADMIT_RUN);
    relay_gate_done(&g, &loop, &calls[0].w, 800, RELAY_RTT_NONE); /* a service sample: 800 ms */
    assert_int_equal(relay_gate_service_ms(&g), 800);
    assert_int_equal(admit(&g, 1, -1, why, sizeof why), RELAY_ADMIT_RUN);
    /* Behind one call of 800 ms, plus 800 ms of its own and the margin:
     * 500 ms cannot do, 5 s can. */
    assert_int_equal(admit(&g, 2, 500, why, sizeof why), RELAY_ADMIT_REFUSED);
    assert_non_null(strstr(why, "cannot cover the expected wait"));
    assert_int_equal(admit(&g, 3, 5000, why, sizeof why), RELAY_ADMIT_QUEUED);
    relay_gate_done(&g, &loop, &calls[1].w, 800, RELAY_RTT_NONE);
    assert_int_equal(calls[3].granted, 1);
    relay_gate_done(&g, &loop, &calls[3].w, -1, RELAY_RTT_NONE);
    relay_gate_fini(&g);
}

static void evicts_queued_calls_when_the_service_grows(void **state)
{
    (void)state;
    relay_gate g;
    relay_gate_init(&g, 1, 100, false, false);
    char why[256];
    assert_int_equal(admit(&g, 0, -1, why, sizeof why), RELAY_ADMIT_RUN);
    /* No sample yet: a call with 1.5 s left queues. */
    assert_int_equal(admit(&g, 1, 1500, why, sizeof why), RELAY_ADMIT_QUEUED);
    assert_int_equal(admit(&g, 2, 60000, why, sizeof why), RELAY_ADMIT_QUEUED);
    /* The call in flight took 2 s: the average jumps to it at once, the
     * head gets the slot, and call 2 (behind nobody now) still fits. */
    relay_gate_done(&g, &loop, &calls[0].w, 2000, RELAY_RTT_NONE);
    assert_int_equal(relay_gate_service_ms(&g) >= 2000, true);
    assert_int_equal(calls[1].granted, 1);
    assert_int_equal(calls[2].granted + calls[2].evicted, 0);
    /* Call 1 holds the slot; a call with 3 s left behind it cannot make it
     * (2 s wait + 3 s needed), one with 60 s can. */
    assert_int_equal(admit(&g, 3, 3000, why, sizeof why), RELAY_ADMIT_REFUSED);
    /* Now the service turns out to be 20 s: call 2 (60 s left) can still
     * wait; but a queued call with 30 s left behind it cannot. */
    assert_int_equal(admit(&g, 4, 30000, why, sizeof why), RELAY_ADMIT_QUEUED);
    relay_gate_done(&g, &loop, &calls[1].w, 20000, RELAY_RTT_NONE);
    assert_int_equal(calls[2].granted, 1);
    assert_int_equal(calls[4].evicted, 1);
    assert_int_equal(g.queued, 0);
    relay_gate_done(&g, &loop, &calls[2].w, -1, RELAY_RTT_NONE);
    relay_gate_fini(&g);
}

static void service_average_rises_at_once_and_falls_slowly(void **state)
{
    (void)state;
    relay_gate g;
    relay_gate_init(&g, 4, 4, false, false);
    char why[256];
    assert_int_equal(relay_gate_service_ms(&g), 0);
    assert_int_equal(admit(&g, 0, -1, why, sizeof why), RELAY_ADMIT_RUN);
    relay_gate_done(&g, &loop, &calls[0].w, 100, RELAY_RTT_NONE);
    assert_int_equal(relay_gate_service_ms(&g), 100);
    assert_int_equal(admit(&g, 0, -1, why, sizeof why), RELAY_ADMIT_RUN);
    relay_gate_done(&g, &loop, &calls[0].w, 1000, RELAY_RTT_NONE);
    assert_int_equal(relay_gate_service_ms(&g), 1000);
    assert_int_equal(admit(&g, 0, -1, why, sizeof why), RELAY_ADMIT_RUN);
    relay_gate_done(&g, &loop, &calls[0].w, 0, RELAY_RTT_NONE);
    assert_int_equal(relay_gate_service_ms(&g), 800); /* a fifth of the way down */
    relay_gate_fini(&g);
}

static void a_call_that_leaves_is_never_granted(void **state)
{
    (void)state;
    relay_gate g;
    relay_gate_init(&g, 1, 4, false, false);
    char why[256];
    assert_int_equal(admit(&g, 0, -1, why, sizeof why), RELAY_ADMIT_RUN);
    assert_int_equal(admit(&g, 1, -1, why, sizeof why), RELAY_ADMIT_QUEUED);
    assert_int_equal(admit(&g, 2, -1, why, sizeof why), RELAY_ADMIT_QUEUED);
    assert_true(relay_gate_leave(&g, &calls[1].w));
    assert_false(relay_gate_leave(&g, &calls[1].w));
    relay_gate_done(&g, &loop, &calls[0].w, -1, RELAY_RTT_NONE);
    assert_int_equal(calls[1].granted, 0);
    assert_int_equal(calls[2].granted, 1);
    /* Granted already: leaving is too late, the slot is the call's. */
    assert_false(relay_gate_leave(&g, &calls[2].w));
    relay_gate_done(&g, &loop, &calls[2].w, -1, RELAY_RTT_NONE);
    assert_int_equal(g.inflight, 0);
    relay_gate_fini(&g);
}

static void closing_evicts_the_queue_and_refuses_later_calls(void **state)
{
    (void)state;
    relay_gate g;
    relay_gate_init(&g, 1, 8, false, false);
    char why[256];
    assert_int_equal(admit(&g, 0, -1, why, sizeof why), RELAY_ADMIT_RUN);
    assert_int_equal(admit(&g, 1, 60000, why, sizeof why), RELAY_ADMIT_QUEUED);
    assert_int_equal(admit(&g, 2, -1, why, sizeof why), RELAY_ADMIT_QUEUED);
    relay_gate_close(&g);
    assert_int_equal(g.queued, 0);
    assert_int_equal(admit(&g, 3, -1, why, sizeof why), RELAY_ADMIT_CLOSED);
    assert_non_null(strstr(why, "shutting down"));
    /* The loop finds the evicted calls on its next turn (here: the slot
     * given back); the call in flight keeps its slot until then. */
    relay_gate_done(&g, &loop, &calls[0].w, 100, RELAY_RTT_NONE);
    for (int i = 1; i < 3; i++) {
        assert_int_equal(calls[i].evicted, 1);
        assert_int_equal(calls[i].closing, 1);
        assert_int_equal(calls[i].granted, 0);
    }
    assert_int_equal(g.inflight, 0);
    relay_gate_fini(&g);
}

static void unbounded_gate_queues_everything_and_evicts_nothing(void **state)
{
    (void)state;
    relay_gate g;
    relay_gate_init(&g, 1, 2, true, false);
    char why[256];
    assert_int_equal(admit(&g, 0, -1, why, sizeof why), RELAY_ADMIT_RUN);
    relay_gate_done(&g, &loop, &calls[0].w, 5000, RELAY_RTT_NONE);
    assert_int_equal(admit(&g, 0, -1, why, sizeof why), RELAY_ADMIT_RUN);
    /* Past its bound and with 1 ms left behind a 5 s call: queued anyway. */
    for (int i = 1; i < 6; i++)
        assert_int_equal(admit(&g, i, 1, why, sizeof why), RELAY_ADMIT_QUEUED);
    relay_gate_done(&g, &loop, &calls[0].w, 5000, RELAY_RTT_NONE);
    assert_int_equal(calls[1].granted, 1);
    for (int i = 1; i < 6; i++) {
        assert_int_equal(calls[i].evicted, 0);
        relay_gate_done(&g, &loop, &calls[i].w, -1, RELAY_RTT_NONE);
    }
    assert_int_equal(norder, 5);
    for (int i = 0; i < 5; i++)
        assert_int_equal(order[i], i + 1);
    relay_gate_fini(&g);
}

/* A second relay loop: its thread queues one call and runs its loop until
 * the call got a slot (then gives it back) or 5 s passed. */
typedef struct remote {
    rl_loop loop;
    relay_gate *g;
    relay_waiter w;
    pthread_t thread;
    atomic_int queued; /* 1 once the call is queued */
    relay_admit got;
    size_t timers_queued; /* timers armed on the loop while the call waited */
    int granted;
    bool granted_here; /* on_grant ran on the remote loop's thread */
} remote;

static void remote_grant(relay_waiter *w)
{
    remote *r = RL_CONTAINER_OF(w, remote, w);
    r->granted += !w->evicted;
    r->granted_here = pthread_equal(pthread_self(), r->thread) != 0;
}

static void *remote_run(void *arg)
{
    remote *r = arg;
    char why[256];
    r->got = relay_gate_admit(r->g, &r->loop, &r->w, remote_grant, INT64_MAX, why, sizeof why);
    r->timers_queued = r->loop.nheap;
    atomic_store(&r->queued, 1);
    int64_t give_up = rl_now_ns() + 5 * RL_NS_PER_SEC;
    while (!r->granted && rl_now_ns() < give_up)
        rl_loop_run_until(&r->loop, rl_now_ns() + 10 * MS);
    if (r->granted)
        relay_gate_done(r->g, &r->loop, &r->w, -1, RELAY_RTT_NONE);
    return NULL;
}

static void a_slot_freed_on_one_loop_wakes_a_call_queued_on_another(void **state)
{
    (void)state;
    relay_gate g;
    relay_gate_init(&g, 1, 4, false, false);
    char why[256];
    assert_int_equal(admit(&g, 0, -1, why, sizeof why), RELAY_ADMIT_RUN);
    remote r;
    memset(&r, 0, sizeof r);
    r.g = &g;
    rl_loop_init(&r.loop);
    assert_int_equal(pthread_create(&r.thread, NULL, remote_run, &r), 0);
    int64_t give_up = rl_now_ns() + 5 * RL_NS_PER_SEC;
    while (!atomic_load(&r.queued) && rl_now_ns() < give_up)
        rl_loop_run_until(&loop, rl_now_ns() + MS);
    assert_int_equal(atomic_load(&r.queued), 1);
    /* The slot is freed here; the remote loop is woken, not polled: it has
     * no timer armed while its call waits. */
    relay_gate_done(&g, &loop, &calls[0].w, -1, RELAY_RTT_NONE);
    pthread_join(r.thread, NULL);
    assert_int_equal(r.got, RELAY_ADMIT_QUEUED);
    assert_int_equal(r.timers_queued, 0);
    assert_int_equal(r.granted, 1);
    assert_true(r.granted_here);
    assert_true(r.loop.wakes >= 1);
    assert_int_equal(g.inflight, 0);
    grpc_completion_queue_shutdown(r.loop.cq);
    rl_loop_run(&r.loop);
    rl_loop_fini(&r.loop);
    relay_gate_fini(&g);
}

static void the_adaptive_limit_starts_at_the_fixed_gates(void **state)
{
    (void)state;
    relay_gate g;
    relay_gate_init(&g, RELAY_MAX_INFLIGHT, 4, false, true);
    assert_int_equal(relay_gate_limit(&g), RELAY_MAX_INFLIGHT);
    char why[256];
    for (int i = 0; i < RELAY_MAX_INFLIGHT; i++)
        assert_int_equal(admit(&g, i, -1, why, sizeof why), RELAY_ADMIT_RUN);
    assert_int_equal(admit(&g, RELAY_MAX_INFLIGHT, -1, why, sizeof why), RELAY_ADMIT_QUEUED);
    /* A round trip is a sample of the limit, not only of the average. */
    relay_gate_done(&g, &loop, &calls[0].w, 1, RELAY_RTT_SERVED);
    assert_true(g.lim.min_rtt_ns > 0 && g.lim.ended == 1);
    assert_int_equal(calls[RELAY_MAX_INFLIGHT].granted, 1);
    for (int i = 1; i <= RELAY_MAX_INFLIGHT; i++)
        relay_gate_done(&g, &loop, &calls[i].w, -1, RELAY_RTT_NONE);
    assert_int_equal(g.inflight, 0);
    relay_gate_fini(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(bounds_in_flight_then_queue, setup),
        cmocka_unit_test_setup(refuses_a_call_whose_time_cannot_cover_the_wait, setup),
        cmocka_unit_test_setup(evicts_queued_calls_when_the_service_grows, setup),
        cmocka_unit_test_setup(service_average_rises_at_once_and_falls_slowly, setup),
        cmocka_unit_test_setup(a_call_that_leaves_is_never_granted, setup),
        cmocka_unit_test_setup(closing_evicts_the_queue_and_refuses_later_calls, setup),
        cmocka_unit_test_setup(unbounded_gate_queues_everything_and_evicts_nothing, setup),
        cmocka_unit_test_setup(a_slot_freed_on_one_loop_wakes_a_call_queued_on_another, setup),
        cmocka_unit_test_setup(the_adaptive_limit_starts_at_the_fixed_gates, setup),
    };
    return cmocka_run_group_tests_name("relay admission", tests, group_setup, group_teardown);
}
