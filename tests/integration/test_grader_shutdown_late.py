# shutdown's in-flight scenario passes a call in flight at SIGTERM that
# completed OK only when the signal came in time to tell a drain from a
# server that stops at once (stop(0)): the call's Work ran on at least half
# its plan after the signal (gr_shutdown_signal_in_time, grader/shutdown_judge.h). A
# starved grader's late signal once passed relay_shutdown_stop_now.py
# (bench/results/soak.md). The hidden shutdown-late exercise
# (grader/ex_shutdown.c, found only with RELAYLAB_GRADER_TEST_EXERCISES set)
# sends the signal late on purpose: only after the call was answered. The
# exits scenario, which a stop(0) also passes when its call had ended, is
# judged the same way.
import subprocess

from conftest import PYTHON, SUBMISSIONS, bin_path, grade

HOOK = {"RELAYLAB_GRADER_TEST_EXERCISES": "1"}
RUBRIC = '{"shutdown-late": {"in-flight-late-once": 1, "in-flight-late-every-try": 1, "exits-late-every-try": 1}}'


def grade_late(tmp_path, submission):
    rubric = tmp_path / "rubric.json"
    rubric.write_text(RUBRIC)
    return grade("shutdown-late", f"{PYTHON} {SUBMISSIONS}/{submission}", "--rubric", str(rubric), env=HOOK)


def test_a_late_signal_never_passes_a_relay_that_stops_at_once(tmp_path):
    g = grade_late(tmp_path, "relay_shutdown_stop_now.py")
    # Too late every time: the grader's ERROR, not the PASS the late signal
    # would have given.
    verdict, feedback = g.verdicts["in-flight-late-every-try"], g.feedback["in-flight-late-every-try"]
    assert verdict == "ERROR" and "grade again: the machine was too slow to tell" in feedback, g.out
    # exits: a stop(0) also exits 0 once the call it never had to cut is done.
    verdict, feedback = g.verdicts["exits-late-every-try"], g.feedback["exits-late-every-try"]
    assert verdict == "ERROR" and "grade again: the machine was too slow to tell" in feedback, g.out
    # Too late once: the next try signals in time and shows the bug.
    verdict, feedback = g.verdicts["in-flight-late-once"], g.feedback["in-flight-late-once"]
    assert verdict == "FAIL" and "the server stopped without a grace" in feedback, g.out
    assert g.rc == 2, g.out + g.err


def test_a_late_signal_is_taken_again_for_a_relay_that_drains(tmp_path):
    g = grade_late(tmp_path, "relay_shutdown_good.py")
    verdict, feedback = g.verdicts["in-flight-late-once"], g.feedback["in-flight-late-once"]
    assert verdict == "PASS" and "a server that stopped at once would have cut it" in feedback, g.out
    verdict, feedback = g.verdicts["in-flight-late-every-try"], g.feedback["in-flight-late-every-try"]
    assert verdict == "ERROR" and "In 3 tries" in feedback, g.out
    verdict, feedback = g.verdicts["exits-late-every-try"], g.feedback["exits-late-every-try"]
    assert verdict == "ERROR" and "In 3 tries" in feedback, g.out


def test_shutdown_late_is_not_listed():
    listed = subprocess.run([bin_path("grader"), "list"], capture_output=True, text=True, timeout=30)
    assert listed.returncode == 0 and "shutdown" in listed.stdout and "shutdown-late" not in listed.stdout
