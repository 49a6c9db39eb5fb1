# relay_call_twice: "hedges" Work: sends it to the baseline twice at once and
# keeps whichever reply comes first, cancelling the other. Deadlines and
# cancellation are right, but every Process costs the baseline two Works, and
# Work is not something to run twice without the server's consent.
#
# Must fail: deadline/once (two Work calls per Process).
# Must pass: deadline/shrinks, none, expires-in-lookup; every cancel scenario
# (both copies are cancelled when the client leaves).
import threading

import grpc

from relay_good import Downstream, Relay, lookup_request, serve, time_left, work_request, pb


class CallTwiceRelay(Relay):
    def Process(self, request, context):
        calls = Downstream()
        if not context.add_callback(calls.cancel):
            calls.cancel()
        calls.call(self.baseline.Lookup, lookup_request(request), context, time_left(context))
        if not context.is_active():
            return pb.ProcessReply()
        timeout = time_left(context)
        # BUG: two identical Works; the first reply wins.
        copies = [self.baseline.Work.future(work_request(request), timeout=timeout) for _ in range(2)]
        first_done = threading.Event()
        for f in copies:
            context.add_callback(f.cancel)
            f.add_done_callback(lambda _: first_done.set())
        first_done.wait()
        winner = next(f for f in copies if f.done())
        for f in copies:
            f.cancel()
        try:
            work = winner.result()
        except grpc.FutureCancelledError:
            context.abort(grpc.StatusCode.CANCELLED, "the client went away")
        except grpc.RpcError as e:
            context.abort(e.code(), e.details() or "")
        return pb.ProcessReply(tag=work.tag, steps_done=work.steps_done)


if __name__ == "__main__":
    serve(CallTwiceRelay)
