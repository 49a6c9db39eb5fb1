# coverage_flood: floods the L7 balancer. At start it opens FLOOD streams
# (200,000) at once through RELAYLAB_TUNNEL and keeps every one the
# balancer accepts, then sizes as coverage_good.py.
#
# Must fail every scenario ("growing without a cap?": the balancer refuses
# streams a quarter over the total cap), and the world must stay bounded:
# the grader process near its usual size while the agent floods it.
import asyncio
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import coverage_good as g  # noqa: E402

FLOOD = int(os.environ.get("COVERAGE_FLOOD", "200000"))
CHUNK = 2000
CHANNELS = 8  # connections: a limit per connection alone does not hold it


async def hold():
    await asyncio.Event().wait()  # never ends its side
    yield


class FloodAgent(g.Agent):
    async def flood(self):
        held = []
        target = os.environ["RELAYLAB_TUNNEL"]
        stubs = [g.pb_grpc.TunnelStub(g.grpc.aio.insecure_channel(target, options=[("grpc.channel_id", i)]))
                 for i in range(CHANNELS)]
        for k, start in enumerate(range(0, FLOOD, CHUNK)):
            # BUG: no cap: every stream it can get, at once
            stub = stubs[k % CHANNELS]
            held.extend(stub.Open(hold()) for _ in range(min(CHUNK, FLOOD - start)))
            await asyncio.sleep(0)
        self.held = held

    async def run(self, stop):
        self.spawn(self.flood())
        await super().run(stop)


async def main():
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(g.signal.SIGTERM, stop.set)
    loop.add_signal_handler(g.signal.SIGINT, stop.set)
    await FloodAgent(os.environ["RELAYLAB_TUNNEL"]).run(stop)


if __name__ == "__main__":
    asyncio.run(main())
