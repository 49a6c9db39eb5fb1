# streamer_timer_paced: flow control replaced by a timer, in Python.
#
# Mistake: Produce paces itself with a sleep (one 64 KiB chunk every 20 ms,
# 3.1 MiB/s) instead of waiting for the reader, putting each chunk on an
# unbounded queue.Queue. A reader faster than the timer never sees the
# difference; a stalled one costs 3.1 MiB more every second, for as long as
# the stall lasts. At the end of the stall's usual 8 s it has grown about
# 21 MiB, under half the 48 MiB budget, where a watch used to stop and pass;
# the grader must see that the RSS is still rising (over 2 MiB/s), watch on,
# and fail `stall` once it passes the budget, as it must for an unbounded
# producer that a busy machine slows to a few MiB a second.
import queue
import threading
import time

import streamer_good as good

_DONE = object()
_EVERY_S = 0.020


class TimerPacedStreamer(good.Streamer):
    def Produce(self, request, context):
        good.check(request, context)
        chunks = queue.Queue()  # no maxsize: put() never waits for the reader
        stop = threading.Event()
        context.add_callback(stop.set)

        def fill():
            due = time.monotonic()
            for seq in range(request.count):
                if stop.is_set():
                    break
                chunks.put(good.pb.Chunk(seq=seq, payload=good.payload(seq, request.size)))
                due += _EVERY_S
                time.sleep(max(0.0, due - time.monotonic()))
            chunks.put(_DONE)

        threading.Thread(target=fill, daemon=True).start()
        while True:
            chunk = chunks.get()
            if chunk is _DONE:
                return
            yield chunk


if __name__ == "__main__":
    good.serve(TimerPacedStreamer)
