# streamer.py: your producer for the relaylab `flow` exercise (`lab show
# flow`). The server is set up for you: it listens on $RELAYLAB_LISTEN and
# stops cleanly on SIGTERM, and payload() makes a chunk's bytes. The lesson
# is yours: the block between the TODO markers in Produce(). `./run` starts
# this file; the generated code is in gen/ (`lab stubs python .` makes it
# again).
import os
import signal
import sys
from concurrent import futures

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen"))
import relaylab_pb2 as pb  # noqa: E402
import relaylab_pb2_grpc as pb_grpc  # noqa: E402

# payload[i] = (seq * 31 + i) mod 251 repeats every 251 bytes, so every chunk
# is a slice of one long repetition of 0..250.
_pattern = b""


def payload(seq, size):
    """The |size| payload bytes of chunk |seq|, as the handout defines them."""
    global _pattern
    if len(_pattern) < 251 + size:
        _pattern = bytes(range(251)) * ((251 + size) // 251 + 1)
    start = seq * 31 % 251
    return _pattern[start:start + size]


class Streamer(pb_grpc.StreamerServicer):
    def Produce(self, request, context):
        # >>> TODO(flow): send request.count chunks, pb.Chunk(seq=seq, payload=payload(seq, request.size))
        #   for seq = 0 .. count-1, in order, then end (return).
        # Make the next chunk only when the previous one has gone: a generator
        #   (yield) is pulled by grpcio only as flow control lets chunks leave;
        #   a thread filling a queue is not.
        # Stop when the client cancels (context.is_active(), context.add_callback).
        # Refuse what you cannot serve: size above 4 MiB - 64 or count above
        #   1,000,000 with INVALID_ARGUMENT (context.abort), as the reference does.
        context.abort(grpc.StatusCode.UNIMPLEMENTED,
                      "TODO in streamer.py: Produce() sends no chunks yet (see its TODO block)")
        # <<< TODO


def main():
    listen = os.environ.get("RELAYLAB_LISTEN", "127.0.0.1:0")
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    pb_grpc.add_StreamerServicer_to_server(Streamer(), server)
    port = server.add_insecure_port(listen)
    if port == 0:
        sys.exit(f"cannot listen on {listen}")
    # SIGTERM (the grader's stop): take no new calls, give running ones 1 s, exit 0.
    signal.signal(signal.SIGTERM, lambda *_: server.stop(1.0))
    server.start()
    print(f"streamer listening on {listen.rsplit(':', 1)[0]}:{port}", flush=True)
    server.wait_for_termination()


if __name__ == "__main__":
    main()
