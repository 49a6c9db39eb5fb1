# agent.py: your tunnel agent for the relaylab `coverage` exercise (`lab show
# coverage`). The streams are handled for you: the agent dials
# $RELAYLAB_TUNNEL (the L7 proxy), opens Tunnel.Open streams, learns each
# stream's server from its first message, works each call it is handed for
# its work_ms and answers it on the same stream, half-closes a stream when
# asked to (once its call in hand is answered), and at SIGTERM closes them
# all and exits 0. Once a tick it groups its open streams by server and
# calls tick(). The lesson is yours, the block between the TODO markers: the
# sizing tick, by the handout's table (grow greedily where calls are in
# flight, fill toward the reserve, evacuate an overdue server, prune idle
# streams). `./run` starts this file; the generated code is in gen/
# (`lab stubs python .` makes it again).
import asyncio
import os
import signal
import sys
import time

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen"))
import relaylab_pb2 as pb  # noqa: E402
import relaylab_pb2_grpc as pb_grpc  # noqa: E402

# The rules' constants at the lab's scale (the handout's table; seconds).
TICK = 0.250
RESERVE = 2
GROW_MIN = 8
PAUSE_FACTOR = 4
FILL_PER_TICK = 4
CAP_PER_SERVER = 1200
CAP_TOTAL = 4000
OVERDUE = 3.0
EVACUATE_EVERY = 3.0
EVACUATED = 6.0
PRUNE_AGE = 2.0
PRUNE_UNUSED = 6.0


def log(text):
    print(f"agent: {text}", file=sys.stderr, flush=True)


class Stream:
    """One Tunnel.Open stream. Read: server (None until named), busy (a call
    in hand), opened and last_used (time.monotonic(): when it opened, when
    it last answered a call). Call close() to half-close it."""

    def __init__(self, agent):
        self.agent = agent
        self.server = None
        self.busy = False
        self.closing = False
        self.opened = time.monotonic()
        self.last_used = self.opened
        self.out = asyncio.Queue()

    async def _answers(self):
        while True:
            m = await self.out.get()
            if m is None:
                return  # our side ends: the server then ends the stream OK
            yield m

    async def run(self):
        try:
            async for m in self.agent.stub.Open(self._answers()):
                if self.server is None:
                    self.server = m.server_id  # the first message names the server
                elif not self.closing:
                    self.busy = True
                    self.agent.spawn(self._work(m))
        except grpc.aio.AioRpcError:
            pass  # cancelled, or the tunnel went away
        finally:
            self.agent.streams.discard(self)

    async def _work(self, m):
        await asyncio.sleep(m.work_ms / 1000.0)
        self.busy = False
        self.last_used = time.monotonic()
        await self.out.put(pb.TunnelAnswer(call_id=m.call_id))
        if self.closing:
            await self.out.put(None)

    def close(self):
        """Half-closes the stream now, or once its call in hand is answered."""
        if not self.closing:
            self.closing = True
            if not self.busy:
                self.out.put_nowait(None)


class Server:
    """What the agent holds on one server: streams (its open, named streams
    this tick, closing ones left out), and whatever your tick keeps from one
    tick to the next (add fields as you like)."""

    def __init__(self, name):
        self.name = name
        self.streams = []
        self.grow_last = 0  # streams opened for it by growing the tick before
        self.short_idle_since = None  # when it became short and idle, or None
        self.evacuated_until = 0.0

    def busy(self):
        return sum(s.busy for s in self.streams)

    def idle(self):
        return [s for s in self.streams if not s.busy]


class Agent:
    def __init__(self, target):
        self.channel = grpc.aio.insecure_channel(target)
        self.stub = pb_grpc.TunnelStub(self.channel)
        self.streams = set()
        self.tasks = set()
        self.servers = {}  # name -> Server, every server a stream ever landed on
        self.pending = 0  # streams opened and not named yet (this tick)
        self.last_evacuation = float("-inf")
        self.warned = False

    def spawn(self, coro):
        t = asyncio.get_running_loop().create_task(coro)
        self.tasks.add(t)
        t.add_done_callback(self.tasks.discard)

    def open(self, n):
        """Opens |n| new streams (at most CAP_TOTAL in all): the proxy places
        them, and the next tick sees where they landed."""
        for _ in range(max(0, min(n, CAP_TOTAL - len(self.streams)))):
            s = Stream(self)
            self.streams.add(s)
            self.spawn(s.run())

    def group(self):
        self.pending = 0
        for srv in self.servers.values():
            srv.streams = []
        for s in self.streams:
            if s.closing:
                continue
            if s.server is None:
                self.pending += 1
                continue
            if s.server not in self.servers:
                self.servers[s.server] = Server(s.server)
            self.servers[s.server].streams.append(s)

    # >>> TODO(coverage): the sizing tick, per server (the handout's table).
    def tick(self, now):
        """Sizes the streams once a tick; |now| is time.monotonic().
        self.servers maps each server's name to its Server: .streams, .busy()
        (its calls in flight: all the demand you can see), .idle(). Per
        server: covered (streams >= busy + RESERVE) nothing; growing (short,
        calls in flight) open max(GROW_MIN, busy, shortfall), twice the last
        tick's while it stays short, paused while idle streams on the other
        servers reach PAUSE_FACTOR x its busy, capped; filling (short, idle)
        open toward the reserve, FILL_PER_TICK at most; overdue (short and
        idle for OVERDUE) evacuate: close its idle streams and open as many,
        only while another server is covered, one per EVACUATE_EVERY;
        evacuated (EVACUATED after) close idle streams there, no grow or
        fill. Prune idle streams PRUNE_AGE old and unused PRUNE_UNUSED, the
        longest unused first, never below busy + RESERVE. self.pending
        streams are on their way: count them toward what you open."""
        if not self.warned:
            self.warned = True
            log("TODO in agent.py: the sizing tick does nothing yet; the agent keeps its first streams")
    # <<< TODO

    async def run(self, stop):
        self.open(GROW_MIN)  # it knows no server yet
        while not stop.is_set():
            try:
                await asyncio.wait_for(stop.wait(), TICK)
            except asyncio.TimeoutError:
                pass
            if not stop.is_set():
                self.group()
                self.tick(time.monotonic())
                if not self.streams:
                    self.open(GROW_MIN)
        for s in list(self.streams):
            s.close()
        try:
            await asyncio.wait_for(asyncio.gather(*self.tasks, return_exceptions=True), 1.0)
        except asyncio.TimeoutError:
            pass  # what is left is cut at exit
        await self.channel.close(None)


async def main():
    target = os.environ.get("RELAYLAB_TUNNEL")
    if not target:
        log("RELAYLAB_TUNNEL is not set (host:port of the tunnel to dial)")
        sys.exit(2)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    loop.add_signal_handler(signal.SIGINT, stop.set)
    await Agent(target).run(stop)


if __name__ == "__main__":
    asyncio.run(main())
