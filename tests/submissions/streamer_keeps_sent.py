# streamer_keeps_sent: a flow-controlled producer with a resend buffer per call.
#
# Mistake: every Produce fills a 4 MiB resend buffer (for a "resend the last
# chunks" feature nobody calls), registered in a module table, and drops it
# only when the call ends normally; a cancelled call leaves by GeneratorExit,
# so its buffer stays in the table forever. No thread and no file is left,
# only memory: 4 MiB per cancelled call, at every call (not the few new
# highs that a flooding producer's allocator keeps). It respects the window
# like streamer_good, so it must pass stall, resume, cancel and slow-reader,
# and fail flow/no-leak on its RSS alone.
import itertools

from streamer_good import Streamer, check, payload, serve

import relaylab_pb2 as pb

RESEND_BYTES = 4 << 20
_resend = {}
_ids = itertools.count()


class KeepingStreamer(Streamer):
    def Produce(self, request, context):
        check(request, context)
        call = next(_ids)
        # bytes(...) * n writes every page: the buffer is resident at once
        _resend[call] = bytearray(bytes(range(256)) * (RESEND_BYTES // 256))
        for seq in range(request.count):
            yield pb.Chunk(seq=seq, payload=payload(seq, request.size))
        del _resend[call]


if __name__ == "__main__":
    serve(KeepingStreamer)
