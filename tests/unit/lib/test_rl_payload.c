/* Unit tests for rl_payload: the pattern matches the contract's formula, and
 * the check names the first wrong byte for every kind of damage a broken
 * producer could do (wrong number, shift, truncation, extra bytes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "rl_err.h"
#include "rl_payload.h"

static void fill_matches_formula(void **state)
{
    (void)state;
    /* Sizes straddle the internal block and period boundaries. */
    const size_t sizes[] = {0, 1, 250, 251, 252, 4095, 4096, 4097, 65536, 70001};
    const uint64_t seqs[] = {0, 1, 8, 250, 251, 2999, 123456789, UINT64_MAX};
    for (size_t a = 0; a < sizeof sizes / sizeof *sizes; a++) {
        for (size_t b = 0; b < sizeof seqs / sizeof *seqs; b++) {
            uint8_t *buf = malloc(sizes[a] + 1);
            rl_payload_fill(buf, sizes[a], seqs[b]);
            for (size_t i = 0; i < sizes[a]; i++) {
                unsigned __int128 want = ((unsigned __int128)seqs[b] * 31 + i) % 251;
                assert_int_equal(buf[i], (uint8_t)want);
            }
            assert_int_equal(rl_payload_check(buf, sizes[a], seqs[b], sizes[a], NULL), RL_OK);
            free(buf);
        }
    }
}

static void byte_helper_matches_formula(void **state)
{
    (void)state;
    assert_int_equal(rl_payload_byte(0, 0), 0);
    assert_int_equal(rl_payload_byte(1, 0), 31);
    assert_int_equal(rl_payload_byte(9, 3), (9 * 31 + 3) % 251);
    assert_int_equal(rl_payload_byte(UINT64_MAX, 7), (uint8_t)(((unsigned __int128)UINT64_MAX * 31 + 7) % 251));
}

static void check_reports_first_bad_byte(void **state)
{
    (void)state;
    uint8_t buf[10000];
    rl_payload_fill(buf, sizeof buf, 42);
    buf[7777] ^= 1;
    size_t bad = 0;
    assert_int_equal(rl_payload_check(buf, sizeof buf, 42, sizeof buf, &bad), RL_EINVAL);
    assert_int_equal(bad, 7777);
}

static void check_rejects_wrong_seq(void **state)
{
    (void)state;
    uint8_t buf[1000];
    rl_payload_fill(buf, sizeof buf, 5);
    size_t bad = 99;
    assert_int_equal(rl_payload_check(buf, sizeof buf, 6, sizeof buf, &bad), RL_EINVAL);
    assert_int_equal(bad, 0);
    /* 251 apart is the only ambiguity the pattern has. */
    assert_int_equal(rl_payload_check(buf, sizeof buf, 5 + 251, sizeof buf, NULL), RL_OK);
}

static void check_rejects_wrong_length(void **state)
{
    (void)state;
    uint8_t buf[5000];
    rl_payload_fill(buf, sizeof buf, 3);
    size_t bad = 0;
    assert_int_equal(rl_payload_check(buf, 4000, 3, 5000, &bad), RL_EINVAL);
    assert_int_equal(bad, 4000);
    assert_int_equal(rl_payload_check(buf, 5000, 3, 4000, &bad), RL_EINVAL);
    assert_int_equal(bad, 4000);
    assert_int_equal(rl_payload_check(buf, 0, 3, 0, &bad), RL_OK);
}

static void check_rejects_shifted_payload(void **state)
{
    (void)state;
    uint8_t buf[3000];
    rl_payload_fill(buf, sizeof buf, 11);
    size_t bad = 0;
    assert_int_equal(rl_payload_check(buf + 1, 2000, 11, 2000, &bad), RL_EINVAL);
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fill_matches_formula),         cmocka_unit_test(byte_helper_matches_formula),
        cmocka_unit_test(check_reports_first_bad_byte), cmocka_unit_test(check_rejects_wrong_seq),
        cmocka_unit_test(check_rejects_wrong_length),   cmocka_unit_test(check_rejects_shifted_payload),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
