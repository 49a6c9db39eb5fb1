# relay_huge_timeout: shrinks deadlines correctly, but when the client set
# none it invents a "default" of 24 days (about 2^31 ms, INT32_MAX in ms), so
# the baseline sees a finite deadline where there should be none. The student
# met grpcio's "no deadline = 9.2e18 s left", which overflows as a timeout,
# and clamped it instead of sending no deadline.
#
# Must fail: deadline/none (Work, and Lookup, arrive with ~2.076e9 ms).
# Must pass: deadline/shrinks, expires-in-lookup, once; every cancel scenario.
from relay_good import Downstream, Relay, lookup_request, serve, work_request, pb

DEFAULT_TIMEOUT_S = 24 * 86400  # BUG: "no deadline" is not a long deadline


def timeout_for_next_hop(context):
    return min(context.time_remaining(), DEFAULT_TIMEOUT_S)


class HugeTimeoutRelay(Relay):
    def Process(self, request, context):
        calls = Downstream()
        if not context.add_callback(calls.cancel):
            calls.cancel()
        calls.call(self.baseline.Lookup, lookup_request(request), context, timeout_for_next_hop(context))
        work = calls.call(self.baseline.Work, work_request(request), context, timeout_for_next_hop(context))
        return pb.ProcessReply(tag=work.tag, steps_done=work.steps_done)


if __name__ == "__main__":
    serve(HugeTimeoutRelay)
