# coverage_good: a correct Python tunnel agent for the coverage exercise
# (grpc.aio). It dials $RELAYLAB_TUNNEL (an L7 proxy that places every new
# stream on a tunnel server of its choosing), learns each stream's server
# from its first message, and sizes its streams PER SERVER once a tick, by
# the table of lab/exercises/coverage.md (constants: lib/rl_coverage.h):
#   covered    streams >= busy + RESERVE              nothing
#   growing    short, calls in flight                 open max(8, busy, shortfall),
#              doubling while the server stays all busy; paused while idle
#              streams elsewhere >= 4 x its busy; capped
#   filling    short, idle                            open toward the reserve, 4 a tick
#   overdue    short and idle for OVERDUE_MS          evacuate: close its idle streams
#              (only while another server is covered, one per EVACUATE_EVERY_MS)
#   evacuated  for EVACUATED_MS                       no grow or fill; close idle streams
# and prunes idle streams older than PRUNE_AGE_MS and unused for
# PRUNE_UNUSED_MS, never below busy + RESERVE on their server.
#
# Mistake: none. It must pass every scenario. coverage_total.py reuses this
# file and changes one thing (SIZING = "total": the incident), as do
# coverage_linear.py and coverage_shortfall.py (GROWTH).
import asyncio
import os
import signal
import sys
import time

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "gen", "py"))
import relaylab_pb2 as pb  # noqa: E402
import relaylab_pb2_grpc as pb_grpc  # noqa: E402

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

# "per-server" (the rule) or "total" (the incident: one pool for every server).
SIZING = "per-server"
# "doubling" (the rule), "linear" (a fixed GROW_MIN a tick) or "shortfall"
# (only busy + RESERVE - streams, the shortfall the agent can see).
GROWTH = "doubling"


class Stream:
    def __init__(self, agent):
        self.agent = agent
        self.server = None  # named by the server's first message
        self.busy = False
        self.closing = False
        self.opened = time.monotonic()
        self.last_used = self.opened
        self.out = asyncio.Queue()

    async def answers(self):
        while True:
            m = await self.out.get()
            if m is None:
                return  # ends our side: the server then ends the stream OK
            yield m

    async def run(self):
        try:
            call = self.agent.stub.Open(self.answers())
            async for m in call:
                if self.server is None:
                    self.server = m.server_id
                    continue
                self.busy = True
                self.agent.spawn(self.work(m))
        except grpc.aio.AioRpcError:
            pass
        finally:
            self.agent.streams.discard(self)

    async def work(self, m):
        await asyncio.sleep(m.work_ms / 1000.0)
        self.busy = False
        self.last_used = time.monotonic()
        await self.out.put(pb.TunnelAnswer(call_id=m.call_id))

    def close(self):
        if not self.closing:
            self.closing = True
            self.out.put_nowait(None)


class Agent:
    def __init__(self, target):
        self.channel = grpc.aio.insecure_channel(target)
        self.stub = pb_grpc.TunnelStub(self.channel)
        self.streams = set()
        self.tasks = set()
        self.grow_last = {}  # server -> streams opened by growing last tick
        self.short_idle_since = {}
        self.evacuated_until = {}
        self.last_evacuation = -1e9

    def spawn(self, coro):
        t = asyncio.get_running_loop().create_task(coro)
        self.tasks.add(t)
        t.add_done_callback(self.tasks.discard)

    def open(self, n):
        n = min(n, CAP_TOTAL - len(self.streams))
        for _ in range(max(0, n)):
            s = Stream(self)
            self.streams.add(s)
            self.spawn(s.run())

    def by_server(self):
        groups = {}
        for s in self.streams:
            if s.server is not None and not s.closing:
                groups.setdefault(s.server if SIZING == "per-server" else "*", []).append(s)
        return groups

    def tick(self):
        now = time.monotonic()
        groups = self.by_server()
        covered = {k for k, g in groups.items() if len(g) >= sum(s.busy for s in g) + RESERVE}
        for srv, group in groups.items():
            busy = sum(s.busy for s in group)
            idle = [s for s in group if not s.busy]
            short = len(group) < busy + RESERVE
            if self.evacuated_until.get(srv, 0) > now:
                for s in idle:
                    s.close()
                continue
            if not short:
                self.grow_last[srv] = 0
                self.short_idle_since.pop(srv, None)
            elif busy:
                self.short_idle_since.pop(srv, None)
                idle_elsewhere = sum(
                    sum(not s.busy for s in g) for k, g in groups.items() if k != srv)
                n = max(GROW_MIN, busy, busy + RESERVE - len(group))
                if self.grow_last.get(srv) and not idle:
                    n = max(n, 2 * self.grow_last[srv])
                if GROWTH == "linear":
                    n = GROW_MIN
                elif GROWTH == "shortfall":
                    n = busy + RESERVE - len(group)
                if idle_elsewhere >= PAUSE_FACTOR * busy:
                    n = 0
                n = min(n, CAP_PER_SERVER - len(group))
                self.grow_last[srv] = n
                self.open(n)
            else:
                since = self.short_idle_since.setdefault(srv, now)
                if (now - since >= OVERDUE and now - self.last_evacuation >= EVACUATE_EVERY
                        and covered - {srv}):
                    self.last_evacuation = now
                    self.evacuated_until[srv] = now + EVACUATED
                    for s in idle:
                        s.close()
                    continue
                self.open(min(RESERVE - len(group), FILL_PER_TICK))
            # Prune: the longest unused first, never below busy + RESERVE.
            keep = busy + RESERVE
            left = len(group)
            for s in sorted(idle, key=lambda s: s.last_used):
                if left <= keep:
                    break
                if now - s.opened >= PRUNE_AGE and now - s.last_used >= PRUNE_UNUSED:
                    s.close()
                    left -= 1

    async def run(self, stop):
        self.open(GROW_MIN)
        while not stop.is_set():
            try:
                await asyncio.wait_for(stop.wait(), TICK)
            except asyncio.TimeoutError:
                pass
            if not stop.is_set():
                self.tick()
        for s in list(self.streams):
            s.close()
        try:
            await asyncio.wait_for(asyncio.gather(*self.tasks, return_exceptions=True), 1.5)
        except asyncio.TimeoutError:
            pass
        await self.channel.close()


async def main():
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    loop.add_signal_handler(signal.SIGINT, stop.set)
    await Agent(os.environ["RELAYLAB_TUNNEL"]).run(stop)


if __name__ == "__main__":
    asyncio.run(main())
