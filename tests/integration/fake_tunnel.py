# fake_tunnel: a small stand-in for the coverage lab's world, enough to prove
# an agent end to end on its own: one grpc.aio server on loopback that plays
# every tunnel server behind the L7 proxy at once. Each new Tunnel.Open
# stream is placed on a named server by a policy (a function of the stream's
# rank); the stream's first message names that server; calls go to one
# server (pinned), each to its newest idle stream of the agent, and wait
# there when there is none. It records what the grader's servers record:
# streams opened and closed per server, each call's wait and answer.
# Not the grader's world (grader/ and its proxy are): no proxy, no sandbox.
import asyncio
import threading
import time

import grpc

import relaylab_pb2 as pb
import relaylab_pb2_grpc as pb_grpc


class Stream:
    def __init__(self, rank, server, now):
        self.rank = rank
        self.server = server
        self.opened = now
        self.closed = None
        self.half_closed = False  # the agent ended its side (vs a cancel)
        self.call = None  # the call handed to it and not answered
        self.out = asyncio.Queue()
        self.answered = 0


class Call:
    def __init__(self, call_id, work_ms, now):
        self.call_id = call_id
        self.work_ms = work_ms
        self.queued = now
        self.dispatched = None
        self.answered = None


class FakeTunnel(pb_grpc.TunnelServicer):
    """Start with start(); every public method may be called from the test's
    thread (they run on the server's own asyncio loop)."""

    def __init__(self, servers=("A", "B", "C"), place=None, target="B"):
        self.servers = list(servers)
        self.place = place or (lambda rank: self.servers[rank % len(self.servers)])
        self.target = target
        self.streams = []
        self.calls = []
        self.queue = []  # calls waiting at the target server
        self.closed_while_busy = 0  # streams that ended with a call unanswered
        self.bad_answers = 0
        self._next_call = 1
        self._loop = None
        self._thread = None
        self.port = None

    # ---- the Tunnel contract ----
    async def Open(self, request_iterator, context):
        now = time.monotonic()
        st = Stream(len(self.streams), self.place(len(self.streams)), now)
        self.streams.append(st)
        await context.write(pb.TunnelCall(server_id=st.server))
        self._dispatch()
        reader = asyncio.ensure_future(self._read(st, context))
        get = None
        try:
            while True:
                get = asyncio.ensure_future(st.out.get())
                done, _ = await asyncio.wait({get, reader}, return_when=asyncio.FIRST_COMPLETED)
                if get in done:
                    await context.write(get.result())
                else:
                    get.cancel()
                if reader.done():
                    break
        finally:
            reader.cancel()
            if get is not None:
                get.cancel()
            self._end(st)

    async def _read(self, st, context):
        while True:
            msg = await context.read()
            if msg is grpc.aio.EOF:
                st.half_closed = True
                return
            if st.call is None or msg.call_id != st.call.call_id:
                self.bad_answers += 1
                continue
            st.call.answered = time.monotonic()
            st.call = None
            st.answered += 1
            self._dispatch()

    def _end(self, st):
        st.closed = time.monotonic()
        if st.call is not None:
            # The agent left with a call in hand: it waits for another stream.
            self.closed_while_busy += 1
            st.call.dispatched = None
            self.queue.insert(0, st.call)
            st.call = None
        self._dispatch()

    def _dispatch(self):
        now = time.monotonic()
        while self.queue:
            idle = [s for s in self.streams if s.server == self.target and s.closed is None and not s.half_closed and s.call is None]
            if not idle:
                return
            st = idle[-1]  # the newest idle stream
            call = self.queue.pop(0)
            call.dispatched = now
            st.call = call
            st.out.put_nowait(pb.TunnelCall(call_id=call.call_id, work_ms=call.work_ms))

    # ---- the test's side ----
    def _on_loop(self, fn):
        fut = asyncio.run_coroutine_threadsafe(self._call(fn), self._loop)
        return fut.result(timeout=10)

    async def _call(self, fn):
        return fn()

    def start(self):
        started = threading.Event()

        def run():
            self._loop = asyncio.new_event_loop()
            asyncio.set_event_loop(self._loop)

            async def serve():
                self._server = grpc.aio.server()
                pb_grpc.add_TunnelServicer_to_server(self, self._server)
                self.port = self._server.add_insecure_port("127.0.0.1:0")
                await self._server.start()
                self._stopping = asyncio.Event()
                started.set()
                await self._stopping.wait()
                await self._server.stop(None)

            self._loop.run_until_complete(serve())

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()
        if not started.wait(10):
            raise RuntimeError("the fake tunnel did not start")
        return f"127.0.0.1:{self.port}"

    def stop(self):
        if self._loop is None:
            return
        # The loop runs until serve() returns: serve stops the server itself.
        self._loop.call_soon_threadsafe(self._stopping.set)
        self._thread.join(10)
        assert not self._thread.is_alive(), "the fake tunnel did not stop within 10 s"

    def burst(self, n, work_ms):
        def add():
            now = time.monotonic()
            for _ in range(n):
                call = Call(self._next_call, work_ms, now)
                self._next_call += 1
                self.calls.append(call)
                self.queue.append(call)
            self._dispatch()

        self._on_loop(add)

    def figures(self):
        """{server: (open streams, busy streams)}, queued calls, calls answered."""

        def read():
            per = {name: [0, 0] for name in self.servers}
            for s in self.streams:
                if s.closed is None and not s.half_closed:
                    per[s.server][0] += 1
                    per[s.server][1] += s.call is not None
            return ({k: tuple(v) for k, v in per.items()}, len(self.queue), sum(1 for c in self.calls if c.answered))

        return self._on_loop(read)

    def snapshot(self, what):
        return self._on_loop(what)
