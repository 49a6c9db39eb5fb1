# The example submissions in tests/submissions are what they claim to be:
# each is run as the grader runs it (python3 file.py with RELAYLAB_LISTEN and
# RELAYLAB_BASELINE) against bin/baseline, and what the baseline observed
# shows the good one right and each bad one wrong in exactly its own way.
# This checks the fixtures independently of the grader.
import os
import signal
import time

import grpc
import pytest

import relaylab_pb2 as pb
from conftest import channel, ended, fmt_record
from relaylab_pb2_grpc import RelayStub
from tolerances import CANCEL_MS, EXPIRE_MS, LATE_CALL_WINDOW_MS, SCHED_MS, deadline_lower_ms, deadline_upper_ms

# Timing bounds are the grader's judges' (tolerances.py, from grader/*judge.h):
# a received deadline within what was left plus both hops' wire rounding, the
# relay's own time before the call arrived and SCHED_MS; a cancel at the
# baseline within CANCEL_MS; an expired deadline noticed within EXPIRE_MS.
NS_PER_MS = 1_000_000
SHRINK_BUDGET_MS = 2000


class Shrink:
    """The `shrinks` case as the grader runs it: Work's record, Lookup's, the
    client's start instant, and what the client had left at Work's arrival."""

    def __init__(self, work, lookup, t0):
        self.work, self.lookup, self.t0 = work, lookup, t0
        self.left_ms = SHRINK_BUDGET_MS - (work.arrival_ns - t0) / NS_PER_MS
        # The relay's own time before Work arrived, outside Lookup.
        self.relay_ms = (lookup.arrival_ns - t0 + work.arrival_ns - lookup.end_ns) / NS_PER_MS
        self.upper_ms = deadline_upper_ms(SHRINK_BUDGET_MS, self.left_ms, self.relay_ms)
        self.lower_ms = deadline_lower_ms(self.left_ms)

    def __str__(self):
        return f"{fmt_record(self.work)}; {self.left_ms:.1f} ms were left, accepted {self.lower_ms:.1f}..{self.upper_ms:.1f}"


def assert_shrunk(case):
    """Work's deadline is what was left, as the grader's judge accepts it."""
    assert case.work.has_deadline, str(case)
    assert case.lower_ms <= case.work.deadline_ms <= case.upper_ms, str(case)


def process(prog, timeout=None, tag="t", lookup_delay_ms=0, steps=3, step_ms=10):
    ch = channel(prog.addr)
    try:
        return RelayStub(ch).Process(
            pb.ProcessRequest(tag=tag, lookup_delay_ms=lookup_delay_ms, steps=steps, step_ms=step_ms), timeout=timeout
        )
    finally:
        ch.close()


def start_process(prog, timeout=None, tag="t", lookup_delay_ms=0, steps=3, step_ms=10):
    """Starts Process as a future; returns (future, channel): close the channel."""
    ch = channel(prog.addr)
    fut = RelayStub(ch).Process.future(
        pb.ProcessRequest(tag=tag, lookup_delay_ms=lookup_delay_ms, steps=steps, step_ms=step_ms), timeout=timeout
    )
    return fut, ch


def by_method(records):
    return {m: [r for r in records if r.method == m] for m in ("Lookup", "Work")}


def shrink_case(relay_prog, observer, tag):
    """Runs the `shrinks` case (budget 2000 ms, lookup 300 ms) and returns it
    as a Shrink. The client's deadline instant is taken from its own clock."""
    t0 = time.monotonic_ns()
    reply = process(relay_prog, timeout=SHRINK_BUDGET_MS / 1000, tag=tag, lookup_delay_ms=300, steps=2, step_ms=10)
    assert (reply.tag, reply.steps_done) == (tag, 2)
    recs = by_method(observer.wait_for(ended(2), 2, tag=tag))
    work = recs["Work"][0]
    assert work.has_deadline, fmt_record(work)
    return Shrink(work, recs["Lookup"][0], t0)


# --- the good relay -----------------------------------------------------------


def test_good_relays_and_shrinks_the_deadline(start_submission, observer):
    prog = start_submission("relay_good")
    assert_shrunk(shrink_case(prog, observer, "g1"))


def test_good_sends_no_deadline_when_it_got_none(start_submission, observer):
    prog = start_submission("relay_good")
    assert process(prog, tag="g2").steps_done == 3
    recs = observer.wait_for(ended(2), 2, tag="g2")
    assert [(r.method, r.has_deadline) for r in recs] == [("Lookup", False), ("Work", False)]


def test_good_expires_in_lookup_and_never_calls_work(start_submission, observer):
    prog = start_submission("relay_good")
    t0 = time.monotonic_ns()
    with pytest.raises(grpc.RpcError) as err:
        process(prog, timeout=0.3, tag="g3", lookup_delay_ms=1000)
    assert err.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    # The client's own timer: its status within the expiry allowance.
    assert (time.monotonic_ns() - t0) / NS_PER_MS <= 300 + EXPIRE_MS
    lookup = observer.wait_for(ended(1), 2, tag="g3")[0]
    # Lookup ends at the deadline it received, which may be later than the
    # client's by the relay's own time before it arrived plus SCHED_MS (the
    # deadline judge's bound), then within the expiry allowance.
    relay_ms = (lookup.arrival_ns - t0) / NS_PER_MS
    latest_ms = 300 + relay_ms + SCHED_MS + EXPIRE_MS
    assert lookup.method == "Lookup" and lookup.end_ns - t0 <= latest_ms * NS_PER_MS, fmt_record(lookup)
    # Give a wrong relay the time it would need to start Work after the
    # Lookup's full delay, and then the grader's window for a late call.
    wait_past(lookup.arrival_ns + (1000 + LATE_CALL_WINDOW_MS) * NS_PER_MS)
    assert [r.method for r in observer.calls("g3")] == ["Lookup"]


def test_good_cancels_work_when_the_client_leaves(start_submission, observer):
    prog = start_submission("relay_good")
    work, t_cancel = cancel_during_work(prog, observer, "g4")
    assert work.cancelled and work.end_ns - t_cancel <= CANCEL_MS * NS_PER_MS, fmt_record(work)
    assert work.steps_done < 100


def test_good_cancelled_in_lookup_never_calls_work(start_submission, observer):
    prog = start_submission("relay_good")
    lookup = cancel_during_lookup(prog, observer, "g5")
    assert lookup.cancelled, fmt_record(lookup)
    wait_past(lookup.arrival_ns + (500 + LATE_CALL_WINDOW_MS) * NS_PER_MS)
    assert [r.method for r in observer.calls("g5")] == ["Lookup"]
    # keeps-serving: after the cancels it still answers.
    assert process(prog, timeout=5, tag="g6").steps_done == 3


def test_good_passes_on_a_downstream_failure(start_submission, observer):
    prog = start_submission("relay_good")
    observer.set_fault("Work", 1, grpc.StatusCode.RESOURCE_EXHAUSTED)
    with pytest.raises(grpc.RpcError) as err:
        process(prog, timeout=5, tag="g7")
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


def wait_past(instant_ns):
    """Waits until the monotonic clock passes |instant_ns| (a bounded window
    in which something must NOT happen)."""
    while time.monotonic_ns() < instant_ns:
        time.sleep(0.01)


def cancel_during_work(prog, observer, tag):
    """Starts Process (no deadline, Work 100 x 20 ms), cancels it once Work
    has done two steps; returns Work's final record and the cancel instant."""
    fut, ch = start_process(prog, tag=tag, steps=100, step_ms=20)
    observer.wait_for(lambda r: any(c.method == "Work" and c.steps_done >= 2 for c in r), 5, tag=tag)
    t_cancel = time.monotonic_ns()
    fut.cancel()
    work = observer.wait_for(lambda r: any(c.method == "Work" and c.ended for c in r), 5, tag=tag, method="Work")
    ch.close()
    assert len(work) == 1, "\n".join(map(fmt_record, work))
    return work[0], t_cancel


def cancel_during_lookup(prog, observer, tag):
    """Starts Process (no deadline, Lookup 500 ms), cancels it 100 ms into the
    Lookup; returns the Lookup's final record."""
    fut, ch = start_process(prog, tag=tag, lookup_delay_ms=500)
    first = observer.wait_for(lambda r: len(r) >= 1, 5, tag=tag)[0]
    wait_past(first.arrival_ns + 100 * NS_PER_MS)
    fut.cancel()
    lookup = observer.wait_for(lambda r: r[0].ended, 5, tag=tag)[0]
    ch.close()
    return lookup


# --- each bad relay shows its own bug -----------------------------------------


def test_forward_timeout_gives_work_the_lookups_time_again(start_submission, observer):
    case = shrink_case(start_submission("relay_forward_timeout"), observer, "b1")
    # Beyond anything the judge accepts for the time left: about Lookup's
    # 300 ms more.
    assert case.work.deadline_ms > case.upper_ms, str(case)


def test_drop_deadline_sends_none(start_submission, observer):
    prog = start_submission("relay_drop_deadline")
    process(prog, timeout=2.0, tag="b2")
    recs = observer.wait_for(ended(2), 2, tag="b2")
    assert [(r.method, r.has_deadline) for r in recs] == [("Lookup", False), ("Work", False)]


def test_huge_timeout_invents_a_deadline(start_submission, observer):
    prog = start_submission("relay_huge_timeout")
    process(prog, tag="b3")
    recs = observer.wait_for(ended(2), 2, tag="b3")
    for r in recs:
        assert r.has_deadline and r.deadline_ms > 2_000_000_000, fmt_record(r)
    # With a real deadline it shrinks it like the good one.
    assert_shrunk(shrink_case(prog, observer, "b3s"))


def test_ignore_cancel_lets_work_run_to_the_end(start_submission, observer):
    prog = start_submission("relay_ignore_cancel")
    work, _ = cancel_during_work(prog, observer, "b4")
    assert not work.cancelled and work.steps_done == 100 and work.status == 0, fmt_record(work)


def test_ignore_cancel_calls_work_after_the_client_left(start_submission, observer):
    prog = start_submission("relay_ignore_cancel")
    lookup = cancel_during_lookup(prog, observer, "b5")
    assert not lookup.cancelled, fmt_record(lookup)
    work = observer.wait_for(lambda r: len(r) == 1, 5, tag="b5", method="Work")[0]
    assert work.arrival_ns > lookup.end_ns, fmt_record(work)


def test_call_twice_sends_two_works(start_submission, observer):
    prog = start_submission("relay_call_twice")
    # Work lasts 300 ms, so the second copy leaves before the first answers:
    # with 3 x 10 ms and a hog on each core (make soak) the relay cancelled
    # it unsent once, and the baseline saw one Work.
    assert process(prog, timeout=5, tag="b6", step_ms=100).steps_done == 3
    recs = observer.wait_for(lambda r: len(r) == 3 and all(c.ended for c in r), 5, tag="b6")
    assert sorted(r.method for r in recs) == ["Lookup", "Work", "Work"]


def test_crash_dies_of_sigsegv(start_submission, observer):
    prog = start_submission("relay_crash")
    with pytest.raises(grpc.RpcError) as err:
        process(prog, timeout=5, tag="b7")
    assert err.value.code() == grpc.StatusCode.UNAVAILABLE
    assert prog.wait_exit(5) == -signal.SIGSEGV
    assert observer.calls("b7") == []


def test_hang_never_answers(start_submission, observer):
    prog = start_submission("relay_hang")
    with pytest.raises(grpc.RpcError) as err:
        process(prog, timeout=0.5, tag="b8")
    assert err.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert prog.wait_exit(0) is None
    assert observer.calls("b8") == []


def test_never_listens_prints_but_never_binds(start_submission):
    prog = start_submission("relay_never_listens", ready=False)
    # The readiness line never comes; the process stays alive (bounded wait).
    with pytest.raises(pytest.fail.Exception):
        prog.wait_ready(1.0)
    assert prog.wait_exit(0) is None
    assert prog.lines_before_ready == ["relay starting..."]


def test_floods_output_but_answers(start_submission):
    prog = start_submission("relay_floods_output")
    for i in range(2):
        assert process(prog, timeout=10, tag=f"b9{i}").steps_done == 3
    assert len(prog.output_text()) >= 64 * 1024 - 1024


def test_ignores_sigterm_but_answers(start_submission):
    prog = start_submission("relay_ignores_sigterm")
    assert process(prog, timeout=5, tag="b10").steps_done == 3
    prog.signal(signal.SIGTERM)
    assert prog.wait_exit(0.5) is None  # still running: only SIGKILL ends it


def test_good_exits_on_sigterm(start_submission):
    prog = start_submission("relay_good")
    prog.signal(signal.SIGTERM)
    assert prog.wait_exit(5) == 0


def test_forks_child_leaves_a_child_in_its_group(start_submission):
    prog = start_submission("relay_forks_child")
    assert process(prog, timeout=5, tag="b11").steps_done == 3
    helper = int(prog.lines_before_ready[0].split()[-1])
    assert os.getpgid(helper) == prog.pid
    prog.kill()  # the fixture's teardown does the same: the whole group
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and alive(helper):
        time.sleep(0.01)
    assert not alive(helper)


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
