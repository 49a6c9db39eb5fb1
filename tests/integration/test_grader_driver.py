# Integration tests for what the grader's driver gives the coming labs,
# through the hidden driver-test exercise (grader/ex_driver_test.c, found
# only with RELAYLAB_GRADER_TEST_EXERCISES set): a run with two baselines,
# each observed on its own private channel, whose addresses the submission
# gets in RELAYLAB_BASELINES; and SIGTERM sent to the submission mid-run,
# with its exit status, the time it took and its last output, or the kill at
# the deadline when it ignores the signal. Sandboxed and not: the signal has
# to reach the program through unshare and the jail, or directly.
import os
import re
import shutil
import subprocess
import tempfile

import pytest

from conftest import PYTHON, SUBMISSIONS, bin_path, grade, run_grader

HOOK = {"RELAYLAB_GRADER_TEST_EXERCISES": "1"}
# ex_driver_test.c's SIGTERM_WITHIN_MS, and driver_probe.py's delay (ms) and
# status on SIGTERM.
WITHIN_MS = 2000
PROBE_DELAY_MS = 300
PROBE_STATUS = 7

MODES = {"sandbox": (), "no-sandbox": ("--no-sandbox",)}


def py(name):
    return f"{PYTHON} {SUBMISSIONS}/{name}.py"


def driver_test(tmp_path, submission, mode):
    rubric = tmp_path / "rubric.json"
    rubric.write_text('{"driver-test": {"baselines": 1, "sigterm": 1}}')
    return grade("driver-test", submission, "--rubric", str(rubric), *MODES[mode], env=HOOK)


def test_test_exercises_are_hidden_without_the_hook():
    listed = subprocess.run([bin_path("grader"), "list"], capture_output=True, text=True, timeout=30)
    assert listed.returncode == 0 and "driver-test" not in listed.stdout
    r = run_grader("driver-test", "--submission", "true", timeout=30)
    assert r.rc == 2 and "no exercise 'driver-test'" in r.err, r.err


@pytest.mark.parametrize("mode", MODES)
def test_two_baselines_and_a_sigterm_with_its_exit(tmp_path, mode):
    g = driver_test(tmp_path, py("driver_probe"), mode)
    assert g.rc == 0, g.out + g.err
    # Each baseline served half the calls: two baselines on two ports, each
    # observed on its own channel, and the submission was given both.
    verdict, feedback = g.verdicts["baselines"], g.feedback["baselines"]
    m = re.search(r"baseline 1 \((\S+)\) saw 2 Work and baseline 2 \((\S+)\) saw 2", feedback)
    assert verdict == "PASS" and m and m.group(1) != m.group(2), g.out
    # The program itself got SIGTERM (through unshare and the jail when
    # sandboxed), ran its handler and exited with its own status; the time
    # covers the handler's delay and the output its last lines.
    verdict, feedback = g.verdicts["sigterm"], g.feedback["sigterm"]
    m = re.search(r"exited with status (\d+) after (\d+) ms; last output: .*draining \| bye", feedback)
    assert verdict == "PASS" and m, g.out
    assert int(m.group(1)) == PROBE_STATUS
    assert PROBE_DELAY_MS <= int(m.group(2)) < WITHIN_MS, feedback


@pytest.mark.parametrize("mode", MODES)
def test_one_baseline_used_and_sigterm_ignored(tmp_path, mode):
    # relay_ignores_sigterm calls RELAYLAB_BASELINE alone and ignores SIGTERM.
    g = driver_test(tmp_path, py("relay_ignores_sigterm"), mode)
    assert g.rc == 1, g.out + g.err
    verdict, feedback = g.verdicts["baselines"], g.feedback["baselines"]
    assert verdict == "FAIL" and re.search(r"baseline 1 \(\S+\) saw 4 Work and baseline 2 \(\S+\) saw 0", feedback)
    # Not exited at the deadline: killed then, and said so; run_grader
    # checks that nothing of it is left.
    verdict, feedback = g.verdicts["sigterm"], g.feedback["sigterm"]
    m = re.search(rf"did not exit within {WITHIN_MS} ms of SIGTERM \(was killed by SIGKILL after (\d+) ms\)", feedback)
    assert verdict == "FAIL" and m, g.out
    assert int(m.group(1)) >= WITHIN_MS
    assert g.seconds >= WITHIN_MS / 1000


@pytest.mark.parametrize("mode", MODES)
def test_two_instances_one_replaced_on_its_port(tmp_path, mode):
    # driver-test-instances: two instances on two ports both answer; the
    # first gets SIGTERM, exits (driver_probe's status 7) and its
    # replacement answers on the same port, the second throughout.
    rubric = tmp_path / "rubric.json"
    rubric.write_text('{"driver-test-instances": {"restart": 1}}')
    g = grade("driver-test-instances", py("driver_probe"), "--rubric", str(rubric), *MODES[mode], env=HOOK)
    verdict, feedback = g.verdicts["restart"], g.feedback["restart"]
    assert verdict == "PASS", g.out
    m = re.search(r"instance 1 exited with status 7 after \d+ ms; its replacement answered on (\S+), instance 2 on "
                  r"(\S+)", feedback)
    assert m and m.group(1) != m.group(2), feedback


def grade_lanes(tmp_path, *args, meet_ms=None):
    """Grades driver-test-lanes with a TMPDIR of its own (short: the grader
    keeps its private folders there only below 60 characters), and checks
    that the grading left nothing in it, the dead worker's folder included."""
    rubric = tmp_path / "rubric.json"
    rubric.write_text('{"driver-test-lanes": {"meet-a": 1, "meet-b": 1, "worker-dies": 1, "after-a": 1}}')
    meet = tmp_path / "meet"
    meet.mkdir()
    tmp = tempfile.mkdtemp(prefix="rl-lanes-")
    env = dict(HOOK, RELAYLAB_LANES_TEST_DIR=str(meet), TMPDIR=tmp)
    if meet_ms:
        env["RELAYLAB_LANES_TEST_MEET_MS"] = str(meet_ms)
    try:
        g = grade("driver-test-lanes", py("driver_probe"), "--rubric", str(rubric), *args, env=env)
        assert os.listdir(tmp) == [], os.listdir(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return g


def test_lanes_run_at_once_in_table_order_apart_and_a_dead_worker_is_an_error(tmp_path):
    # driver-test-lanes (grader/lanes.h): meet-a (lane 0) and meet-b (lane 1)
    # each wait for the other's file, so both pass only when the lanes run at
    # the same time, and each then connects to the other's baseline, which
    # its lane's own network namespace must keep out of reach; worker-dies
    # (lane 2) kills its own worker with the submission running; after-a
    # follows meet-a in lane 0's worker. run_grader fails the test if a
    # process of the run is left: the dead worker's submission came back to
    # the grader, which ended it.
    g = grade_lanes(tmp_path)
    assert g.rc == 2, g.out + g.err
    assert [t["extra_data"]["scenario"] for t in g.results["tests"]] == ["meet-a", "meet-b", "worker-dies", "after-a"]
    for s, other in (("meet-a", "b"), ("meet-b", "a")):
        assert g.verdicts[s] == "PASS", g.feedback
        assert re.search(rf"{other}'s baseline at 127\.0\.0\.1:\d+ is out of its reach", g.feedback[s]), g.feedback
    pid = {s: re.search(r"in pid (\d+)", g.feedback[s]).group(1) for s in ("meet-a", "meet-b", "after-a")}
    assert pid["meet-a"] != pid["meet-b"] and pid["after-a"] == pid["meet-a"], g.feedback
    assert g.verdicts["worker-dies"] == "ERROR", g.feedback
    assert "the grader's worker for this scenario was killed by signal 9" in g.feedback["worker-dies"]
    assert g.verdicts["after-a"] == "PASS"


@pytest.mark.parametrize("how", [("--parallel", "1"), ("--no-sandbox",)])
def test_one_scenario_at_a_time_with_parallel_1_or_unsandboxed(tmp_path, how):
    # The same meeting one scenario at a time (--parallel 1, or without the
    # sandbox, which cannot give each lane a network of its own): meet-a
    # waits (2 s here) for a partner that runs only after it, and fails.
    g = grade_lanes(tmp_path, "--only", "meet-a,meet-b", *how, meet_ms=2000)
    assert g.verdicts["meet-a"] == "FAIL" and "b never ran beside a (2000 ms)" in g.feedback["meet-a"], g.feedback
    assert g.verdicts["meet-b"] == "ERROR" and "a never finished its probe" in g.feedback["meet-b"], g.feedback
