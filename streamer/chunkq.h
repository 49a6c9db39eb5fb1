/* chunkq: the unbounded-queue producer behind `streamer --unbounded`, kept
 * as the classic mistake for instructors and for the grader's tests.
 *
 * A thread per call builds every chunk as fast as it can and appends it to a
 * mutex-protected linked list, while the call's sender takes them off as the
 * flow-control window lets it. Nothing makes the thread wait for the reader,
 * so a stalled reader leaves count * size bytes in the queue (3000 x 64 KiB:
 * about 190 MiB). The sender is the server's loop thread, which must never
 * block, so it polls with a non-blocking pop instead of waiting on a
 * condition variable. The queue knows nothing of the Streamer service: its
 * caller (produce.c) hands it the function that builds a chunk. */
#ifndef STREAMER_CHUNKQ_H
#define STREAMER_CHUNKQ_H

#include <grpc/byte_buffer.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct st_chunkq st_chunkq;

/* Builds chunk |seq| of |size| payload bytes, owned by the caller. Called on
 * the queue's own thread: it must be thread-safe. */
typedef grpc_byte_buffer *(*st_chunkq_build)(uint64_t seq, uint32_t size);

/* Starts the producer thread for chunks 0..|count|-1 of |size| bytes, each
 * made by |build|. |queued| (borrowed, must outlive the queue) gets every
 * chunk's bytes added while the chunk sits in the queue. Free with
 * st_chunkq_free. Pop and free are for one consumer thread (the call's
 * loop); only the producer thread runs |build|. */
st_chunkq *st_chunkq_start(uint32_t count, uint32_t size, st_chunkq_build build, atomic_int_fast64_t *queued);

/* Takes the next chunk off the queue without waiting: returns it (owned by
 * the caller), or NULL when the thread has not built it yet. */
grpc_byte_buffer *st_chunkq_pop(st_chunkq *q);

/* Stops the thread (it checks between chunks), joins it and frees every
 * chunk still queued. Accepts NULL. */
void st_chunkq_free(st_chunkq *q);

#endif
