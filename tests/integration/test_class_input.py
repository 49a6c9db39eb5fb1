# What an instructor hands grade-class and opens afterwards (issue 34, items
# 3 and 4). grades.csv is opened in a spreadsheet: folder names such as
# +1+1, -2+3 and @A1 are valid roster names, and a cell that begins with
# = + - @ (or tab, CR) would be evaluated as a formula; such a cell now
# begins with ' (OWASP's rule). The roster is read whole before grading: a
# folder with two ids or an id given to two folders stops the batch naming
# the line (before: both graded as S1, one deployment shared; a folder
# listed twice took its first id without a word); a UTF-8 byte order mark
# (a spreadsheet's "CSV UTF-8") is a warning and no longer hides the first
# line's folder; blank and repeated lines are warnings naming the line.
import csv
import json
import os
import shutil
import subprocess
import tempfile

import pytest

from conftest import REPO, bin_path

GOOD_RETRY = os.path.join(REPO, "tests", "configs", "good", "lab-retry.json")


@pytest.fixture
def base():
    d = tempfile.mkdtemp(prefix="relaylab-class-input-")
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def retry_student(cls, name):
    d = os.path.join(cls, name, "retry")
    os.makedirs(d)
    shutil.copy(GOOD_RETRY, os.path.join(d, "config.json"))
    with open(os.path.join(d, ".relaylab"), "w") as f:
        f.write("exercises retry\nlang json\nsubmission config.json\nvariant \n")


def grade_class(cls, out, *extra):
    return subprocess.run([bin_path("grade-class"), cls, "--out", out, "--exercises", "retry/check", "--quiet",
                           *extra], capture_output=True, text=True, timeout=240)


def test_grades_csv_cells_never_begin_a_formula(base):
    cls, out = os.path.join(base, "class"), os.path.join(base, "out")
    names = ["+1+1", "-2+3", "@A1", "amy"]
    for n in names:
        retry_student(cls, n)
    subprocess.run(["chmod", "-R", "o+rX", base], check=True)
    p = grade_class(cls, out)
    assert p.returncode == 0, p.stderr
    with open(os.path.join(out, "grades.csv"), newline="") as f:
        rows = list(csv.reader(f))
    students = [r[0] for r in rows[1:]]
    assert sorted(students) == sorted(["'+1+1", "'-2+3", "'@A1", "amy"]), rows
    for r in rows:
        for cell in r:
            assert not cell or cell[0] not in "=+-@\t\r", (cell, r)
    assert {r[3] for r in rows[1:]} == {"PASS"}, rows
    # Their results folders keep the names as they are.
    for n in names:
        assert os.path.isfile(os.path.join(out, n, "results.json")), n


def roster_class(base, roster_text):
    cls, out = os.path.join(base, "class"), os.path.join(base, "out")
    if not os.path.isdir(cls):
        for n in ("alice", "bob"):
            retry_student(cls, n)
        subprocess.run(["chmod", "-R", "o+rX", base], check=True)
    roster = os.path.join(base, "roster.csv")
    with open(roster, "wb") as f:
        f.write(roster_text)
    shutil.rmtree(out, ignore_errors=True)
    return grade_class(cls, out, "--roster", roster), out


@pytest.mark.parametrize("text,line,why", [
    (b"alice,S1\nbob,S1\n", 2, "the id S1 is given to bob too (line 1)"),
    (b"folder,id\nalice,S1\nbob,S2\nalice,S3\n", 4, "the folder alice is listed again"),
], ids=["shared-id", "folder-twice"])
def test_a_roster_that_cannot_be_read_one_way_stops_the_batch(base, text, line, why):
    p, out = roster_class(base, text)
    assert p.returncode == 2, p.stderr
    assert f"line {line}: {why}" in p.stderr, p.stderr
    assert not os.path.exists(os.path.join(out, "grades.csv"))


def test_a_spreadsheets_roster_is_read_with_warnings_naming_the_lines(base):
    # "CSV UTF-8": a byte order mark, CRLF, a blank line, a repeated line.
    p, out = roster_class(base, b"\xef\xbb\xbfalice,S1\r\n\r\nbob,S2\r\nbob,S2\r\n")
    assert p.returncode == 0, p.stderr
    assert "line 1: it begins with a UTF-8 byte order mark" in p.stderr, p.stderr
    assert "line 2: blank" in p.stderr and "line 4: repeats line 3" in p.stderr, p.stderr
    # The first line's folder is found: no "not in the roster" for alice.
    assert "not in the roster" not in p.stderr, p.stderr
    rows = {r[0]: r for r in csv.reader(open(os.path.join(out, "grades.csv"), newline=""))}
    assert rows["alice"][3] == "PASS" and rows["bob"][3] == "PASS", rows
    # alice was graded as S1, the roster's id (the grader's --student).
    args = open(os.path.join(out, "alice", "retry.args")).read().split("\n")
    assert "--student" in args and args[args.index("--student") + 1] == "S1", args
