# streamer_bounded_nocancel: a bounded queue, but a filler never told the call ended.
#
# Mistake: Produce starts a thread that fills a queue.Queue of 16 chunks
# (so memory stays bounded and a stalled reader costs little), but the
# thread has no way to learn that the call ended. After a cancel the
# generator is dropped and the filler blocks forever on a full queue: one
# thread and 16 chunks leaked per cancelled call. It passes stall, resume,
# cancel (a blocked thread uses no CPU) and slow-reader, and must fail
# no-leak (threads grow by one per cancelled call).
import queue
import threading

import streamer_good as good

_DONE = object()


class BoundedFireAndForgetStreamer(good.Streamer):
    def Produce(self, request, context):
        good.check(request, context)
        chunks = queue.Queue(maxsize=16)

        def fill():  # BUG: put() blocks forever once nobody reads
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
    good.serve(BoundedFireAndForgetStreamer)
