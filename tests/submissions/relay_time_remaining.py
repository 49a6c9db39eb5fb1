# relay_time_remaining: gives each downstream call context.time_remaining()
# read just before the hop, unfiltered. That shrinks deadlines correctly, but
# when the client set no deadline grpcio reports about 9.2e18 s left (it is
# documented as None; this grpcio gives a huge number), and that timeout
# overflows inside grpcio: the downstream call fails at once, before any
# request leaves, and Process fails with it.
#
# Must fail: deadline/none (no Lookup reaches the baseline), cancel scenarios
# with no client deadline (during-work, during-lookup, keeps-serving).
# Must pass: deadline/shrinks, expires-in-lookup, once.
from relay_good import Downstream, Relay, lookup_request, serve, work_request, pb


def timeout_for_next_hop(context):
    return context.time_remaining()  # BUG: "no deadline" is not a timeout


class TimeRemainingRelay(Relay):
    def Process(self, request, context):
        calls = Downstream()
        if not context.add_callback(calls.cancel):
            calls.cancel()
        calls.call(self.baseline.Lookup, lookup_request(request), context, timeout_for_next_hop(context))
        work = calls.call(self.baseline.Work, work_request(request), context, timeout_for_next_hop(context))
        return pb.ProcessReply(tag=work.tag, steps_done=work.steps_done)


if __name__ == "__main__":
    serve(TimeRemainingRelay)
