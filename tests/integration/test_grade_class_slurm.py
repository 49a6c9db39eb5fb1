# grade-class --slurm against a real single-node Slurm that the test starts
# (slurm_cluster.py: munged, slurmctld and slurmd in a network namespace of
# their own, loopback only, stopped after). The class is test_grade_class's
# three known submissions on deadline and retry (a good Python relay, the C
# relay's forward-timeout mistake, a config that turns retries off): graded
# through Slurm they get the verdicts tests/verdicts.json gives them, which
# are the local path's (test_grade_class.py holds the local path to them).
# Also: a task that ends without grading (cancelled) is named with its job,
# its gradings are NOT-GRADED and a second run resumes them alone; an
# interrupt cancels the array and leaves no task or process; the array of
# a grade-class killed outright is found by the next run, which refuses to
# submit another beside it until it ended; sbatch's
# refusal is said and the results are written; the end of --slurm-wait
# cancels the array (a minute: `make selftest` runs it). Skipped, with the
# reason, where Slurm cannot start (not root, slurm-wlm or munge missing).
import importlib.util
import json
import os
import re
import signal
import subprocess
import tempfile
import time

import pytest

import slurm_cluster

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("RELAYLAB_BIN", os.path.join(ROOT, "bin"))
CLASS_ROWS = ["relay_good.py", "relay --mistake forward-timeout", "retry.disabled.json"]
EXERCISES = "deadline,retry"

_spec = importlib.util.spec_from_file_location("known_class", os.path.join(ROOT, "scripts", "known-class.py"))
known_class = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(known_class)


@pytest.fixture(scope="module")
def cluster():
    c = slurm_cluster.Cluster()
    try:
        c.start()
    except slurm_cluster.Unavailable as e:
        c.cleanup()
        pytest.skip(f"Slurm cannot start here: {e}")
    yield c
    c.stop()
    c.cleanup()


@pytest.fixture(scope="module")
def klass():
    # A folder user nobody can reach: the sandbox runs submissions as nobody.
    base = os.path.join(tempfile.gettempdir(), "relaylab-grade-class")
    os.makedirs(base, exist_ok=True)
    os.chmod(base, 0o755)
    top = tempfile.mkdtemp(dir=base)
    os.chmod(top, 0o755)
    dest = os.path.join(top, "k")
    exp = known_class.build(dest, only=CLASS_ROWS)
    assert len(exp) == 3, exp
    yield dest
    subprocess.run(["rm", "-rf", top], check=False)


def sanitizer_build():
    return os.sep + "address" + os.sep in os.path.join(BIN, "")


def grade_class(dest, out, *extra):
    if sanitizer_build():
        # The class's C relay is the ASan build: its shadow memory counts in RLIMIT_DATA.
        extra = ("--memory-limit", "0", *extra)
    return [os.path.join(BIN, "grade-class"), os.path.join(dest, "class"), "--out", out, "--jobs", "5",
            "--exercises", EXERCISES, "--variant-from", "marker", "--slurm", "--slurm-wait", "10", *extra]


def students(dest):
    return sorted(json.load(open(os.path.join(dest, "expect.json")))["students"])


def start(cluster, argv):
    """grade-class started in the cluster, and its Slurm job id once sbatch
    took the array (from its 'Slurm job J submitted' line)."""
    p = cluster.popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    end = time.monotonic() + 60
    while time.monotonic() < end:
        line = p.stderr.readline()
        if not line:
            break
        lines.append(line)
        m = re.search(r"Slurm job (\d+) submitted", line)
        if m:
            return p, m.group(1), lines
    p.kill()
    p.wait()
    pytest.fail("grade-class did not submit its array: " + "".join(lines))


def finish(p, lines, timeout):
    try:
        out, err = p.communicate(timeout=timeout)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return out, "".join(lines) + err


def task_states(cluster, job):
    r = cluster.run(["squeue", "--noheader", "--array", "--states=all", f"--jobs={job}", "--format=%K %T"])
    assert r.returncode == 0, r.stderr
    return dict(line.split() for line in r.stdout.splitlines())


def processes_under(path):
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
            cmd = open(f"/proc/{pid}/cmdline", "rb").read().decode(errors="replace")
        except OSError:
            continue
        if cwd.startswith(path) or path in cmd:
            found.append(pid)
    return found


def test_slurm_grades_as_locally_and_resumes_a_task_that_died(cluster, klass):
    out = os.path.join(os.path.dirname(klass), "out-slurm")
    # Each task takes every CPU of the node: the tasks run one after another,
    # so the last is still waiting when it is cancelled (as a task the
    # cluster kills or loses ends: without grading).
    p, job, lines = start(cluster, grade_class(klass, out, f"--sbatch-option=--cpus-per-task={cluster.cpus}"))
    r = cluster.run(["scancel", f"{job}_2"])
    assert r.returncode == 0, r.stderr
    _, err = finish(p, lines, 300)
    assert p.returncode == 2, err
    last = students(klass)[2]
    # Cancelled before it started, it leaves no record: squeue stops listing it.
    assert re.search(rf"Slurm job {job} task 2 \({re.escape(last)}\) ended GONE", err), err
    assert "run the same command again to resume" in err
    rows = known_class.read_csv(os.path.join(out, "grades.csv"))
    assert {v["verdict"] for k, v in rows.items() if k[0] == last and v["verdict"] != "MISSING"} == {"NOT-GRADED"}
    assert all(f"Slurm job {job} task 2 ended GONE (no longer listed by squeue" in v["feedback"] for k, v in rows.items()
               if k[0] == last and v["verdict"] == "NOT-GRADED")
    graded = {k[0] for k, v in rows.items() if v["verdict"] in ("PASS", "FAIL")}
    assert graded == set(students(klass)[:2]), rows
    summary = open(os.path.join(out, "summary.txt")).read()
    assert "partial:" in summary, summary

    # Run again: only the cancelled task's student is submitted, and the
    # class gets every verdict the local path gets.
    t0 = time.monotonic()
    r = cluster.run(grade_class(klass, out), timeout=300)
    resume_s = time.monotonic() - t0
    assert r.returncode == 0, r.stderr
    assert "1 gradings to run on Slurm: 1 array tasks" in r.stderr, r.stderr
    assert "after reporting every grading" not in r.stderr, r.stderr  # the task exited 0
    assert known_class.check(klass, out) == []
    for student in students(klass):
        res = json.load(open(os.path.join(out, student, "results.json")))
        assert res["tests"] and all(t["status"] in ("passed", "failed") for t in res["tests"])
    assert "partial:" not in open(os.path.join(out, "summary.txt")).read()
    assert "class.html" in os.listdir(out)
    assert any(f.endswith(".done") for f in os.listdir(os.path.join(out, "slurm")))
    # And once more: nothing to grade, no job.
    r = cluster.run(grade_class(klass, out), timeout=120)
    assert r.returncode == 0, r.stderr
    assert "0 gradings to run on Slurm: 0 array tasks" in r.stderr and "submitted" not in r.stderr, r.stderr
    assert known_class.check(klass, out) == []
    assert processes_under(klass) == []
    print(f"resume of one student through Slurm: {resume_s:.1f} s")


def test_an_interrupt_cancels_the_array(cluster, klass):
    out = os.path.join(os.path.dirname(klass), "out-interrupt")
    p, job, lines = start(cluster, grade_class(klass, out))
    # Once a task's grader runs (its log made), so that the cancel reaches
    # a running task, its grader and the submission.
    first = os.path.join(out, students(klass)[0], "deadline.log")
    end = time.monotonic() + 60
    while not os.path.exists(first) and time.monotonic() < end and p.poll() is None:
        time.sleep(0.05)
    assert os.path.exists(first), "no task started a grading within 60 s"
    p.send_signal(signal.SIGINT)
    _, err = finish(p, lines, 150)
    assert p.returncode == 2, err
    assert f"Slurm job {job} cancelled" in err, err
    # Every task ended: none is left running or waiting.
    states = task_states(cluster, job)
    assert states and all(s in ("CANCELLED", "COMPLETED") for s in states.values()), states
    assert processes_under(klass) == []
    rows = known_class.read_csv(os.path.join(out, "grades.csv"))
    assert any(v["verdict"] == "NOT-GRADED" for v in rows.values()), rows
    assert "partial:" in open(os.path.join(out, "summary.txt")).read()
    # Cancelled and ended: no later run waits for it.
    assert not os.path.exists(os.path.join(out, "slurm", "job"))


def test_a_killed_submitters_array_is_found_by_the_next_run(cluster, klass):
    # SIGKILL leaves grade-class no chance to cancel its array: the next run
    # on the same results folder must not submit a second one beside it.
    out = os.path.join(os.path.dirname(klass), "out-killed")
    p, job, lines = start(cluster, grade_class(klass, out))
    p.kill()
    finish(p, lines, 30)
    r = cluster.run(grade_class(klass, out), timeout=60)
    assert r.returncode == 2, r.stderr
    assert f"Slurm job {job} of an earlier run is still grading into {out}" in r.stderr, r.stderr
    assert f"scancel {job}" in r.stderr and "submitted" not in r.stderr
    assert cluster.run(["scancel", job]).returncode == 0
    end = time.monotonic() + 60
    while not all(s in ("CANCELLED", "COMPLETED") for s in task_states(cluster, job).values()):
        assert time.monotonic() < end, task_states(cluster, job)
        time.sleep(0.2)
    # Ended: the next run goes on (to sbatch, told to refuse here).
    r = cluster.run(grade_class(klass, out, "--sbatch-option=--partition=no-such-partition"), timeout=60)
    assert "of an earlier run" not in r.stderr and "sbatch refused the array" in r.stderr, r.stderr
    assert processes_under(klass) == []


@pytest.mark.skipif(not os.environ.get("RELAYLAB_SLURM_WAIT"),
                    reason="--slurm-wait's bound is a minute at least: make selftest runs it (RELAYLAB_SLURM_WAIT=1)")
def test_the_wait_bound_cancels_the_array(cluster, klass):
    out = os.path.join(os.path.dirname(klass), "out-wait")
    # Held by its begin time, the array cannot end within the wait.
    t0 = time.monotonic()
    r = cluster.run(grade_class(klass, out, "--slurm-wait", "1", "--sbatch-option=--begin=now+1hour"), timeout=110)
    took = time.monotonic() - t0
    assert r.returncode == 2, r.stderr
    job = re.search(r"Slurm job (\d+) submitted", r.stderr).group(1)
    assert f"Slurm job {job} had not ended after 1 min (--slurm-wait): cancelled" in r.stderr, r.stderr
    assert 60 <= took < 100, took
    states = task_states(cluster, job)
    assert all(s == "CANCELLED" for s in states.values()), states
    rows = known_class.read_csv(os.path.join(out, "grades.csv"))
    assert any(f"Slurm job {job} had not ended after 1 min and was cancelled" in v["feedback"] for v in rows.values())


def test_sbatch_refusal_is_said_and_results_are_written(cluster, klass):
    out = os.path.join(os.path.dirname(klass), "out-refused")
    r = cluster.run(grade_class(klass, out, "--sbatch-option=--partition=no-such-partition"), timeout=120)
    assert r.returncode == 2, r.stderr
    assert "sbatch refused the array" in r.stderr and "partition" in r.stderr.lower(), r.stderr
    rows = known_class.read_csv(os.path.join(out, "grades.csv"))
    assert rows and all(v["verdict"] in ("NOT-GRADED", "MISSING") for v in rows.values())
    assert any("the Slurm job was not submitted" in v["feedback"] for v in rows.values())


@pytest.mark.parametrize("args, message", [
    (["--slurm", "--student", "x"], "--slurm grades a CLASS_DIR"),
    (["--slurm-wait", "5"], "go with --slurm"),
    (["--sbatch-option", "partition=x", "--slurm"], "--sbatch-option takes one sbatch option"),
])
def test_slurm_options_are_checked(tmp_path, args, message):
    argv = [os.path.join(BIN, "grade-class"), "--out", str(tmp_path / "o")] + args
    if "--student" not in args:
        argv.insert(1, str(tmp_path))
    r = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and message in r.stderr, r.stderr
