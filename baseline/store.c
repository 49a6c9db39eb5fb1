/* store: the baseline's observations and faults; see store.h. */
#include "store.h"

#include "baseline.h"
#include "rl_alloc.h"
#include "rl_err.h"
#include "rl_probe.h"

#include <errno.h>
#include <grpc/support/alloc.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct record {
    uint64_t seq;
    char *tag;
    char *peer;         /* NULL until bl_store_set_peer */
    const char *method; /* static string */
    bool has_deadline;
    int64_t deadline_ms;
    int64_t arrival_ns, end_ns;
    uint32_t steps_done;
    int32_t status;
    bool cancelled, ended, faulted;
    uint32_t attempt;
    int64_t start_ns;
    bool no_time_left, wasted, blackholed;
} record;

typedef struct fault {
    char method[16];
    uint32_t remaining;
    grpc_status_code status;
    bool after_first_message;
} fault;

#define MAX_FAULTS 8

struct bl_store {
    pthread_mutex_t mu;
    record *recs; /* recs[i].seq == base + i */
    size_t n, cap;
    uint64_t base; /* seq of recs[0]; records below it were reset away */
    fault faults[MAX_FAULTS];
    size_t nfaults;
    FILE *out;         /* JSON lines, or NULL */
    uint32_t capacity; /* Work calls at once; 0: no limit */
    uint32_t busy;     /* Work slots taken */
    uint64_t *waiting; /* record ids queued for a slot, oldest first */
    size_t nwaiting, capwaiting;
    bl_outage outage;
};

int bl_store_new(const char *record_path, bl_store **out)
{
    FILE *f = NULL;
    if (record_path && !(f = fopen(record_path, "w")))
        return RL_ESYS;
    bl_store *s = rl_xcalloc(1, sizeof *s);
    pthread_mutex_init(&s->mu, NULL);
    s->base = 1;
    s->out = f;
    *out = s;
    return RL_OK;
}

static void drop_records(bl_store *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->recs[i].tag);
        free(s->recs[i].peer);
    }
    s->base += s->n;
    s->n = 0;
}

void bl_store_free(bl_store *s)
{
    if (!s)
        return;
    drop_records(s);
    free(s->recs);
    free(s->waiting);
    if (s->out)
        fclose(s->out);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

uint64_t bl_store_open(bl_store *s, const char *tag, const char *method, bool has_deadline, int64_t deadline_ms,
                       int64_t arrival_ns, uint32_t attempt)
{
    char *copy = rl_xstrdup(tag);
    pthread_mutex_lock(&s->mu);
    RL_GROW(s->recs, s->n, s->cap, 256);
    record *r = &s->recs[s->n];
    memset(r, 0, sizeof *r);
    r->seq = s->base + s->n++;
    r->tag = copy;
    r->method = method;
    r->has_deadline = has_deadline;
    r->deadline_ms = has_deadline ? deadline_ms : 0;
    r->arrival_ns = arrival_ns;
    r->attempt = attempt;
    /* gRPC refuses to send a call whose deadline has passed, so this needs
     * one that ran out in flight, or a wire timeout of 0. */
    r->no_time_left = has_deadline && deadline_ms <= 0;
    uint64_t id = r->seq;
    pthread_mutex_unlock(&s->mu);
    return id;
}

/* Takes the lock and returns the live record for |id|, or NULL when a
 * reset dropped it: every update of a running call starts here, and the
 * caller unlocks whatever this returned. */
static record *lock_record(bl_store *s, uint64_t id)
{
    pthread_mutex_lock(&s->mu);
    if (id < s->base || id - s->base >= s->n)
        return NULL;
    return &s->recs[id - s->base];
}

void bl_store_set_peer(bl_store *s, uint64_t id, const char *peer)
{
    char *copy = rl_xstrdup(peer ? peer : "");
    record *r = lock_record(s, id);
    if (r && !r->peer) {
        r->peer = copy;
        copy = NULL;
    }
    pthread_mutex_unlock(&s->mu);
    free(copy);
}

void bl_store_progress(bl_store *s, uint64_t id, uint32_t steps_done)
{
    record *r = lock_record(s, id);
    if (r)
        r->steps_done = steps_done;
    pthread_mutex_unlock(&s->mu);
}

static void write_line(FILE *f, const record *r)
{
    json_t *o = json_pack("{s:I, s:s, s:s, s:o, s:I, s:o, s:i, s:i, s:s, s:b, s:i, s:b, s:s, s:I, s:b}", "seq",
                          (json_int_t)r->seq, "tag", r->tag, "method", r->method, "deadline_ms",
                          r->has_deadline ? json_integer(r->deadline_ms) : json_null(), "arrival_ns",
                          (json_int_t)r->arrival_ns, "end_ns", json_integer(r->end_ns), "steps_done",
                          (int)r->steps_done, "status", (int)r->status, "status_name", rl_status_name(r->status),
                          "cancelled", r->cancelled, "attempt", (int)r->attempt, "faulted", r->faulted, "peer",
                          r->peer ? r->peer : "", "start_ns", (json_int_t)r->start_ns, "wasted", r->wasted);
    if (!o)
        return;
    char *text = json_dumps(o, JSON_COMPACT);
    if (text) {
        fprintf(f, "%s\n", text);
        fflush(f);
        free(text);
    }
    json_decref(o);
}

void bl_store_close(bl_store *s, uint64_t id, int64_t end_ns, grpc_status_code status, bool cancelled, bool faulted)
{
    record *r = lock_record(s, id);
    if (r && !r->ended) {
        r->end_ns = end_ns;
        r->status = status;
        r->cancelled = cancelled;
        r->faulted = faulted;
        r->ended = true;
        /* Its caller's time ran out here (its deadline, or the cancel that
         * came with the caller's deadline a moment before ours): whatever
         * it got, in the queue or at work, was for a caller that had gone.
         * A blackholed call is the outage's, never waste. */
        r->wasted =
            r->no_time_left || (!r->blackholed && !faulted && (status == GRPC_STATUS_DEADLINE_EXCEEDED || cancelled));
        if (s->out)
            write_line(s->out, r);
    }
    pthread_mutex_unlock(&s->mu);
}

void bl_store_snapshot(bl_store *s, const char *tag, Relaylab__ObserveReply *reply)
{
    pthread_mutex_lock(&s->mu);
    size_t match = 0;
    for (size_t i = 0; i < s->n; i++)
        if (!*tag || strcmp(s->recs[i].tag, tag) == 0)
            match++;
    /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers, sized by one pointer */
    reply->calls = rl_xcalloc(match, sizeof *reply->calls);
    reply->n_calls = 0;
    for (size_t i = 0; i < s->n; i++) {
        const record *r = &s->recs[i];
        if (*tag && strcmp(r->tag, tag) != 0)
            continue;
        Relaylab__CallRecord *c = rl_xmalloc(sizeof *c);
        relaylab__call_record__init(c);
        c->seq = r->seq;
        c->tag = rl_xstrdup(r->tag);
        c->peer = rl_xstrdup(r->peer ? r->peer : "");
        c->method = (char *)r->method;
        c->has_deadline = r->has_deadline;
        c->deadline_ms = r->deadline_ms;
        c->arrival_ns = r->arrival_ns;
        c->end_ns = r->end_ns;
        c->steps_done = r->steps_done;
        c->status = r->status;
        c->cancelled = r->cancelled;
        c->ended = r->ended;
        c->attempt = r->attempt;
        c->faulted = r->faulted;
        c->start_ns = r->start_ns;
        c->no_time_left = r->no_time_left;
        c->wasted = r->wasted;
        reply->calls[reply->n_calls++] = c;
    }
    pthread_mutex_unlock(&s->mu);
}

void bl_store_snapshot_free(Relaylab__ObserveReply *reply)
{
    for (size_t i = 0; i < reply->n_calls; i++) {
        free(reply->calls[i]->tag);
        free(reply->calls[i]->peer);
        free(reply->calls[i]);
    }
    free(reply->calls);
    reply->calls = NULL;
    reply->n_calls = 0;
}

uint64_t bl_store_reset(bl_store *s)
{
    pthread_mutex_lock(&s->mu);
    uint64_t dropped = s->n;
    drop_records(s);
    s->nfaults = 0;
    pthread_mutex_unlock(&s->mu);
    return dropped;
}

void bl_store_started(bl_store *s, uint64_t id, int64_t start_ns)
{
    record *r = lock_record(s, id);
    if (r)
        r->start_ns = start_ns;
    pthread_mutex_unlock(&s->mu);
}

void bl_store_blackholed(bl_store *s, uint64_t id)
{
    record *r = lock_record(s, id);
    if (r)
        r->blackholed = true;
    pthread_mutex_unlock(&s->mu);
}

void bl_store_set_capacity(bl_store *s, uint32_t max_work)
{
    pthread_mutex_lock(&s->mu);
    s->capacity = max_work;
    pthread_mutex_unlock(&s->mu);
}

bool bl_store_slot_admit(bl_store *s, uint64_t id)
{
    pthread_mutex_lock(&s->mu);
    if (!s->capacity || (!s->nwaiting && s->busy < s->capacity)) {
        s->busy++;
        pthread_mutex_unlock(&s->mu);
        return true;
    }
    RL_GROW(s->waiting, s->nwaiting, s->capwaiting, 64);
    s->waiting[s->nwaiting++] = id;
    pthread_mutex_unlock(&s->mu);
    return false;
}

/* Removes queue entry |i|; called with the lock. */
static void unqueue(bl_store *s, size_t i)
{
    memmove(&s->waiting[i], &s->waiting[i + 1], (s->nwaiting - i - 1) * sizeof *s->waiting);
    s->nwaiting--;
}

bool bl_store_slot_take(bl_store *s, uint64_t id)
{
    bool took = false;
    pthread_mutex_lock(&s->mu);
    if (s->nwaiting && s->waiting[0] == id && (!s->capacity || s->busy < s->capacity)) {
        unqueue(s, 0);
        s->busy++;
        took = true;
    }
    pthread_mutex_unlock(&s->mu);
    return took;
}

void bl_store_slot_leave(bl_store *s, uint64_t id)
{
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->nwaiting; i++) {
        if (s->waiting[i] == id) {
            unqueue(s, i);
            break;
        }
    }
    pthread_mutex_unlock(&s->mu);
}

void bl_store_slot_release(bl_store *s)
{
    pthread_mutex_lock(&s->mu);
    if (s->busy)
        s->busy--;
    pthread_mutex_unlock(&s->mu);
}

void bl_store_set_outage(bl_store *s, bl_outage mode)
{
    pthread_mutex_lock(&s->mu);
    s->outage = mode;
    pthread_mutex_unlock(&s->mu);
}

bl_outage bl_store_outage(bl_store *s)
{
    pthread_mutex_lock(&s->mu);
    bl_outage o = s->outage;
    pthread_mutex_unlock(&s->mu);
    return o;
}

void bl_store_set_fault(bl_store *s, const char *method, uint32_t fail_first, grpc_status_code status,
                        bool after_first_message)
{
    pthread_mutex_lock(&s->mu);
    fault *f = NULL;
    for (size_t i = 0; i < s->nfaults; i++)
        if (strcmp(s->faults[i].method, method) == 0)
            f = &s->faults[i];
    if (!f && s->nfaults < MAX_FAULTS)
        f = &s->faults[s->nfaults++];
    if (f) {
        snprintf(f->method, sizeof f->method, "%s", method);
        f->remaining = fail_first;
        f->status = status;
        f->after_first_message = after_first_message;
    }
    pthread_mutex_unlock(&s->mu);
}

bool bl_store_take_fault(bl_store *s, const char *method, grpc_status_code *status, bool *after_first_message)
{
    bool hit = false;
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->nfaults; i++) {
        fault *f = &s->faults[i];
        if (strcmp(f->method, method) == 0 && f->remaining > 0) {
            f->remaining--;
            *status = f->status;
            *after_first_message = f->after_first_message;
            hit = true;
        }
    }
    pthread_mutex_unlock(&s->mu);
    return hit;
}

void bl_record_peer(bl_store *s, uint64_t id, grpc_call *call)
{
    char *peer = grpc_call_get_peer(call);
    bl_store_set_peer(s, id, peer);
    gpr_free(peer);
}

uint32_t bl_attempt(const grpc_metadata_array *md)
{
    for (size_t i = 0; i < md->count; i++) {
        if (grpc_slice_str_cmp(md->metadata[i].key, "grpc-previous-rpc-attempts") == 0) {
            char *v = grpc_slice_to_c_string(md->metadata[i].value);
            uint32_t n = (uint32_t)strtoul(v, NULL, 10);
            gpr_free(v);
            return n + 1;
        }
    }
    return 1;
}
