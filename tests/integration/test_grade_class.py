# Integration tests for bin/grade-class and the Gradescope autograder: a
# class of three known submissions (a good Python relay, the C relay's
# forward-timeout mistake, a config that turns retries off) graded on
# deadline and retry gets the verdicts tests/verdicts.json gives them, the
# same with --jobs 1 and with --jobs 2 after an interruption and a resume;
# run_autograder against a fake /autograder tree writes results.json for a
# good and a bad submission. The whole class of known submissions is
# measured in bench/results/class.md, not here.
import base64
import csv
import importlib.util
import glob
import json
import html.parser
import re
import urllib.parse
import xml.etree.ElementTree as ET
import os
import signal
import subprocess
import tempfile
import time
import zipfile

import pytest

from conftest import run_grader

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("RELAYLAB_BIN", os.path.join(ROOT, "bin"))
CLASS_ROWS = ["relay_good.py", "relay --mistake forward-timeout", "retry.disabled.json"]
EXERCISES = "deadline,retry"

_spec = importlib.util.spec_from_file_location("known_class", os.path.join(ROOT, "scripts", "known-class.py"))
known_class = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(known_class)


def open_tmpdir():
    """A folder user nobody can reach (the sandbox runs submissions as nobody)."""
    base = os.path.join(tempfile.gettempdir(), "relaylab-grade-class")
    os.makedirs(base, exist_ok=True)
    os.chmod(base, 0o755)
    path = tempfile.mkdtemp(dir=base)
    os.chmod(path, 0o755)
    return path


@pytest.fixture(scope="module")
def klass():
    dest = os.path.join(open_tmpdir(), "k")
    exp = known_class.build(dest, only=CLASS_ROWS)
    assert len(exp) == 3, exp
    yield dest
    subprocess.run(["rm", "-rf", os.path.dirname(dest)], check=False)


def sanitizer_build():
    return os.sep + "address" + os.sep in os.path.join(BIN, "")


def grade_class(dest, out, jobs, *extra):
    if sanitizer_build():
        # The class's C relay is the ASan build: its shadow memory counts in RLIMIT_DATA.
        extra = ("--memory-limit", "0", *extra)
    return [os.path.join(BIN, "grade-class"), os.path.join(dest, "class"), "--out", out, "--jobs", str(jobs),
            "--exercises", EXERCISES, "--variant-from", "marker", *extra]


def verdicts(out):
    return {k: (r["verdict"], r["points"]) for k, r in known_class.read_csv(os.path.join(out, "grades.csv")).items()}


def wait_for(cond, timeout_s, what):
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")


def processes_under(path):
    """Pids whose working folder or command line is under |path|."""
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


def test_jobs_and_resume_change_no_verdict(klass):
    # --jobs 2, interrupted once the first grading is complete, then resumed.
    out2 = os.path.join(os.path.dirname(klass), "out2")
    p = subprocess.Popen(grade_class(klass, out2, 2), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: any(f.endswith(".args") for _, _, fs in os.walk(out2) for f in fs), 120,
                 "the first complete grading")
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 2, err
    assert "run the same command again to resume" in err
    assert processes_under(klass) == [], "the interrupted batch left a process behind"
    # The interrupted batch's summary says it is partial and counts only what
    # was graded: the ungraded are NOT-GRADED rows, not failures.
    summary = open(os.path.join(out2, "summary.txt")).read()
    rows = known_class.read_csv(os.path.join(out2, "grades.csv"))
    gradings = {(k[0], k[1]) for k in rows}
    ungraded = {(k[0], k[1]) for k, v in rows.items() if v["verdict"] == "NOT-GRADED"}
    assert ungraded, "the batch was interrupted after its first grading: some must be left"
    assert f"partial: {len(gradings) - len(ungraded)} of {len(gradings)} gradings" in summary, summary
    for line in summary.splitlines():
        words = line.split()
        if len(words) == 5 and "/" in words[0] and words[1].isdigit():
            ex, sc = words[0].split("/")
            graded = [v for k, v in rows.items() if k[1:] == (ex, sc) and v["verdict"] != "NOT-GRADED"]
            assert sum(int(w) for w in words[1:4]) == len(graded), (line, summary)

    r = subprocess.run(grade_class(klass, out2, 2), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    kept = int(r.stderr.split(" kept from an earlier run")[0].rsplit("(", 1)[1])
    assert kept >= 1, r.stderr

    out1 = os.path.join(os.path.dirname(klass), "out1")
    r1 = subprocess.run(grade_class(klass, out1, 1), capture_output=True, text=True, timeout=300)
    assert r1.returncode == 0, r1.stderr

    assert known_class.check(klass, out1) == []
    assert known_class.check(klass, out2) == []
    # Graders side by side grade one scenario at a time; one grader alone
    # runs its lanes (grader/lanes.h): each grading's .args says which.
    for out, side_by_side in ((out1, False), (out2, True)):
        graded = glob.glob(os.path.join(out, "*", "*.args"))
        assert len(graded) >= 3, graded
        for path in graded:
            args = open(path).read().split("\n")
            assert ("--parallel" in args and args[args.index("--parallel") + 1] == "1") == side_by_side, args
    v1, v2 = verdicts(out1), verdicts(out2)
    assert v1 == v2
    assert len(v1) == 3 * (4 + 6)  # three students, every scenario of deadline and retry

    # One results.json a student, its score the CSV's, and the summary.
    for student in json.load(open(os.path.join(klass, "expect.json")))["students"]:
        res = json.load(open(os.path.join(out1, student, "results.json")))
        pts = sum(float(v[1]) for k, v in v1.items() if k[0] == student)
        assert res["score"] == pytest.approx(pts)
        assert len(res["tests"]) == 10
        assert all("extra_data" in t and t["status"] in ("passed", "failed") for t in res["tests"])
    summary = open(os.path.join(out1, "summary.txt")).read()
    assert "score histogram" in summary
    check_class_page(out1, json.load(open(os.path.join(klass, "expect.json")))["students"])
    # Two of three students fail one scenario each: no scenario is failed by
    # two, so the first counted wins; it must be one of the two failures.
    assert "most common failing scenario: deadline/shrinks" in summary or \
        "most common failing scenario: retry/" in summary


class _Page(html.parser.HTMLParser):
    def __init__(self, text):
        super().__init__()
        self.classes, self.links, self.tags = [], [], []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        self.classes.append(a.get("class"))
        if tag == "a":
            self.links.append(a.get("href"))


def check_class_page(out, students):
    """class.html: the histogram (one bar a tenth), a row per scenario
    with its pass rate, the forwarded timeout as deadline/shrinks'
    commonest feedback, and links to every student's pages, which exist."""
    text = open(os.path.join(out, "class.html")).read()
    page = _Page(text)
    assert page.classes.count("bin") == 10
    assert page.classes.count("scenario") == 4 + 6
    assert page.classes.count("student") == len(students)
    assert "script" not in page.tags
    shrinks = re.search(r"deadline/shrinks</td><td>.*?</td><td>(.*?)</td>", text)
    assert shrinks and "forwarded" in shrinks.group(1), text
    linked = 0
    for student in students:
        for ex in EXERCISES.split(","):
            href = urllib.parse.quote(student, safe="") + "/" + ex + ".html"
            # A link exactly where the grader wrote a page (a student
            # without the exercise's folder has none).
            assert (href in page.links) == os.path.exists(os.path.join(out, student, ex + ".html")), href
            linked += href in page.links
    assert linked >= len(students)
    ET.fromstring(re.search(r"<svg\b.*?</svg>", text, re.S).group(0))


def test_a_student_without_the_folder_is_missing(klass, tmp_path):
    cls = os.path.join(os.path.dirname(klass), "missing")
    os.makedirs(os.path.join(cls, "nobody-home", "empty"))
    out = os.path.join(os.path.dirname(klass), "out-missing")
    r = subprocess.run([os.path.join(BIN, "grade-class"), cls, "--out", out, "--exercises", EXERCISES],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    rows = known_class.read_csv(os.path.join(out, "grades.csv"))
    assert len(rows) == 10 and {r["verdict"] for r in rows.values()} == {"MISSING"}
    res = json.load(open(os.path.join(out, "nobody-home", "results.json")))
    assert res["score"] == 0 and res["max_score"] > 0


def test_a_folder_of_classes_is_warned_about(klass):
    # DEST instead of DEST/class (known-class.py's layout): the one
    # "student", class, holds student folders whose own folders carry the
    # .relaylab. Graded all MISSING, with a warning naming the class inside,
    # and a summary that does not call it a pass.
    dest = os.path.join(os.path.dirname(klass), "folder-of-classes")
    retry = os.path.join(dest, "class", "alice", "retry")
    os.makedirs(retry)
    with open(os.path.join(retry, ".relaylab"), "w") as f:
        f.write("exercises retry\nlang json\nsubmission config.json\nvariant \n")
    out = os.path.join(os.path.dirname(klass), "out-folder-of-classes")
    r = subprocess.run([os.path.join(BIN, "grade-class"), dest, "--out", out, "--exercises", "retry"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "warning: student folder class holds no folder with a .relaylab, but its subfolders do" in r.stderr
    assert "class/alice/retry/.relaylab" in r.stderr and f"{dest}/class" in r.stderr, r.stderr
    assert "every graded scenario passed" not in r.stdout and "nothing was graded" in r.stdout, r.stdout


def test_bad_usage_says_what_to_do(klass):
    r = subprocess.run([os.path.join(BIN, "grade-class"), os.path.join(klass, "class"), "--out", "/tmp/x",
                        "--exercises", "no-such"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "no exercise 'no-such'" in r.stderr


# ---- Gradescope ----

def fake_autograder(klass, row_name):
    """A fake /autograder whose submission is the known submission |row_name|
    as a student uploads it: a folder `lab init` made, with its .relaylab
    (graded on deadline alone: RELAYLAB_EXERCISES below)."""
    root = os.path.join(os.path.dirname(klass), "ag-" + row_name.replace(".", "-"))
    rows = json.load(open(os.path.join(ROOT, "tests", "verdicts.json")))["submissions"]
    row = [r for r in rows if r["name"] == row_name][0]
    sub = os.path.join(root, "submission")
    submission = known_class.make_sub(row, sub)
    with open(os.path.join(sub, ".relaylab"), "w") as f:
        f.write(f"exercises deadline cancel\nlang python\nsubmission {submission}\nvariant \n")
    return root


def run_autograder(root, **env_extra):
    env = dict(os.environ, RELAYLAB_AUTOGRADER_ROOT=root, RELAYLAB_KIT=os.path.dirname(BIN),
               RELAYLAB_EXERCISES="deadline", **env_extra)
    r = subprocess.run([os.path.join(ROOT, "scripts", "gradescope", "run_autograder")], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.load(open(os.path.join(root, "results", "results.json")))


class HtmlText(html.parser.HTMLParser):
    """The text of an HTML fragment, its tags and its <img> sources."""

    def __init__(self, text):
        super().__init__()
        self.tags, self.imgs, self.parts = [], [], []
        self.feed(text)
        self.text = "".join(self.parts)

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "img":
            self.imgs.append(dict(attrs).get("src", ""))

    def handle_data(self, data):
        self.parts.append(data)


def test_run_autograder_grades_a_good_and_a_bad_submission(klass):
    good_root = fake_autograder(klass, "relay_good.py")
    # Gradescope's metadata: the results name the id graded, not the folder.
    with open(os.path.join(good_root, "submission_metadata.json"), "w") as f:
        json.dump({"users": [{"email": "amy@example.edu", "sid": "s1234567", "name": "Amy"}]}, f)
    good = run_autograder(good_root)
    bad = run_autograder(fake_autograder(klass, "relay_forward_timeout.py"))
    assert good["max_score"] == 10 and good["score"] == 10, good["output"]
    assert bad["max_score"] == 10 and bad["score"] == 6, bad["output"]
    assert good["extra_data"]["student"] == "s1234567", good["extra_data"]
    shrinks = [t for t in bad["tests"] if t["extra_data"]["scenario"] == "shrinks"][0]
    assert {t["extra_data"]["verdict"] for t in good["tests"]} == {"PASS"}
    # What Gradescope shows: HTML, each test with its feedback and picture.
    assert bad["output_format"] == "html" and "deadline" in HtmlText(bad["output"]).text
    assert {t.get("output_format") for t in bad["tests"] + good["tests"]} == {"html"}
    page = HtmlText(shrinks["output"])
    assert shrinks["status"] == "failed" and "forwarded unchanged" in page.text
    assert "script" not in page.tags and len(page.imgs) == 1, shrinks["output"][:400]
    svg = base64.b64decode(page.imgs[0].split("base64,", 1)[1])
    ET.fromstring(svg)  # a whole SVG, parsed
    assert b"client&#39;s deadline" in svg
    for t in good["tests"]:
        assert len(HtmlText(t["output"]).imgs) == 1, (t["name"], t["output"][:300])


def test_run_autograder_on_an_upload_for_another_exercise_says_what_it_found(klass):
    # A flow folder sent to a deadline assignment: MISSING, and the feedback
    # names the flow folder that was found.
    root = os.path.join(os.path.dirname(klass), "ag-wrong")
    sub = os.path.join(root, "submission")
    os.makedirs(sub)
    with open(os.path.join(sub, "streamer.py"), "w") as f:
        f.write("print('a streamer')\n")
    with open(os.path.join(sub, ".relaylab"), "w") as f:
        f.write("exercises flow\nlang python\nsubmission python3 streamer.py\nvariant \n")
    res = run_autograder(root)
    assert res["score"] == 0 and len(res["tests"]) == 4, res
    for t in res["tests"]:
        assert t["extra_data"]["verdict"] == "MISSING"
        assert "found instead" in t["output"] and "a folder for flow" in t["output"], t["output"]


def test_a_kit_without_node_packages_is_an_error_not_the_students(klass):
    # A Node upload without node_modules, graded by a kit built without the
    # packages the starters pin (a plain `make`): the kit is at fault, so
    # every test is an ERROR naming the kit and the fix, never NOT-READY.
    base = os.path.dirname(klass)
    home = os.path.join(base, "kit-without-node")
    os.makedirs(home)
    for d in ("grader", "lab", "starters"):
        os.symlink(os.path.join(ROOT, d), os.path.join(home, d))
    root = os.path.join(base, "ag-node")
    sub = os.path.join(root, "submission")
    r = subprocess.run([os.path.join(BIN, "lab"), "init", "deadline", "--lang", "node", sub],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    # What students upload: their folder without node_modules (lab init may have made it).
    subprocess.run(["rm", "-rf", os.path.join(sub, "node_modules")], check=True)
    res = run_autograder(root, RELAYLAB_HOME=home)
    assert res["score"] == 0 and len(res["tests"]) == 4, res
    for t in res["tests"]:
        assert t["extra_data"]["verdict"] == "ERROR", t
        assert "has no Node packages" in t["output"] and home in t["output"], t["output"]
        assert "make node-deps" in t["output"] and "@grpc/grpc-js" in t["output"]


def test_run_autograder_without_a_submission_says_why(klass):
    root = os.path.join(os.path.dirname(klass), "ag-empty")
    os.makedirs(root)
    res = run_autograder(root)
    assert res["tests"] == [] and "no submission folder" in res["output"]


def test_gradescope_zip_has_what_gradescope_runs(tmp_path):
    build = os.path.join(ROOT, "scripts", "gradescope", "build.sh")
    # An assignment's exercises are asked for: none given is an error that
    # says how, all nine only when asked.
    env = {k: v for k, v in os.environ.items() if k != "EXERCISES"}
    r = subprocess.run(["sh", build, str(tmp_path)], capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)
    assert r.returncode == 2 and "EXERCISES=" in r.stderr and not list(tmp_path.iterdir()), r.stderr
    r = subprocess.run(["sh", build, str(tmp_path)], capture_output=True, text=True, timeout=120, cwd=ROOT,
                       env=dict(env, EXERCISES="deadline,no-such"))
    assert r.returncode == 2 and "no exercise 'no-such'" in r.stderr, r.stderr
    r = subprocess.run(["sh", build, str(tmp_path)], capture_output=True, text=True, timeout=120, cwd=ROOT,
                       env=dict(env, EXERCISES="deadline,cancel"))
    assert r.returncode == 0, r.stderr
    with zipfile.ZipFile(tmp_path / "relaylab-gradescope-deadline-cancel.zip") as z:
        conf = z.read("gradescope.conf").decode()
        assert re.search(r"^EXERCISES=deadline,cancel$", conf, re.M), conf
        names = set(z.namelist())
        assert {"setup.sh", "run_autograder", "gradescope.conf", "Dockerfile", "Makefile",
                "grade_class/main.c", "grader/rubric.json"} <= names
        assert not any(n.startswith(("bin/", "build/")) or "node_modules" in n for n in names)
        mode = z.getinfo("run_autograder").external_attr >> 16
        assert mode & 0o111, "run_autograder must be executable"


# ---- a hostile hand-in ----

GOOD_RETRY = os.path.join(ROOT, "tests", "configs", "good", "lab-retry.json")


def retry_folder(student_dir, name="retry"):
    """A folder `lab init retry` made, holding a config that passes retry."""
    d = os.path.join(student_dir, name)
    os.makedirs(d)
    with open(GOOD_RETRY) as src, open(os.path.join(d, "config.json"), "w") as dst:
        dst.write(src.read())
    with open(os.path.join(d, ".relaylab"), "w") as f:
        f.write("exercises retry\nlang json\nsubmission config.json\nvariant \n")
    return d


def test_a_hostile_class_is_graded_in_bounded_time(klass):
    # Every hand-in below once broke the batch or graded a classmate's work:
    # zed's folder and erin's retry folder are symlinks to bob's (10/10
    # as bob's work), frank's config is bob's, gina's .relaylab is /dev/zero
    # (100 % CPU, deaf to SIGTERM), hank's a FIFO (blocked), mo's run leads to
    # bob's, "ivan smith" and an escape sequence in a name (exit 2, nobody
    # graded). Each gets rows saying why; alice and bob are graded.
    cls = os.path.join(os.path.dirname(klass), "hostile")
    for s in ("alice", "bob", "frank", "gina", "hank", "ivan smith", "esc\x1b[31mred", "new\nline"):
        retry_folder(os.path.join(cls, s))
    os.makedirs(os.path.join(cls, "erin"))
    os.symlink("../bob/retry", os.path.join(cls, "erin", "retry"))
    os.symlink("bob", os.path.join(cls, "zed"))
    os.unlink(os.path.join(cls, "frank", "retry", "config.json"))
    os.symlink("../../bob/retry/config.json", os.path.join(cls, "frank", "retry", "config.json"))
    os.unlink(os.path.join(cls, "gina", "retry", ".relaylab"))
    os.symlink("/dev/zero", os.path.join(cls, "gina", "retry", ".relaylab"))
    os.unlink(os.path.join(cls, "hank", "retry", ".relaylab"))
    os.mkfifo(os.path.join(cls, "hank", "retry", ".relaylab"))
    os.makedirs(os.path.join(cls, "mo", "dl"))
    with open(os.path.join(cls, "bob", "run"), "w") as f:
        f.write("#!/bin/sh\nexec python3 relay.py\n")
    os.chmod(os.path.join(cls, "bob", "run"), 0o755)
    os.symlink("../../bob/run", os.path.join(cls, "mo", "dl", "run"))
    with open(os.path.join(cls, "mo", "dl", ".relaylab"), "w") as f:
        f.write("exercises deadline\nlang python\nsubmission ./run\nvariant \n")
    subprocess.run(["chmod", "-R", "o+rX", cls], check=True)
    out = os.path.join(os.path.dirname(klass), "out-hostile")
    # deadline too: mo's refused run is a deadline folder; everyone else has
    # none (MISSING, nothing run), so only alice's and bob's retry is graded.
    r = subprocess.run([os.path.join(BIN, "grade-class"), cls, "--out", out, "--exercises", "retry,deadline",
                        "--jobs", "2"], capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr
    rows = known_class.read_csv(os.path.join(out, "grades.csv"))

    def verdicts_of(student, ex="retry"):
        return {v["verdict"] for (s, e, _), v in rows.items() if s == student and e == ex}

    def feedback_of(student, ex="retry"):
        return {v["feedback"] for (s, e, _), v in rows.items() if s == student and e == ex}

    assert verdicts_of("alice") == {"PASS"} and verdicts_of("bob") == {"PASS"}, r.stderr
    refused = {  # what the rows and the stderr line must say: the folder or file, and why
        "zed": ("the student folder zed is a symlink",),
        "erin": ("erin/retry is a symlink that leads outside erin's folder",),
        "frank": ("frank/retry/config.json", "symbolic link leading out"),
        "gina": ("gina/retry/.relaylab", "symbolic link leading out"),
        "hank": ("hank/retry/.relaylab", "FIFO"),
        "ivan\\x20smith": ("the student folder 'ivan\\x20smith' has a name the results cannot use",),
        "esc\\x1b\\x5b31mred": ("'esc\\x1b\\x5b31mred' has a name the results cannot use",),
        "new\\x0aline": ("'new\\x0aline' has a name the results cannot use",),
    }
    lines = r.stderr.splitlines()
    for student, why in refused.items():
        assert verdicts_of(student) == {"ERROR"}, (student, rows)
        assert all(w in fb for fb in feedback_of(student) for w in why), (student, feedback_of(student))
        assert any(all(w in line for w in why) for line in lines), (why, r.stderr)
    assert verdicts_of("mo", "deadline") == {"ERROR"}
    assert all("its './run' leads outside that folder" in fb for fb in feedback_of("mo", "deadline"))
    assert "\x1b" not in r.stderr and "\x1b" not in open(os.path.join(out, "grades.csv")).read()
    # The refused with a usable name get a results.json saying why; a name the
    # results cannot use gets no folder of --out.
    res = json.load(open(os.path.join(out, "erin", "results.json")))
    assert res["score"] == 0 and "leads outside" in res["tests"][0]["output"]
    assert sorted(os.listdir(out)) == sorted(["alice", "bob", "erin", "frank", "gina", "hank", "mo", "zed",
                                              "grades.csv", "summary.txt", "class.html"])

    # bin/grader refuses the same when handed the link itself (lab check and
    # Gradescope reach it without grade-class).
    for argv in (["--submission", os.path.join(cls, "erin", "retry", "config.json"),
                  "--dir", os.path.join(cls, "erin", "retry")],
                 ["--submission", os.path.join(cls, "frank", "retry", "config.json")]):
        g = run_grader("retry", "--quiet", *argv, grader=os.path.join(BIN, "grader"), timeout=60)
        said = g.out + g.err
        assert g.rc != 0, said
        assert "leads outside its folder: not followed" in said or "leading out of the submission's folder" in said, \
            said
