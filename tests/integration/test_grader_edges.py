# Integration tests for the grader's own edges: a usage or setup error still
# writes a Gradescope results.json (or fails clearly when none can be
# written), a config breaking several rules gets every rule into the JSON, a
# relay that turns "no deadline" into an impossible timeout is told so, and a
# port another process holds never becomes the submission's NOT-READY.
import json
import os
import re
import socket
import subprocess

import pytest

from conftest import PYTHON, REPO, SUBMISSIONS, bin_path, run_grader

CLASH_HOOK = "RELAYLAB_GRADER_TEST_PORT_CLASH"  # test hook, see grader/ports.h


def load_results(g):
    """|g|'s results.json (run_grader checked its fields), with the types
    Gradescope needs."""
    results = g.results
    assert isinstance(results["score"], (int, float))
    assert isinstance(results["output"], str) and results["output"]
    assert isinstance(results["tests"], list)
    return results


def py(name):
    return f"{PYTHON} {os.path.join(SUBMISSIONS, name + '.py')}"


# ---- usage and setup errors ----

USAGE_ERRORS = [
    # (arguments before --json, arguments after, phrase of the message)
    (["nosuch", "--submission", "x"], [], "no exercise 'nosuch'"),
    (["deadline", "--submission", "x", "--only", "nope"], [], "has no scenario 'nope'"),
    # getopt stops at --runs before it ever reaches --json.
    (["deadline", "--runs", "0", "--submission", "x"], [], "--runs takes a number"),
    (["deadline"], [], "needs --submission"),
    (["deadline", "--submission", "x", "--bogus"], [], "unknown or incomplete option"),
    (["deadline", "--submission", "x", "--dir", "/nonexistent/relaylab"], [], "--dir /nonexistent/relaylab is not"),
]


@pytest.mark.parametrize("before,after,phrase", USAGE_ERRORS, ids=[u[2].split()[0] for u in USAGE_ERRORS])
@pytest.mark.parametrize("form", ["separate", "equals"])
def test_usage_error_with_json_writes_results(tmp_path, before, after, phrase, form):
    out = tmp_path / "results.json"
    json_args = ["--json", str(out)] if form == "separate" else [f"--json={out}"]
    p = run_grader(*before, *json_args, *after, timeout=60)
    assert p.rc == 2, p.out + p.err
    assert phrase in p.err
    r = load_results(p)
    assert r["score"] == 0
    assert r["tests"] == []
    assert phrase in r["output"] and "Grader error" in r["output"]
    assert not (tmp_path / "results.json.tmp").exists()


@pytest.mark.parametrize("where", ["missing-folder", "a-folder", "read-only-folder"])
def test_unwritable_json_path_fails_at_once(tmp_path, where):
    if where == "missing-folder":
        target = tmp_path / "no" / "such" / "r.json"
    elif where == "a-folder":
        target = tmp_path
    else:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o555)
        if os.access(ro, os.W_OK):
            pytest.skip("running as root: a read-only folder is still writable")
        target = ro / "r.json"
    p = run_grader("deadline", "--submission", py("relay_good"), "--json", str(target), "--quiet", timeout=60)
    assert p.rc == 2
    assert "cannot write the results file" in p.err and str(target) in p.err
    # Nothing was graded: the error comes before any scenario.
    assert "SCENARIO" not in p.out


@pytest.mark.parametrize("rubric", ["missing", "not-json", "no-exercise"])
def test_bad_rubric_exits_2_with_a_clear_message_and_results(tmp_path, rubric):
    path = tmp_path / "rubric.json"
    phrase = {
        "missing": "cannot read the rubric",
        "not-json": "is not valid JSON",
        "no-exercise": "the rubric has no entry for exercise 'deadline'",
    }[rubric]
    if rubric == "not-json":
        path.write_text('{"deadline": ')
    elif rubric == "no-exercise":
        path.write_text('{"cancel": {}}')
    p = run_grader("deadline", "--submission", py("relay_good"), "--rubric", str(path), timeout=60)
    assert p.rc == 2
    assert phrase in p.err
    r = load_results(p)
    assert r["score"] == 0 and phrase in r["output"]


# ---- feedback length ----


def test_check_feedback_keeps_every_broken_rule(tmp_path):
    cfg = tmp_path / "three-rules.json"
    cfg.write_text(
        json.dumps(
            {
                "description": "timeout above time, pings faster than the server allows, pings without calls",
                "client": {
                    "grpc.keepalive_time_ms": 20000,
                    "grpc.keepalive_timeout_ms": 30000,
                    "grpc.keepalive_permit_without_calls": 1,
                    "grpc.http2.max_pings_without_data": 0,
                },
                "server": {"grpc.http2.min_ping_interval_without_data_ms": 30000},
            }
        )
    )
    # What the checker itself finds in the exercise's world (the grader's
    # default): every "error[RULE] PATH: WHY" line.
    world = os.path.join(REPO, "grader", "worlds", "keepalive.json")
    c = subprocess.run([bin_path("channel-config"), "check", "--world", world, str(cfg)], capture_output=True,
                       text=True, timeout=60)
    errors = re.findall(r"error\[([^\]]+)\] (\S+): (.*)$", c.stdout, re.M)
    assert len(errors) >= 2, c.stdout
    p = run_grader("keepalive", "--submission", str(cfg), "--only", "check", "--quiet")
    assert p.rc == 1, p.out + p.err
    feedback = load_results(p)["tests"][0]["output"]
    assert feedback.startswith("FAIL")
    assert f"{len(errors)} rules broken" in feedback
    for rule, path, why in errors:
        assert rule in feedback and path in feedback and why in feedback, (rule, feedback)
        # The table keeps them too, on the check line.
        assert why in p.out
    assert "feedback cut" not in feedback


# ---- no deadline turned into an impossible timeout ----


def test_time_remaining_passed_through_is_named():
    p = run_grader("deadline", "--submission", py("relay_time_remaining"), "--only", "none", "--quiet")
    assert p.rc == 1, p.out + p.err
    t = load_results(p)["tests"][0]
    assert t["status"] == "failed"
    assert t["output"].startswith("FAIL")
    for phrase in ("with no deadline from the client", "DEADLINE_EXCEEDED", "never reached Lookup",
                   "time_remaining()", "no deadline either"):
        assert phrase in t["output"], t["output"]


# ---- port clashes ----


@pytest.mark.parametrize("holder", ["listener", "reuseport-listener"])
def test_port_clash_is_not_the_submissions_not_ready(holder):
    """The hook makes the grader give the submission a port this test holds:
    a plain listener makes grpcio's bind fail (the relay exits), one with
    SO_REUSEPORT lets the relay bind beside it and share the connections.
    Either way the grader must restart it elsewhere and judge it there.
    In the sandbox no other process shares the grader's network namespace,
    so clashes are for --no-sandbox and --unsafe runs, tested here."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        if holder == "reuseport-listener":
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        s.bind(("127.0.0.1", 0))
        s.listen(16)
        port = s.getsockname()[1]
        p = run_grader("deadline", "--submission", py("relay_good"), "--only", "shrinks", "--quiet", "--no-sandbox",
                       env={CLASH_HOOK: str(port)})
    finally:
        s.close()
    t = load_results(p)["tests"][0]
    assert p.rc == 0, p.out + p.err
    assert t["output"].startswith("PASS"), t["output"]
    # Proof the hook took effect: the grader saw the clash and restarted.
    assert "another process held the port of 1 earlier start" in t["output"]
