# Scores that mean the lesson was learned, where they leave the grader: a
# regression guard's points wait for its lesson (the rubric's "needs") in
# GitHub Classroom's autograding too, whose tests score one scenario each.
# (The grader's own points: tests/unit/grader/test_report.c; the starters
# and the empty config scoring 0: the rows with a "score" in
# tests/verdicts.json.)
import json
import os
import subprocess

from conftest import REPO

PYTHON = "/usr/bin/python3"


def test_classroom_runs_a_guard_with_the_lesson_it_needs():
    p = subprocess.run([PYTHON, os.path.join(REPO, "scripts", "ci", "classroom.py"), "--folder", "shutdown=relay",
                        "--folder", "balance=cfg", "--kit-url", "https://kit.invalid/k.tar.gz"],
                       capture_output=True, text=True, timeout=60, env={**os.environ})
    assert p.returncode == 0, p.stderr
    tests = {t["name"]: t for t in json.loads(p.stdout)["tests"]}
    with open(os.path.join(REPO, "grader", "rubric.json")) as f:
        rubric = json.load(f)
    assert "--only refuses-new,in-flight " in tests["shutdown/refuses-new"]["run"]
    assert tests["shutdown/refuses-new"]["points"] == rubric["shutdown"]["refuses-new"]["points"]
    assert "--only churn,fills " in tests["balance/churn"]["run"]
    # a lesson's own scenario runs alone
    assert "--only in-flight " in tests["shutdown/in-flight"]["run"]
    assert "--only fills " in tests["balance/fills"]["run"]
