# streamer_good: a correct Python producer for the flow exercise.
#
# Mistake: none. It must pass every scenario (stall, resume, cancel,
# slow-reader). Produce is a generator: grpcio pulls the next chunk only when
# the previous one was handed to the transport, which waits for the HTTP/2
# flow-control window, so a reader that stops reading stops the generator
# after one window (about 65 chunks of 64 KiB on a fresh connection). When
# the client cancels, grpcio stops pulling and the generator is dropped. The
# other streamer submissions reuse serve() and payload().
import os
import signal
import sys
from concurrent import futures

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "gen", "py"))
import relaylab_pb2 as pb  # noqa: E402
import relaylab_pb2_grpc as pb_grpc  # noqa: E402

MAX_SIZE = 4 * 1024 * 1024 - 64
MAX_COUNT = 1_000_000
MAX_TOTAL = 16 << 30

# payload[i] = (seq * 31 + i) mod 251 has period 251, so every chunk is a
# slice of one long repetition of 0..250 starting at (seq * 31) mod 251.
_pattern = b""


def payload(seq, size):
    global _pattern
    if len(_pattern) < 251 + size:
        _pattern = bytes(range(251)) * ((251 + size) // 251 + 1)
    start = seq * 31 % 251
    return _pattern[start:start + size]


def check(request, context):
    """Refuses requests above the reference streamer's limits."""
    if request.size > MAX_SIZE:
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"size {request.size} is above {MAX_SIZE} bytes")
    if request.count > MAX_COUNT:
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"count {request.count} is above {MAX_COUNT}")
    if request.count * request.size > MAX_TOTAL:
        context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, f"count x size is above {MAX_TOTAL} bytes")


class Streamer(pb_grpc.StreamerServicer):
    def Produce(self, request, context):
        check(request, context)
        for seq in range(request.count):
            yield pb.Chunk(seq=seq, payload=payload(seq, request.size))


def serve(streamer_class=Streamer, workers=8):
    """Starts |streamer_class| on $RELAYLAB_LISTEN, prints the readiness line,
    and serves until SIGTERM."""
    listen = os.environ.get("RELAYLAB_LISTEN", "127.0.0.1:0")
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=workers))
    pb_grpc.add_StreamerServicer_to_server(streamer_class(), server)
    port = server.add_insecure_port(listen)
    if port == 0:
        sys.exit(f"cannot listen on {listen}")
    server.start()
    print(f"streamer listening on {listen.rsplit(':', 1)[0]}:{port}", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: server.stop(1.0))
    server.wait_for_termination()


if __name__ == "__main__":
    serve()
