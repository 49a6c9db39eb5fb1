/* test_health: the services rl_health reports on and the process status
 * (lib/rl_health.c); Check and Watch on the wire are in
 * tests/integration/test_shutdown.py. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "rl_health.h"

static void noop(rl_loop *loop, grpc_call *call, const rl_call_info *info, void *user)
{
    (void)loop, (void)call, (void)info, (void)user;
}

static void services_are_the_server_and_each_method_service_once(void **state)
{
    (void)state;
    const rl_method methods[] = {
        {"/relaylab.Baseline/Lookup", noop, NULL, false},
        {"/relaylab.Baseline/Work", noop, NULL, false},
        {"/relaylab.Observer/Observe", noop, NULL, true},
    };
    rl_health h;
    assert_int_equal(rl_health_init(&h, methods, 3), 0);
    assert_int_equal(h.nservices, 3);
    assert_true(rl_health_knows(&h, ""));
    assert_true(rl_health_knows(&h, "relaylab.Baseline"));
    assert_true(rl_health_knows(&h, "relaylab.Observer"));
    assert_false(rl_health_knows(&h, "relaylab.Relay"));
    assert_false(rl_health_knows(&h, "relaylab"));
    rl_health_fini(&h);
    rl_health_fini(&h); /* a finished struct may be finished again */
}

static void malformed_paths_name_no_service(void **state)
{
    (void)state;
    const rl_method methods[] = {{"noslash", noop, NULL, false}, {"//Method", noop, NULL, false}};
    rl_health h;
    assert_int_equal(rl_health_init(&h, methods, 2), 0);
    assert_int_equal(h.nservices, 1); /* "" alone */
    rl_health_fini(&h);
}

static void status_follows_set_serving(void **state)
{
    (void)state;
    rl_health_set_serving(true);
    assert_true(rl_health_serving());
    rl_health_set_serving(false);
    assert_false(rl_health_serving());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(services_are_the_server_and_each_method_service_once),
        cmocka_unit_test(malformed_paths_name_no_service),
        cmocka_unit_test(status_follows_set_serving),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
