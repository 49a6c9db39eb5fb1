# relay_ignore_cancel: passes the shrinking deadline on correctly, but makes
# plain blocking calls and never watches for the client leaving: a cancelled
# Process lets the running downstream call go on to its end, and a Lookup that
# finishes after the client left is still followed by a Work.
#
# Must fail: cancel/during-work (Work runs all its steps, not cancelled),
# cancel/during-lookup (Work is still called after the client cancelled).
# Must pass: every deadline scenario; cancel/keeps-serving.
import grpc

from relay_good import Relay, lookup_request, serve, time_left, work_request, pb


class IgnoreCancelRelay(Relay):
    def Process(self, request, context):
        # BUG: no context.add_callback, no context.is_active(): a blocking call
        # cannot be cancelled, and nothing checks before starting Work.
        try:
            self.baseline.Lookup(lookup_request(request), timeout=time_left(context))
            work = self.baseline.Work(work_request(request), timeout=time_left(context))
        except grpc.RpcError as e:
            context.abort(e.code(), e.details() or "")
        return pb.ProcessReply(tag=work.tag, steps_done=work.steps_done)


if __name__ == "__main__":
    serve(IgnoreCancelRelay)
