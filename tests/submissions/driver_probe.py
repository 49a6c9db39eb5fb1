# driver_probe: not a lab submission: the grader's own test of its driver
# (the hidden driver-test exercise, tests/integration/test_grader_driver.py).
# relay_good, except that
# - each Process goes to the next baseline of $RELAYLAB_BASELINES in turn,
#   so every baseline of the run serves some of the calls;
# - on SIGTERM it prints "draining", waits 300 ms, prints "bye" and exits
#   with status 7: a known status after a delay the grader's measure of the
#   time to exit must cover.
import itertools
import os
import signal
import threading
import time

import grpc

from relay_good import Downstream, Relay, lookup_request, pb, pb_grpc, serve, time_left, work_request

EXIT_DELAY_S = 0.3
EXIT_STATUS = 7


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


def on_term(*_):
    print("draining", flush=True)
    time.sleep(EXIT_DELAY_S)
    print("bye", flush=True)
    os._exit(EXIT_STATUS)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, on_term)
    serve(Spread)
