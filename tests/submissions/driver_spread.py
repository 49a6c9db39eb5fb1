# driver_spread: not a lab submission: the grader's own test of a run with
# several baselines (the hidden driver-test exercise,
# tests/integration/test_grader_driver.py). relay_good, except that each
# Process goes to the next baseline of $RELAYLAB_BASELINES in turn.
import itertools
import os
import threading

import grpc

from relay_good import Downstream, Relay, lookup_request, pb, pb_grpc, serve, time_left, work_request


class Spread(Relay):
    def __init__(self, baseline):
        super().__init__(baseline)
        addrs = os.environ["RELAYLAB_BASELINES"].split(",")
        self.turn = itertools.cycle([pb_grpc.BaselineStub(grpc.insecure_channel(a)) for a in addrs])
        self.lock = threading.Lock()

    def Process(self, request, context):
        with self.lock:
            baseline = next(self.turn)
        calls = Downstream()
        if not context.add_callback(calls.cancel):
            calls.cancel()
        calls.call(baseline.Lookup, lookup_request(request), context, time_left(context))
        work = calls.call(baseline.Work, work_request(request), context, time_left(context))
        return pb.ProcessReply(tag=work.tag, steps_done=work.steps_done)


if __name__ == "__main__":
    serve(Spread)
