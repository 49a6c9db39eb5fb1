/* Unit tests for grader/process.c's status text: a call's status with the
 * details gRPC carried, but not details that only repeat the status's name
 * ("CANCELLED (CANCELLED)" said nothing twice). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "process.h"
#include "rl_probe.h"

#include <grpc/slice.h>
#include <string.h>

static void text_of(grpc_status_code status, const char *details, char *buf, size_t len)
{
    rl_probe_call c;
    memset(&c, 0, sizeof c);
    c.done = true;
    c.batch.status = status;
    c.batch.details = grpc_slice_from_static_string(details);
    gr_process_status_text(&c, buf, len);
}

static void details_that_repeat_the_status_are_left_out(void **state)
{
    (void)state;
    char buf[256];
    text_of(GRPC_STATUS_CANCELLED, "CANCELLED", buf, sizeof buf);
    assert_string_equal(buf, "CANCELLED");
    text_of(GRPC_STATUS_CANCELLED, "Cancelled", buf, sizeof buf);
    assert_string_equal(buf, "CANCELLED");
    text_of(GRPC_STATUS_UNAVAILABLE, "", buf, sizeof buf);
    assert_string_equal(buf, "UNAVAILABLE");
}

static void other_details_are_kept(void **state)
{
    (void)state;
    char buf[256];
    text_of(GRPC_STATUS_UNAVAILABLE, "Connection refused", buf, sizeof buf);
    assert_string_equal(buf, "UNAVAILABLE (Connection refused)");
    text_of(GRPC_STATUS_CANCELLED, "Cancelled by the client", buf, sizeof buf);
    assert_string_equal(buf, "CANCELLED (Cancelled by the client)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(details_that_repeat_the_status_are_left_out),
        cmocka_unit_test(other_details_are_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
