/* Unit tests for the flow exercise's rules (grader/flow_judge): the memory budget's edges,
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

#include "flow_judge.h"
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

static char fb[GR_FEEDBACK_MAX];

/* A watch's verdict follows its budget; the feedback is cut at 400 bytes,
 * as it always was. */
static void watch_verdict_and_its_cut(void **state)
{
    (void)state;
    gr_flow_mem_check c;
    gr_flow_judge_memory(30 * MIB, 30 * MIB + 48 * MIB, 1, 3000, 1200, true, GR_FLOW_BUDGET_MIB, &c);
    assert_int_equal(gr_flow_judge_watch(&c, "while the reader was stalled after 1 chunk", fb, sizeof fb), GR_PASS);
    assert_string_equal(fb, "RSS grew 48.0 MiB (30.0 -> 78.0 MiB) while the reader was stalled after 1 chunk, "
                            "watched 1.2 s until flat (budget 48 MiB): the producer waits for the flow-control "
                            "window");
    gr_flow_judge_memory(30 * MIB, 30 * MIB + 48 * MIB + 1, 1, 3000, 1200, false, GR_FLOW_BUDGET_MIB, &c);
    char what[600];
    memset(what, 'x', sizeof what - 1);
    what[sizeof what - 1] = '\0';
    assert_int_equal(gr_flow_judge_watch(&c, what, fb, sizeof fb), GR_FAIL);
    assert_int_equal(strlen(fb), 399);
}

static void failed_step_by_its_code(void **state)
{
    (void)state;
    assert_int_equal(gr_flow_judge_failed(RL_ETIMEOUT, true, "reading", "no chunk", fb, sizeof fb), GR_TIMEOUT);
    assert_string_equal(fb, "reading: no chunk");
    assert_int_equal(gr_flow_judge_failed(RL_EINVAL, true, "reading", "chunk 3 out of order", fb, sizeof fb), GR_FAIL);
    assert_int_equal(gr_flow_judge_failed(RL_EGRPC, true, "reading", "INTERNAL", fb, sizeof fb), GR_FAIL);
    assert_int_equal(gr_flow_judge_failed(RL_EGRPC, false, "reading", "INTERNAL", fb, sizeof fb), GR_ERROR);
    assert_int_equal(gr_flow_judge_failed(RL_ESYS, true, "reading", "x", fb, sizeof fb), GR_ERROR);
}

static void grew_and_rising_words(void **state)
{
    (void)state;
    assert_int_equal(gr_flow_judge_grew_before_first("Produce(3000 x 65536)", 100 * MIB, 20 * MIB, 120 * MIB, 96 * MIB,
                                                     fb, sizeof fb),
                     GR_FAIL);
    assert_string_equal(fb, "while Produce(3000 x 65536) had sent nothing yet, RSS grew 100.0 MiB (20.0 -> 120.0 "
                            "MiB, budget 96 MiB): the producer makes the whole response before it sends any of it -- "
                            "make each chunk when the window lets the last one go");
    gr_flow_rising_facts f = {.rising = false,
                              .starved_pct = 25,
                              .wait_pct = 60,
                              .watched_ms = 30000,
                              .growth = 40 * MIB,
                              .rise_1s = 3 * MIB,
                              .rise_trend = 9 * MIB,
                              .trend_ms = 3000,
                              .budget = 96 * MIB};
    assert_false(gr_flow_judge_rising(&f, fb, sizeof fb));
    f.rising = true;
    assert_true(gr_flow_judge_rising(&f, fb, sizeof fb));
    assert_string_equal(fb, "after 30.0 s the producer's processes were still waiting for a CPU 60% of the time (RSS "
                            "40.0 MiB over the start, budget 96 MiB): it had too little CPU to show whether it waits "
                            "for the window -- grade again on a less busy machine");
    f.wait_pct = 25; /* at the bound: not starved, still rising */
    assert_true(gr_flow_judge_rising(&f, fb, sizeof fb));
    assert_string_equal(fb, "after 30.0 s the producer's RSS was still rising (3.0 MiB in the last second, 9.0 MiB in "
                            "the last 3 s, 40.0 MiB in all, budget 96 MiB): it had too little CPU to show whether it "
                            "waits for the window -- grade again on a less busy machine");
    f.starved_pct = 0; /* no starvation bound */
    f.wait_pct = 90;
    assert_true(gr_flow_judge_rising(&f, fb, sizeof fb));
    assert_non_null(strstr(fb, "RSS was still rising"));
}

/* The cancel's stages: before it, the CPU after it (starved, went on by
 * what it asked for or by what it used), the RSS after it, the PASS. */
static void cancel_stages_each_branch(void **state)
{
    (void)state;
    gr_flow_mem_check c;
    gr_flow_judge_memory(30 * MIB, 31 * MIB, 1, 1000000, 1500, true, GR_FLOW_BUDGET_MIB, &c);
    strcpy(fb, "untouched");
    assert_int_equal(gr_flow_judge_before_cancel(&c, 1, fb, sizeof fb), GR_PASS);
    assert_int_equal(gr_flow_judge_after_cancel_memory(&c, fb, sizeof fb), GR_PASS);
    assert_string_equal(fb, "untouched");
    gr_flow_judge_memory(30 * MIB, 130 * MIB, 2, 1000000, 1500, true, GR_FLOW_BUDGET_MIB, &c);
    assert_int_equal(gr_flow_judge_before_cancel(&c, 2, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "before the cancel, with the reader stalled after 2 chunk(s), RSS grew 100.0 MiB (30.0 -> "
                            "130.0 MiB, budget 48 MiB): the producer made chunks nobody had asked for, so there was "
                            "nothing left for the cancel to stop -- make each chunk when the window lets the last "
                            "one go (see `stall`), and stop when the call ends");
    assert_int_equal(gr_flow_judge_after_cancel_memory(&c, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "after the cancel RSS went on growing to 130.0 MiB (100.0 MiB over the start, budget 48 "
                            "MiB): the producer goes on after the client cancelled");
    /* Used little, asked for little: stopped. */
    assert_int_equal(gr_flow_judge_cpu_after_cancel(10, GR_FLOW_CANCEL_IDLE_MS - 10, 1000, 300, fb, sizeof fb),
                     GR_PASS);
    /* Asked for more than an idle one, less than one that goes on: ERROR. */
    assert_int_equal(gr_flow_judge_cpu_after_cancel(10, 500, 1000, 300, fb, sizeof fb), GR_ERROR);
    assert_string_equal(fb, "in the 1000 ms starting 300 ms after the cancel the submission used 10 ms of CPU but "
                            "waited 500 ms for one (a stopped producer asks for at most 450 per 1000 ms, one that "
                            "goes on for 700 or more): the machine gave it too little to show whether it stopped -- "
                            "grade again on a less busy machine");
    assert_int_equal(gr_flow_judge_cpu_after_cancel(100, 650, 1000, 300, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "in the 1000 ms starting 300 ms after the cancel the submission used 100 ms of CPU and "
                            "waited 650 ms more for one (it asked for 750 ms; allowed 700 per 1000 ms): the producer "
                            "goes on after the client cancelled -- a thread or a write loop that never checks whether "
                            "the call ended?");
    assert_int_equal(gr_flow_judge_cpu_after_cancel(GR_FLOW_CANCEL_CPU_MS + 1, -1, 1000, 300, fb, sizeof fb), GR_FAIL);
    assert_string_equal(fb, "the submission used 151 ms of CPU in the 1000 ms starting 300 ms after the cancel "
                            "(allowed 150 per 1000 ms): the producer goes on after the client cancelled -- a thread "
                            "or a write loop that never checks whether the call ended?");
    assert_int_equal(gr_flow_judge_cancel_pass(1, 0.5, 3, 1001, fb, sizeof fb), GR_PASS);
    assert_string_equal(fb, "stalled after 1 chunk(s), RSS grew 0.5 MiB; after the cancel the submission used 3 ms of "
                            "CPU in 1001 ms, and a new Produce(5 x 1000) succeeded");
    assert_int_equal(gr_flow_judge_resume(1500, 3000, 3000 * 65536, 812, fb, sizeof fb), GR_PASS);
    assert_string_equal(fb, "after a 1.5 s stall all 3000 chunks (187.5 MiB) arrived in order with every byte right, "
                            "the rest in 812 ms");
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
        cmocka_unit_test(watch_verdict_and_its_cut),
        cmocka_unit_test(failed_step_by_its_code),
        cmocka_unit_test(grew_and_rising_words),
        cmocka_unit_test(cancel_stages_each_branch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
