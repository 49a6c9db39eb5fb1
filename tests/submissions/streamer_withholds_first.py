# streamer_withholds_first: the whole response made before any of it goes
# out, and the first chunk later than the grader waits for it.
#
# Mistake: Produce builds its chunks into a list before it yields the first
# (up to HOARD_BYTES of them: 128 MiB, past the 48 MiB budget of `stall` and
# the 96 MiB of `slow-reader`), then holds chunk 0 until the call ends. It
# stands for a producer that makes the whole response first on a machine
# too busy to send any of it within the grader's 10 s wait for the first
# chunk (a starved Node producer queuing the whole stream before its event
# loop ran was reported TIMEOUT). The first chunk is late, but the memory
# rule is already broken while the grader waits: the verdict is FAIL on
# memory ("had sent nothing yet"), never TIMEOUT. Held, not slowed, so the
# row is the same on any machine.
import threading

import streamer_good as good

HOARD_BYTES = 128 << 20


class WithholdsFirstStreamer(good.Streamer):
    def Produce(self, request, context):
        good.check(request, context)
        ended = threading.Event()
        context.add_callback(ended.set)
        chunks = []
        made = 0
        for seq in range(request.count):
            if made >= HOARD_BYTES or ended.is_set():
                break
            chunks.append(good.pb.Chunk(seq=seq, payload=good.payload(seq, request.size)))
            made += max(request.size, 1)
        ended.wait()  # BUG: chunk 0 goes out only after the client gave up
        for chunk in chunks:
            if not context.is_active():
                return
            yield chunk


if __name__ == "__main__":
    good.serve(WithholdsFirstStreamer)
