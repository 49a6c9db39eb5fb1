/* test_rl_alloc: the growing array (RL_GROW): room for one more element
 * each time, the capacity doubling from its first size, the elements kept. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "rl_alloc.h"

static void grow_doubles_from_first_and_keeps_elements(void **state)
{
    (void)state;
    int *a = NULL;
    size_t n = 0, cap = 0;
    for (int i = 0; i < 1000; i++) {
        RL_GROW(a, n, cap, 16);
        assert_true(n < cap);
        a[n++] = i;
    }
    assert_int_equal(cap, 1024); /* 16, 32, ... 1024 */
    for (int i = 0; i < 1000; i++)
        assert_int_equal(a[i], i);
    free(a);
}

static void grow_leaves_an_array_with_room_alone(void **state)
{
    (void)state;
    size_t n = 3, cap = 8;
    char *a = rl_xmalloc(cap), *was = a;
    RL_GROW(a, n, cap, 4);
    assert_ptr_equal(a, was);
    assert_int_equal(cap, 8);
    free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(grow_doubles_from_first_and_keeps_elements),
        cmocka_unit_test(grow_leaves_an_array_with_room_alone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
