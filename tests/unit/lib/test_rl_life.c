/* test_rl_life: the release runs once, only after the close and the last
 * reference; a batch gRPC took holds a reference until its completion, a
 * refused one holds none. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "rl_deadline.h"
#include "rl_life.h"
#include "rl_loop.h"

#include <grpc/grpc.h>
#include <string.h>

typedef struct owner {
    rl_life life;
    int released;       /* times release ran */
    unsigned refs_then; /* the count when it ran */
} owner;

static void on_release(rl_life *life)
{
    owner *o = RL_CONTAINER_OF(life, owner, life);
    o->released++;
    o->refs_then = life->refs;
}

static void no_release_before_the_close(void **state)
{
    (void)state;
    owner o = {0};
    rl_life_init(&o.life, on_release);
    rl_life_ref(&o.life);
    rl_life_ref(&o.life);
    rl_life_unref(&o.life);
    rl_life_unref(&o.life);
    assert_int_equal(o.released, 0);
    assert_false(rl_life_released(&o.life));
    rl_life_close(&o.life);
    assert_int_equal(o.released, 1);
    assert_true(rl_life_released(&o.life));
    assert_int_equal(o.refs_then, 0);
}

static void release_waits_for_the_last_reference(void **state)
{
    (void)state;
    owner o = {0};
    rl_life_init(&o.life, on_release);
    rl_life_ref(&o.life);
    rl_life_ref(&o.life);
    rl_life_close(&o.life);
    assert_true(o.life.closing);
    rl_life_unref(&o.life);
    assert_int_equal(o.released, 0);
    rl_life_unref(&o.life);
    assert_int_equal(o.released, 1);
}

static void close_with_nothing_held_releases_at_once_and_once(void **state)
{
    (void)state;
    owner o = {0};
    rl_life_init(&o.life, on_release);
    rl_life_close(&o.life);
    assert_int_equal(o.released, 1);
    rl_life_close(&o.life);
    assert_int_equal(o.released, 1);
}

static void a_reference_taken_while_closing_holds_the_release(void **state)
{
    (void)state;
    owner o = {0};
    rl_life_init(&o.life, on_release);
    rl_life_ref(&o.life);
    rl_life_close(&o.life);
    /* A completion that starts the next batch before it drops its own. */
    rl_life_ref(&o.life);
    rl_life_unref(&o.life);
    assert_int_equal(o.released, 0);
    rl_life_unref(&o.life);
    assert_int_equal(o.released, 1);
}

static void without_a_callback_released_still_says_so(void **state)
{
    (void)state;
    rl_life life;
    rl_life_init(&life, NULL);
    rl_life_ref(&life);
    rl_life_close(&life);
    assert_false(rl_life_released(&life));
    rl_life_unref(&life);
    assert_true(rl_life_released(&life));
}

/* A client call on a lame channel: its batches complete at once, with a
 * failed status, and it never connects anywhere. */
typedef struct lame_call {
    owner o;
    rl_tag tag;
    int completions;
    grpc_metadata_array md;
    grpc_status_code status;
    grpc_slice details;
} lame_call;

static void lame_done(rl_tag *tag, bool ok)
{
    (void)ok;
    lame_call *c = RL_CONTAINER_OF(tag, lame_call, tag);
    c->completions++;
    rl_life_unref(&c->o.life);
}

static void a_batch_holds_a_reference_until_it_completes(void **state)
{
    (void)state;
    grpc_init();
    rl_loop loop;
    rl_loop_init(&loop);
    grpc_channel *ch = grpc_lame_client_channel_create("127.0.0.1:1", GRPC_STATUS_UNAVAILABLE, "lame");
    grpc_call *call =
        grpc_channel_create_call(ch, NULL, GRPC_PROPAGATE_DEFAULTS, loop.cq, grpc_slice_from_static_string("/x.Y/Z"),
                                 NULL, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
    assert_non_null(call);
    lame_call c;
    memset(&c, 0, sizeof c);
    rl_life_init(&c.o.life, on_release);
    c.tag.done = lame_done;
    grpc_metadata_array_init(&c.md);
    c.details = grpc_empty_slice();

    /* A server-side op on a client call: refused, nothing held. */
    grpc_op op;
    memset(&op, 0, sizeof op);
    int cancelled = 0;
    op.op = GRPC_OP_RECV_CLOSE_ON_SERVER;
    op.data.recv_close_on_server.cancelled = &cancelled;
    assert_int_not_equal(rl_life_start_batch(&c.o.life, call, &op, 1, &c.tag), GRPC_CALL_OK);
    assert_int_equal(c.o.life.refs, 0);

    grpc_op ops[2];
    memset(ops, 0, sizeof ops);
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[1].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    ops[1].data.recv_status_on_client.trailing_metadata = &c.md;
    ops[1].data.recv_status_on_client.status = &c.status;
    ops[1].data.recv_status_on_client.status_details = &c.details;
    assert_int_equal(rl_life_start_batch(&c.o.life, call, ops, 2, &c.tag), GRPC_CALL_OK);
    assert_int_equal(c.o.life.refs, 1);
    rl_life_close(&c.o.life);
    assert_int_equal(c.o.released, 0);

    int64_t until = rl_now_ns() + 5 * RL_NS_PER_SEC;
    while (!c.o.released && rl_now_ns() < until)
        rl_loop_run_until(&loop, rl_now_ns() + 10 * RL_NS_PER_MS);
    assert_int_equal(c.completions, 1);
    assert_int_equal(c.o.released, 1);
    assert_int_equal(c.status, GRPC_STATUS_UNAVAILABLE);

    grpc_call_unref(call);
    grpc_metadata_array_destroy(&c.md);
    grpc_slice_unref(c.details);
    grpc_channel_destroy(ch);
    grpc_completion_queue_shutdown(loop.cq);
    rl_loop_run(&loop);
    rl_loop_fini(&loop);
    grpc_shutdown();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_release_before_the_close),
        cmocka_unit_test(release_waits_for_the_last_reference),
        cmocka_unit_test(close_with_nothing_held_releases_at_once_and_once),
        cmocka_unit_test(a_reference_taken_while_closing_holds_the_release),
        cmocka_unit_test(without_a_callback_released_still_says_so),
        cmocka_unit_test(a_batch_holds_a_reference_until_it_completes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
