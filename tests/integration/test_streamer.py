# bin/streamer seen from an independent client (Python grpcio): every chunk
# arrives in order with the right bytes, requests past the limits are refused
# with the right status while the server keeps serving, a cancel or a stalled
# reader stops production (read from the server's own SIGUSR1 counters), and
# the --unbounded mistake still sends the right data while it queues.
import re
import signal
import time

import grpc
import pytest

import relaylab_pb2 as pb
import relaylab_pb2_grpc as pb_grpc
from conftest import bin_path, channel

# The streamer's limits (streamer/produce.h).
MAX_SIZE = 4 * 1024 * 1024 - 64
MAX_COUNT = 1_000_000
KIB = 1024
MIB = 1024 * 1024
# docs/grpc-facts.md (flow control): a stalled reader stops a paced producer
# one window later, and the window is the reader's gRPC's: 64 to 147 chunks
# of 64 KiB on a quiet machine (bench/results/streamer.md), 401 once with a
# CPU hog on each core (make soak, bench/results/soak.md: BDP probing
# measures a longer round trip and doubles the window, a power of two, up
# to 1 GiB in gRPC 1.51). The producer's own rule is judged by what it
# holds (queued, allocated); this bound only says it stopped short of the
# whole 3000: 32 MiB, the window's next doubling after 16, is 512.
MAX_WINDOW_CHUNKS = 1000
# The same bound in bytes, for chunks of other sizes: what a paced producer
# may have sent beyond what the reader took.
MAX_WINDOW_BYTES = MAX_WINDOW_CHUNKS * 64 * KIB

STATS_RE = re.compile(r"stats \(SIGUSR1\) active=(\d+) calls=(\d+) sent=(\d+) queued=(\d+) "
                      r"allocated=(-?\d+) resident=(-?\d+) rss=(-?\d+)")


def expected(seq, size):
    start = seq * 31 % 251
    return (bytes(range(251)) * (size // 251 + 2))[start:start + size]


def check_chunks(chunks, count, size):
    n = 0
    for c in chunks:
        assert c.seq == n, f"chunk {n} arrived as seq {c.seq}"
        assert len(c.payload) == size
        assert c.payload == expected(n, size), f"chunk {n} has wrong bytes"
        n += 1
    assert n == count


class Streamer:
    def __init__(self, program):
        self.program = program
        self.channel = channel(program.addr)
        self.stub = pb_grpc.StreamerStub(self.channel)

    def stats(self, timeout=20.0):
        """The counters from a fresh SIGUSR1 line, as a dict. The bound is
        wide: an unbounded streamer busy queueing a whole response answered
        after more than 5 s beside make test's four groups."""
        before = len(STATS_RE.findall(self.program.stderr(tail=None)))
        self.program.signal(signal.SIGUSR1)
        deadline = time.monotonic() + timeout
        while True:
            found = STATS_RE.findall(self.program.stderr(tail=None))
            if len(found) > before:
                keys = ("active", "calls", "sent", "queued", "allocated", "resident", "rss")
                return dict(zip(keys, map(int, found[-1])))
            # A streamer that died takes no signal: say so at once, with how
            # it ended, rather than as a missing line 20 s later.
            status = self.program.popen.poll()
            assert status is None, f"the streamer exited ({status}):\n{self.program.stderr()}"
            assert time.monotonic() < deadline, f"no stats line {timeout} s after SIGUSR1:\n{self.program.stderr()}"
            time.sleep(0.02)

    def wait_stats(self, predicate, timeout):
        """Polls the counters until predicate(stats) holds; returns them."""
        deadline = time.monotonic() + timeout
        while True:
            s = self.stats()
            if predicate(s):
                return s
            assert time.monotonic() < deadline, f"condition not met within {timeout} s: {s}"
            time.sleep(0.05)

    def wait_steady(self, timeout, quiet=0.5):
        """Waits until the sent counter has not moved for |quiet| seconds."""
        deadline = time.monotonic() + timeout
        last = self.stats()
        since = time.monotonic()
        while time.monotonic() - since < quiet:
            assert time.monotonic() < deadline, f"the producer never stopped: {last}"
            time.sleep(0.1)
            s = self.stats()
            if s["sent"] != last["sent"]:
                since = time.monotonic()
            last = s
        return last


@pytest.fixture
def streamer(start_program):
    s = Streamer(start_program([bin_path("streamer"), "--threads", "2"]))
    yield s
    s.channel.close()


@pytest.fixture
def unbounded(start_program):
    s = Streamer(start_program([bin_path("streamer"), "--threads", "2", "--unbounded"]))
    yield s
    s.channel.close()


@pytest.mark.parametrize("count,size", [(300, 10_000), (5, 0), (3, 1), (2, 300_000)])
def test_all_chunks_in_order_with_right_bytes(streamer, count, size):
    check_chunks(streamer.stub.Produce(pb.ProduceRequest(tag="t", count=count, size=size), timeout=30), count, size)


def test_zero_chunks_is_an_empty_ok_stream(streamer):
    call = streamer.stub.Produce(pb.ProduceRequest(tag="z", count=0, size=100), timeout=10)
    assert list(call) == []
    assert call.code() == grpc.StatusCode.OK


def test_largest_chunk_fits_a_default_client(streamer):
    check_chunks(streamer.stub.Produce(pb.ProduceRequest(count=1, size=MAX_SIZE), timeout=30), 1, MAX_SIZE)


@pytest.mark.parametrize("count,size,code,word", [
    (1, MAX_SIZE + 1, grpc.StatusCode.INVALID_ARGUMENT, "size"),
    (MAX_COUNT + 1, 1, grpc.StatusCode.INVALID_ARGUMENT, "count"),
    (MAX_COUNT, MAX_SIZE, grpc.StatusCode.RESOURCE_EXHAUSTED, "bytes per call"),
])
def test_limits_are_refused_and_the_server_keeps_serving(streamer, count, size, code, word):
    with pytest.raises(grpc.RpcError) as e:
        list(streamer.stub.Produce(pb.ProduceRequest(count=count, size=size), timeout=10))
    assert e.value.code() == code
    assert word in e.value.details()
    check_chunks(streamer.stub.Produce(pb.ProduceRequest(count=3, size=100), timeout=10), 3, 100)


def test_malformed_request_is_refused_and_the_server_keeps_serving(streamer):
    raw = streamer.channel.unary_stream("/relaylab.Streamer/Produce", request_serializer=None,
                                        response_deserializer=None)
    with pytest.raises(grpc.RpcError) as e:
        list(raw(b"\xff\xff\xff", timeout=10))
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    check_chunks(streamer.stub.Produce(pb.ProduceRequest(count=3, size=100), timeout=10), 3, 100)


def test_cancel_stops_production(streamer):
    # 200,000 chunks would take many seconds: only a stopped producer goes quiet.
    call = streamer.stub.Produce(pb.ProduceRequest(tag="c", count=200_000, size=1024), timeout=60)
    for i, c in zip(range(50), call):
        assert c.seq == i
    call.cancel()
    s = streamer.wait_stats(lambda s: s["active"] == 0, 5)
    # Paced by the window: no more than the 50 chunks read plus one window
    # (measured 50-586 chunks of 1 KiB, n=8), far from the 200,000 asked.
    assert 50 <= s["sent"] <= 50 + MAX_WINDOW_BYTES // 1024, s
    time.sleep(0.3)  # a window in which a producer that missed the cancel would go on
    assert streamer.stats()["sent"] == s["sent"]
    check_chunks(streamer.stub.Produce(pb.ProduceRequest(count=3, size=100), timeout=10), 3, 100)


def test_stalled_reader_stops_the_producer_within_a_window(streamer):
    call = streamer.stub.Produce(pb.ProduceRequest(tag="s", count=3000, size=64 * KIB), timeout=60)
    first = next(call)
    assert first.seq == 0
    s = streamer.wait_steady(10)
    assert 1 <= s["sent"] <= MAX_WINDOW_CHUNKS, s
    assert s["active"] == 1 and s["queued"] == 0, s  # nothing made ahead of the window
    if s["allocated"] >= 0:  # jemalloc: the producer holds at most a chunk or two
        assert s["allocated"] < 16 * MIB, s
    # Reading resumes: the rest arrives intact.
    check_chunks([first] + list(call), 3000, 64 * KIB)


def test_unbounded_mode_sends_right_data(unbounded):
    check_chunks(unbounded.stub.Produce(pb.ProduceRequest(count=500, size=20_000), timeout=30), 500, 20_000)


def test_unbounded_mode_queues_everything_for_a_stalled_reader(unbounded):
    call = unbounded.stub.Produce(pb.ProduceRequest(tag="u", count=3000, size=64 * KIB), timeout=60)
    first = next(call)
    # The thread does not wait for the reader: nearly all 187.5 MiB end up queued.
    s = unbounded.wait_stats(lambda s: s["queued"] > 150 * MIB, 10)
    assert s["sent"] <= MAX_WINDOW_CHUNKS
    check_chunks([first] + list(call), 3000, 64 * KIB)
    assert unbounded.wait_stats(lambda s: s["queued"] == 0 and s["active"] == 0, 5)


def test_unbounded_cancel_frees_the_queue(unbounded):
    call = unbounded.stub.Produce(pb.ProduceRequest(tag="uc", count=3000, size=64 * KIB), timeout=60)
    next(call)
    unbounded.wait_stats(lambda s: s["queued"] > 100 * MIB, 10)
    call.cancel()
    unbounded.wait_stats(lambda s: s["active"] == 0 and s["queued"] == 0, 5)


def test_sigterm_drains_and_exits_zero(streamer):
    check_chunks(streamer.stub.Produce(pb.ProduceRequest(count=10, size=1000), timeout=10), 10, 1000)
    streamer.program.signal(signal.SIGTERM)
    assert streamer.program.wait_exit(15) == 0


@pytest.mark.parametrize("mode", ["paced", "unbounded"])
def test_sigterm_after_cancelled_and_stalled_calls_exits_zero(start_program, mode):
    # Under `make check` (ASan) a zero exit also means nothing leaked: every
    # call state, prepared chunk and queued chunk was freed.
    argv = [bin_path("streamer"), "--threads", "2"] + (["--unbounded"] if mode == "unbounded" else [])
    s = Streamer(start_program(argv))
    cancelled = s.stub.Produce(pb.ProduceRequest(tag="x", count=3000, size=64 * KIB), timeout=60)
    next(cancelled)
    stalled = s.stub.Produce(pb.ProduceRequest(tag="y", count=3000, size=64 * KIB), timeout=60)
    next(stalled)
    s.wait_stats(lambda st: st["active"] == 2 and st["sent"] >= 2, 10)
    cancelled.cancel()
    s.wait_stats(lambda st: st["active"] == 1, 5)
    stalled.cancel()
    s.wait_stats(lambda st: st["active"] == 0, 5)
    s.channel.close()
    s.program.signal(signal.SIGTERM)
    assert s.program.wait_exit(15) == 0, s.program.stderr()


def stats_lines(program, why):
    """The figures lines logged for |why| ("periodic", "SIGUSR1")."""
    pattern = re.compile(STATS_RE.pattern.replace("SIGUSR1", re.escape(why)))
    return list(pattern.finditer(program.stderr(tail=None)))


CALL_RE = re.compile(r"call tag=(\S+) count=(\d+) size=(\d+) sent=(\d+) status=(\S+) ms=(\d+) "
                     r"allocated=(-?\d+) resident=(-?\d+) rss=(-?\d+)")


def wait_for_stderr(program, pattern, n, timeout):
    """The first |n| matches of |pattern| in |program|'s stderr, waited for."""
    deadline = time.monotonic() + timeout
    while True:
        found = list(pattern.finditer(program.stderr(tail=None)))
        if len(found) >= n:
            return found
        assert time.monotonic() < deadline, f"fewer than {n} lines like {pattern.pattern!r}:\n{program.stderr()}"
        time.sleep(0.05)


def test_stats_logs_every_call_end_and_periodic_figures(start_program):
    p = start_program([bin_path("streamer"), "--threads", "2", "--stats"])
    s = Streamer(p)
    check_chunks(s.stub.Produce(pb.ProduceRequest(tag="st-ok", count=5, size=100), timeout=10), 5, 100)
    call = s.stub.Produce(pb.ProduceRequest(tag="st-cancel", count=200_000, size=1024), timeout=60)
    next(call)
    call.cancel()
    calls = {m.group(1): m for m in wait_for_stderr(p, CALL_RE, 2, 10)}
    ok, cancelled = calls["st-ok"], calls["st-cancel"]
    assert ok.group(2, 3, 4, 5) == ("5", "100", "5", "OK"), ok.group(0)
    assert cancelled.group(2, 3, 5) == ("200000", "1024", "CANCELLED"), cancelled.group(0)
    assert 1 <= int(cancelled.group(4)) <= 1 + MAX_WINDOW_BYTES // 1024, cancelled.group(0)
    assert int(ok.group(9)) > 0  # the RSS is always known (from /proc)
    # The periodic line comes about once a second without any signal; two of
    # them show it repeats. Its counters agree with the calls made.
    wait_for_stderr(p, re.compile(r"stats \(periodic\)"), 2, 10)
    last = stats_lines(p, "periodic")[-1]
    active, calls_n, sent = map(int, last.group(1, 2, 3))
    assert calls_n == 2 and active == 0 and sent >= 6, last.group(0)
    s.channel.close()


def test_without_stats_a_call_end_is_not_logged(streamer):
    # The counterpart: the same call leaves no INFO line, and a SIGUSR1 line
    # (waited for) is the only figures line, so the periodic logger is off.
    check_chunks(streamer.stub.Produce(pb.ProduceRequest(tag="quiet", count=5, size=100), timeout=10), 5, 100)
    streamer.wait_stats(lambda st: st["active"] == 0 and st["calls"] == 1, 5)
    err = streamer.program.stderr(tail=None)
    assert not CALL_RE.search(err), err
    assert not stats_lines(streamer.program, "periodic"), err
