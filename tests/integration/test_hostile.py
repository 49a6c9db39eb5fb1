# Hostile hand-ins against the grader and the kit's tools (issue 21): a
# config that is a link to a root-only file or a FIFO, a --json path with a
# link planted beside it, a relay whose status details and tags carry escape
# sequences, a config gRPC refuses in the balance exercise, and a relay that
# exhausts the baseline's file descriptors. Each gets the right verdict or a
# clear refusal at once: never a hang, never a quote of a file the student
# could not read, never an ERROR that blames the grader.
import json
import os
import subprocess
import time

import pytest

from conftest import PYTHON, REPO, SUBMISSIONS, bin_path, run_grader

HOSTILE = os.path.join(SUBMISSIONS, "hostile")
GOOD_RETRY = os.path.join(REPO, "tests", "configs", "good", "lab-retry.json")
SECRET_KEY = "zz_secret_key_name_zz"
SECRET_WORD = "zzsecretwordzz"


def run(argv, timeout, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL, **kw)


def scenario(res, sid):
    for t in res["tests"]:
        if t["extra_data"]["scenario"] == sid:
            return t
    raise AssertionError(f"no scenario {sid} in {res}")


@pytest.fixture
def secrets(tmp_path):
    """Two files only root may read, outside the submission's folder: one
    JSON (its key names must not leak), one not (nor its first word)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    js = outside / "secret.json"
    js.write_text(json.dumps({SECRET_KEY: {"x": 1}}))
    txt = outside / "secret.txt"
    txt.write_text(f"{SECRET_WORD} and more\n")
    for f in (js, txt):
        os.chmod(f, 0o600)
    return js, txt


# ---- configs read as the student could (items 2 and 3) ----


@pytest.mark.parametrize("which", ["json", "text"])
def test_config_linked_to_a_root_only_file_is_refused_unquoted(tmp_path, secrets, which):
    target = secrets[0] if which == "json" else secrets[1]
    sub = tmp_path / "student"
    sub.mkdir()
    link = sub / "retry.json"
    link.symlink_to(target)
    out = tmp_path / "results.json"
    p = run_grader("retry", "--submission", str(link), "--only", "check", "--json", str(out), timeout=120)
    text = p.out + p.err + out.read_text()
    for word in (SECRET_KEY, SECRET_WORD, "secret"):
        assert word not in text, text
    check = scenario(p.results, "check")
    assert check["extra_data"]["verdict"] == "FAIL", check
    assert "leading out of the submission's folder" in check["extra_data"]["feedback"]
    # channel-config says the same, and no more.
    c = run([bin_path("channel-config"), "check", str(link)], 30)
    assert c.returncode == 2, c.stdout + c.stderr
    assert "leading out of the submission's folder" in c.stderr
    for word in (SECRET_KEY, SECRET_WORD, "secret"):
        assert word not in c.stdout + c.stderr.replace(str(link), "")


def test_config_linked_inside_its_folder_is_read(tmp_path):
    sub = tmp_path / "student"
    (sub / "configs").mkdir(parents=True)
    real = sub / "configs" / "mine.json"
    real.write_text(open(GOOD_RETRY).read())
    link = sub / "retry.json"
    link.symlink_to("configs/mine.json")
    p = run_grader("retry", "--submission", str(link), "--dir", str(sub), "--only", "check", timeout=120)
    assert scenario(p.results, "check")["extra_data"]["verdict"] == "PASS", p.out + p.err


@pytest.mark.timeout(90)
@pytest.mark.parametrize("exercise", ["keepalive", "retry"])
def test_fifo_config_is_refused_at_once_by_the_grader(tmp_path, exercise):
    fifo = tmp_path / "config.json"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    # No writer ever opens the FIFO: before the fix the grader blocked in
    # open() until grade-class's per-job limit ended it.
    p = run_grader(exercise, "--submission", str(fifo), timeout=60)
    assert time.monotonic() - t0 < 60
    res = p.results
    for t in res["tests"]:
        assert t["extra_data"]["verdict"] == "FAIL", t
        assert "FIFO" in t["extra_data"]["feedback"], t
    assert p.rc == 1, p.out + p.err


def test_fifo_config_is_refused_at_once_by_channel_config(tmp_path):
    fifo = tmp_path / "config.json"
    os.mkfifo(fifo)
    c = run([bin_path("channel-config"), "check", str(fifo)], 20)
    assert c.returncode == 2, c.stdout + c.stderr
    assert "FIFO" in c.stderr
    c = run([bin_path("channel-config"), "args", str(fifo)], 20)
    assert c.returncode == 2 and "FIFO" in c.stderr


# ---- results written through a fresh file (item 6) ----


@pytest.mark.parametrize("run_kind", ["graded", "error"])
def test_json_never_written_through_a_link_beside_it(tmp_path, run_kind):
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    out = tmp_path / "results.json"
    (tmp_path / "results.json.tmp").symlink_to(victim)
    if run_kind == "graded":
        args = ["retry", "--submission", GOOD_RETRY, "--only", "check", "--json", str(out)]
    else:
        args = ["nosuch", "--submission", "x", "--json", str(out)]
    p = run_grader(*args, timeout=120)
    assert victim.read_text() == "precious\n"
    assert p.results["output"], p.out + p.err
    assert os.path.islink(tmp_path / "results.json.tmp")
    left = sorted(n for n in os.listdir(tmp_path) if n.startswith("results.json.tmp."))
    assert left == [], left


# ---- terminal and log injection (item 1) ----


def test_escape_sequences_from_a_relay_are_shown_escaped(tmp_path):
    """terminal_injection answers with ESC and CR in its reply tag and its
    status details. Raw, they erased the table and drew "score 10/10" over a
    2/10 run. The table, stderr and results.json show them escaped, and the
    last score line is the true one."""
    out = tmp_path / "results.json"
    sub = f"{PYTHON} {os.path.join(HOSTILE, 'terminal_injection.py')}"
    # --no-sandbox: what is judged is the grader's printing, and the
    # sandbox would need the checkout readable by nobody.
    p = run_grader("deadline", "--no-sandbox", "--dir", SUBMISSIONS, "--json", str(out), "--submission", sub,
                   timeout=240)
    stdout, stderr = p.out, p.err
    for name, text in (("stdout", p.stdout), ("stderr", p.stderr), ("results.json", out.read_bytes())):
        assert b"\x1b" not in text and b"\r" not in text and b"\x07" not in text, f"{name}: {text!r}"
    res = p.results
    assert res["score"] < 10, stdout
    last_score = [line for line in stdout.splitlines() if line.startswith("score ")][-1]
    assert last_score == f"score {res['score']:g}/10", stdout
    feedback = " ".join(t["extra_data"]["feedback"] for t in res["tests"])
    # Both ways in were judged and quoted, escaped: the tag and the details.
    assert "tag '\\r\\x1b[1A" in feedback and "tag '\\r\\x1b[1A" in stdout, stdout
    assert "INTERNAL (\\x1b]0;graded\\x07" in feedback and "INTERNAL (\\x1b]0;graded\\x07" in stdout, stdout
    assert p.rc == 1, stdout + stderr


# ---- a balance config gRPC refuses (item 5) ----


def test_balance_scores_nothing_when_every_call_failed():
    """balance_refused's client service config names no policy gRPC knows:
    every call of the live run fails at once. churn and no-storm used to
    pass ("no reconnects"); now every live scenario fails and says why."""
    p = run_grader("balance", "--submission", os.path.join(HOSTILE, "balance_refused.json"), timeout=240)
    res = p.results
    assert res["score"] == 0, p.out
    for sid in ("churn", "no-storm", "fills"):
        t = scenario(res, sid)
        assert t["extra_data"]["verdict"] == "FAIL", t
        assert "calls failed" in t["extra_data"]["feedback"] and "nothing to judge" in t["extra_data"]["feedback"]
    assert scenario(res, "no-failures")["extra_data"]["verdict"] == "FAIL"
    assert p.rc == 1, p.out + p.err


# ---- a submission exhausting the baseline's descriptors (item 4) ----


def _observe(sock_path, timeout=5):
    import grpc
    import relaylab_pb2 as pb
    import relaylab_pb2_grpc as pb_grpc

    ch = grpc.insecure_channel(f"unix:{sock_path}", options=[("grpc.use_local_subchannel_pool", 1)])
    try:
        pb_grpc.ObserverStub(ch).Observe(pb.ObserveRequest(tag="none"), timeout=timeout)
    finally:
        ch.close()


def _lookup(addr, timeout=2):
    import grpc
    import relaylab_pb2 as pb
    import relaylab_pb2_grpc as pb_grpc

    ch = grpc.insecure_channel(addr, options=[("grpc.use_local_subchannel_pool", 1)])
    try:
        pb_grpc.BaselineStub(ch).Lookup(pb.LookupRequest(tag="after.flood"), timeout=timeout)
    finally:
        ch.close()


@pytest.mark.timeout(120)
def test_baseline_keeps_its_observer_when_the_public_port_takes_every_descriptor(tmp_path, start_program):
    """A baseline limited to 300 descriptors gets 400 idle connections on its
    public port. gRPC 1.51's listeners stop for good at their first EMFILE:
    before the guard, the observer's unix socket then never accepted again.
    Now the connections past the guard are closed at accept, the observer
    answers on a fresh connection, and once the flood is gone the public port
    serves again (its listener never stopped)."""
    import socket

    sock = tmp_path / "obs.sock"
    b = start_program(["/usr/bin/prlimit", "--nofile=300:300", "--", bin_path("baseline"), "--listen", "127.0.0.1:0",
                       "--observer", f"unix:{sock}"])
    host, port = b.addr.rsplit(":", 1)
    conns = []
    try:
        for _ in range(400):
            conns.append(socket.create_connection((host, int(port)), timeout=5))
        # Wait until the baseline has met the end of its descriptors: the guard
        # says so, or (without it) gRPC's listener fails.
        deadline = time.monotonic() + 60
        while not any(w in b.stderr() for w in ("closed at accept", "Failed accept4")):
            assert time.monotonic() < deadline, b.stderr()
            time.sleep(0.05)
        _observe(sock)
    finally:
        for c in conns:
            c.close()
    deadline = time.monotonic() + 30
    while True:
        try:
            _lookup(b.addr)
            break
        except Exception:
            assert time.monotonic() < deadline, b.stderr()
    assert "Failed accept4" not in b.stderr()


@pytest.mark.timeout(180)
def test_a_submission_flooding_the_baseline_fails_with_the_reason():
    """exhaust_fds opens 6 x 900 idle connections to the baseline before it
    listens. The grader runs in a network namespace of its own (as the
    sandbox does; unshare here, so the test needs no nobody-readable
    checkout): the flood stays off the machine's loopback. Its verdict is
    FAIL naming the connections, never ERROR or a TIMEOUT that hides why."""
    if os.geteuid() != 0 or not os.access("/usr/bin/unshare", os.X_OK):
        pytest.skip("needs root and unshare for a network namespace of the test's own")
    sub = f"{PYTHON} {os.path.join(HOSTILE, 'exhaust_fds.py')} 6 900"
    p = run_grader("deadline", "--no-sandbox", "--only", "shrinks", "--submission", sub, timeout=150,
                   wrap=["/usr/bin/unshare", "--net", "/bin/sh", "-c", '/usr/sbin/ip link set lo up && exec "$@"',
                         "sh"])
    t = scenario(p.results, "shrinks")
    assert t["extra_data"]["verdict"] == "FAIL", p.out + p.err
    assert "connections to the baseline" in t["extra_data"]["feedback"], t
    assert p.rc == 1, p.out + p.err


@pytest.mark.timeout(300)
def test_run_autograder_prints_and_files_no_escape_sequence(tmp_path):
    """terminal_injection graded the way Gradescope runs it: grade-class over
    the upload, then the grading logs printed for the instructor. Nothing it
    said reaches that print, the CSV or results.json raw, and the score is
    the true one."""
    import shutil

    root = tmp_path / "ag"
    sub = root / "submission"
    (sub / "hostile").mkdir(parents=True)
    for name in ("relay_good.py",):
        shutil.copy(os.path.join(SUBMISSIONS, name), sub)
    shutil.copy(os.path.join(HOSTILE, "terminal_injection.py"), sub / "hostile")
    shutil.copytree(os.path.join(REPO, "build", "gen", "py"), sub / "gen")
    run_sh = sub / "run"
    run_sh.write_text("#!/bin/sh\nPYTHONPATH=gen exec /usr/bin/python3 hostile/terminal_injection.py\n")
    os.chmod(run_sh, 0o755)
    (sub / ".relaylab").write_text("exercises deadline\nlang python\nsubmission ./run\nvariant \n")
    env = dict(os.environ, RELAYLAB_AUTOGRADER_ROOT=str(root), RELAYLAB_KIT=os.path.dirname(os.path.dirname(bin_path("grader"))),
               RELAYLAB_EXERCISES="deadline")
    p = subprocess.run([os.path.join(REPO, "scripts", "gradescope", "run_autograder")], env=env, capture_output=True,
                       timeout=280, stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p.stderr
    res_bytes = (root / "results" / "results.json").read_bytes()
    for name, text in (("printed", p.stdout + p.stderr), ("results.json", res_bytes)):
        assert b"\x1b" not in text and b"\r" not in text, f"{name}: {text[-3000:]!r}"
    res = json.loads(res_bytes)
    assert 0 < res["score"] < res["max_score"] == 10, res["output"]
    # The printed logs are the gradings' (grade-class --show-logs), escaped.
    assert b"\\x1b[1A" in p.stdout and b"score 2/10" in p.stdout, p.stdout[-3000:]
