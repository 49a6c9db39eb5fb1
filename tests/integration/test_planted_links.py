# No write through a planted link (issue 34, item 5). The grader and
# grade-class run as root and write results where a hand may have planted
# symbolic links: --json, --html, grade-class's --results and everything it
# writes into --out (grades.csv, class.html, summary.txt, each student's
# results.json, .args and .log). Every such file is made fresh (mkstemp
# beside it, renamed over it; a log unlinked and made O_EXCL|O_NOFOLLOW), so
# a link at FILE or FILE.tmp is replaced, never followed: the file it leads
# to keeps its bytes. Before the fix --html, grade-class's JSON writer (the
# upload report behind --results), class.html, .args and .log followed them.
import json
import os
import shutil
import subprocess
import tempfile

import pytest

from conftest import REPO, bin_path, run_grader

GOOD_RETRY = os.path.join(REPO, "tests", "configs", "good", "lab-retry.json")
PRECIOUS = "precious\n"


@pytest.fixture
def base():
    d = tempfile.mkdtemp(prefix="relaylab-links-")
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def victim(base, name):
    path = os.path.join(base, "victims", name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(PRECIOUS)
    return path


def plant(link, target):
    os.makedirs(os.path.dirname(link), exist_ok=True)
    os.symlink(target, link)


def untouched(paths):
    for p in paths:
        with open(p) as f:
            assert f.read() == PRECIOUS, p


def test_grader_json_and_html_never_write_through_links(base):
    out, page = os.path.join(base, "results.json"), os.path.join(base, "page.html")
    victims = []
    for name in ("results.json", "results.json.tmp", "page.html", "page.html.tmp"):
        v = victim(base, name)
        plant(os.path.join(base, name), v)
        victims.append(v)
    p = run_grader("retry", "--submission", GOOD_RETRY, "--only", "check", "--json", out, "--html", page, "--quiet",
                   timeout=120)
    said = p.out + p.err
    untouched(victims)
    # The links at the names themselves were replaced by the results.
    for f in (out, page):
        assert os.path.isfile(f) and not os.path.islink(f), said
    assert p.results["tests"][0]["extra_data"]["verdict"] == "PASS", said
    assert "<html" in open(page).read()


def retry_starter(student, name="retry"):
    d = os.path.join(student, name)
    os.makedirs(d)
    shutil.copy(GOOD_RETRY, os.path.join(d, "config.json"))
    with open(os.path.join(d, ".relaylab"), "w") as f:
        f.write("exercises retry\nlang json\nsubmission config.json\nvariant \n")


def test_grade_class_outputs_never_write_through_links(base):
    cls, out = os.path.join(base, "class"), os.path.join(base, "out")
    retry_starter(os.path.join(cls, "alice"))
    subprocess.run(["chmod", "-R", "o+rX", base], check=True)
    victims = []
    for rel in ("grades.csv", "grades.csv.tmp", "class.html", "class.html.tmp", "summary.txt",
                "alice/results.json", "alice/results.json.tmp", "alice/retry.log", "alice/retry.args",
                "alice/retry.json.tmp", "alice/retry.html.tmp"):
        v = victim(base, rel.replace("/", "_"))
        plant(os.path.join(out, rel), v)
        victims.append(v)
    p = subprocess.run([bin_path("grade-class"), cls, "--out", out, "--exercises", "retry/check", "--quiet"],
                       capture_output=True, text=True, timeout=240)
    assert p.returncode == 0, p.stderr
    untouched(victims)
    rows = open(os.path.join(out, "grades.csv")).read()
    assert "alice,retry,check,PASS" in rows, rows
    for rel in ("grades.csv", "class.html", "summary.txt", "alice/results.json", "alice/retry.log",
                "alice/retry.args"):
        f = os.path.join(out, rel)
        assert os.path.isfile(f) and not os.path.islink(f), rel


def test_a_student_folder_of_out_that_is_a_link_is_refused(base):
    cls, out, elsewhere = os.path.join(base, "class"), os.path.join(base, "out"), os.path.join(base, "elsewhere")
    retry_starter(os.path.join(cls, "alice"))
    subprocess.run(["chmod", "-R", "o+rX", base], check=True)
    os.makedirs(elsewhere)
    plant(os.path.join(out, "alice"), elsewhere)
    p = subprocess.run([bin_path("grade-class"), cls, "--out", out, "--exercises", "retry/check", "--quiet"],
                       capture_output=True, text=True, timeout=240)
    assert p.returncode == 2, p.stderr
    assert "cannot make" in p.stderr and "alice" in p.stderr, p.stderr
    assert os.listdir(elsewhere) == []


def test_an_upload_with_nothing_gradable_never_writes_results_through_links(base):
    upload = os.path.join(base, "submission")
    os.makedirs(upload)
    with open(os.path.join(upload, "notes.txt"), "w") as f:
        f.write("nothing of a starter\n")
    results = os.path.join(base, "results", "results.json")
    victims = []
    for name in ("results.json", "results.json.tmp"):
        v = victim(base, name)
        plant(os.path.join(base, "results", name), v)
        victims.append(v)
    out = os.path.join(base, "out")
    v = victim(base, "out_results.json.tmp")
    plant(os.path.join(out, "submission", "results.json.tmp"), v)
    victims.append(v)
    p = subprocess.run([bin_path("grade-class"), "--student", upload, "--out", out, "--results", results,
                        "--exercises", "retry", "--quiet"], capture_output=True, text=True, timeout=120)
    untouched(victims)
    assert os.path.isfile(results) and not os.path.islink(results), p.stderr
    res = json.load(open(results))
    assert res["tests"][0]["extra_data"]["verdict"] == "UPLOAD", res
