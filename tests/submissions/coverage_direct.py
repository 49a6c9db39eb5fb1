# coverage_direct: tries to go around the L7 balancer. Once its first
# streams are named, it looks for the tunnel servers' own ports (the loopback
# listeners in /proc/net/tcp, or a connect scan of the ephemeral ports where
# the sandbox hides it), asks each for a stream, and would from then on open
# the streams a short server needs straight on that server's port, so they
# land where it wants them. Sizing otherwise as coverage_good.py.
#
# It finds no server port: the tunnel servers listen only on unix sockets in
# the grader's private folder, which the proxy dials and the sandbox does not
# show, and the proxy's port, the one TCP listener of the world, it leaves
# out. So every stream it opens goes through the proxy and it is a right
# agent: PASS on every scenario, as coverage_good.py (tests/verdicts.json).
# The row guards the world: should a server get a TCP port again, the scan
# finds it, the server refuses the streams opened there and the judge says
# "streams around the proxy?" (when the servers had ports, a loaded machine
# could finish the scan of ~28,000 ports only after a short scenario was
# judged: a verdict that hung on the machine's speed).
import asyncio
import errno
import os
import select
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import coverage_good as g  # noqa: E402

PROBE_S = 1.0
MAX_PORTS = 64


def listening_ports():
    """The loopback listeners: from /proc/net/tcp, or, where the sandbox
    hides it, by connecting to every ephemeral port (the grader's network
    namespace holds only its own world)."""
    ports = []
    try:
        with open("/proc/net/tcp") as f:
            next(f)
            for line in f:
                local, state = line.split()[1], line.split()[3]
                addr, port = local.split(":")
                if state == "0A" and addr == "0100007F":
                    ports.append(int(port, 16))
    except OSError:
        pass
    return ports[:MAX_PORTS] or scan(32768, 61000)


def scan(lo, hi, batch=512):
    found = []
    for start in range(lo, hi, batch):
        socks = {}
        for port in range(start, min(hi, start + batch)):
            s = socket.socket()
            s.setblocking(False)
            if s.connect_ex(("127.0.0.1", port)) in (0, errno.EINPROGRESS):
                socks[s] = port
            else:
                s.close()
        if socks:
            _, w, _ = select.select([], list(socks), [], 0.2)
            for s in w:
                if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                    found.append(socks[s])
        for s in socks:
            s.close()
        if len(found) >= MAX_PORTS:
            break
    return found


class DirectStream(g.Stream):
    def __init__(self, agent, stub):
        super().__init__(agent)
        self.stub = stub

    async def run(self):
        try:
            call = self.stub.Open(self.answers())
            async for m in call:
                if self.server is None:
                    self.server = m.server_id
                    continue
                self.busy = True
                self.agent.spawn(self.work(m))
        except g.grpc.aio.AioRpcError:
            pass
        finally:
            self.agent.streams.discard(self)


class DirectAgent(g.Agent):
    def __init__(self, target):
        super().__init__(target)
        self.proxy_port = int(target.rsplit(":", 1)[1])
        self.direct = {}  # server name -> stub on its own port
        self.found = False

    async def probe(self, port):
        ch = g.grpc.aio.insecure_channel(f"127.0.0.1:{port}")
        stub = g.pb_grpc.TunnelStub(ch)
        done = asyncio.Queue()
        done.put_nowait(None)

        async def nothing():
            await asyncio.sleep(PROBE_S)
            return
            yield

        try:
            call = stub.Open(nothing())
            m = await asyncio.wait_for(call.read(), PROBE_S)
            if m is not None and m.server_id:
                self.direct[m.server_id] = stub
                call.cancel()
                return
        except (g.grpc.aio.AioRpcError, asyncio.TimeoutError):
            pass
        # BUG: a server that refused is kept too: the agent tries it again
        self.direct.setdefault(f"port {port}", stub)

    async def find(self):
        ports = await asyncio.get_running_loop().run_in_executor(None, listening_ports)
        ports = [p for p in ports if p != self.proxy_port]
        await asyncio.gather(*(self.probe(p) for p in ports), return_exceptions=True)

    def open(self, n):
        groups = self.by_server()
        short = max(groups, key=lambda k: sum(s.busy for s in groups[k]) + g.RESERVE - len(groups[k]),
                    default=None)
        stub = self.direct.get(short)
        if not self.found or stub is None or n <= 0:
            return super().open(n)
        # BUG: straight to the short server's own port, around the balancer
        for _ in range(min(n, g.CAP_TOTAL - len(self.streams))):
            s = DirectStream(self, stub)
            self.streams.add(s)
            self.spawn(s.run())

    def tick(self):
        if not self.found and any(s.server for s in self.streams):
            self.found = True
            self.spawn(self.find())
        super().tick()


async def main():
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(g.signal.SIGTERM, stop.set)
    loop.add_signal_handler(g.signal.SIGINT, stop.set)
    await DirectAgent(os.environ["RELAYLAB_TUNNEL"]).run(stop)


if __name__ == "__main__":
    asyncio.run(main())
