/* Unit tests for report: --show-logs N takes exactly the last N lines of
 * the logs (all of them when there are fewer), and run's durations read
 * m:ss rounded to the second. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "report.h"
#include "run.h"

#include <string.h>

static void the_tail_is_the_last_n_lines(void **state)
{
    (void)state;
    const char *t = "one\ntwo\nthree\n";
    size_t n = strlen(t);
    assert_string_equal(t + gc_report_tail(t, n, 1), "three\n");
    assert_string_equal(t + gc_report_tail(t, n, 2), "two\nthree\n");
    assert_string_equal(t + gc_report_tail(t, n, 3), t);
    assert_string_equal(t + gc_report_tail(t, n, 50), t);
    assert_int_equal(gc_report_tail("", 0, 5), 0);
}

static void durations_read_minutes_and_seconds(void **state)
{
    (void)state;
    char buf[16];
    gc_run_format_duration(0.4, buf, sizeof buf);
    assert_string_equal(buf, "0:00");
    gc_run_format_duration(59.5, buf, sizeof buf);
    assert_string_equal(buf, "1:00");
    gc_run_format_duration(3725.0, buf, sizeof buf);
    assert_string_equal(buf, "62:05");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_tail_is_the_last_n_lines),
        cmocka_unit_test(durations_read_minutes_and_seconds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
