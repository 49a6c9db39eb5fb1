# relay.py: your relay for the relaylab `deadline` and `cancel` exercises
# (`lab show deadline`, `lab show cancel`). The server is set up for you: it
# listens on $RELAYLAB_LISTEN, holds a stub for the baseline at
# $RELAYLAB_BASELINE, and stops cleanly on SIGTERM. The lesson is yours: the
# block between the TODO markers in Process(). `./run` starts this file; the
# generated code is in gen/ (`lab stubs python .` makes it again).
import os
import signal
import sys
import threading  # noqa: F401 (you may want a lock for the cancel rule)
from concurrent import futures

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen"))
import relaylab_pb2 as pb  # noqa: E402
import relaylab_pb2_grpc as pb_grpc  # noqa: E402


class Relay(pb_grpc.RelayServicer):
    def __init__(self, baseline):
        # A relaylab.Baseline stub: self.baseline.Lookup(request, timeout=...)
        # blocks; self.baseline.Lookup.future(request, timeout=...) does not,
        # and its future can be cancelled. The same for Work.
        self.baseline = baseline

    def Process(self, request, context):
        # >>> TODO(deadline, cancel): relay one Process call.
        #   1. Call Lookup with pb.LookupRequest(tag=request.tag, delay_ms=request.lookup_delay_ms),
        #   2. then Work with pb.WorkRequest(tag=request.tag, steps=request.steps, step_ms=request.step_ms),
        #   3. and return pb.ProcessReply(tag=..., steps_done=...) from Work's reply.
        # deadline: give each call only the time left (context.time_remaining(),
        #   read just before it; with no client deadline it is ~9.2e18, not None:
        #   send no timeout then). No time left: fail DEADLINE_EXCEEDED, no Work.
        #   A failed downstream call fails Process with its status code.
        # cancel: when the client gives up (context.add_callback), cancel the
        #   call in flight and start no further one.
        context.abort(grpc.StatusCode.UNIMPLEMENTED,
                      "TODO in relay.py: Process() does not call Lookup and Work yet (see its TODO block)")
        # <<< TODO


def main():
    listen = os.environ.get("RELAYLAB_LISTEN", "127.0.0.1:0")
    baseline = os.environ.get("RELAYLAB_BASELINE")
    if not baseline:
        sys.exit("set RELAYLAB_BASELINE=host:port (where the baseline listens)")
    channel = grpc.insecure_channel(baseline)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=16))
    pb_grpc.add_RelayServicer_to_server(Relay(pb_grpc.BaselineStub(channel)), server)
    port = server.add_insecure_port(listen)
    if port == 0:
        sys.exit(f"cannot listen on {listen}")
    # SIGTERM (the grader's stop): take no new calls, give running ones 1 s, exit 0.
    signal.signal(signal.SIGTERM, lambda *_: server.stop(1.0))
    server.start()
    print(f"relay listening on {listen.rsplit(':', 1)[0]}:{port}", flush=True)
    server.wait_for_termination()


if __name__ == "__main__":
    main()
