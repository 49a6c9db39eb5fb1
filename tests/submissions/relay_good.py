# relay_good: a correct Python relay for the deadline and cancel exercises.
#
# Mistake: none. It must pass every scenario of both exercises (shrinks, none,
# expires-in-lookup, once; during-work, during-lookup, keeps-serving).
# Each downstream call gets only the time left (context.time_remaining() read
# just before the hop), no deadline upstream means none downstream, and the
# client leaving cancels the call in flight and stops the relay from starting
# the next one. The other submissions here reuse serve() and change one thing.
import os
import signal
import sys
import threading
from concurrent import futures

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "gen", "py"))
import relaylab_pb2 as pb  # noqa: E402
import relaylab_pb2_grpc as pb_grpc  # noqa: E402

# grpcio reports "no deadline" as about 9.2e18 seconds left, not None, and a
# timeout that large overflows in the client and fails at once. grpc-timeout
# cannot carry more than 10^8 hours (3.6e11 s), so nothing above this came
# from a real deadline.
NO_DEADLINE_S = 1e12


def time_left(context):
    """Seconds left for the next hop, or None when the caller set no deadline."""
    left = context.time_remaining()
    return None if left > NO_DEADLINE_S else left


class Downstream:
    """The downstream calls of one Process call. cancel() stops the one in
    flight and refuses to start any later one; the lock closes the race
    between the client leaving and the next hop starting."""

    def __init__(self):
        self._lock = threading.Lock()
        self._future = None
        self._cancelled = False

    def cancel(self):
        with self._lock:
            self._cancelled = True
            if self._future is not None:
                self._future.cancel()

    def call(self, method, request, context, timeout):
        """Calls |method| with |timeout| seconds (None: no deadline) unless
        the client has gone or the time is up; fails |context| with the
        downstream status if the call fails."""
        if timeout is not None and timeout <= 0:
            context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, "no time left for the next call")
        with self._lock:
            if self._cancelled:
                context.abort(grpc.StatusCode.CANCELLED, "the client went away")
            self._future = method.future(request, timeout=timeout)
        try:
            return self._future.result()
        except grpc.FutureCancelledError:
            context.abort(grpc.StatusCode.CANCELLED, "the client went away")
        except grpc.RpcError as e:
            # A failed downstream call fails this one with the same status.
            context.abort(e.code(), e.details() or "")


def lookup_request(request):
    return pb.LookupRequest(tag=request.tag, delay_ms=request.lookup_delay_ms)


def work_request(request):
    return pb.WorkRequest(tag=request.tag, steps=request.steps, step_ms=request.step_ms)


class Relay(pb_grpc.RelayServicer):
    def __init__(self, baseline):
        self.baseline = baseline

    def Process(self, request, context):
        calls = Downstream()
        # Runs when this RPC ends for any reason, including the client
        # cancelling or its deadline passing; False means it already ended.
        if not context.add_callback(calls.cancel):
            calls.cancel()
        # Read the time left just before each hop: the Lookup used some of it.
        calls.call(self.baseline.Lookup, lookup_request(request), context, time_left(context))
        work = calls.call(self.baseline.Work, work_request(request), context, time_left(context))
        return pb.ProcessReply(tag=work.tag, steps_done=work.steps_done)


def serve(relay_class=Relay, workers=16, max_rpcs=None):
    """Starts |relay_class| on $RELAYLAB_LISTEN with a stub for
    $RELAYLAB_BASELINE, prints the readiness line, and serves until killed.
    |max_rpcs|: grpcio's maximum_concurrent_rpcs (None: no limit, and calls
    beyond |workers| wait in the thread pool's queue, which has no bound)."""
    listen = os.environ.get("RELAYLAB_LISTEN", "127.0.0.1:0")
    baseline = os.environ.get("RELAYLAB_BASELINE")
    if not baseline:
        sys.exit("set RELAYLAB_BASELINE=host:port (where the baseline listens)")
    channel = grpc.insecure_channel(baseline)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=workers), maximum_concurrent_rpcs=max_rpcs)
    pb_grpc.add_RelayServicer_to_server(relay_class(pb_grpc.BaselineStub(channel)), server)
    port = server.add_insecure_port(listen)
    if port == 0:
        sys.exit(f"cannot listen on {listen}")
    # SIGTERM: stop taking calls, give the running ones a second, exit 0.
    # A handler the submission set itself is left alone.
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, lambda *_: server.stop(1.0))
    server.start()
    print(f"relay listening on {listen.rsplit(':', 1)[0]}:{port}", flush=True)
    server.wait_for_termination()


if __name__ == "__main__":
    serve()
