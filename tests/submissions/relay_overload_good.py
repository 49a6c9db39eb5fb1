# relay_overload_good: a correct Python relay for the overload exercise.
#
# Mistake: none. It must pass every scenario of overload (refused, blackhole,
# recovers, overload) and of deadline and cancel.
# On top of relay_good (time left on every hop, cancellation, fail-fast
# downstream calls: grpcio's default, no wait_for_ready) it admits calls
# through a Gate: at most SLOTS Process calls have a downstream call in
# flight, at most QUEUE wait for one, and a call is refused at once with
# RESOURCE_EXHAUSTED when its time left cannot cover the expected wait and
# service. grpcio's own thread pool is no hidden queue: the server takes at
# most maximum_concurrent_rpcs calls (refusing the rest RESOURCE_EXHAUSTED
# itself) and has a thread for each.
import os
import sys
import threading
import time

import grpc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from relay_good import Downstream, lookup_request, serve, time_left, work_request  # noqa: E402

import relaylab_pb2 as pb  # noqa: E402
import relaylab_pb2_grpc as pb_grpc  # noqa: E402

SLOTS = 8        # downstream calls in flight at once
QUEUE = 16       # calls waiting for a slot
SLACK_S = 0.05   # scheduling delays on a loaded machine


class Gate:
    """Admission control. The service time is a moving average of how long
    the backend held each call (answered or not: a blackholed backend holds
    calls until their deadline, and that is what a waiting call can expect)
    that jumps up at once when a call took longer (a slowing backend must
    not fill the queue while the average catches up) and comes down slowly."""

    def __init__(self, slots=SLOTS, queue=QUEUE):
        self.cond = threading.Condition()
        self.slots, self.queue = slots, queue
        self.inflight = self.waiting = 0
        self.service = 0.0

    def _needed(self):
        # What a call must have left once it has a slot: the service and
        # half of it again, for its variation.
        return 1.5 * self.service + SLACK_S

    def enter(self, context):
        """Takes a slot, or aborts |context| with RESOURCE_EXHAUSTED."""
        with self.cond:
            if self.inflight < self.slots and self.waiting == 0:
                self.inflight += 1
                return
            left = time_left(context)
            wait = (self.waiting // self.slots + 1) * self.service
            if self.waiting >= self.queue or (left is not None and left < wait + self._needed()):
                context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                              f"the relay is overloaded ({self.waiting} calls waiting)")
            self.waiting += 1
            try:
                while self.inflight >= self.slots:
                    left = time_left(context)
                    if not context.is_active() or (left is not None and left < self._needed()):
                        context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                                      "the relay is overloaded: the call can no longer be served in time")
                    self.cond.wait(0.05 if left is None else min(0.05, left))
            finally:
                self.waiting -= 1
            self.inflight += 1

    def leave(self, took_s=None):
        with self.cond:
            self.inflight -= 1
            if took_s is not None:
                self.service = took_s if took_s > self.service else 0.8 * self.service + 0.2 * took_s
            self.cond.notify()


class Relay(pb_grpc.RelayServicer):
    def __init__(self, baseline):
        self.baseline = baseline
        self.gate = Gate()

    def Process(self, request, context):
        self.gate.enter(context)
        start = time.monotonic()
        try:
            calls = Downstream()
            if not context.add_callback(calls.cancel):
                calls.cancel()
            calls.call(self.baseline.Lookup, lookup_request(request), context, time_left(context))
            work = calls.call(self.baseline.Work, work_request(request), context, time_left(context))
            return pb.ProcessReply(tag=work.tag, steps_done=work.steps_done)
        finally:
            self.gate.leave(time.monotonic() - start)


if __name__ == "__main__":
    serve(Relay, workers=SLOTS + QUEUE, max_rpcs=SLOTS + QUEUE)
