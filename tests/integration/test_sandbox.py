# Integration tests for the grader's defences against a hostile submission
# (docs/sandbox.md). Each attack in tests/submissions/hostile/ must get its
# honest verdict. Without --sandbox: the Observer answers only on the
# grader's private unix socket, no listener shares its port, and records
# under tags the grader never sent count. With --sandbox (root, cgroup v1,
# util-linux unshare; skipped elsewhere): the attacks that need to see or
# signal other processes, write the grader's files or escape the measured
# group fail, and nothing of the submission outlives the grader, even one
# killed with SIGKILL. Every attack ends itself within two minutes and
# talks to loopback only.
import json
import os
import signal
import socket
import subprocess
import time
import uuid

import grpc
import pytest

import relaylab_pb2 as pb
import relaylab_pb2_grpc as pb_grpc
from conftest import PYTHON, SUBMISSIONS, Program, bin_path

HOSTILE = os.path.join(SUBMISSIONS, "hostile")


def sandbox_available():
    return (
        os.geteuid() == 0
        and os.path.isdir("/sys/fs/cgroup/pids")
        and os.path.isdir("/sys/fs/cgroup/memory")
        and os.access("/usr/bin/unshare", os.X_OK)
    )


needs_sandbox = pytest.mark.skipif(not sandbox_available(), reason="--sandbox needs root, cgroup v1 and unshare")


def hostile(name, *args):
    return " ".join([PYTHON, os.path.join(HOSTILE, name + ".py"), *args])


def grade(exercise, submission, tmp_path, *extra, timeout=240):
    out = tmp_path / "results.json"
    proc = subprocess.run(
        [bin_path("grader"), exercise, "--quiet", "--json", str(out), "--submission", submission, *extra],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    with open(out) as f:
        results = json.load(f)
    verdicts = {t["name"].split(":")[0].split("/")[-1]: t for t in results["tests"]}
    return proc, results, verdicts


def verdict_of(verdicts, scenario):
    assert scenario in verdicts, f"no scenario {scenario} in {list(verdicts)}"
    return verdicts[scenario]


def survivors(marker):
    me = str(os.getpid())
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or entry == me:
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(entry))
        except OSError:
            pass
    return found


def wait_no_survivors(marker, seconds):
    until = time.monotonic() + seconds
    while survivors(marker) and time.monotonic() < until:
        time.sleep(0.05)
    return survivors(marker)


# ---- without the sandbox ----


def test_observer_answers_only_on_the_private_socket(tmp_path):
    sock = tmp_path / "observer.sock"
    base = Program([bin_path("baseline"), "--listen", "127.0.0.1:0", "--observer", f"unix:{sock}"])
    try:
        with grpc.insecure_channel(base.addr) as ch:
            for call, req in ((pb_grpc.ObserverStub(ch).Reset, pb.ResetRequest()),
                              (pb_grpc.ObserverStub(ch).Observe, pb.ObserveRequest(tag=""))):
                with pytest.raises(grpc.RpcError) as e:
                    call(req, timeout=5)
                assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED
            pb_grpc.BaselineStub(ch).Lookup(pb.LookupRequest(tag="t"), timeout=5)
        with grpc.insecure_channel(f"unix:{sock}") as ch:
            reply = pb_grpc.ObserverStub(ch).Observe(pb.ObserveRequest(tag="t"), timeout=5)
            assert [c.method for c in reply.calls] == ["Lookup"]
    finally:
        base.kill()


def test_no_second_socket_joins_the_baselines_port():
    base = Program([bin_path("baseline"), "--listen", "127.0.0.1:0"])
    try:
        port = int(base.addr.rsplit(":", 1)[1])
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        try:
            with pytest.raises(OSError):
                s.bind(("127.0.0.1", port))
        finally:
            s.close()
    finally:
        base.kill()


def test_calls_under_another_tag_count(tmp_path):
    proc, results, v = grade("deadline", hostile("hide_under_tag"), tmp_path)
    assert verdict_of(v, "shrinks")["status"] == "failed", proc.stdout
    assert "Work was called 3 times" in verdict_of(v, "once")["output"], proc.stdout
    assert results["score"] < 10


# ---- with the sandbox ----


@needs_sandbox
def test_good_relay_passes_in_the_sandbox(tmp_path):
    proc, results, v = grade("deadline", f"{PYTHON} {os.path.join(SUBMISSIONS, 'relay_good.py')}", tmp_path,
                             "--sandbox")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert results["score"] == results["max_score"] == 10


@needs_sandbox
def test_reset_from_the_submission_erases_nothing(tmp_path):
    proc, results, v = grade("deadline", hostile("erase_evidence"), tmp_path, "--sandbox")
    assert verdict_of(v, "shrinks")["status"] == "failed", proc.stdout
    assert verdict_of(v, "once")["status"] == "failed", proc.stdout


@needs_sandbox
def test_forged_results_and_sigkill_do_not_reach_the_grader(tmp_path):
    proc, results, v = grade("deadline", hostile("forge_grade"), tmp_path, "--sandbox")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert results["score"] == 6 and results.get("output") != "forged"
    assert verdict_of(v, "shrinks")["status"] == "failed"


@needs_sandbox
def test_killing_the_baseline_is_impossible(tmp_path):
    proc, results, v = grade("deadline", hostile("kill_baseline"), tmp_path, "--sandbox")
    assert "ERROR" not in proc.stdout, proc.stdout
    assert verdict_of(v, "shrinks")["status"] == "failed", proc.stdout
    assert results["score"] == 6


@needs_sandbox
def test_nothing_outlives_the_grader(tmp_path):
    marker = f"relaylab-outlive-{uuid.uuid4().hex}"
    proc, results, v = grade("deadline", hostile("outlive", marker), tmp_path, "--sandbox")
    assert results["score"] == 10, proc.stdout
    assert wait_no_survivors(marker, 5) == []


@needs_sandbox
def test_nothing_outlives_a_sigkilled_grader(tmp_path):
    marker = f"relaylab-outlive-{uuid.uuid4().hex}"
    grader = subprocess.Popen(
        [bin_path("grader"), "deadline", "--quiet", "--sandbox", "--submission", hostile("outlive", marker)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
    )
    try:
        until = time.monotonic() + 60
        while len(survivors(marker)) < 3 and time.monotonic() < until and grader.poll() is None:
            time.sleep(0.05)
        assert len(survivors(marker)) >= 3, "the chain never started"
    finally:
        grader.send_signal(signal.SIGKILL)
        grader.wait(timeout=30)
    assert wait_no_survivors(marker, 5) == []


@needs_sandbox
def test_setsid_does_not_leave_the_measured_cgroup(tmp_path):
    proc, results, v = grade("flow", hostile("setsid_streamer"), tmp_path, "--sandbox")
    for scenario in ("stall", "cancel", "slow-reader"):
        assert verdict_of(v, scenario)["status"] == "failed", proc.stdout
