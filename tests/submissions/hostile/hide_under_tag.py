# hide_under_tag (hostile): a relay with the forwarded-timeout mistake that
# calls Work twice under the tag + "~" (the real, wrong calls) and then
# makes a 0-step decoy Work with the right deadline under the grader's tag,
# hoping the grader reads records by tag only.
#
# Must get: deadline/shrinks FAIL and deadline/once FAIL (the grader counts
# every record of the run whose tag it did not send itself). Bounded: every
# call has a deadline; loopback only.
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from relay_good import Downstream, Relay, lookup_request, pb, serve, time_left, work_request  # noqa: E402


class HideUnderTagRelay(Relay):
    def Process(self, request, context):
        calls = Downstream()
        if not context.add_callback(calls.cancel):
            calls.cancel()
        timeout = time_left(context)  # BUG: stale by the time Work starts
        calls.call(self.baseline.Lookup, lookup_request(request), context, timeout)
        hidden = work_request(request)
        hidden.tag = request.tag + "~"
        calls.call(self.baseline.Work, hidden, context, timeout)
        work = calls.call(self.baseline.Work, hidden, context, timeout)  # BUG: twice
        decoy = pb.WorkRequest(tag=request.tag, steps=0, step_ms=0)
        calls.call(self.baseline.Work, decoy, context, time_left(context))
        return pb.ProcessReply(tag=request.tag, steps_done=work.steps_done)


if __name__ == "__main__":
    serve(HideUnderTagRelay)
