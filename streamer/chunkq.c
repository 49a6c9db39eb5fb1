/* chunkq: producer thread + unbounded queue (the mistake); see chunkq.h. */
#include "chunkq.h"

#include "rl_alloc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

typedef struct chunk_node {
    struct chunk_node *next;
    grpc_byte_buffer *buf; /* owned by the queue until popped */
    size_t bytes;
} chunk_node;

struct st_chunkq {
    pthread_mutex_t mu;
    chunk_node *head, *tail; /* guarded by mu */
    atomic_bool stop;        /* set by st_chunkq_free; the thread polls it */
    uint32_t count, size;
    st_chunkq_build build;
    atomic_int_fast64_t *queued; /* the caller's counter of bytes in the queue */
    pthread_t thread;
};

static void *produce_all(void *arg)
{
    st_chunkq *q = arg;
    for (uint32_t seq = 0; seq < q->count && !atomic_load(&q->stop); seq++) {
        chunk_node *n = rl_xmalloc(sizeof *n);
        n->next = NULL;
        n->buf = q->build(seq, q->size);
        n->bytes = grpc_byte_buffer_length(n->buf);
        atomic_fetch_add(q->queued, (int_fast64_t)n->bytes);
        pthread_mutex_lock(&q->mu);
        if (q->tail)
            q->tail->next = n;
        else
            q->head = n;
        q->tail = n;
        pthread_mutex_unlock(&q->mu);
    }
    return NULL;
}

st_chunkq *st_chunkq_start(uint32_t count, uint32_t size, st_chunkq_build build, atomic_int_fast64_t *queued)
{
    st_chunkq *q = rl_xcalloc(1, sizeof *q);
    pthread_mutex_init(&q->mu, NULL);
    atomic_init(&q->stop, false);
    q->count = count;
    q->size = size;
    q->build = build;
    q->queued = queued;
    if (pthread_create(&q->thread, NULL, produce_all, q) != 0)
        abort(); /* out of threads is as fatal as out of memory here */
    return q;
}

grpc_byte_buffer *st_chunkq_pop(st_chunkq *q)
{
    pthread_mutex_lock(&q->mu);
    chunk_node *n = q->head;
    if (n) {
        q->head = n->next;
        if (!q->head)
            q->tail = NULL;
    }
    pthread_mutex_unlock(&q->mu);
    if (!n)
        return NULL;
    atomic_fetch_sub(q->queued, (int_fast64_t)n->bytes);
    grpc_byte_buffer *buf = n->buf;
    free(n);
    return buf;
}

void st_chunkq_free(st_chunkq *q)
{
    if (!q)
        return;
    atomic_store(&q->stop, true);
    pthread_join(q->thread, NULL);
    grpc_byte_buffer *buf;
    while ((buf = st_chunkq_pop(q)) != NULL)
        grpc_byte_buffer_destroy(buf);
    pthread_mutex_destroy(&q->mu);
    free(q);
}
