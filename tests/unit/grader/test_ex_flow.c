/* Unit tests for the flow exercise's judging: the memory budget's edges,
 * the wording of both verdicts (numbers, budget, likely mistake), the
 * CPU allowance after a cancel scaled to the window actually measured, the
 * cancel judged by the CPU asked for (run + wait) and not only given, and
 * a late first chunk judged by memory once the growth is past the budget. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ex_flow.h"
#include "rl_err.h"

#define MIB (UINT64_C(1) << 20)

static void growth_within_budget_passes(void **state)
{
    (void)state;
    gr_flow_mem_check c;
    gr_flow_judge_memory(15 * MIB, 16 * MIB, 1, 3000, 1500, true, GR_FLOW_BUDGET_MIB, &c);
    assert_true(c.pass);
    gr_flow_judge_memory(15 * MIB, (15 + GR_FLOW_BUDGET_MIB) * MIB, 1, 3000, 1500, true, GR_FLOW_BUDGET_MIB, &c);
    assert_true(c.pass);
}

static void growth_past_budget_fails(void **state)
{
    (void)state;
    gr_flow_mem_check c;
    gr_flow_judge_memory(15 * MIB, (15 + GR_FLOW_BUDGET_MIB) * MIB + 1, 1, 3000, 1500, true, GR_FLOW_BUDGET_MIB, &c);
    assert_false(c.pass);
    gr_flow_judge_memory(33 * MIB, 220 * MIB, 1, 3000, 1800, true, GR_FLOW_BUDGET_MIB, &c);
    assert_false(c.pass);
    assert_true(c.growth_mib > 186.9 && c.growth_mib < 187.1);
}

static void shrinking_rss_is_no_growth(void **state)
{
    (void)state;
    gr_flow_mem_check c;
    gr_flow_judge_memory(40 * MIB, 30 * MIB, 1, 3000, 1500, true, GR_FLOW_BUDGET_MIB, &c);
    assert_true(c.pass);
    assert_true(c.growth_mib == 0.0);
}

static void failing_feedback_names_numbers_and_mistake(void **state)
{
    (void)state;
    gr_flow_mem_check c;
    gr_flow_judge_memory(33 * MIB, 220 * MIB, 1, 3000, 1800, true, GR_FLOW_BUDGET_MIB, &c);
    char buf[400];
    gr_flow_memory_feedback(&c, "while the reader was stalled after 1 chunk", buf, sizeof buf);
    assert_non_null(strstr(buf, "RSS grew 187.0 MiB"));
    assert_non_null(strstr(buf, "(33.0 -> 220.0 MiB)"));
    assert_non_null(strstr(buf, "budget 48 MiB"));
    assert_non_null(strstr(buf, "while the reader was stalled"));
    assert_non_null(strstr(buf, "unbounded queue"));
}

static void passing_feedback_names_numbers(void **state)
{
    (void)state;
    gr_flow_mem_check c;
    gr_flow_judge_memory(15 * MIB, 16 * MIB, 1, 3000, 1500, true, GR_FLOW_BUDGET_MIB, &c);
    char buf[400];
    gr_flow_memory_feedback(&c, "while the reader was stalled after 1 chunk", buf, sizeof buf);
    assert_non_null(strstr(buf, "RSS grew 1.0 MiB"));
    assert_non_null(strstr(buf, "watched 1.5 s until flat"));
    assert_null(strstr(buf, "unbounded"));
}

static void cancel_cpu_scales_with_window(void **state)
{
    (void)state;
    assert_true(gr_flow_judge_cancel_cpu(0, 1000));
    assert_true(gr_flow_judge_cancel_cpu(GR_FLOW_CANCEL_CPU_MS, GR_FLOW_CANCEL_WINDOW_MS));
    assert_false(gr_flow_judge_cancel_cpu(GR_FLOW_CANCEL_CPU_MS + 1, GR_FLOW_CANCEL_WINDOW_MS));
    /* A window that ran long (a loaded grader) allows proportionally more. */
    assert_true(gr_flow_judge_cancel_cpu(INT64_C(2) * GR_FLOW_CANCEL_CPU_MS, INT64_C(2) * GR_FLOW_CANCEL_WINDOW_MS));
    assert_false(gr_flow_judge_cancel_cpu(990, 1000));
}

/* After a cancel: used over the allowance is WENT_ON; asked for (CPU +
 * runnable wait) over GR_FLOW_CANCEL_GOES_ON_MS is WENT_ON too, however
 * little a busy machine gave; asked for within GR_FLOW_CANCEL_IDLE_MS is
 * STOPPED; in between is STARVED (ERROR), never a PASS. */
static void cancel_judged_by_cpu_asked_for(void **state)
{
    (void)state;
    /* The soak's wrong PASS: 69 ms used in 1259 ms, starved; it asked for
     * about the whole window. */
    assert_int_equal(gr_flow_judge_cancel(69, 1150, 1259), GR_FLOW_WENT_ON);
    /* The idle reference on loaded machines: 4 + 51 ms, and 4 + 387 ms in
     * 1137 ms under selftest --load. */
    assert_int_equal(gr_flow_judge_cancel(4, 51, 1000), GR_FLOW_STOPPED);
    assert_int_equal(gr_flow_judge_cancel(4, 387, 1137), GR_FLOW_STOPPED);
    /* The edges, per 1000 ms. */
    assert_int_equal(gr_flow_judge_cancel(GR_FLOW_CANCEL_CPU_MS + 1, 0, 1000), GR_FLOW_WENT_ON);
    assert_int_equal(gr_flow_judge_cancel(50, GR_FLOW_CANCEL_IDLE_MS - 50, 1000), GR_FLOW_STOPPED);
    assert_int_equal(gr_flow_judge_cancel(50, GR_FLOW_CANCEL_IDLE_MS - 49, 1000), GR_FLOW_STARVED);
    assert_int_equal(gr_flow_judge_cancel(50, GR_FLOW_CANCEL_GOES_ON_MS - 50, 1000), GR_FLOW_STARVED);
    assert_int_equal(gr_flow_judge_cancel(50, GR_FLOW_CANCEL_GOES_ON_MS - 49, 1000), GR_FLOW_WENT_ON);
    /* Scaled to the window: twice as long allows twice as much. */
    assert_int_equal(gr_flow_judge_cancel(100, 2 * GR_FLOW_CANCEL_GOES_ON_MS - 100, 2000), GR_FLOW_STARVED);
    assert_int_equal(gr_flow_judge_cancel(100, 2 * GR_FLOW_CANCEL_IDLE_MS - 100, 2000), GR_FLOW_STOPPED);
    /* No schedstat (wait unknown): the CPU alone, as before. */
    assert_int_equal(gr_flow_judge_cancel(69, -1, 1259), GR_FLOW_STOPPED);
    assert_int_equal(gr_flow_judge_cancel(990, -1, 1000), GR_FLOW_WENT_ON);
}

static void slow_reader_budget_is_its_own(void **state)
{
    (void)state;
    gr_flow_mem_check c;
    /* 60 MiB is over the stall budget but within the slow reader's. */
    gr_flow_judge_memory(15 * MIB, 75 * MIB, 500, 3000, 2500, false, GR_FLOW_SLOW_BUDGET_MIB, &c);
    assert_true(c.pass);
    gr_flow_judge_memory(15 * MIB, 75 * MIB, 1, 3000, 2500, true, GR_FLOW_BUDGET_MIB, &c);
    assert_false(c.pass);
    char buf[512];
    gr_flow_judge_memory(15 * MIB, 215 * MIB, 500, 3000, 2500, false, GR_FLOW_SLOW_BUDGET_MIB, &c);
    assert_false(c.pass);
    gr_flow_memory_feedback(&c, "with a slow reader", buf, sizeof buf);
    assert_non_null(strstr(buf, "budget 96 MiB"));
}

/* The first chunk late: the memory rule decides once the growth is past
 * the scenario's budget (FAIL), the clock otherwise (TIMEOUT). */
static void a_late_first_chunk_is_judged_by_memory_past_the_budget(void **state)
{
    (void)state;
    uint64_t budget = GR_FLOW_BUDGET_MIB * MIB;
    /* Past the budget while nothing came: memory. */
    assert_true(gr_flow_first_late_over_budget(RL_ETIMEOUT, 0, 1, budget + 1, budget));
    assert_true(gr_flow_first_late_over_budget(RL_ETIMEOUT, 0, 1, 128 * MIB, GR_FLOW_SLOW_BUDGET_MIB * MIB));
    /* At the budget or under it: the late chunk is a TIMEOUT. */
    assert_false(gr_flow_first_late_over_budget(RL_ETIMEOUT, 0, 1, budget, budget));
    assert_false(gr_flow_first_late_over_budget(RL_ETIMEOUT, 0, 1, 128 * MIB, 160 * MIB));
    /* The first chunks came: not this rule (the watch judges memory). */
    assert_false(gr_flow_first_late_over_budget(RL_ETIMEOUT, 1, 1, 128 * MIB, budget));
    /* Another failure (the stream ended, wrong data): not this rule. */
    assert_false(gr_flow_first_late_over_budget(RL_EGRPC, 0, 1, 128 * MIB, budget));
    assert_false(gr_flow_first_late_over_budget(RL_EINVAL, 0, 1, 128 * MIB, budget));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(slow_reader_budget_is_its_own),
        cmocka_unit_test(growth_within_budget_passes),
        cmocka_unit_test(growth_past_budget_fails),
        cmocka_unit_test(shrinking_rss_is_no_growth),
        cmocka_unit_test(failing_feedback_names_numbers_and_mistake),
        cmocka_unit_test(passing_feedback_names_numbers),
        cmocka_unit_test(cancel_cpu_scales_with_window),
        cmocka_unit_test(cancel_judged_by_cpu_asked_for),
        cmocka_unit_test(a_late_first_chunk_is_judged_by_memory_past_the_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
