# The reference relay's memory after bursts of calls (issue: "its memory comes
# back after a burst"). Two checks, neither a timing goal:
# - no per-call growth: jemalloc's live bytes (the relay's SIGUSR1 line,
#   "allocated=N") after twelve more bursts are within an allowance of what
#   they were after the first, so a leak of 70 bytes a call or more (times
#   6000 calls) shows. The relay runs with jemalloc's thread caches
#   off for this (MALLOC_CONF=tcache:false): with them its live bytes moved
#   by +-400 KiB from burst to burst, without them by at most 82 KiB
#   (measured over 12 bursts of 500);
# - the memory comes back: RSS returns to within twice its idle figure once
#   the bursts stop (jemalloc purges freed pages from a background thread
#   after 1 s: lib/rl_alloc.c), waited for with a deadline, not a sleep.
# jemalloc is off in sanitizer builds (`make check`), where ASan's quarantine
# holds freed memory on purpose: the test is skipped there.
import os
import re
import signal
import time

import pytest

import relaylab_pb2 as pb
import relaylab_pb2_grpc as pb_grpc
from conftest import bin_path, channel

BURST = 500
STATS_RE = re.compile(r"stats \(SIGUSR1\).* allocated=(-?\d+) resident=(-?\d+) rss=(-?\d+)")
MORE_BURSTS = 12
# Live bytes the relay may gain over MORE_BURSTS bursts without a leak: the
# largest growth measured over a run of bursts was 214 KiB (in a loaded
# `make test`), a planted 100-byte leak adds 672 KiB over 6000 calls.
ALLOWANCE_BYTES = 400 * 1024

sanitized = os.sep + "address" in os.environ.get("RELAYLAB_BIN", "")
pytestmark = pytest.mark.skipif(sanitized, reason="jemalloc is off under the sanitizers")


def rss_bytes(pid):
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def stats_line(relay, count_before, timeout_s=10):
    """Sends SIGUSR1 and returns (allocated, resident, rss) from the new line."""
    relay.signal(signal.SIGUSR1)
    until = time.monotonic() + timeout_s
    while time.monotonic() < until:
        found = STATS_RE.findall(relay.stderr(tail=None))
        if len(found) > count_before:
            return tuple(int(x) for x in found[-1]), len(found)
        time.sleep(0.02)
    pytest.fail(f"no stats line after SIGUSR1:\n{relay.stderr()}")


def settled_allocated(relay, seen, readings=5):
    """The least of |readings| SIGUSR1 lines about 200 ms apart: calls the
    client saw end may still be freed on the relay's side a moment later (on
    a loaded machine the last burst's showed as 243 bytes a call), while a
    leak stays in every reading."""
    least = None
    for _ in range(readings):
        (allocated, _, _), seen = stats_line(relay, seen)
        least = allocated if least is None else min(least, allocated)
        time.sleep(0.2)
    return least, seen


def burst(stub, n, tag):
    futures = [stub.Process.future(pb.ProcessRequest(tag=f"{tag}.{k}"), timeout=60) for k in range(n)]
    failed = [f.exception() for f in futures if f.exception() is not None]
    assert not failed, f"{len(failed)} of {n} calls failed, e.g. {failed[0]}"


@pytest.mark.timeout(180)
def test_bursts_leave_no_growth_and_their_memory_comes_back(start_program, baseline):
    env = dict(os.environ, RELAYLAB_LISTEN="127.0.0.1:0", RELAYLAB_BASELINE=baseline.addr,
               MALLOC_CONF="tcache:false")
    relay = start_program([bin_path("relay")], env=env)
    ch = channel(relay.addr)
    try:
        stub = pb_grpc.RelayStub(ch)
        burst(stub, 20, "warm")
        idle = rss_bytes(relay.pid)
        burst(stub, BURST, "b0")
        first, seen = settled_allocated(relay, 0)
        if first < 0:
            pytest.skip("the relay was built without jemalloc")
        for i in range(1, 1 + MORE_BURSTS):
            burst(stub, BURST, f"b{i}")
        last, seen = settled_allocated(relay, seen)
        calls = MORE_BURSTS * BURST
        assert last - first < ALLOWANCE_BYTES, (
            f"live bytes grew {last - first} over {calls} calls ({(last - first) / calls:.0f} per call): "
            f"a per-call leak")
        until = time.monotonic() + 30
        while rss_bytes(relay.pid) > 2 * idle and time.monotonic() < until:
            time.sleep(0.1)
        now = rss_bytes(relay.pid)
        assert now <= 2 * idle, f"RSS {now >> 20} MiB 30 s after the bursts, idle {idle >> 20} MiB"
    finally:
        ch.close()
