/* rl_payload: the flow-control lab's payload pattern, written by producers and
 * checked by every reader (bench, grader, lab). Chunk |seq| carries
 * payload[i] = (seq * 31 + i) mod 251: the prime period makes a chunk
 * delivered under the wrong number, shifted, or cut short show up at once.
 * It lives in lib/ because readers in three programs share it. */
#ifndef RL_PAYLOAD_H
#define RL_PAYLOAD_H

#include <stddef.h>
#include <stdint.h>

/* The expected byte at offset |i| of chunk |seq|. */
static inline uint8_t rl_payload_byte(uint64_t seq, uint64_t i)
{
    return (uint8_t)((seq % 251 * 31 + i % 251) % 251);
}

/* Writes the |size| bytes of chunk |seq| into |buf|. */
void rl_payload_fill(uint8_t *buf, size_t size, uint64_t seq);

/* Checks that |buf| (|len| bytes) is chunk |seq| of |size| bytes. Returns 0,
 * or RL_EINVAL with *bad_at (may be NULL) set to the first wrong offset (|len|
 * or |size|, the shorter, when only the length is wrong). */
int rl_payload_check(const uint8_t *buf, size_t len, uint64_t seq, size_t size, size_t *bad_at);

#endif
