# coverage_flood: floods the L7 balancer. Beside a per-server agent (as
# coverage_good.py), a thread opens FLOOD streams (200,000) of
# relaylab.Tunnel/Open through RELAYLAB_TUNNEL as fast as the wire takes
# them: raw HTTP/2 HEADERS frames on CONNECTIONS connections (a gRPC
# library would spend a millisecond a stream in Python; the flood is a
# client's, not the library's), and keeps every one open.
#
# Must fail every scenario ("growing without a cap?": the balancer refuses
# streams a quarter over the total cap and the judge names the flood), and
# the world must stay bounded: the grader process near its usual size.
import asyncio
import os
import socket
import struct
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import coverage_good as g  # noqa: E402

FLOOD = 200000
CONNECTIONS = 4
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def literal(index, value):
    # HPACK: literal without indexing, name from the static table (4-bit prefix)
    head = bytes([index]) if index < 15 else bytes([15, index - 15])
    return head + bytes([len(value)]) + value


def open_headers(authority):
    return (b"\x83\x86"  # :method POST, :scheme http
            + literal(4, b"/relaylab.Tunnel/Open") + literal(1, authority)
            + literal(31, b"application/grpc") + b"\x00\x02te\x08trailers")


def drain(sock):
    try:
        while sock.recv(65536):
            pass
    except OSError:
        pass


def flood_one(target, count):
    host, port = target.rsplit(":", 1)
    sock = socket.create_connection((host, int(port)))
    sock.sendall(PREFACE + frame(4, 0, 0))
    sock.recv(9)  # the server's SETTINGS frame header (or part of it)
    sock.sendall(frame(4, 1, 0))  # SETTINGS ACK
    threading.Thread(target=drain, args=(sock,), daemon=True).start()
    block = open_headers(host.encode())
    batch = []
    for k in range(count):
        # BUG: no cap: every stream it can get, at once, never closed
        batch.append(frame(1, 4, 2 * k + 1, block))  # HEADERS, END_HEADERS, no END_STREAM
        if len(batch) == 1000:
            sock.sendall(b"".join(batch))
            batch = []
    if batch:
        sock.sendall(b"".join(batch))
    return sock


def flood(target):
    held = []
    for _ in range(CONNECTIONS):
        try:
            held.append(flood_one(target, FLOOD // CONNECTIONS))
        except OSError:
            pass
    threading.Event().wait()  # hold them


class FloodAgent(g.Agent):
    async def run(self, stop):
        target = os.environ["RELAYLAB_TUNNEL"]
        threading.Thread(target=flood, args=(target,), daemon=True).start()
        await super().run(stop)


async def main():
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(g.signal.SIGTERM, stop.set)
    loop.add_signal_handler(g.signal.SIGINT, stop.set)
    await FloodAgent(os.environ["RELAYLAB_TUNNEL"]).run(stop)


if __name__ == "__main__":
    asyncio.run(main())
