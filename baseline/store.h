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
void bl_store_close(bl_store *s, uint64_t id, int64_t end_ns, grpc_status_code status, bool cancelled,
                    bool faulted);

/* Fills |reply| with copies of the records whose tag is |tag| (every record
 * when |tag| is empty). Release with bl_store_snapshot_free. */
void bl_store_snapshot(bl_store *s, const char *tag, Relaylab__ObserveReply *reply);
void bl_store_snapshot_free(Relaylab__ObserveReply *reply);

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
