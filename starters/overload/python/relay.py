# relay.py: your relay for the relaylab `overload` exercise (`lab show
# overload`). The server is set up for you: it listens on $RELAYLAB_LISTEN,
# holds a stub for the baseline at $RELAYLAB_BASELINE, takes at most as many
# calls as the gate can hold, and stops on SIGTERM. Process is given too, a
# plain relay (Lookup, then Work, on a fail-fast channel): it drops the
# client's deadline and lets the downstream calls run on after the client
# left. (The deadline and cancel rules are their own exercises, and this one
# judges them too: bring your Process from them.) The lesson is yours, the
# block between the TODO markers: Process with those rules, and admission
# control, enter() and leave(), which Process passes every call through
# around its downstream calls. `./run` starts this file; the generated code
# is in gen/ (`lab stubs python .` makes it again).
import os
import signal
import sys
import threading
import time
from concurrent import futures

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen"))
import relaylab_pb2 as pb  # noqa: E402
import relaylab_pb2_grpc as pb_grpc  # noqa: E402

MAX_INFLIGHT = 8  # Process calls with a downstream call in flight at once
MAX_QUEUE = 16  # calls waiting for one of those slots
SLACK_S = 0.05  # what a loaded machine adds to a call's way through the relay

# grpcio reports "no deadline" as about 9.2e18 seconds left, not None; a
# real deadline (grpc-timeout) is never above 10^8 hours.
NO_DEADLINE_S = 1e12


def time_left(context):
    """Seconds the caller has left, or None when it set no deadline."""
    left = context.time_remaining()
    return None if left > NO_DEADLINE_S else left


class Relay(pb_grpc.RelayServicer):
    def __init__(self, baseline):
        # A relaylab.Baseline stub: self.baseline.Lookup(request, timeout=...)
        # blocks; self.baseline.Lookup.future(request, timeout=...) does not,
        # and its future can be cancelled. The same for Work.
        self.baseline = baseline
        # The admission state, shared by every Process call's thread.
        self.cond = threading.Condition()  # guards what follows; wait() and notify() on it
        self.inflight = 0  # calls holding a slot (at most MAX_INFLIGHT)
        self.waiting = 0  # calls waiting for a slot (at most MAX_QUEUE)
        self.service_s = 0.0  # how long the backend holds a call: see served()

    def served(self, took_s):
        """Counts one call's service time into self.service_s (call it with
        self.cond held): a moving average that rises at once when a call
        took longer (a slowing backend must not fill the queue while the
        average catches up) and comes down slowly. A blackholed backend
        holds calls until their deadline, and that is what a waiting call
        can expect too."""
        self.service_s = took_s if took_s > self.service_s else 0.8 * self.service_s + 0.2 * took_s

    # >>> TODO(overload): Process with the deadline and cancel rules, and admission control.
    # Process: bring yours from the deadline and cancel exercises (each
    #   downstream call with only the time left, none without a client
    #   deadline; the client leaving cancels the call in flight and starts no
    #   further one); it calls enter(context) before its first downstream call
    #   and leave(took_s) after its last, with the seconds the backend held it.
    # enter(context) returns once the call holds one of the MAX_INFLIGHT slots,
    # or refuses it: context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, why),
    # which raises, so Process goes no further.
    #   1. A slot free and no call waiting: take it.
    #   2. Otherwise refuse at once when MAX_QUEUE calls wait already, or when
    #      the time left (time_left(context); None: no deadline) cannot cover
    #      the expected wait (the calls ahead, MAX_INFLIGHT at a time, each
    #      self.service_s) plus this call's own service and SLACK_S.
    #   3. Else wait for a slot (self.cond.wait(timeout): wake up now and then
    #      to look at the clock). Leave the queue, refused, as soon as the time
    #      left no longer covers the service, or the client has gone
    #      (context.is_active() is False): a call the relay cannot serve in
    #      time is never forwarded.
    # leave(took_s) gives the slot back, counts took_s (self.served) and wakes
    # a waiting call (self.cond.notify()).
    # Until then, Process is a plain relay and the gate lets one call through
    # at a time and refuses the rest:
    def enter(self, context):
        with self.cond:
            if self.inflight == 0:
                self.inflight += 1
                return
        context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                      "TODO in relay.py: no admission control yet, the gate takes one call at a time "
                      "(its TODO block)")

    def leave(self, took_s):
        with self.cond:
            self.inflight -= 1
            self.served(took_s)

    def Process(self, request, context):
        self.enter(context)
        start = time.monotonic()
        try:
            try:
                self.baseline.Lookup(pb.LookupRequest(tag=request.tag, delay_ms=request.lookup_delay_ms))
                work = self.baseline.Work(pb.WorkRequest(tag=request.tag, steps=request.steps,
                                                         step_ms=request.step_ms))
            except grpc.RpcError as e:
                context.abort(e.code(), e.details() or "")
            return pb.ProcessReply(tag=work.tag, steps_done=work.steps_done)
        finally:
            self.leave(time.monotonic() - start)
    # <<< TODO


def main():
    listen = os.environ.get("RELAYLAB_LISTEN", "127.0.0.1:0")
    baseline = os.environ.get("RELAYLAB_BASELINE")
    if not baseline:
        sys.exit("set RELAYLAB_BASELINE=host:port (where the baseline listens)")
    # A fail-fast channel: grpcio's default. wait_for_ready=True on a call
    # would hold it until the backend is back or its deadline passes.
    channel = grpc.insecure_channel(baseline)
    # grpcio's thread pool is a queue too, with no bound: a call beyond its
    # threads waits there unseen by the gate. So the server takes at most
    # as many calls as the gate can hold (it refuses the rest itself,
    # RESOURCE_EXHAUSTED) and has a thread for each.
    limit = MAX_INFLIGHT + MAX_QUEUE
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=limit), maximum_concurrent_rpcs=limit)
    pb_grpc.add_RelayServicer_to_server(Relay(pb_grpc.BaselineStub(channel)), server)
    port = server.add_insecure_port(listen)
    if port == 0:
        sys.exit(f"cannot listen on {listen}")
    # SIGTERM (the grader's stop): take no new calls, give running ones 1 s,
    # exit 0. (Draining within the platform's grace is the shutdown exercise.)
    signal.signal(signal.SIGTERM, lambda *_: server.stop(1.0))
    server.start()
    print(f"relay listening on {listen.rsplit(':', 1)[0]}:{port}", flush=True)
    server.wait_for_termination()


if __name__ == "__main__":
    main()
