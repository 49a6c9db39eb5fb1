/* rl_probe: a client unary call driven step by step from one thread, and the
 * Observer queries that the grader, the lab and the benches make.
 *
 * Each rl_probe_call owns a private completion queue, so waiting on one call
 * never consumes another call's event: a grader can start a call, poll the
 * baseline's observer while it runs, cancel it at a chosen instant and then
 * collect its status. The whole call is rl_client's single batch (send
 * metadata, message and close; receive metadata, message and status), which
 * keeps the status visible when a retry policy is active. Instants are
 * CLOCK_MONOTONIC nanoseconds, like rl_deadline. (The relay's loop-driven
 * downstream call is rl_client; this one is for callers without a loop.)
 *
 * Threads: unlike the loop modules, any thread may use a call, one thread at
 * a time; the Observer queries block the calling thread. */
#ifndef RL_PROBE_H
#define RL_PROBE_H

#include "relaylab.pb-c.h"
#include "rl_client.h"
#include "rl_loop.h"

#include <grpc/grpc.h>
#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RL_NO_DEADLINE INT64_MAX

typedef struct rl_probe_call {
    grpc_completion_queue *cq; /* owned; private to this call */
    rl_tag tag;                /* the batch's tag */
    rl_client_batch batch;     /* the call (NULL before start and after
                                * fini), its status and details (valid once
                                * done) and its reply */
    int64_t deadline_ns;       /* the deadline D given to gRPC; RL_NO_DEADLINE */
    int64_t start_ns;          /* just before the batch was started */
    int64_t end_ns;            /* when a wait saw the status (0 until done) */
    int64_t cancel_ns;         /* instant of rl_probe_call_cancel, 0 if none */
    bool started;              /* the batch was accepted by gRPC */
    bool done;                 /* the status arrived */
} rl_probe_call;

/* Starts a unary call of |method| ("/relaylab.Relay/Process") on |ch| with
 * request |req| and absolute deadline |deadline_ns| (RL_NO_DEADLINE: none).
 * |c| is caller memory; finish it with rl_probe_call_fini even when this
 * fails. Returns 0 or RL_EGRPC. */
int rl_probe_call_start(rl_probe_call *c, grpc_channel *ch, const char *method, const ProtobufCMessage *req,
                        int64_t deadline_ns);

/* Waits until the status arrived or |until_ns| passed. Returns 0 when done
 * (see c->status), RL_ETIMEOUT when time ran out first, or RL_EINVAL when
 * the call was never started (rl_probe_call_start failed). */
int rl_probe_call_wait(rl_probe_call *c, int64_t until_ns);

/* Cancels the call (grpc_call_cancel) and returns the instant it did so,
 * also kept in c->cancel_ns. Returns 0 and does nothing when the call is not
 * running. */
int64_t rl_probe_call_cancel(rl_probe_call *c);

/* Decodes the reply as |desc|. Returns 0 and sets *out (free with
 * protobuf_c_message_free_unpacked), or RL_EINVAL if no valid reply came. */
int rl_probe_call_reply(const rl_probe_call *c, const ProtobufCMessageDescriptor *desc, ProtobufCMessage **out);

/* Copies the status message into |buf| (NUL-terminated, truncated). */
void rl_probe_call_details(const rl_probe_call *c, char *buf, size_t len);

/* Lets go of the gRPC call of an answered |c| (its status, details, reply
 * and instants stay for reading); nothing when it is not done. A live
 * client drops a call once it has its answer, and a C-core connection that
 * received a GOAWAY closes only when its last call is released: held, it
 * keeps a grpc-go server's GracefulStop waiting (docs/grpc-facts.md, "Go"). */
void rl_probe_call_release(rl_probe_call *c);

/* Reads what the server sent on |ch|'s connection until the channel leaves
 * READY (a GOAWAY read, or the connection gone) or |until_ns| passes;
 * returns true when it left. The probe reads a connection only while a
 * call waits on it (rl_probe_call_wait), where a live client reads data as
 * it arrives: measured with grpc-go's GracefulStop, a GOAWAY sat unread
 * 5 ms and was read in under 1.5 ms once polled, and a call started before
 * that went out inside the window in which grpc-go still accepts streams
 * (docs/grpc-facts.md, "Go"). */
bool rl_probe_channel_read(grpc_channel *ch, int64_t until_ns);

/* Cancels a call still pending, waits (bounded, 5 s) for its batch, and
 * releases everything. Safe on a zeroed or finished struct. */
void rl_probe_call_fini(rl_probe_call *c);

/* "OK", "DEADLINE_EXCEEDED", ...; "STATUS_<n>" for unknown codes. Static or
 * thread-local storage. */
const char *rl_status_name(int code);

/* ---- Observer (on the baseline) ---- */

/* Asks the baseline what it saw of calls tagged |tag| ("" = all). Returns 0
 * and sets *out (free with relaylab__observe_reply__free_unpacked), or
 * RL_ETIMEOUT / RL_EGRPC when the observer did not answer in |timeout_ms|. */
int rl_observe(grpc_channel *baseline, const char *tag, int64_t timeout_ms, Relaylab__ObserveReply **out);

/* Condition for rl_observe_until; |user| is passed through. */
typedef bool (*rl_observe_pred)(const Relaylab__ObserveReply *r, void *user);

/* Polls the observer every |poll_ms| until |pred| holds or |until_ns|
 * passed. Returns 0 with *out the reply that satisfied |pred|, RL_ETIMEOUT
 * with *out the last reply (may be NULL), or RL_EGRPC when the observer
 * failed three times in a row. *out is always the caller's to free. */
int rl_observe_until(grpc_channel *baseline, const char *tag, rl_observe_pred pred, void *user, int64_t until_ns,
                     int64_t poll_ms, Relaylab__ObserveReply **out);

/* A condition for rl_observe_until: every record has ended, and there are
 * at least *(const size_t *)|min_calls| of them (NULL: any number). */
bool rl_observe_all_ended(const Relaylab__ObserveReply *r, void *min_calls);

/* The |nth| (0-based) record of |method| in arrival order, or NULL. */
const Relaylab__CallRecord *rl_observe_find(const Relaylab__ObserveReply *r, const char *method, size_t nth);

/* How many records of |method| (NULL: any) |r| holds. */
size_t rl_observe_count(const Relaylab__ObserveReply *r, const char *method);

/* Observer/SetFault; see the proto. Returns 0 or an RL_E code. */
int rl_observer_set_fault(grpc_channel *baseline, const char *method, uint32_t fail_first, int32_t status,
                          bool after_first_message, int64_t timeout_ms);

#endif
