/* Unit tests for rl_loop: the timer heap fires in due order, stopped timers
 * never fire, re-arming moves a timer, completion-queue tags dispatch to
 * their done callbacks, and another thread can wake the loop. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "rl_deadline.h"
#include "rl_loop.h"

#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <pthread.h>
#include <string.h>

#define NT 64

typedef struct probe {
    rl_timer timer;
    int id;
} probe;

static int fired[NT];
static size_t nfired;

static void record_fire(rl_timer *t)
{
    fired[nfired++] = RL_CONTAINER_OF(t, probe, timer)->id;
}

static int setup(void **state)
{
    (void)state;
    grpc_init();
    nfired = 0;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    grpc_shutdown();
    return 0;
}

static void drain(rl_loop *loop)
{
    grpc_completion_queue_shutdown(loop->cq);
    rl_loop_run(loop);
    rl_loop_fini(loop);
}

static void timers_fire_in_due_order(void **state)
{
    (void)state;
    rl_loop loop;
    rl_loop_init(&loop);
    probe p[NT];
    memset(p, 0, sizeof p);
    int64_t base = rl_now_ns();
    /* Due instants in a scrambled order, all in the past so one pass fires all. */
    for (int i = 0; i < NT; i++) {
        p[i].id = (i * 37) % NT;
        rl_timer_start(&loop, &p[i].timer, base - RL_NS_PER_SEC + p[i].id, record_fire);
    }
    assert_true(rl_loop_run_until(&loop, rl_now_ns() + RL_NS_PER_MS));
    assert_int_equal(nfired, NT);
    for (int i = 0; i < NT; i++)
        assert_int_equal(fired[i], i);
    drain(&loop);
}

static void stopped_timer_never_fires(void **state)
{
    (void)state;
    rl_loop loop;
    rl_loop_init(&loop);
    probe a = {.id = 1}, b = {.id = 2}, c = {.id = 3};
    int64_t now = rl_now_ns();
    rl_timer_start(&loop, &a.timer, now + 1 * RL_NS_PER_MS, record_fire);
    rl_timer_start(&loop, &b.timer, now + 2 * RL_NS_PER_MS, record_fire);
    rl_timer_start(&loop, &c.timer, now + 3 * RL_NS_PER_MS, record_fire);
    rl_timer_stop(&loop, &b.timer);
    assert_false(rl_timer_armed(&b.timer));
    rl_timer_stop(&loop, &b.timer); /* stopping twice is a no-op */
    assert_true(rl_loop_run_until(&loop, now + 20 * RL_NS_PER_MS));
    assert_int_equal(nfired, 2);
    assert_int_equal(fired[0], 1);
    assert_int_equal(fired[1], 3);
    drain(&loop);
}

static void rearming_moves_the_timer(void **state)
{
    (void)state;
    rl_loop loop;
    rl_loop_init(&loop);
    probe a = {.id = 1}, b = {.id = 2};
    int64_t now = rl_now_ns();
    rl_timer_start(&loop, &a.timer, now + 1 * RL_NS_PER_MS, record_fire);
    rl_timer_start(&loop, &b.timer, now + 2 * RL_NS_PER_MS, record_fire);
    rl_timer_start(&loop, &a.timer, now + 5 * RL_NS_PER_MS, record_fire);
    assert_true(rl_loop_run_until(&loop, now + 20 * RL_NS_PER_MS));
    assert_int_equal(nfired, 2);
    assert_int_equal(fired[0], 2);
    assert_int_equal(fired[1], 1);
    drain(&loop);
}

static void timer_fires_not_before_due(void **state)
{
    (void)state;
    rl_loop loop;
    rl_loop_init(&loop);
    probe a = {.id = 7};
    int64_t due = rl_now_ns() + 30 * RL_NS_PER_MS;
    rl_timer_start(&loop, &a.timer, due, record_fire);
    /* Bounded: a timer that never fires fails the test instead of hanging it.
     * 10 s is hundreds of times the 30 ms wait, even on a loaded machine. */
    int64_t give_up = due + 10 * RL_NS_PER_SEC;
    while (nfired == 0) {
        assert_true(rl_loop_run_until(&loop, rl_now_ns() + RL_NS_PER_MS));
        if (rl_now_ns() > give_up)
            fail_msg("the timer due in 30 ms had not fired after 10 s");
    }
    assert_true(rl_now_ns() >= due);
    drain(&loop);
}

typedef struct tag_probe {
    rl_tag tag;
    int calls;
    bool ok;
} tag_probe;

static void tag_done(rl_tag *tag, bool ok)
{
    tag_probe *p = RL_CONTAINER_OF(tag, tag_probe, tag);
    p->calls++;
    p->ok = ok;
}

static void tag_dispatches_to_done(void **state)
{
    (void)state;
    rl_loop loop;
    rl_loop_init(&loop);
    /* A call with no server behind it: its batch completes with a status,
     * which is enough to see the tag's done run once on the loop. */
    grpc_channel_credentials *creds = grpc_insecure_credentials_create();
    grpc_channel *ch = grpc_channel_create("127.0.0.1:1", creds, NULL);
    grpc_channel_credentials_release(creds);
    grpc_slice method = grpc_slice_from_static_string("/x.Y/Z");
    grpc_call *call = grpc_channel_create_call(ch, NULL, 0, loop.cq, method, NULL, rl_deadline_after_ms(200), NULL);
    grpc_metadata_array md;
    grpc_metadata_array_init(&md);
    grpc_status_code status;
    grpc_slice details;
    grpc_op ops[3];
    memset(ops, 0, sizeof ops);
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[1].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    ops[2].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    ops[2].data.recv_status_on_client.trailing_metadata = &md;
    ops[2].data.recv_status_on_client.status = &status;
    ops[2].data.recv_status_on_client.status_details = &details;
    tag_probe p = {.tag.done = tag_done};
    assert_int_equal(grpc_call_start_batch(call, ops, 3, &p.tag, NULL), GRPC_CALL_OK);
    int64_t give_up = rl_now_ns() + 5 * RL_NS_PER_SEC;
    while (p.calls == 0 && rl_now_ns() < give_up)
        rl_loop_run_until(&loop, rl_now_ns() + 10 * RL_NS_PER_MS);
    assert_int_equal(p.calls, 1);
    assert_true(p.ok);
    assert_int_not_equal(status, GRPC_STATUS_OK);
    grpc_slice_unref(details);
    grpc_metadata_array_destroy(&md);
    grpc_call_unref(call);
    grpc_channel_destroy(ch);
    drain(&loop);
}

typedef struct wake_probe {
    int woken;
    bool on_loop_thread; /* every |woken| ran on the thread that runs the loop */
    pthread_t loop_thread;
    int wake_again; /* wake-ups to post from inside |woken| */
} wake_probe;

static void on_woken(rl_loop *loop, void *user)
{
    wake_probe *p = user;
    p->woken++;
    p->on_loop_thread &= pthread_equal(pthread_self(), p->loop_thread) != 0;
    if (p->wake_again > 0) {
        p->wake_again--;
        rl_loop_wake(loop);
    }
}

static void *wake_from_thread(void *loop)
{
    rl_loop_wake(loop);
    return NULL;
}

/* Runs |loop| until |p| was woken |n| times; fails after 5 s. */
static void run_until_woken(rl_loop *loop, const wake_probe *p, int n)
{
    int64_t give_up = rl_now_ns() + 5 * RL_NS_PER_SEC;
    while (p->woken < n && rl_now_ns() < give_up)
        rl_loop_run_until(loop, rl_now_ns() + 10 * RL_NS_PER_MS);
    assert_int_equal(p->woken, n);
}

static void another_thread_wakes_the_loop(void **state)
{
    (void)state;
    rl_loop loop;
    rl_loop_init(&loop);
    wake_probe p = {.on_loop_thread = true, .loop_thread = pthread_self()};
    assert_int_equal(rl_loop_wake_init(&loop, on_woken, &p), 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, wake_from_thread, &loop), 0);
    pthread_join(t, NULL);
    /* No timer is armed: the wake-up itself is on the queue. */
    assert_int_equal(loop.nheap, 0);
    run_until_woken(&loop, &p, 1);
    assert_true(p.on_loop_thread);
    assert_int_equal(loop.wakes, 1);
    drain(&loop);
}

static void wake_ups_before_the_loop_runs_coalesce(void **state)
{
    (void)state;
    rl_loop loop;
    rl_loop_init(&loop);
    wake_probe p = {.on_loop_thread = true, .loop_thread = pthread_self()};
    assert_int_equal(rl_loop_wake_init(&loop, on_woken, &p), 0);
    for (int i = 0; i < 3; i++)
        rl_loop_wake(&loop);
    run_until_woken(&loop, &p, 1);
    /* Every wake-up was posted before the loop ran: a second one would be
     * on the queue already. */
    assert_true(rl_loop_run_until(&loop, rl_now_ns() + 20 * RL_NS_PER_MS));
    assert_int_equal(p.woken, 1);
    drain(&loop);
}

static void a_wake_up_while_woken_runs_is_not_lost(void **state)
{
    (void)state;
    rl_loop loop;
    rl_loop_init(&loop);
    wake_probe p = {.on_loop_thread = true, .loop_thread = pthread_self(), .wake_again = 1};
    assert_int_equal(rl_loop_wake_init(&loop, on_woken, &p), 0);
    rl_loop_wake(&loop);
    run_until_woken(&loop, &p, 2);
    assert_true(p.on_loop_thread);
    drain(&loop);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(timers_fire_in_due_order, setup, teardown),
        cmocka_unit_test_setup_teardown(stopped_timer_never_fires, setup, teardown),
        cmocka_unit_test_setup_teardown(rearming_moves_the_timer, setup, teardown),
        cmocka_unit_test_setup_teardown(timer_fires_not_before_due, setup, teardown),
        cmocka_unit_test_setup_teardown(tag_dispatches_to_done, setup, teardown),
        cmocka_unit_test_setup_teardown(another_thread_wakes_the_loop, setup, teardown),
        cmocka_unit_test_setup_teardown(wake_ups_before_the_loop_runs_coalesce, setup, teardown),
        cmocka_unit_test_setup_teardown(a_wake_up_while_woken_runs_is_not_lost, setup, teardown),
    };
    return cmocka_run_group_tests_name("rl_loop", tests, NULL, NULL);
}
