/* store: what the baseline saw, shared by all its loop threads.
 *
 * One record per call (tag, method, deadline at arrival, instants, steps,
 * status), updated live while the call runs so the grader can watch Work's
 * steps advance; plus the fault-injection table the retry lab uses. A mutex
 * guards it: the observer reads from any thread, and updates are a few
 * stores, far cheaper than the calls they describe. With a record file, each
 * ended call is also written as one JSON line. */
#ifndef BL_STORE_H
#define BL_STORE_H

#include "relaylab.pb-c.h"

#include <grpc/grpc.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct bl_store bl_store;

/* Opens the store. |record_path| may be NULL; otherwise it is truncated and
 * receives JSON lines. Returns 0 and sets *out, or RL_ESYS when the file
 * cannot be opened (errno is kept). */
int bl_store_new(const char *record_path, bl_store **out);
void bl_store_free(bl_store *s);

/* Starts a record and returns its id (its seq, from 1). |has_deadline| false
 * means the call came with none and |deadline_ms| is ignored. */
uint64_t bl_store_open(bl_store *s, const char *tag, const char *method, bool has_deadline, int64_t deadline_ms,
                       int64_t arrival_ns, uint32_t attempt);

/* Sets a record's peer (copied): the connection the call came on, so that
 * calls can be counted per connection. Ids from before a reset are
 * ignored. */
void bl_store_set_peer(bl_store *s, uint64_t id, const char *peer);

/* Updates a running record's progress. Ids from before a reset are ignored. */
void bl_store_progress(bl_store *s, uint64_t id, uint32_t steps_done);

/* Ends a record at |end_ns|. */
void bl_store_close(bl_store *s, uint64_t id, int64_t end_ns, grpc_status_code status, bool cancelled, bool faulted);

/* Fills |reply| with copies of the records whose tag is |tag| (every record
 * when |tag| is empty). Release with bl_store_snapshot_free. */
void bl_store_snapshot(bl_store *s, const char *tag, Relaylab__ObserveReply *reply);
void bl_store_snapshot_free(Relaylab__ObserveReply *reply);

/* Marks record |id| as having begun its work at |start_ns| (Lookup at once,
 * Work once a capacity slot took it). */
void bl_store_started(bl_store *s, uint64_t id, int64_t start_ns);

/* Marks record |id| as held by the blackhole (never answered by choice):
 * its end by the deadline is not counted as waste. */
void bl_store_blackholed(bl_store *s, uint64_t id);

/* ---- the overload lab's world (Observer/SetCapacity, SetOutage) ----
 * Work calls beyond the capacity wait in a FIFO queue. Calls live on
 * different loop threads, so a waiter polls with bl_store_slot_take (a
 * timer on its own loop) rather than being woken by another thread. */

/* At most |max_work| Work calls at once; 0: no limit. Calls already
 * running keep their slots. */
void bl_store_set_capacity(bl_store *s, uint32_t max_work);

/* Asks for a Work slot for record |id|: true when it got one at once (no
 * limit, or a slot free and nobody waiting before it), else it joins the
 * queue and polls with bl_store_slot_take. */
bool bl_store_slot_admit(bl_store *s, uint64_t id);

/* True when |id| is at the head of the queue and a slot is free: it leaves
 * the queue holding a slot (give it back with bl_store_slot_release). */
bool bl_store_slot_take(bl_store *s, uint64_t id);

/* Leaves the queue without a slot (its deadline passed, it was cancelled);
 * nothing when |id| is not queued. */
void bl_store_slot_leave(bl_store *s, uint64_t id);

/* Gives back a slot taken with bl_store_slot_take. */
void bl_store_slot_release(bl_store *s);

typedef enum bl_outage {
    BL_OUTAGE_NONE = 0,  /* serve normally */
    BL_OUTAGE_BLACKHOLE, /* accept Lookup and Work, never answer them */
} bl_outage;

void bl_store_set_outage(bl_store *s, bl_outage mode);
bl_outage bl_store_outage(bl_store *s);

/* Forgets every record and fault; returns how many records were dropped. */
uint64_t bl_store_reset(bl_store *s);

/* Arms a fault for |method|: its next |fail_first| calls fail with |status|
 * (after the first message when |after_first_message|). */
void bl_store_set_fault(bl_store *s, const char *method, uint32_t fail_first, grpc_status_code status,
                        bool after_first_message);

/* Consumes one failure of |method|'s fault. Returns true and sets *status
 * and *after_first_message when this call must fail. */
bool bl_store_take_fault(bl_store *s, const char *method, grpc_status_code *status, bool *after_first_message);

#endif
