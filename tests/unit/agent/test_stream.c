/* test_stream: one Tunnel stream's lifetime (agent/stream.c) on a lame
 * channel, whose batches all come back at once with a failed status: |ended|
 * runs once, only after every batch came back, when the server ended the
 * stream; a stream never named is never reported named. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_loop.h"
#include "stream.h"

#include <grpc/grpc.h>
#include <string.h>

typedef struct seen {
    int named, answered, ended;
    unsigned refs_at_end; /* the stream's references when |ended| ran */
} seen;

static void on_named(ag_stream *s, void *user)
{
    (void)s;
    ((seen *)user)->named++;
}

static void on_answered(ag_stream *s, void *user)
{
    (void)s;
    ((seen *)user)->answered++;
}

static void on_ended(ag_stream *s, void *user)
{
    seen *w = user;
    w->ended++;
    w->refs_at_end = s->life.refs;
}

static const ag_stream_events events = {on_named, on_answered, on_ended};

static int setup(void **state)
{
    (void)state;
    grpc_init();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    grpc_shutdown();
    return 0;
}

/* Runs |loop| until |w| saw the end, or 5 s. */
static void run_until_ended(rl_loop *loop, const seen *w)
{
    int64_t until = rl_now_ns() + 5 * RL_NS_PER_SEC;
    while (!w->ended && rl_now_ns() < until)
        rl_loop_run_until(loop, rl_now_ns() + 10 * RL_NS_PER_MS);
}

static void finish(rl_loop *loop, grpc_channel *ch)
{
    grpc_channel_destroy(ch);
    grpc_completion_queue_shutdown(loop->cq);
    rl_loop_run(loop);
    rl_loop_fini(loop);
}

static void a_stream_the_server_ends_ends_once_after_its_batches(void **state)
{
    (void)state;
    rl_loop loop;
    rl_loop_init(&loop);
    grpc_channel *ch = grpc_lame_client_channel_create("127.0.0.1:1", GRPC_STATUS_UNAVAILABLE, "lame");
    seen w = {0};
    ag_stream s;
    assert_int_equal(ag_stream_start(&s, ch, &loop, 1, &events, &w), RL_OK);
    assert_false(ag_stream_over(&s));
    run_until_ended(&loop, &w);
    assert_int_equal(w.ended, 1);
    assert_int_equal(w.refs_at_end, 0);
    assert_true(ag_stream_over(&s));
    assert_int_not_equal(s.status, GRPC_STATUS_OK); /* CANCELLED: the lame channel and wait-for-ready */
    /* Nothing is left to come back: the loop has no more to run for it. */
    rl_loop_run_until(&loop, rl_now_ns() + 20 * RL_NS_PER_MS);
    assert_int_equal(w.ended, 1);
    assert_int_equal(w.named, 0);
    assert_int_equal(w.answered, 0);
    ag_stream_free(&s);
    finish(&loop, ch);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_stream_the_server_ends_ends_once_after_its_batches, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
