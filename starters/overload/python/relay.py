# relay.py: your relay for the relaylab `overload` exercise (`lab show
# overload`). The server is set up for you: it listens on $RELAYLAB_LISTEN,
# holds a stub for the baseline at $RELAYLAB_BASELINE, and drains on SIGTERM
# (the shutdown exercise's rules). Process is written too: each downstream
# call gets only the time left, the client leaving cancels the call in
# flight, and the calls are fail-fast (grpcio's default, no wait_for_ready),
# so with the backend down they fail UNAVAILABLE at once. The lesson is
# yours: admission control, the Gate's enter() and leave() between the TODO
# markers, which Process passes every call through before it calls the
# baseline. `./run` starts this file; the generated code is in gen/ (`lab
# stubs python .` makes it again).
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

# The grace the platform gives at SIGTERM (the grader sets it), in seconds.
GRACE_S = int(os.environ.get("RELAYLAB_GRACE_MS", "5000")) / 1000.0

# grpcio reports "no deadline" as about 9.2e18 seconds left, not None; a
# real deadline (grpc-timeout) is never above 10^8 hours.
NO_DEADLINE_S = 1e12


def time_left(context):
    """Seconds the caller has left, or None when it set no deadline."""
    left = context.time_remaining()
    return None if left > NO_DEADLINE_S else left


class Gate:
    """Admission control in front of the downstream calls. Process calls
    enter(context) before its first downstream call and leave(took_s) after
    its last, with the seconds the backend held it."""

    def __init__(self):
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

    # >>> TODO(overload): admission control: enter() and leave().
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
    # Until then, the Gate lets one call through at a time and refuses the rest:
    def enter(self, context):
        with self.cond:
            if self.inflight == 0:
                self.inflight += 1
                return
        context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                      "TODO in relay.py: no admission control yet, the Gate takes one call at a time "
                      "(its TODO block)")

    def leave(self, took_s):
        with self.cond:
            self.inflight -= 1
            self.served(took_s)
    # <<< TODO


class Downstream:
    """The downstream calls of one Process call. cancel() stops the one in
    flight and refuses to start any later one; the lock closes the race
    between the client leaving and the next hop starting."""

    def __init__(self):
        self.lock = threading.Lock()
        self.future = None
        self.cancelled = False

    def cancel(self):
        with self.lock:
            self.cancelled = True
            if self.future is not None:
                self.future.cancel()

    def call(self, method, req, context):
        """|method| with the time the client has left (read now, just before
        the hop); fails |context| with the downstream call's status if it
        fails, and forwards nothing once the time is up or the client gone."""
        timeout = time_left(context)
        if timeout is not None and timeout <= 0:
            context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, "no time left for the next call")
        with self.lock:
            if self.cancelled:
                context.abort(grpc.StatusCode.CANCELLED, "the client went away")
            self.future = method.future(req, timeout=timeout)
        try:
            return self.future.result()
        except grpc.FutureCancelledError:
            context.abort(grpc.StatusCode.CANCELLED, "the client went away")
        except grpc.RpcError as e:
            context.abort(e.code(), e.details() or "")


class Relay(pb_grpc.RelayServicer):
    def __init__(self, baseline):
        self.baseline = baseline
        self.gate = Gate()

    def Process(self, request, context):
        self.gate.enter(context)
        start = time.monotonic()
        try:
            calls = Downstream()
            # Runs when this RPC ends for any reason (the client cancelling,
            # its deadline passing); False means it has already ended.
            if not context.add_callback(calls.cancel):
                calls.cancel()
            calls.call(self.baseline.Lookup, pb.LookupRequest(tag=request.tag, delay_ms=request.lookup_delay_ms),
                       context)
            work = calls.call(self.baseline.Work,
                              pb.WorkRequest(tag=request.tag, steps=request.steps, step_ms=request.step_ms), context)
            return pb.ProcessReply(tag=work.tag, steps_done=work.steps_done)
        finally:
            self.gate.leave(time.monotonic() - start)


def leave_now(code=0):
    """Exits now, whatever threads are left (a plain exit would wait for
    the server's worker threads)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def main():
    listen = os.environ.get("RELAYLAB_LISTEN", "127.0.0.1:0")
    baseline = os.environ.get("RELAYLAB_BASELINE")
    if not baseline:
        sys.exit("set RELAYLAB_BASELINE=host:port (where the baseline listens)")
    # A fail-fast channel: grpcio's default. wait_for_ready=True on a call
    # would hold it until the backend is back or its deadline passes.
    channel = grpc.insecure_channel(baseline)
    # grpcio's thread pool is a queue too, with no bound: a call beyond its
    # threads waits there unseen by the Gate. So the server takes at most
    # as many calls as the Gate can hold (it refuses the rest itself,
    # RESOURCE_EXHAUSTED) and has a thread for each.
    limit = MAX_INFLIGHT + MAX_QUEUE
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=limit), maximum_concurrent_rpcs=limit)
    pb_grpc.add_RelayServicer_to_server(Relay(pb_grpc.BaselineStub(channel)), server)
    port = server.add_insecure_port(listen)
    if port == 0:
        sys.exit(f"cannot listen on {listen}")

    first = threading.Event()

    def on_signal(signum, frame):
        # SIGTERM: take no new calls, give the ones in flight the grace
        # (at its end grpcio cancels them, and so their downstream calls),
        # then exit 0. A second SIGTERM, or a SIGINT, means now. Python runs
        # this between two bytecodes of the main thread: it must not block.
        if first.is_set() or signum == signal.SIGINT:
            server.stop(0)
            return
        first.set()
        stopped = server.stop(GRACE_S)
        threading.Thread(target=lambda: (stopped.wait(), leave_now(0)), daemon=True).start()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    server.start()
    print(f"relay listening on {listen.rsplit(':', 1)[0]}:{port}", flush=True)
    server.wait_for_termination()
    leave_now(0)


if __name__ == "__main__":
    main()
