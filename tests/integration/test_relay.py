"""bin/relay against bin/baseline, driven by grpcio as an independent client.

Each test starts its own baseline and relay on ports the OS picks, waits for
their readiness lines, and reads what the baseline saw through its Observer.
Instants are CLOCK_MONOTONIC nanoseconds on both sides (time.monotonic_ns()
in Python), so the client's own deadline instant can be compared with the
baseline's arrival_ns. Teardown stops both servers by pid with SIGTERM and
checks they exit 0 (under ASan that is also the leak check).
"""
import json
import os
import select
import signal
import socket
import subprocess
import time
import uuid

import grpc
import pytest

import relaylab_pb2 as pb
import relaylab_pb2_grpc as pbg
from tolerances import CANCEL_MS, LATE_CALL_WINDOW_MS, SCHED_MS, deadline_lower_ms, deadline_upper_ms, wire_rounding_ms

BIN = os.environ.get("RELAYLAB_BIN", os.path.join(os.path.dirname(__file__), "..", "..", "bin"))
READY_TIMEOUT_S = 10.0
MS = 1_000_000

# Deadline and cancel tolerances are the grader's own (tests/integration/
# tolerances.py reads them from grader/*judge.h, where they are derived from
# measurements): a received deadline is judged against the time that truly
# remained plus the wire rounding of both hops, the relay's own time before
# the call arrived, and the scheduling allowance; a cancel must reach the
# baseline within the cancel judge's allowance.

def read_ready_line(proc, name, timeout_s=READY_TIMEOUT_S):
    """The 'NAME listening on HOST:PORT' line, read with a deadline."""
    fd = proc.stdout.fileno()
    buf = b""
    give_up = time.monotonic() + timeout_s
    while b"\n" not in buf:
        left = give_up - time.monotonic()
        if left <= 0:
            raise AssertionError(f"{name} printed no readiness line within {timeout_s} s")
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(fd, 256)
        if not chunk:
            raise AssertionError(f"{name} exited before it was ready (rc={proc.poll()})")
        buf += chunk
    line = buf.split(b"\n", 1)[0].decode()
    assert line.startswith(f"{name} listening on "), line
    return line.rsplit(" ", 1)[1]


class Server:
    def __init__(self, argv, name, log_path):
        self.name = name
        self.log_path = log_path
        self.log = open(log_path, "wb")
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self.log)
        self.addr = read_ready_line(self.proc, name)
        self.checked = False

    def stderr(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")[-3000:]

    def stop(self):
        """SIGTERM by pid; returns the exit code (SIGKILL after 15 s)."""
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.proc.stdout.close()
        self.log.close()
        return self.proc.returncode


class Stack:
    """A baseline, a relay in front of it, and grpcio stubs for both."""

    def __init__(self, tmp_path, relay_args=()):
        self.servers = []
        self.baseline = self._start([os.path.join(BIN, "baseline"), "--listen", "127.0.0.1:0"], "baseline", tmp_path)
        self.relay = self._start(
            [os.path.join(BIN, "relay"), "--listen", "127.0.0.1:0", "--baseline", self.baseline.addr, *relay_args],
            "relay",
            tmp_path,
        )
        self.relay_ch = grpc.insecure_channel(self.relay.addr)
        self.baseline_ch = grpc.insecure_channel(self.baseline.addr)
        self.stub = pbg.RelayStub(self.relay_ch)
        self.observer = pbg.ObserverStub(self.baseline_ch)

    def _start(self, argv, name, tmp_path):
        s = Server(argv, name, tmp_path / f"{name}.stderr")
        self.servers.append(s)
        return s

    def records(self, tag, method=None):
        calls = self.observer.Observe(pb.ObserveRequest(tag=tag), timeout=2).calls
        return [c for c in calls if method is None or c.method == method]

    def wait_for(self, tag, pred, timeout_s, what, poll_s=0.003):
        """Polls the observer until pred(records) holds; returns the records."""
        give_up = time.monotonic() + timeout_s
        while True:
            recs = self.records(tag)
            if pred(recs):
                return recs
            if time.monotonic() > give_up:
                raise AssertionError(f"timed out after {timeout_s} s waiting for {what}; saw {list(map(fmt, recs))}")
            time.sleep(poll_s)

    def close(self):
        self.relay_ch.close()
        self.baseline_ch.close()
        # Relay first, so it never sees its downstream vanish mid-call.
        return [(s, s.stop()) for s in reversed(self.servers)]


def fmt(rec):
    return (
        f"{rec.method} deadline={'%d ms' % rec.deadline_ms if rec.has_deadline else 'none'} "
        f"steps={rec.steps_done} status={rec.status} cancelled={rec.cancelled} ended={rec.ended}"
    )


@pytest.fixture
def start_stack(tmp_path):
    """Factory: start_stack(*relay_args) -> Stack. Stops everything it started."""
    stacks = []

    def start(*relay_args):
        st = Stack(tmp_path, relay_args)
        stacks.append(st)
        return st

    yield start
    problems = []
    for st in stacks:
        for server, rc in st.close():
            if rc != 0 and not server.checked:
                problems.append(f"{server.name} exited {rc} after SIGTERM; stderr:\n{server.stderr()}")
    assert not problems, "\n".join(problems)


@pytest.fixture
def stack(start_stack):
    return start_stack()


def new_tag():
    return "t-" + uuid.uuid4().hex[:12]


def one(recs, method):
    got = [r for r in recs if r.method == method]
    assert len(got) == 1, f"expected one {method} record, saw {list(map(fmt, recs))}"
    return got[0]


def ended(method):
    return lambda recs: any(r.method == method and r.ended for r in recs)


def arrived(method):
    return lambda recs: any(r.method == method for r in recs)


def relay_ms(client_start_ns, rec, lookup=None):
    """The relay's own time before |rec| arrived, outside any downstream
    call, as the grader's deadline judge counts it: from the client's start
    to Lookup's arrival, plus, for Work, from Lookup's end to Work's arrival."""
    if lookup is None:
        return (rec.arrival_ns - client_start_ns) / MS
    return (lookup.arrival_ns - client_start_ns + rec.arrival_ns - lookup.end_ns) / MS


def check_shrunk_deadline(rec, client_deadline_ns, client_timeout_ms, lookup=None):
    """rec's deadline must be the time the client had left at its arrival,
    within the bounds the grader's deadline judge accepts. |lookup| is the
    Lookup record when |rec| is Work."""
    assert rec.has_deadline, fmt(rec)
    true_ms = (client_deadline_ns - rec.arrival_ns) / MS
    own_ms = relay_ms(client_deadline_ns - client_timeout_ms * MS, rec, lookup)
    upper = deadline_upper_ms(client_timeout_ms, true_ms, own_ms)
    assert rec.deadline_ms <= upper, (
        f"{rec.method} got {rec.deadline_ms} ms, only {true_ms:.1f} ms were left (accepted up to {upper:.1f})"
    )
    lower = deadline_lower_ms(true_ms)
    assert rec.deadline_ms >= lower, (
        f"{rec.method} got {rec.deadline_ms} ms, {true_ms:.1f} ms were left: far too little (accepted from {lower:.1f})"
    )
    return true_ms


# ---- the correct relay ----


def test_ok_path_returns_tag_and_steps_done(stack):
    tag = new_tag()
    reply = stack.stub.Process(pb.ProcessRequest(tag=tag, steps=3, step_ms=5), timeout=10)
    assert reply.tag == tag
    assert reply.steps_done == 3
    recs = stack.wait_for(tag, ended("Work"), 5, "Work to end")
    assert one(recs, "Lookup").status == 0
    work = one(recs, "Work")
    assert work.status == 0 and work.steps_done == 3
    assert one(recs, "Lookup").end_ns <= work.arrival_ns, "Work must start after Lookup ended"


def test_work_receives_only_the_time_left(stack):
    tag = new_tag()
    timeout_ms = 2000
    deadline_ns = time.monotonic_ns() + timeout_ms * MS
    reply = stack.stub.Process(
        pb.ProcessRequest(tag=tag, lookup_delay_ms=300, steps=1, step_ms=1), timeout=timeout_ms / 1000
    )
    assert reply.steps_done == 1
    recs = stack.wait_for(tag, ended("Work"), 5, "Work to end")
    lookup, work = one(recs, "Lookup"), one(recs, "Work")
    check_shrunk_deadline(lookup, deadline_ns, timeout_ms)
    true_ms = check_shrunk_deadline(work, deadline_ns, timeout_ms, lookup)
    # Lookup took at least its 300 ms delay (the baseline's own timer), so
    # that much must be gone from what Work was given.
    assert true_ms <= timeout_ms - 300, "Lookup's 300 ms delay should have used up the time"
    assert (lookup.end_ns - lookup.arrival_ns) / MS >= 300, fmt(lookup)
    shrink_ms = lookup.deadline_ms - work.deadline_ms
    # Work arrived after Lookup's 300 ms; its deadline may differ from
    # "Lookup's minus 300" only by the rounding of Lookup's value and the
    # scheduling allowance, both ways.
    assert shrink_ms >= 300 - wire_rounding_ms(lookup.deadline_ms) - SCHED_MS, (
        f"the deadline did not shrink from Lookup to Work: {fmt(lookup)} / {fmt(work)}"
    )


def test_no_deadline_upstream_means_none_downstream(stack):
    tag = new_tag()
    stack.stub.Process(pb.ProcessRequest(tag=tag, steps=1, step_ms=1))
    recs = stack.wait_for(tag, ended("Work"), 5, "Work to end")
    assert not one(recs, "Lookup").has_deadline, fmt(one(recs, "Lookup"))
    assert not one(recs, "Work").has_deadline, fmt(one(recs, "Work"))


def test_cancel_during_work_cancels_work_within_100ms(stack):
    tag = new_tag()
    fut = stack.stub.Process.future(pb.ProcessRequest(tag=tag, steps=200, step_ms=20), timeout=30)
    stack.wait_for(tag, arrived("Work"), 10, "Work to start")
    cancel_ns = time.monotonic_ns()
    assert fut.cancel()
    recs = stack.wait_for(tag, ended("Work"), 5, "Work to end after the cancel")
    work = one(recs, "Work")
    assert work.cancelled, fmt(work)
    assert work.steps_done < 200
    latency_ms = (work.end_ns - cancel_ns) / MS
    assert latency_ms <= CANCEL_MS, f"Work ended {latency_ms:.1f} ms after the client cancelled"


def test_cancel_during_lookup_never_starts_work(stack):
    tag = new_tag()
    fut = stack.stub.Process.future(pb.ProcessRequest(tag=tag, lookup_delay_ms=2000, steps=1, step_ms=1), timeout=30)
    stack.wait_for(tag, arrived("Lookup"), 10, "Lookup to start")
    cancel_ns = time.monotonic_ns()
    assert fut.cancel()
    recs = stack.wait_for(tag, ended("Lookup"), 5, "Lookup to end after the cancel")
    lookup = one(recs, "Lookup")
    assert lookup.cancelled, fmt(lookup)
    assert (lookup.end_ns - cancel_ns) / MS <= CANCEL_MS, fmt(lookup)
    # A relay that starts Work anyway does so within a millisecond or two of
    # Lookup ending; the grader watches this long for such a call.
    window_end = time.monotonic() + LATE_CALL_WINDOW_MS / 1000
    while time.monotonic() < window_end:
        recs = stack.records(tag)
        assert not [r for r in recs if r.method == "Work"], f"Work started after the cancel: {list(map(fmt, recs))}"
        time.sleep(0.01)


def test_downstream_failure_keeps_its_code(stack):
    stack.observer.SetFault(pb.FaultRequest(method="Work", fail_first=1, status=grpc.StatusCode.UNAVAILABLE.value[0]))
    with pytest.raises(grpc.RpcError) as e:
        stack.stub.Process(pb.ProcessRequest(tag=new_tag()), timeout=10)
    assert e.value.code() == grpc.StatusCode.UNAVAILABLE
    assert "Work failed" in e.value.details()
    assert stack.stub.Process(pb.ProcessRequest(tag="after"), timeout=10).tag == "after"


def test_deadline_too_short_for_lookup_is_deadline_exceeded_without_work(stack):
    tag = new_tag()
    with pytest.raises(grpc.RpcError) as e:
        stack.stub.Process(pb.ProcessRequest(tag=tag, lookup_delay_ms=1000, steps=1, step_ms=1), timeout=0.3)
    assert e.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    recs = stack.wait_for(tag, ended("Lookup"), 5, "Lookup to end")
    window_end = time.monotonic() + LATE_CALL_WINDOW_MS / 1000
    while time.monotonic() < window_end:
        assert not stack.records(tag, "Work"), "Work started after the deadline passed"
        time.sleep(0.01)
    assert one(recs, "Lookup").deadline_ms <= 300


def test_malformed_request_is_invalid_argument_and_relay_keeps_serving(stack):
    raw = stack.relay_ch.unary_unary("/relaylab.Relay/Process", request_serializer=None, response_deserializer=None)
    with pytest.raises(grpc.RpcError) as e:
        raw(b"\x0a\xff\xff\xff", timeout=10)  # field 1, length varint cut short
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert stack.stub.Process(pb.ProcessRequest(tag="still-ok"), timeout=10).tag == "still-ok"


def test_oversize_request_is_resource_exhausted_and_relay_keeps_serving(stack):
    tag = new_tag()
    with pytest.raises(grpc.RpcError) as e:
        stack.stub.Process(pb.ProcessRequest(tag="x" * (64 * 1024 + 1)), timeout=10)
    assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    # Just under the limit still goes through.
    big = tag + "y" * (60 * 1024)
    assert stack.stub.Process(pb.ProcessRequest(tag=big), timeout=10).tag == big


def test_sigterm_lets_in_flight_process_finish(stack):
    tag = new_tag()
    fut = stack.stub.Process.future(pb.ProcessRequest(tag=tag, steps=10, step_ms=50), timeout=30)
    stack.wait_for(tag, arrived("Work"), 10, "Work to start")
    os.kill(stack.relay.proc.pid, signal.SIGTERM)
    reply = fut.result(timeout=20)
    assert reply.steps_done == 10
    assert stack.relay.proc.wait(timeout=15) == 0


# ---- the command line ----


def run_relay(*args, env=None):
    e = {k: v for k, v in os.environ.items() if k not in ("RELAYLAB_BASELINE", "RELAYLAB_LISTEN")}
    e.update(env or {})
    return subprocess.run([os.path.join(BIN, "relay"), *args], capture_output=True, text=True, timeout=20, env=e)


def test_relay_without_baseline_exits_2_with_advice():
    r = run_relay()
    assert r.returncode == 2
    assert "--baseline" in r.stderr and "RELAYLAB_BASELINE" in r.stderr


def test_unknown_mistake_lists_the_modes_and_exits_2():
    r = run_relay("--baseline", "127.0.0.1:1", "--mistake", "nope")
    assert r.returncode == 2
    for name in ("forward-timeout", "drop-deadline", "huge-timeout", "ignore-cancel", "call-twice"):
        assert name in r.stderr


def test_mistake_list_prints_descriptions():
    r = run_relay("--mistake", "list")
    assert r.returncode == 0
    lines = [line for line in r.stdout.splitlines() if "ignore-cancel" in line]
    assert lines and len(lines[0].split()) > 3, r.stdout


# ---- --mistake: each reproduces its symptom ----


def test_mistake_forward_timeout_gives_work_the_original_timeout(start_stack):
    st = start_stack("--mistake", "forward-timeout")
    tag = new_tag()
    timeout_ms = 2000
    deadline_ns = time.monotonic_ns() + timeout_ms * MS
    st.stub.Process(pb.ProcessRequest(tag=tag, lookup_delay_ms=300, steps=1, step_ms=1), timeout=timeout_ms / 1000)
    recs = st.wait_for(tag, ended("Work"), 5, "Work to end")
    lookup, work = one(recs, "Lookup"), one(recs, "Work")
    true_ms = (deadline_ns - work.arrival_ns) / MS
    assert work.has_deadline
    assert true_ms <= timeout_ms - 300
    # Work was granted (nearly) the whole original timeout: beyond anything
    # the grader's deadline judge accepts for the time that was left (about
    # Lookup's 300 ms beyond it), and never more than the original plus
    # rounding, the relay's own time and the scheduling allowance.
    own_ms = relay_ms(deadline_ns - timeout_ms * MS, work, lookup)
    upper = deadline_upper_ms(timeout_ms, true_ms, own_ms)
    assert work.deadline_ms > upper, f"{fmt(work)}; {true_ms:.1f} ms were left, a correct relay may show {upper:.1f}"
    assert work.deadline_ms <= timeout_ms + 2 * wire_rounding_ms(timeout_ms) + own_ms + SCHED_MS, fmt(work)


def test_mistake_drop_deadline_sends_no_deadline(start_stack):
    st = start_stack("--mistake", "drop-deadline")
    tag = new_tag()
    st.stub.Process(pb.ProcessRequest(tag=tag, steps=1, step_ms=1), timeout=5)
    recs = st.wait_for(tag, ended("Work"), 5, "Work to end")
    assert not one(recs, "Lookup").has_deadline
    assert not one(recs, "Work").has_deadline


def test_mistake_huge_timeout_sends_int32_max_ms(start_stack):
    st = start_stack("--mistake", "huge-timeout")
    tag = new_tag()
    st.stub.Process(pb.ProcessRequest(tag=tag, steps=1, step_ms=1))
    recs = st.wait_for(tag, ended("Work"), 5, "Work to end")
    for method in ("Lookup", "Work"):
        rec = one(recs, method)
        assert rec.has_deadline and rec.deadline_ms > 1e9, fmt(rec)
    # With a deadline upstream it behaves like the correct relay.
    tag = new_tag()
    deadline_ns = time.monotonic_ns() + 2000 * MS
    st.stub.Process(pb.ProcessRequest(tag=tag, lookup_delay_ms=300, steps=1, step_ms=1), timeout=2)
    recs = st.wait_for(tag, ended("Work"), 5, "Work to end")
    check_shrunk_deadline(one(recs, "Work"), deadline_ns, 2000, one(recs, "Lookup"))


def test_mistake_ignore_cancel_runs_work_to_completion(start_stack):
    st = start_stack("--mistake", "ignore-cancel")
    tag = new_tag()
    # 3 s of Work, so that the cancel lands while it runs however late the
    # observer shows it (10 x 30 ms had ended before the cancel once, in a
    # make test's four groups at once).
    fut = st.stub.Process.future(pb.ProcessRequest(tag=tag, steps=100, step_ms=30), timeout=30)
    st.wait_for(tag, arrived("Work"), 10, "Work to start")
    assert fut.cancel()
    work = one(st.wait_for(tag, ended("Work"), 10, "Work to end"), "Work")
    assert not work.cancelled and work.steps_done == 100, fmt(work)
    # Cancelled during Lookup, it still starts Work afterwards.
    tag = new_tag()
    fut = st.stub.Process.future(pb.ProcessRequest(tag=tag, lookup_delay_ms=200, steps=1, step_ms=1), timeout=30)
    st.wait_for(tag, arrived("Lookup"), 10, "Lookup to start")
    assert fut.cancel()
    recs = st.wait_for(tag, ended("Work"), 5, "Work to run although the client cancelled")
    assert not one(recs, "Lookup").cancelled


def test_mistake_call_twice_calls_work_twice(start_stack):
    st = start_stack("--mistake", "call-twice")
    tag = new_tag()
    reply = st.stub.Process(pb.ProcessRequest(tag=tag, steps=2, step_ms=1), timeout=10)
    assert reply.steps_done == 2
    recs = st.wait_for(tag, lambda r: sum(1 for x in r if x.method == "Work" and x.ended) >= 2, 5, "two Work calls")
    assert len([r for r in recs if r.method == "Work"]) == 2
    assert len([r for r in recs if r.method == "Lookup"]) == 1


# ---- --threads, --config, an unreachable baseline ----


def loop_threads(pid):
    """Threads of |pid| named like the program itself. gRPC names each of its
    own threads (default-executor, timer_manager, event_engine, ...), so what
    keeps the program's name is the main thread and the server loops."""
    names = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                names.append(f.read().strip())
        except OSError:
            pass
    return names.count("relay") - 1


@pytest.mark.parametrize("threads", [1, 3])
def test_threads_sets_the_number_of_server_loops(start_stack, threads):
    st = start_stack("--threads", str(threads))
    # Concurrent calls, each answered, on however many loops.
    futs = [st.stub.Process.future(pb.ProcessRequest(tag=f"th-{i}", steps=2, step_ms=5), timeout=10) for i in range(8)]
    assert [f.result().steps_done for f in futs] == [2] * 8
    assert loop_threads(st.relay.proc.pid) == threads


def test_one_server_loop_by_default(start_stack):
    # A second loop costs hand-overs and no calls/s (RELAY_THREADS,
    # bench/results/relay.md), whatever the cores.
    st = start_stack()
    assert st.stub.Process(pb.ProcessRequest(tag="th-default", steps=1, step_ms=1), timeout=10).steps_done == 1
    assert loop_threads(st.relay.proc.pid) == 1


@pytest.mark.parametrize("value", ["0", "257", "two"])
def test_threads_out_of_range_exits_2(value):
    r = run_relay("--baseline", "127.0.0.1:1", "--threads", value)
    assert r.returncode == 2
    assert f"--threads wants a number from 1 to 256, not '{value}'" in r.stderr


def write_config(tmp_path, config):
    path = tmp_path / "channel.json"
    path.write_text(json.dumps(config))
    return str(path)


RETRY_LOOKUP = {
    "client": {
        "service_config": {
            "methodConfig": [{
                "name": [{"service": "relaylab.Baseline", "method": "Lookup"}],
                "retryPolicy": {"maxAttempts": 4, "initialBackoff": "0.01s", "maxBackoff": "0.05s",
                                "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]},
            }]
        }
    }
}


def test_config_client_section_shapes_the_channel_to_the_baseline(start_stack, tmp_path):
    # The client section's retry policy makes the relay's Lookup survive two
    # UNAVAILABLE answers, which the baseline records as three attempts.
    st = start_stack("--config", write_config(tmp_path, RETRY_LOOKUP))
    st.observer.SetFault(pb.FaultRequest(method="Lookup", fail_first=2, status=grpc.StatusCode.UNAVAILABLE.value[0]))
    tag = new_tag()
    assert st.stub.Process(pb.ProcessRequest(tag=tag, steps=1, step_ms=1), timeout=10).steps_done == 1
    recs = st.wait_for(tag, ended("Work"), 5, "Work to end")
    lookups = [(r.attempt, r.faulted, r.status) for r in recs if r.method == "Lookup"]
    assert lookups == [(1, True, 14), (2, True, 14), (3, False, 0)], list(map(fmt, recs))


def test_without_config_the_same_fault_reaches_the_client(stack):
    stack.observer.SetFault(pb.FaultRequest(method="Lookup", fail_first=1, status=grpc.StatusCode.UNAVAILABLE.value[0]))
    with pytest.raises(grpc.RpcError) as e:
        stack.stub.Process(pb.ProcessRequest(tag=new_tag()), timeout=10)
    assert e.value.code() == grpc.StatusCode.UNAVAILABLE


def test_config_server_section_shapes_the_listener(start_stack, tmp_path):
    # A 4 KiB receive limit on the listener: 5,000 bytes of tag are refused,
    # 1,000 go through (the relay's own limit is 64 KiB).
    st = start_stack("--config", write_config(tmp_path, {"server": {"grpc.max_receive_message_length": 4096}}))
    with pytest.raises(grpc.RpcError) as e:
        st.stub.Process(pb.ProcessRequest(tag="x" * 5000), timeout=10)
    assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert st.stub.Process(pb.ProcessRequest(tag="y" * 1000), timeout=10).tag == "y" * 1000


def test_config_missing_or_breaking_rules_exits_2(tmp_path):
    r = run_relay("--baseline", "127.0.0.1:1", "--config", str(tmp_path / "none.json"))
    assert r.returncode == 2
    assert "none.json: cannot open" in r.stderr
    bad = write_config(tmp_path, {"client": {"grpc.keepalive_time_ms": 1}})
    r = run_relay("--baseline", "127.0.0.1:1", "--config", bad)
    assert r.returncode == 2
    assert "breaks" in r.stderr and "keepalive" in r.stderr and "bin/channel-config check" in r.stderr


def test_unreachable_baseline_is_unavailable_at_once_and_the_relay_keeps_serving(start_program, tmp_path):
    # A port bound but never listened on refuses connections, and stays ours
    # for the whole test, so nothing else can appear there.
    with socket.socket() as hole:
        hole.bind(("127.0.0.1", 0))
        addr = "127.0.0.1:%d" % hole.getsockname()[1]
        relay = Server([os.path.join(BIN, "relay"), "--listen", "127.0.0.1:0", "--baseline", addr], "relay",
                       tmp_path / "relay.stderr")
        ch = grpc.insecure_channel(relay.addr)
        try:
            stub = pbg.RelayStub(ch)
            for _ in range(2):
                t0 = time.monotonic()
                with pytest.raises(grpc.RpcError) as e:
                    stub.Process(pb.ProcessRequest(tag=new_tag()), timeout=20)
                # Not a hang until the client's deadline: the relay's Lookup
                # fails fast (no wait-for-ready) and its code is passed on.
                assert e.value.code() == grpc.StatusCode.UNAVAILABLE, e.value
                assert time.monotonic() - t0 < 20 / 2
                assert "Lookup failed" in e.value.details(), e.value.details()
        finally:
            ch.close()
            rc = relay.stop()
        assert rc == 0, relay.stderr()
