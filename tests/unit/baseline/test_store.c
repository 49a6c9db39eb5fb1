/* Unit tests for the baseline's store: records are found by tag and update
 * live, reset forgets records and faults and ignores stale ids, faults fail
 * exactly the first N calls of their method, and the record file gets one
 * JSON line per ended call with "no deadline" as null; a record keeps the
 * peer it was given first ("" when none), and a stale id is ignored. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "store.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void records_by_tag_update_live(void **state)
{
    (void)state;
    bl_store *s;
    assert_int_equal(bl_store_new(NULL, &s), 0);
    uint64_t a = bl_store_open(s, "t1", "Lookup", true, 990, 100, 1);
    uint64_t b = bl_store_open(s, "t2", "Work", false, 0, 200, 1);
    uint64_t c = bl_store_open(s, "t1", "Work", true, 650, 300, 2);
    assert_true(a < b && b < c);
    bl_store_progress(s, c, 3);
    bl_store_close(s, a, 150, GRPC_STATUS_OK, false, false);

    Relaylab__ObserveReply rep = RELAYLAB__OBSERVE_REPLY__INIT;
    bl_store_snapshot(s, "t1", &rep);
    assert_int_equal(rep.n_calls, 2);
    assert_string_equal(rep.calls[0]->method, "Lookup");
    assert_true(rep.calls[0]->ended);
    assert_int_equal(rep.calls[0]->end_ns, 150);
    assert_int_equal(rep.calls[0]->deadline_ms, 990);
    assert_string_equal(rep.calls[1]->method, "Work");
    assert_false(rep.calls[1]->ended);
    assert_int_equal(rep.calls[1]->steps_done, 3);
    assert_int_equal(rep.calls[1]->attempt, 2);
    bl_store_snapshot_free(&rep);

    bl_store_snapshot(s, "", &rep);
    assert_int_equal(rep.n_calls, 3);
    bl_store_snapshot_free(&rep);
    bl_store_free(s);
}

static void records_keep_their_peer(void **state)
{
    (void)state;
    bl_store *s;
    assert_int_equal(bl_store_new(NULL, &s), 0);
    uint64_t a = bl_store_open(s, "p", "Lookup", false, 0, 1, 1);
    uint64_t b = bl_store_open(s, "p", "Lookup", false, 0, 2, 1);
    bl_store_set_peer(s, a, "ipv4:127.0.0.1:41234");
    bl_store_set_peer(s, a, "ipv4:127.0.0.1:9"); /* the first one stays */
    Relaylab__ObserveReply rep = RELAYLAB__OBSERVE_REPLY__INIT;
    bl_store_snapshot(s, "p", &rep);
    assert_int_equal(rep.n_calls, 2);
    assert_string_equal(rep.calls[0]->peer, "ipv4:127.0.0.1:41234");
    assert_string_equal(rep.calls[1]->peer, "");
    bl_store_snapshot_free(&rep);
    bl_store_reset(s);
    bl_store_set_peer(s, b, "stale"); /* ignored: reset away */
    bl_store_free(s);
}

static void reset_forgets_and_ignores_stale_ids(void **state)
{
    (void)state;
    bl_store *s;
    assert_int_equal(bl_store_new(NULL, &s), 0);
    uint64_t old = bl_store_open(s, "t", "Work", false, 0, 1, 1);
    bl_store_set_fault(s, "Work", 5, GRPC_STATUS_UNAVAILABLE, false);
    assert_int_equal(bl_store_reset(s), 1);
    uint64_t fresh = bl_store_open(s, "t", "Work", false, 0, 2, 1);
    assert_true(fresh > old);
    bl_store_progress(s, old, 99); /* must not touch the new record */
    bl_store_close(s, old, 5, GRPC_STATUS_CANCELLED, true, false);
    Relaylab__ObserveReply rep = RELAYLAB__OBSERVE_REPLY__INIT;
    bl_store_snapshot(s, "t", &rep);
    assert_int_equal(rep.n_calls, 1);
    assert_int_equal(rep.calls[0]->steps_done, 0);
    assert_false(rep.calls[0]->ended);
    bl_store_snapshot_free(&rep);
    grpc_status_code st;
    bool after;
    assert_false(bl_store_take_fault(s, "Work", &st, &after));
    bl_store_free(s);
}

static void fault_fails_exactly_first_n(void **state)
{
    (void)state;
    bl_store *s;
    assert_int_equal(bl_store_new(NULL, &s), 0);
    bl_store_set_fault(s, "Lookup", 2, GRPC_STATUS_UNAVAILABLE, false);
    grpc_status_code st = GRPC_STATUS_OK;
    bool after = true;
    assert_false(bl_store_take_fault(s, "Work", &st, &after));
    assert_true(bl_store_take_fault(s, "Lookup", &st, &after));
    assert_int_equal(st, GRPC_STATUS_UNAVAILABLE);
    assert_false(after);
    assert_true(bl_store_take_fault(s, "Lookup", &st, &after));
    assert_false(bl_store_take_fault(s, "Lookup", &st, &after));
    bl_store_free(s);
}

static void record_file_has_json_lines(void **state)
{
    (void)state;
    char path[] = "/tmp/rl_store_testXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    bl_store *s;
    assert_int_equal(bl_store_new(path, &s), 0);
    uint64_t a = bl_store_open(s, "x", "Work", false, 0, 10, 1);
    uint64_t b = bl_store_open(s, "y", "Lookup", true, 250, 20, 1);
    bl_store_close(s, a, 30, GRPC_STATUS_CANCELLED, true, false);
    bl_store_close(s, b, 40, GRPC_STATUS_OK, false, false);
    bl_store_close(s, b, 99, GRPC_STATUS_INTERNAL, false, false); /* second close ignored */
    bl_store_free(s);

    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[1024];
    json_error_t err;
    assert_non_null(fgets(line, sizeof line, f));
    json_t *o = json_loads(line, 0, &err);
    assert_non_null(o);
    assert_string_equal(json_string_value(json_object_get(o, "tag")), "x");
    assert_true(json_is_null(json_object_get(o, "deadline_ms")));
    assert_string_equal(json_string_value(json_object_get(o, "status_name")), "CANCELLED");
    assert_true(json_is_true(json_object_get(o, "cancelled")));
    json_decref(o);
    assert_non_null(fgets(line, sizeof line, f));
    o = json_loads(line, 0, &err);
    assert_non_null(o);
    assert_int_equal(json_integer_value(json_object_get(o, "deadline_ms")), 250);
    assert_int_equal(json_integer_value(json_object_get(o, "end_ns")), 40);
    json_decref(o);
    assert_null(fgets(line, sizeof line, f));
    fclose(f);
    unlink(path);
}

/* The overload lab's capacity: Work slots are handed out first come, first
 * served; a waiter that leaves is skipped; no capacity means no waiting. */
static void capacity_queues_work_in_arrival_order(void **state)
{
    (void)state;
    bl_store *s;
    assert_int_equal(bl_store_new(NULL, &s), 0);
    assert_true(bl_store_slot_admit(s, 1)); /* no limit yet */
    bl_store_slot_release(s);
    bl_store_set_capacity(s, 2);
    assert_true(bl_store_slot_admit(s, 1));
    assert_true(bl_store_slot_admit(s, 2));
    assert_false(bl_store_slot_admit(s, 3));
    assert_false(bl_store_slot_admit(s, 4));
    assert_false(bl_store_slot_admit(s, 5));
    assert_false(bl_store_slot_take(s, 3)); /* both slots busy */
    bl_store_slot_release(s);
    assert_false(bl_store_slot_take(s, 4)); /* 3 is ahead of it */
    bl_store_slot_leave(s, 3);              /* 3's deadline passed */
    assert_true(bl_store_slot_take(s, 4));
    assert_false(bl_store_slot_take(s, 5));
    bl_store_slot_release(s);
    assert_true(bl_store_slot_take(s, 5));
    bl_store_slot_release(s);
    bl_store_slot_release(s);
    bl_store_free(s);
}

/* Wasted work: a call with no time left, or one its caller's time ended
 * here; never a blackholed one, a served one or an injected fault. */
static void wasted_is_work_for_a_caller_that_has_gone(void **state)
{
    (void)state;
    bl_store *s;
    assert_int_equal(bl_store_new(NULL, &s), 0);
    uint64_t served = bl_store_open(s, "w", "Work", true, 900, 100, 1);
    uint64_t cut = bl_store_open(s, "w", "Work", true, 900, 100, 1);
    uint64_t cancelled = bl_store_open(s, "w", "Work", true, 900, 100, 1);
    uint64_t late = bl_store_open(s, "w", "Work", true, 0, 100, 1);
    uint64_t held = bl_store_open(s, "w", "Work", true, 900, 100, 1);
    bl_store_started(s, served, 150);
    bl_store_started(s, cut, 150);
    bl_store_blackholed(s, held);
    bl_store_close(s, served, 500, GRPC_STATUS_OK, false, false);
    bl_store_close(s, cut, 1000, GRPC_STATUS_DEADLINE_EXCEEDED, false, false);
    bl_store_close(s, cancelled, 990, GRPC_STATUS_CANCELLED, true, false);
    bl_store_close(s, late, 101, GRPC_STATUS_DEADLINE_EXCEEDED, false, false);
    bl_store_close(s, held, 1000, GRPC_STATUS_DEADLINE_EXCEEDED, false, false);
    Relaylab__ObserveReply rep = RELAYLAB__OBSERVE_REPLY__INIT;
    bl_store_snapshot(s, "w", &rep);
    assert_int_equal(rep.n_calls, 5);
    assert_false(rep.calls[0]->wasted);
    assert_int_equal(rep.calls[0]->start_ns, 150);
    assert_true(rep.calls[1]->wasted);
    assert_true(rep.calls[2]->wasted);
    assert_true(rep.calls[3]->wasted);
    assert_true(rep.calls[3]->no_time_left);
    assert_false(rep.calls[4]->wasted);
    assert_int_equal(rep.calls[4]->start_ns, 0);
    bl_store_snapshot_free(&rep);
    bl_store_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(records_by_tag_update_live),
        cmocka_unit_test(records_keep_their_peer),
        cmocka_unit_test(reset_forgets_and_ignores_stale_ids),
        cmocka_unit_test(fault_fails_exactly_first_n),
        cmocka_unit_test(record_file_has_json_lines),
        cmocka_unit_test(capacity_queues_work_in_arrival_order),
        cmocka_unit_test(wasted_is_work_for_a_caller_that_has_gone),
    };
    return cmocka_run_group_tests_name("baseline store", tests, NULL, NULL);
}
