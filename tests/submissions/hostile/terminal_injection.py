# terminal_injection (hostile): a relay that calls Lookup and Work as it
# should, then answers with a reply tag, and fails a failed hop with status
# details, made of escape sequences and carriage returns: printed raw, they
# erase the grader's table and write "score 10/10" in its place on the
# reader's terminal (and in every log that is printed later).
#
# Must get, under `grader deadline`: the true score (below 10/10), and the
# table, the logs and results.json show the ESC and CR bytes escaped
# ("\x1b", "\r"), never raw. Bounded: an ordinary relay; loopback only.
import os
import sys

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from relay_good import Downstream, Relay, lookup_request, pb, serve, time_left, work_request  # noqa: E402

# Up a line and erase it, five times over, then a fake last line.
ERASE = "\r\x1b[1A\x1b[2K" * 5
FAKE = "\x1b[32mPASS\x1b[0m score 10/10\r"
TAG = ERASE + FAKE
DETAILS = "\x1b]0;graded\x07" + ERASE + FAKE


class InjectingRelay(Relay):
    def Process(self, request, context):
        calls = Downstream()
        if not context.add_callback(calls.cancel):
            calls.cancel()
        try:
            calls.call(self.baseline.Lookup, lookup_request(request), context, time_left(context))
            work = calls.call(self.baseline.Work, work_request(request), context, time_left(context))
        except Exception:
            # Downstream.call aborted the context: say it with our own words.
            context.abort(context.code() or grpc.StatusCode.UNKNOWN, DETAILS)
        if ".none." in request.tag:
            context.abort(grpc.StatusCode.INTERNAL, DETAILS)
        return pb.ProcessReply(tag=TAG, steps_done=work.steps_done)


if __name__ == "__main__":
    serve(InjectingRelay)
