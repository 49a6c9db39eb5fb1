"""The shutdown lab's known submissions (tests/submissions/relay_shutdown_*.py
in grpcio, node/relay_shutdown_*.js in grpc-js) do at SIGTERM what their
headers say, seen from an independent client and the baseline's records,
without the grader: the good ones follow the rule (the call in flight
completes, the listener closes and a new call is refused, a call outliving
the grace is cancelled at it with its Work, exit 0), and each bad one shows
its bug.

The grace is RELAYLAB_GRACE_MS, which every one of them reads. Bounds: the
signal's instant from below; from above, the shutdown exercise's own
allowance for the Work a grace cuts (GRACE_LATE_MS: these are Python and
Node processes whose grace is their own timer, 292 ms late for grpc-js and
179 ms for a stop at the signal with a hog on each core, make soak), and
for a relay that stops at once, the point where the grader calls it that
(before the grace less GRACE_EARLY_MS). What a refusal is, and how soon
the listener closes, are the exercise's rule too (refused() and
ADMISSION_MS). All read from grader/shutdown_judge.h by tolerances.py.
"""
import os
import signal
import socket
import time

import grpc
import pytest

import relaylab_pb2 as pb
import relaylab_pb2_grpc as pbg
from conftest import PYTHON, REPO, SUBMISSIONS, channel, fmt_record
from tolerances import ADMISSION_MS, GRACE_EARLY_MS, GRACE_LATE_MS, refused

MS = 1_000_000
GRACE_MS = 600
BOUND_S = 10.0


@pytest.fixture
def start_sub(start_program, baseline):
    """start_sub("relay_shutdown_good.py" or "node/....js") -> Program."""

    def start(name):
        env = dict(os.environ, RELAYLAB_LISTEN="127.0.0.1:0", RELAYLAB_BASELINE=baseline.addr,
                   RELAYLAB_GRACE_MS=str(GRACE_MS))
        env["PYTHONPATH"] = os.path.join(REPO, "build", "gen", "py")
        path = os.path.join(SUBMISSIONS, name)
        return start_program([PYTHON if name.endswith(".py") else "node", path], env=env)

    return start


def process(prog, tag, steps, step_ms):
    ch = channel(prog.addr)
    fut = pbg.RelayStub(ch).Process.future(pb.ProcessRequest(tag=tag, steps=steps, step_ms=step_ms))
    return ch, fut


def work(observer, tag, pred=lambda c: True):
    recs = observer.wait_for(lambda r: any(c.method == "Work" and pred(c) for c in r), BOUND_S, tag=tag)
    return next(c for c in recs if c.method == "Work" and pred(c))


def listener_closed(addr):
    """True when a TCP connection to |addr| is refused (the grader's
    listener_closed in grader/ex_shutdown.c)."""
    host, port = addr.rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=0.2):
            return False
    except ConnectionRefusedError:
        return True
    except OSError:
        return False


def new_call(ch):
    """A Process on |ch|: (status code, ms it took)."""
    t0 = time.monotonic()
    try:
        pbg.RelayStub(ch).Process(pb.ProcessRequest(tag="late", steps=1, step_ms=1), timeout=5)
        code = grpc.StatusCode.OK
    except grpc.RpcError as e:
        code = e.code()
    return code, (time.monotonic() - t0) * 1000


def sigterm_mid_call(start_sub, observer, name, tag, steps):
    """Starts |name|, makes a Process of |steps| 50 ms steps and sends
    SIGTERM once its Work runs at the baseline: (prog, channel, future,
    the signal's monotonic ns)."""
    prog = start_sub(name)
    ch, fut = process(prog, tag, steps, 50)
    work(observer, tag)
    t_sig = time.monotonic_ns()
    prog.signal(signal.SIGTERM)
    return prog, ch, fut, t_sig


def cut_and_exited(prog, observer, fut, tag):
    """The call in flight failed and the server exited 0: the Work record,
    once it ended."""
    with pytest.raises(grpc.RpcError):
        fut.result(timeout=BOUND_S)
    assert prog.wait_exit(BOUND_S) == 0, prog.stderr()
    return work(observer, tag, lambda c: c.ended)


# Work of 50 ms steps that a signal must cut: long enough that the signal,
# sent once the Work is seen, always lands before it ends.
CUT_STEPS = 40
GOOD = ["relay_shutdown_good.py", "node/relay_shutdown_good.js"]
NO_HANDLER = ["relay_shutdown_no_handler.py", "node/relay_shutdown_no_handler.js"]
NO_GRACE = ["relay_shutdown_stop_now.py", "node/relay_shutdown_force_now.js"]


@pytest.mark.parametrize("name", GOOD)
def test_good_lets_the_call_in_flight_finish_and_refuses_new_ones(start_sub, observer, name):
    prog, ch, fut, t_sig = sigterm_mid_call(start_sub, observer, name, "in", 8)
    # As the grader's refuses-new: the listener closes within ADMISSION_MS,
    # then a new call on the connection the admitted call still uses is
    # refused. Calling before the listener closed would race the handler (a
    # Python one runs between two bytecodes of the main thread: the call may
    # be served), and which status a refusal gets is gRPC's (CANCELLED when
    # the stream reached the draining connection before the client saw the
    # GOAWAY, UNAVAILABLE after): refused() accepts what the grader accepts.
    while not listener_closed(prog.addr):
        assert (time.monotonic_ns() - t_sig) / MS < ADMISSION_MS, \
            f"new connections still accepted {ADMISSION_MS} ms after SIGTERM"
        time.sleep(0.005)
    code, took_ms = new_call(ch)
    assert refused(code, took_ms), f"a new call after the listener closed ended {code} after {took_ms:.0f} ms"
    assert fut.result(timeout=BOUND_S).steps_done == 8
    assert prog.wait_exit(BOUND_S) == 0, prog.stderr()
    assert observer.calls("late") == []
    ch.close()


@pytest.mark.parametrize("name", GOOD)
def test_good_cancels_the_call_outliving_the_grace_with_its_work(start_sub, observer, name):
    prog, ch, fut, t_sig = sigterm_mid_call(start_sub, observer, name, "long", 400)
    rec = cut_and_exited(prog, observer, fut, "long")
    after_ms = (rec.end_ns - t_sig) / MS
    assert rec.cancelled and GRACE_MS <= after_ms <= GRACE_MS + GRACE_LATE_MS, f"{fmt_record(rec)}; {after_ms:.0f} ms"
    ch.close()


@pytest.mark.parametrize("name", NO_HANDLER)
def test_no_handler_dies_of_sigterm_and_the_call_fails(start_sub, observer, name):
    # 40 steps (2 s): the signal must land while the Work runs. With 8
    # (400 ms) a loaded soak run saw the Work start, end whole, then the
    # signal: the test's race, not the relay's.
    prog, ch, fut, _ = sigterm_mid_call(start_sub, observer, name, "nh", CUT_STEPS)
    assert prog.wait_exit(BOUND_S) == -signal.SIGTERM
    with pytest.raises(grpc.RpcError) as e:
        fut.result(timeout=BOUND_S)
    assert e.value.code() == grpc.StatusCode.UNAVAILABLE
    rec = work(observer, "nh", lambda c: c.ended)
    assert rec.cancelled and rec.steps_done < CUT_STEPS, fmt_record(rec)
    ch.close()


@pytest.mark.parametrize("name", NO_GRACE)
def test_no_grace_cuts_the_call_in_flight_at_the_signal(start_sub, observer, name):
    prog, ch, fut, t_sig = sigterm_mid_call(start_sub, observer, name, "ng", CUT_STEPS)
    rec = cut_and_exited(prog, observer, fut, "ng")
    assert rec.cancelled and rec.steps_done < CUT_STEPS, fmt_record(rec)
    assert (rec.end_ns - t_sig) / MS < GRACE_MS - GRACE_EARLY_MS, fmt_record(rec)
    ch.close()


def test_wait_forever_holds_the_exit_past_the_grace(start_sub, observer):
    prog, ch, fut, _ = sigterm_mid_call(start_sub, observer, "relay_shutdown_wait_forever.py", "wf", 400)
    assert prog.wait_exit(GRACE_MS / 1000 + 1.0) is None, "it exited: the mistake did not show"
    assert not work(observer, "wf").ended
    assert not fut.done()
    ch.close()
