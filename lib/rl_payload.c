/* rl_payload: pattern fill and check; see rl_payload.h. Both work a block at
 * a time from a table holding the period twice over, so a 64 KiB chunk costs
 * a few memcpy/memcmp calls instead of 65,536 modulo operations. */
#include "rl_payload.h"

#include "rl_err.h"

#include <pthread.h>
#include <string.h>

#define PERIOD 251
#define BLOCK  4096

/* table[k] = k mod 251 for k < PERIOD + BLOCK, so any block of the pattern
 * starting at phase p < PERIOD is table + p. */
static uint8_t table[PERIOD + BLOCK];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void table_init(void)
{
    for (size_t k = 0; k < sizeof table; k++)
        table[k] = (uint8_t)(k % PERIOD);
}

static size_t start_phase(uint64_t seq)
{
    return (size_t)(seq % PERIOD * 31 % PERIOD);
}

void rl_payload_fill(uint8_t *buf, size_t size, uint64_t seq)
{
    pthread_once(&table_once, table_init);
    size_t phase = start_phase(seq);
    for (size_t pos = 0; pos < size;) {
        size_t n = size - pos < BLOCK ? size - pos : BLOCK;
        memcpy(buf + pos, table + phase, n);
        phase = (phase + n) % PERIOD;
        pos += n;
    }
}

int rl_payload_check(const uint8_t *buf, size_t len, uint64_t seq, size_t size, size_t *bad_at)
{
    pthread_once(&table_once, table_init);
    size_t common = len < size ? len : size;
    size_t phase = start_phase(seq);
    for (size_t pos = 0; pos < common;) {
        size_t n = common - pos < BLOCK ? common - pos : BLOCK;
        if (memcmp(buf + pos, table + phase, n) != 0) {
            size_t k = 0;
            while (buf[pos + k] == table[phase + k])
                k++;
            if (bad_at)
                *bad_at = pos + k;
            return RL_EINVAL;
        }
        phase = (phase + n) % PERIOD;
        pos += n;
    }
    if (len != size) {
        if (bad_at)
            *bad_at = common;
        return RL_EINVAL;
    }
    return RL_OK;
}
