/* Unit tests for rl_text: printable ASCII passes, ESC, CR, DEL, NUL and
 * UTF-8 bytes are escaped visibly, newline and tab only survive in a
 * multi-line block, an escape is never cut in half, the length returned
 * tells a cut, and escaping twice changes nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rl_text.h"

static void printable_ascii_passes(void **state)
{
    (void)state;
    char out[64];
    const char *s = "score 2/10: a \\x1b 'b' \"c\" ~";
    assert_int_equal(rl_text_printable(out, sizeof out, s, strlen(s), 0), strlen(s));
    assert_string_equal(out, s);
}

static void control_bytes_are_escaped(void **state)
{
    (void)state;
    char out[128];
    const char in[] = "a\x1b[2Kb\rc\x7f\x01";
    rl_text_printable(out, sizeof out, in, sizeof in - 1, 0);
    assert_string_equal(out, "a\\x1b[2Kb\\rc\\x7f\\x01");
    /* A NUL inside the length is a byte like any other. */
    const char nul[] = {'x', 0, 'y'};
    rl_text_printable(out, sizeof out, nul, 3, 0);
    assert_string_equal(out, "x\\x00y");
    /* UTF-8 (here U+202E, a bidirectional override) is escaped byte by byte. */
    rl_text_printable(out, sizeof out, "\xe2\x80\xae", 3, 0);
    assert_string_equal(out, "\\xe2\\x80\\xae");
}

static void newline_and_tab_only_in_a_block(void **state)
{
    (void)state;
    char out[64];
    const char in[] = "l1\n\tl2\r\n";
    rl_text_printable(out, sizeof out, in, strlen(in), 0);
    assert_string_equal(out, "l1\\n\\tl2\\r\\n");
    rl_text_printable(out, sizeof out, in, strlen(in), RL_TEXT_MULTILINE);
    assert_string_equal(out, "l1\n\tl2\\r\n");
}

static void an_escape_is_never_cut(void **state)
{
    (void)state;
    char out[6];
    /* "ab" + "\x1b" needs 6 bytes and a NUL: only "ab" fits. */
    size_t need = rl_text_printable(out, sizeof out, "ab\x1b", 3, 0);
    assert_int_equal(need, 6);
    assert_string_equal(out, "ab");
    assert_true(need >= sizeof out);
    assert_int_equal(rl_text_printable(NULL, 0, "\x1b\x1b", 2, 0), 8);
}

static void escaping_twice_changes_nothing(void **state)
{
    (void)state;
    char *once = rl_text_printable_dup("\x1b[1A\rPASS\x07\n", 0);
    char *twice = rl_text_printable_dup(once, 0);
    assert_string_equal(once, twice);
    char buf[16] = "x\x1by";
    assert_int_equal(rl_text_printable_inplace(buf, sizeof buf, 0), 6);
    assert_string_equal(buf, "x\\x1by");
    free(once);
    free(twice);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(printable_ascii_passes),          cmocka_unit_test(control_bytes_are_escaped),
        cmocka_unit_test(newline_and_tab_only_in_a_block), cmocka_unit_test(an_escape_is_never_cut),
        cmocka_unit_test(escaping_twice_changes_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
