# streamer_nocancel: a producer thread that is never told the call ended.
#
# Mistake: like streamer_unbounded, Produce starts a thread that builds every
# chunk into an unbounded queue.Queue, but here the thread has no way to
# learn that the client cancelled (no add_callback, no is_active()), so after
# a cancel it goes on building chunks nobody will read until it has made all
# of them. It must fail `cancel` (CPU keeps being used after the cancel) as
# well as `stall` and `slow-reader`; `resume` passes.
import queue
import threading

import streamer_good as good

_DONE = object()


class FireAndForgetStreamer(good.Streamer):
    def Produce(self, request, context):
        good.check(request, context)
        chunks = queue.Queue()

        def fill():  # BUG: never checks whether the call is still alive
            for seq in range(request.count):
                chunks.put(good.pb.Chunk(seq=seq, payload=good.payload(seq, request.size)))
            chunks.put(_DONE)

        threading.Thread(target=fill, daemon=True).start()
        while True:
            chunk = chunks.get()
            if chunk is _DONE:
                return
            yield chunk


if __name__ == "__main__":
    good.serve(FireAndForgetStreamer)
