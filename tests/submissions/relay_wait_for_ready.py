# relay_wait_for_ready: the overload relay, with wait_for_ready on its
# downstream calls.
#
# Mistake: wait_for_ready=True. With the backend's port closed, a
# fail-fast call fails UNAVAILABLE at once; this one waits for a connection
# that never comes, until its deadline. Must fail overload/refused (every
# call takes its whole 3 s deadline and ends DEADLINE_EXCEEDED) and pass
# everything else: with a backend that is up or blackholed (the connection is
# ready) the flag changes nothing, and once the backend is back the waiting
# calls go through.
import os
import sys

import grpc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import relay_overload_good  # noqa: E402
from relay_good import Downstream, serve  # noqa: E402


class WaitingDownstream(Downstream):
    def call(self, method, request, context, timeout):
        if timeout is not None and timeout <= 0:
            context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, "no time left for the next call")
        with self._lock:
            if self._cancelled:
                context.abort(grpc.StatusCode.CANCELLED, "the client went away")
            # BUG: wait for a ready connection instead of failing fast.
            self._future = method.future(request, timeout=timeout, wait_for_ready=True)
        try:
            return self._future.result()
        except grpc.FutureCancelledError:
            context.abort(grpc.StatusCode.CANCELLED, "the client went away")
        except grpc.RpcError as e:
            context.abort(e.code(), e.details() or "")


relay_overload_good.Downstream = WaitingDownstream

if __name__ == "__main__":
    serve(relay_overload_good.Relay, workers=relay_overload_good.SLOTS + relay_overload_good.QUEUE,
          max_rpcs=relay_overload_good.SLOTS + relay_overload_good.QUEUE)
