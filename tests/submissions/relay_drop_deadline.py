# relay_drop_deadline: never sets a timeout on its downstream calls, so the
# baseline works on without a deadline however little time the client gave.
# Cancellation is handled correctly: this one breaks only the deadline rule.
#
# Must fail: deadline/shrinks (Work arrives with no deadline at all).
# Must pass: deadline/none, expires-in-lookup (the client's deadline cancels
# the relay's call, which cancels the Lookup), once; every cancel scenario.
from relay_good import Downstream, Relay, lookup_request, serve, work_request, pb


class DropDeadlineRelay(Relay):
    def Process(self, request, context):
        calls = Downstream()
        if not context.add_callback(calls.cancel):
            calls.cancel()
        # BUG: timeout=None, whatever the client asked for.
        calls.call(self.baseline.Lookup, lookup_request(request), context, None)
        work = calls.call(self.baseline.Work, work_request(request), context, None)
        return pb.ProcessReply(tag=work.tag, steps_done=work.steps_done)


if __name__ == "__main__":
    serve(DropDeadlineRelay)
