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
import html
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


# ---- every identity stated (item 2) ----


def autograder_tree(base, name, metadata, marker_student="bob1"):
    """A fake /autograder: a retry folder `lab init` made for |marker_student|,
    and Gradescope's metadata (None: no file)."""
    root = os.path.join(base, name)
    d = os.path.join(root, "submission", "retry")
    os.makedirs(d)
    shutil.copy(GOOD_RETRY, os.path.join(d, "config.json"))
    with open(os.path.join(d, ".relaylab"), "w") as f:
        f.write(f"exercises retry\nlang json\nsubmission config.json\nstudent {marker_student}\n")
    if metadata is not None:
        with open(os.path.join(root, "submission_metadata.json"), "w") as f:
            json.dump(metadata, f)
    env = dict(os.environ, RELAYLAB_AUTOGRADER_ROOT=root,
               RELAYLAB_KIT=os.path.dirname(os.path.dirname(bin_path("grader"))), RELAYLAB_EXERCISES="retry/check")
    r = subprocess.run([os.path.join(REPO, "scripts", "gradescope", "run_autograder")], env=env,
                       capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr
    return json.load(open(os.path.join(root, "results", "results.json"))), r.stderr


@pytest.mark.parametrize("user,graded_as,source,why", [
    ({"sid": "s1234567", "email": "amy@example.edu"}, "s1234567", "sid", None),
    # True is not the id "True": a sid that is not a string is ignored.
    ({"sid": True, "email": "amy@example.edu"}, "amy@example.edu", "email", "sid is not a string (bool)"),
    ({"sid": 12345, "email": "amy@example.edu"}, "amy@example.edu", "email", "sid is not a string (int)"),
    # No sid, an email the id rule refuses: the folder's .relaylab, said so.
    ({"email": "o'brien@example.edu"}, "bob1", "marker", "email is not a usable id"),
], ids=["sid", "sid-true", "sid-number", "bad-email"])
def test_results_say_which_id_was_graded_and_why(base, user, graded_as, source, why):
    os.chmod(base, 0o755)
    res, said = autograder_tree(base, "ag", {"users": [user]})
    tops = [res["extra_data"]] + [t["extra_data"] for t in res["tests"]]
    assert res["tests"], res
    for x in tops:
        assert x["graded_as"] == graded_as, (x, said)
        assert x["identity_from"] == source, x
        if why:
            assert why in x["identity_note"], x
        else:
            assert "identity_note" not in x, x
    assert "True" not in json.dumps(res)
    # What the student reads first says it too (Gradescope's HTML output).
    shown = html.unescape(res["output"])
    assert shown.startswith(f'<p>Graded as "{graded_as}" (from '), shown[:400]
    if why:
        assert why in shown, shown[:400]
