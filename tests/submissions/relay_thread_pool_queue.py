# relay_thread_pool_queue: relay_good as it is, under the overload exercise.
#
# Mistake: the queue nobody sees. grpc.server(ThreadPoolExecutor(16)) runs 16
# handlers at once and parks every further call in the executor's work
# queue, which has no bound (no maximum_concurrent_rpcs). At ten times the
# backend's capacity every call waits there; each starts with little of its
# deadline left, is forwarded anyway, and times out at the backend. Must fail
# overload/overload (goodput collapses to 0/s, hundreds of calls wait their
# whole deadline, the baseline's work for them is wasted) and pass refused,
# blackhole and recovers, as relay_good does.
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from relay_good import Relay, serve  # noqa: E402

if __name__ == "__main__":
    serve(Relay, workers=16)  # BUG: max_rpcs=None: the thread pool's queue has no bound
