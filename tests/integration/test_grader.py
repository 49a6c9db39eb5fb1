# Integration tests for bin/grader: the reference relay passes everything,
# each classic mistake (bin/relay --mistake X and the Python submissions in
# tests/submissions) fails exactly its scenarios with the right verdict and
# wording, and whatever a submission does, the grader leaves no process behind,
# writes its JSON, and keeps its exit-status contract.
import os
import signal
import subprocess
import threading
import time

import pytest

from conftest import PYTHON, SUBMISSIONS, GraderError, bin_path, grade, new_marker, processes_of, run_grader

ALL = {
    "deadline": ["shrinks", "none", "expires-in-lookup", "once"],
    "cancel": ["during-work", "during-lookup", "keeps-serving", "no-leak"],
}


def relay(mistake=None):
    cmd = bin_path("relay")
    return f"{cmd} --mistake {mistake}" if mistake else cmd


def py(name):
    return f"{PYTHON} {os.path.join(SUBMISSIONS, name + '.py')}"


@pytest.mark.parametrize("exercise", ["deadline", "cancel"])
def test_reference_relay_passes_everything(exercise):
    g = grade(exercise, relay())
    assert g.rc == 0, g.out + g.err
    assert g.failing() == set(), g.out
    assert set(g.verdicts) == set(ALL[exercise])
    assert g.results["score"] == g.results["max_score"] > 0
    assert all(t["status"] == "passed" for t in g.results["tests"])


# Which scenarios each known submission passes and fails, and what its
# feedback says, is the verdict matrix's (tests/verdicts.json,
# test_verdict_matrix.py); the tests here are about the grader itself.


def test_crash_names_the_signal():
    g = grade("deadline", py("relay_crash"), "--only", "shrinks,once")
    assert g.rc == 1
    for sid, verdict in g.verdicts.items():
        assert verdict == "CRASH", g.out
        assert "SIGSEGV" in g.feedback[sid], g.out
    # The JSON carries the submission's output for a crash.
    assert "relay listening on" in g.results["tests"][0]["output"]
    g = grade("cancel", py("relay_crash"), "--only", "during-work")
    assert g.verdicts["during-work"] == "CRASH", g.out


# The grader's default --ready-timeout (grader --help).
DEFAULT_READY_S = 15


def test_never_listens_is_not_ready_quickly():
    g = grade("deadline", py("relay_never_listens"), "--only", "shrinks", "--ready-timeout", "2")
    assert g.rc == 1
    verdict, feedback = g.verdicts["shrinks"], g.feedback["shrinks"]
    assert verdict == "NOT-READY", g.out
    assert "did not listen on" in feedback and "relay starting" in feedback
    # What is tested is that the 2 s given were used, not the default 15 s:
    # a grader that ignored --ready-timeout takes at least 15 s, one that
    # honoured it 2 s plus start-up and teardown. The bound sits between the
    # two, so start-up on a loaded machine (up to seconds) cannot trip it.
    assert 2 <= g.seconds < DEFAULT_READY_S, g.seconds


def test_exit_before_listening_is_not_ready_with_status():
    # A submission that exits is reported at once, not after the readiness
    # wait: with a 60 s wait, any run under 60 s proves it, while start-up
    # on a loaded machine costs seconds at most.
    g = grade("deadline", "echo oops >&2; exit 3", "--only", "once", "--ready-timeout", "60")
    verdict, feedback = g.verdicts["once"], g.feedback["once"]
    assert verdict == "NOT-READY"
    assert "exited with status 3" in feedback and "oops" in feedback
    assert g.seconds < 60, g.seconds


def test_command_with_leading_assignment_starts_and_crash_is_named():
    # `exec` takes no VAR=value words: the grader must still start the
    # command, and still see the signal of the program itself.
    g = grade("deadline", f"RELAYLAB_LOG=debug {bin_path('relay')}", "--only", "once")
    assert g.failing() == set(), g.out
    g = grade("deadline", f"PYTHONUNBUFFERED=1 {py('relay_crash')}", "--only", "once")
    verdict, feedback = g.verdicts["once"], g.feedback["once"]
    assert verdict == "CRASH" and "SIGSEGV" in feedback, g.out


def test_passing_submission_is_told_about_sigterm_and_floods():
    # The verdict is the scenario's; the feedback still says what a
    # well-behaved server would not have needed.
    g = grade("deadline", py("relay_ignores_sigterm"), "--only", "once")
    verdict, feedback = g.verdicts["once"], g.feedback["once"]
    assert verdict.startswith("PASS"), g.out
    assert "did not exit within 2000 ms of SIGTERM and was killed" in feedback
    g = grade("deadline", py("relay_floods_output"), "--only", "once")
    verdict, feedback = g.verdicts["once"], g.feedback["once"]
    assert verdict.startswith("PASS"), g.out
    assert "MiB of output" in feedback
    g = grade("deadline", bin_path("relay"), "--only", "once")
    assert "note:" not in g.tests["once"]["output"]


def test_escaped_process_is_killed(tmp_path):
    # A daemon that leaves the group with setsid: without the sandbox (whose
    # PID namespace takes everything down) only the subreaper sweep finds
    # it. It writes its pid so the test can check it is gone.
    pidfile = tmp_path / "daemon.pid"
    cmd = f"setsid sh -c 'echo $$ > {pidfile}; exec sleep 600' & exec {relay()}"
    g = grade("deadline", cmd, "--only", "once", "--no-sandbox")
    assert g.rc == 0, g.out
    pid = int(pidfile.read_text())
    assert not alive(pid), f"the escaped daemon {pid} is still running"


def alive(pid):
    """True while |pid| exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_forked_helper_does_not_survive():
    # The helper ("sleep 600") carries this run's marker like every process
    # the grader starts. A watcher records its pid while the grade runs, so
    # the test knows the helper really ran and can check that very pid after.
    marker = new_marker()
    helpers = set()
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            for pid in processes_of(None, marker):
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as f:
                        if f.read().split(b"\0")[:2] == [b"sleep", b"600"]:
                            helpers.add(pid)
                except OSError:
                    pass
            time.sleep(0.02)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        # Two scenarios, each with a fresh relay and helper: keeps-serving
        # alone lasts about a second, a window a watcher starved by make
        # test's other groups once missed entirely.
        g = grade("cancel", py("relay_forks_child"), "--only", "keeps-serving,no-leak", marker=marker)
    finally:
        stop.set()
        watcher.join(10)
    assert g.rc == 0, g.out
    assert helpers, "the submission's helper was never seen running: the test did not exercise the sweep"
    assert not [pid for pid in helpers if alive(pid)], f"helper pids still alive: {helpers}"


def test_runs_report_pass_rate():
    g = grade("deadline", relay(), "--only", "once", "--runs", "3")
    assert g.rc == 0
    # The verdict the student reads, with its runs.
    assert g.tests["once"]["output"].startswith("PASS 3/3: "), g.out
    assert "PASS 3/3" in g.out


def test_runs_score_only_when_all_pass():
    g = grade("deadline", relay("forward-timeout"), "--only", "shrinks,once", "--runs", "2")
    out = {sid: t["output"] for sid, t in g.tests.items()}
    assert out["shrinks"].startswith("FAIL 0/2: ") and out["once"].startswith("PASS 2/2: "), g.out
    by_id = {t["name"].split(":")[0]: t for t in g.results["tests"]}
    assert by_id["deadline/shrinks"]["score"] == 0
    assert by_id["deadline/once"]["score"] == by_id["deadline/once"]["max_score"] > 0


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["nosuch", "--submission", "x"],
        ["deadline"],
        ["deadline", "--submission", "x", "--runs", "0"],
        ["deadline", "--submission", "x", "--bogus"],
        ["deadline", "--submission", "x", "--only", "nosuch"],
        ["deadline", "extra", "--submission", "x"],
    ],
)
def test_usage_errors_exit_2(args):
    p = run_grader(*args, timeout=30, results=False)
    assert p.rc == 2, p.out + p.err
    assert "usage: grader" in p.err


def test_list_and_help():
    p = subprocess.run([bin_path("grader"), "list"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0
    for ex, ids in ALL.items():
        assert ex in p.stdout
        for sid in ids:
            assert sid in p.stdout
    p = subprocess.run([bin_path("grader"), "--help"], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0 and "--submission" in p.stdout


def test_bad_rubric_is_a_clear_error(tmp_path):
    bad = tmp_path / "rubric.json"
    bad.write_text('{"deadline": {"shrinks": 1}}')
    p = run_grader("deadline", "--submission", relay(), "--rubric", str(bad), timeout=60)
    assert p.rc == 2
    assert "the rubric has no points for deadline/none" in p.err
    assert "Grader error" in p.results["output"]


def runs_relay_hang(pid):
    """True for the Python process running relay_hang.py itself: the
    grader's own command line and the sandbox's wrappers name the script
    too."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return False
    return os.path.basename(argv[0]).startswith(b"python") and any(a.endswith(b"relay_hang.py") for a in argv)


def wait_for_relay_hang(marker):
    """Waits until a process of the run |marker| runs relay_hang.py. Judge
    the scan that ended the wait: a second scan could land between two
    scenarios, when the submission is being restarted."""
    deadline = time.monotonic() + 20
    seen = []
    while time.monotonic() < deadline:
        seen = processes_of(None, marker)
        if any(runs_relay_hang(pid) for pid in seen):
            break
        time.sleep(0.05)
    assert any(runs_relay_hang(pid) for pid in seen), seen


def test_interrupted_grader_kills_children_and_writes_results():
    marker = new_marker()

    def interrupt(grader_pid):
        # Once the submission runs.
        wait_for_relay_hang(marker)
        os.kill(grader_pid, signal.SIGTERM)

    # run_grader fails the test if a process of the run is left.
    g = grade("deadline", py("relay_hang"), marker=marker, on_start=interrupt, timeout=30)
    assert g.rc == 2, g.out + g.err
    assert "interrupted" in g.err
    assert g.results["tests"][0]["output"].startswith("ERROR")


def test_a_grading_past_its_time_limit_is_stopped_and_shows_the_graders_stderr():
    # conftest.run_grader's limit, counted here from the moment the
    # submission runs: the grader gets SIGTERM (its interrupt, which ends
    # what it started), and the error carries its stderr.
    marker = new_marker()
    with pytest.raises(GraderError) as e:
        grade("deadline", py("relay_hang"), marker=marker, on_start=lambda pid: wait_for_relay_hang(marker), timeout=2)
    assert "still running after 2 s: interrupted (SIGTERM)" in str(e.value), str(e.value)
    assert "interrupted" in str(e.value).split("stderr:", 1)[1], str(e.value)
    assert processes_of(None, marker) == []


def test_memory_limit_stops_a_submission_that_exceeds_it():
    # RLIMIT_DATA in action: the Python producer that queues every chunk
    # starts with 74 MB of data (VmData) and cannot get 54 MB more under a
    # 128 MB limit, and grpcio aborts on the failed allocation -- well before
    # stall's watch would end at twice its 48 MiB budget (grader/ex_flow.c
    # PAST_BUDGETS); without a limit the same producer runs on and fails on
    # its RSS growth instead.
    unbounded = py("streamer_unbounded")
    g = grade("flow", unbounded, "--only", "stall", "--memory-limit", "128")
    assert g.rc == 1, g.out + g.err
    verdict, feedback = g.verdicts["stall"], g.feedback["stall"]
    assert verdict == "CRASH" and "SIGABRT" in feedback, g.out
    g = grade("flow", unbounded, "--only", "stall", "--memory-limit", "0")
    verdict, feedback = g.verdicts["stall"], g.feedback["stall"]
    assert verdict == "FAIL" and "RSS grew" in feedback, g.out
    # A paced producer stays far below even a 96 MB limit and passes.
    g = grade("flow", py("streamer_good"), "--only", "stall", "--memory-limit", "96")
    assert g.rc == 0, g.out + g.err
    assert g.verdicts["stall"] == "PASS", g.out


# ---- a grader that cannot deliver: results it cannot write, a rubric it cannot read ----


@pytest.mark.parametrize("where", ["missing-dir", "a-directory"])
def test_unwritable_json_is_exit_2_with_a_clear_message(tmp_path, where):
    target = tmp_path / "no" / "such" / "r.json" if where == "missing-dir" else tmp_path
    p = run_grader("deadline", "--submission", relay(), "--only", "once", "--json", str(target), "--quiet",
                   timeout=120)
    assert p.rc == 2, p.out + p.err
    assert "cannot write the results file" in p.err and str(target) in p.err, p.err


def test_unwritable_json_is_found_before_any_submission_runs(tmp_path):
    # Grading takes minutes; a results file that cannot be written should
    # stop the grader before it starts the submission, not after.
    ran = tmp_path / "ran"
    cmd = f"touch {ran}; exec {relay()}"
    p = run_grader("deadline", "--submission", cmd, "--only", "once", "--json", str(tmp_path / "no" / "r.json"),
                   "--quiet", timeout=120)
    assert p.rc == 2, p.out + p.err
    assert not ran.exists(), "the submission was started although the results could not be written"


@pytest.mark.parametrize("content,message", [
    (None, "cannot read the rubric"),
    ("{", "is not valid JSON"),
])
def test_missing_or_broken_rubric_is_exit_2_and_results_say_so(tmp_path, content, message):
    rubric = tmp_path / "rubric.json"
    if content is not None:
        rubric.write_text(content)
    ran = tmp_path / "ran"
    p = run_grader("deadline", "--submission", f"touch {ran}; exec {relay()}", "--rubric", str(rubric), "--quiet",
                   timeout=120)
    assert p.rc == 2, p.out + p.err
    assert message in p.err and str(rubric) in p.err, p.err
    assert not ran.exists(), "the submission ran although there was no rubric to score it"
    results = p.results
    assert "Grader error" in results["output"] and message in results["output"], results
    assert results["score"] == 0
