# relay.py: your relay for the relaylab `shutdown` exercise (`lab show
# shutdown`). The server is set up for you: it listens on $RELAYLAB_LISTEN and
# holds a stub for the baseline at $RELAYLAB_BASELINE; Process is written too,
# a plain relay (Lookup, then Work) that keeps its downstream calls in flight
# where end_all() can cancel them. (The deadline and cancel rules are their own
# exercises and this grader does not judge them: bring your Process from them
# if you have it.) The lesson is yours: what the relay does at SIGTERM, the
# block between the TODO markers in on_sigterm(). `./run` starts this file; the
# generated code is in gen/ (`lab stubs python .` makes it again).
import os
import signal
import sys
import threading
from concurrent import futures

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen"))
import relaylab_pb2 as pb  # noqa: E402
import relaylab_pb2_grpc as pb_grpc  # noqa: E402

# The grace the platform gives (the grader sets it), in seconds.
GRACE_S = int(os.environ.get("RELAYLAB_GRACE_MS", "5000")) / 1000.0


class Relay(pb_grpc.RelayServicer):
    def __init__(self, baseline):
        self.baseline = baseline
        self.lock = threading.Lock()
        self.calls = set()  # the downstream futures in flight
        self.ended_by = None  # why end_all() cut them: Process's answer then

    def call(self, method, req, context):
        with self.lock:
            if self.ended_by is not None:
                context.abort(grpc.StatusCode.UNAVAILABLE, self.ended_by)
            future = method.future(req)
            self.calls.add(future)
        try:
            return future.result()
        except grpc.FutureCancelledError:
            context.abort(grpc.StatusCode.UNAVAILABLE, self.ended_by or "cancelled")
        except grpc.RpcError as e:
            context.abort(e.code(), e.details() or "")
        finally:
            with self.lock:
                self.calls.discard(future)

    def Process(self, request, context):
        self.call(self.baseline.Lookup, pb.LookupRequest(tag=request.tag, delay_ms=request.lookup_delay_ms), context)
        work = self.call(self.baseline.Work,
                         pb.WorkRequest(tag=request.tag, steps=request.steps, step_ms=request.step_ms), context)
        return pb.ProcessReply(tag=work.tag, steps_done=work.steps_done)

    def end_all(self, why):
        """Cancels every downstream call in flight (the baseline sees its Work
        cancelled) and makes their Process calls, and any later one, fail
        UNAVAILABLE with |why|."""
        with self.lock:
            self.ended_by = why
            for future in self.calls:
                future.cancel()


def leave(code=0):
    """Exits now, whatever threads are left: a plain exit would wait for the
    server's worker threads, and a handler that never returns holds one."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def main():
    listen = os.environ.get("RELAYLAB_LISTEN", "127.0.0.1:0")
    baseline = os.environ.get("RELAYLAB_BASELINE")
    if not baseline:
        sys.exit("set RELAYLAB_BASELINE=host:port (where the baseline listens)")
    channel = grpc.insecure_channel(baseline)
    relay = Relay(pb_grpc.BaselineStub(channel))
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=16))
    pb_grpc.add_RelayServicer_to_server(relay, server)
    port = server.add_insecure_port(listen)
    if port == 0:
        sys.exit(f"cannot listen on {listen}")

    first = threading.Event()  # set by the first signal (a second one means now)

    def on_sigterm(signum, frame):
        # Python runs this on the main thread, between two bytecodes: it must
        # not block (wait in another thread).
        # >>> TODO(shutdown): drain instead of cutting every call at once.
        #   1. Stop admitting and give the calls in flight the grace:
        #      server.stop(GRACE_S) closes the listener, refuses new calls
        #      (UNAVAILABLE) and returns at once with a threading.Event, set
        #      when the calls are done or, at the grace, cancelled.
        #   2. In another thread: wait for that event, end what still runs
        #      downstream (relay.end_all(...)), then leave(0).
        #   3. A second SIGTERM, or a SIGINT, means now: server.stop(0).
        # Until then, the calls in flight are cut at once, no grace:
        relay.end_all("TODO in relay.py: the SIGTERM handler cuts every call at once, with no grace (its TODO block)")
        stopped = server.stop(1.0)
        threading.Thread(target=lambda: (stopped.wait(), leave(0)), daemon=True).start()
        # <<< TODO

    signal.signal(signal.SIGTERM, on_sigterm)
    signal.signal(signal.SIGINT, on_sigterm)
    server.start()
    print(f"relay listening on {listen.rsplit(':', 1)[0]}:{port}", flush=True)
    server.wait_for_termination()
    leave(0)


if __name__ == "__main__":
    main()
