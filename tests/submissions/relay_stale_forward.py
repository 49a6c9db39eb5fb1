# relay_stale_forward: a relay that forwards whatever reaches its handler,
# with a timeout of its own.
#
# Mistakes (the pair that makes a backend outage spread): four worker
# threads with the thread pool's unbounded queue in front of them, and
# every downstream call gets a fixed 5 s timeout instead of the caller's
# time left, with no cancellation. When the backend blackholes, the four
# workers sit in 5 s calls long after the callers' 1 s deadlines passed
# (and each call that waited in the queue is then forwarded anyway, long
# after its caller gave up). Must fail overload/blackhole ("still open 500
# ms after their caller's deadline") and overload/overload, and pass
# refused and recovers (a closed port still fails fast, with the status
# passed on).
import os
import sys

import grpc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from relay_good import lookup_request, serve, work_request  # noqa: E402  (puts the stubs on the path)

import relaylab_pb2 as pb  # noqa: E402
import relaylab_pb2_grpc as pb_grpc  # noqa: E402

TIMEOUT_S = 5.0


class Relay(pb_grpc.RelayServicer):
    def __init__(self, baseline):
        self.baseline = baseline

    def Process(self, request, context):
        try:
            # BUG: no look at the caller's deadline or presence, a fixed timeout.
            self.baseline.Lookup(lookup_request(request), timeout=TIMEOUT_S)
            work = self.baseline.Work(work_request(request), timeout=TIMEOUT_S)
        except grpc.RpcError as e:
            context.abort(e.code(), e.details() or "")  # the downstream status, passed on
        return pb.ProcessReply(tag=work.tag, steps_done=work.steps_done)


if __name__ == "__main__":
    serve(Relay, workers=4)  # BUG: and the thread pool's queue has no bound
