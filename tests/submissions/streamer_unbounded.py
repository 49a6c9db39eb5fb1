# streamer_unbounded: the classic flow-control mistake, in Python.
#
# Mistake: Produce starts a thread that builds every chunk at once and puts
# it on an unbounded queue.Queue, while the generator only drains the queue
# as grpcio pulls it. Nothing makes the thread wait for the reader, so a
# reader that stops after one chunk leaves count x size bytes queued: about
# 190 MiB for 3000 x 64 KiB. It must fail `stall` (and `slow-reader`) by a wide
# margin while its data stay right (`resume` passes). The thread does stop
# when the call ends, so `cancel` is not what it gets wrong.
import queue
import threading

import streamer_good as good

_DONE = object()


class UnboundedStreamer(good.Streamer):
    def Produce(self, request, context):
        good.check(request, context)
        chunks = queue.Queue()  # no maxsize: put() never waits
        stop = threading.Event()
        context.add_callback(stop.set)

        def fill():
            for seq in range(request.count):
                if stop.is_set():
                    break
                chunks.put(good.pb.Chunk(seq=seq, payload=good.payload(seq, request.size)))
            chunks.put(_DONE)

        threading.Thread(target=fill, daemon=True).start()
        while True:
            chunk = chunks.get()
            if chunk is _DONE:
                return
            yield chunk


if __name__ == "__main__":
    good.serve(UnboundedStreamer)
