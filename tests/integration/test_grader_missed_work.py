# A grader that missed Work running: a relay's Work can run and end, and
# Process answer OK, between two looks of a grader the machine did not run.
# That call left nothing to judge, so it is never the relay's FAIL: cancel's
# no-leak makes another call in its place (3 tries, then ERROR) and the other
# scenarios say ERROR. The baseline's Observer/HideRunning makes the miss
# happen on purpose (the next N Work calls are reported only once ended), and
# the hidden cancel-missed exercise (grader/ex_cancel.c, found only with
# RELAYLAB_GRADER_TEST_EXERCISES set) runs cancel's scenarios with it.
import subprocess
import time

import grpc
import pytest

import relaylab_pb2 as pb
import relaylab_pb2_grpc as pb_grpc
from conftest import PYTHON, SUBMISSIONS, bin_path, grade

HOOK = {"RELAYLAB_GRADER_TEST_EXERCISES": "1"}
RUBRIC = '{"cancel-missed": {"no-leak-missed-twice": 1, "no-leak-missed-every-try": 1, "during-work-missed": 1}}'


def test_hide_running_reports_the_next_work_only_once_it_ended(baseline_stub, observer):
    observer.stub.HideRunning(pb.HideRunningRequest(method="Work", calls=1), timeout=5)
    hidden = baseline_stub.Work.future(pb.WorkRequest(tag="hidden", steps=50, step_ms=10), timeout=10)
    looks_while_running = 0
    while not hidden.done():
        records = observer.calls("hidden")
        # Closed before it replies, so an ended record may show before the
        # reply; a running one never.
        assert all(r.ended for r in records), records
        looks_while_running += not records and not hidden.done()
        time.sleep(0.005)
    assert hidden.result().steps_done == 50
    assert looks_while_running > 0
    [rec] = observer.wait_for(lambda rs: len(rs) == 1, 5, tag="hidden")
    assert rec.ended and rec.steps_done == 50
    # The next Work is seen while it runs.
    seen = baseline_stub.Work.future(pb.WorkRequest(tag="seen", steps=500, step_ms=10), timeout=10)
    observer.wait_for(lambda rs: len(rs) == 1 and not rs[0].ended, 5, tag="seen")
    seen.cancel()


def test_hide_running_refuses_an_unknown_method_and_reset_disarms_it(baseline_stub, observer):
    with pytest.raises(grpc.RpcError) as e:
        observer.stub.HideRunning(pb.HideRunningRequest(method="Process", calls=1), timeout=5)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    observer.stub.HideRunning(pb.HideRunningRequest(method="Work", calls=5), timeout=5)
    observer.reset()
    w = baseline_stub.Work.future(pb.WorkRequest(tag="after-reset", steps=500, step_ms=10), timeout=10)
    observer.wait_for(lambda rs: len(rs) == 1 and not rs[0].ended, 5, tag="after-reset")
    w.cancel()


def test_hide_running_is_as_private_as_every_observer_method(start_program, tmp_path):
    # Only the grader reaches it: on the port a submission is given it is
    # refused, as Observe and Reset are (docs/sandbox.md).
    sock = tmp_path / "observer.sock"
    base = start_program([bin_path("baseline"), "--listen", "127.0.0.1:0", "--observer", f"unix:{sock}"])
    with grpc.insecure_channel(base.addr) as ch:
        with pytest.raises(grpc.RpcError) as e:
            pb_grpc.ObserverStub(ch).HideRunning(pb.HideRunningRequest(method="Work", calls=1), timeout=5)
        assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED
    with grpc.insecure_channel(f"unix:{sock}") as ch:
        pb_grpc.ObserverStub(ch).HideRunning(pb.HideRunningRequest(method="Work", calls=1), timeout=5)


def test_a_missed_work_is_tried_again_then_error_never_the_relays_fail(tmp_path):
    rubric = tmp_path / "rubric.json"
    rubric.write_text(RUBRIC)
    g = grade("cancel-missed", f"{PYTHON} {SUBMISSIONS}/relay_good.py", "--rubric", str(rubric), env=HOOK)
    # Two misses: the third call is seen, and the good relay passes.
    verdict, feedback = g.verdicts["no-leak-missed-twice"], g.feedback["no-leak-missed-twice"]
    assert verdict == "PASS", g.out
    # Three: ERROR, the grader's own trouble, not FAIL.
    verdict, feedback = g.verdicts["no-leak-missed-every-try"], g.feedback["no-leak-missed-every-try"]
    assert verdict == "ERROR" and "Work ran and ended unseen 3 times in a row" in feedback, g.out
    verdict, feedback = g.verdicts["during-work-missed"], g.feedback["during-work-missed"]
    assert verdict == "ERROR" and "before the grader saw Work running" in feedback, g.out
    # An ERROR is the grader's own: exit status 2 (bin/grader --help).
    assert g.rc == 2, g.out + g.err


def test_cancel_missed_is_not_listed():
    listed = subprocess.run([bin_path("grader"), "list"], capture_output=True, text=True, timeout=30)
    assert listed.returncode == 0 and "cancel" in listed.stdout and "cancel-missed" not in listed.stdout
