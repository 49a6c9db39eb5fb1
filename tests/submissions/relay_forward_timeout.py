# relay_forward_timeout: reads the time left once, on arrival, and gives that
# same timeout to both downstream calls, so Work gets a deadline later than
# the client's: the time the Lookup took is counted twice.
#
# Must fail: deadline/shrinks (Work's deadline is too long by the Lookup's duration).
# Must pass: deadline/none, expires-in-lookup, once; every cancel scenario.
from relay_good import Downstream, Relay, lookup_request, serve, time_left, work_request, pb


class ForwardTimeoutRelay(Relay):
    def Process(self, request, context):
        calls = Downstream()
        if not context.add_callback(calls.cancel):
            calls.cancel()
        timeout = time_left(context)  # BUG: stale by the time Work starts
        calls.call(self.baseline.Lookup, lookup_request(request), context, timeout)
        work = calls.call(self.baseline.Work, work_request(request), context, timeout)
        return pb.ProcessReply(tag=work.tag, steps_done=work.steps_done)


if __name__ == "__main__":
    serve(ForwardTimeoutRelay)
