# A student's folder swapped, while it is graded, for a symlink to a
# classmate's (issue 34, item 1). A background thread exchanges the folder
# and a symlink to the classmate's every few milliseconds (renameat2's
# RENAME_EXCHANGE: the name always exists, as a folder or as the link).
# Before the fix the grader checked the path once and then resolved it again
# (the sandbox's view, the config read, grade-class's working folder), and
# the student was graded as the classmate: a config that FAILs got the
# classmate's PASS, a relay that exits at once the classmate's PASS. Now the
# folder is opened once and everything is built from that handle: each
# grading is of the folder as it was checked (the student's own work), or is
# refused because the name was a link at that moment. Never the classmate's.
import ctypes
import os
import shutil
import subprocess
import tempfile
import threading
import time

import pytest

from conftest import REPO, SUBMISSIONS, bin_path, run_grader

GOOD_RETRY = os.path.join(REPO, "tests", "configs", "good", "lab-retry.json")
AT_FDCWD = -100
RENAME_EXCHANGE = 2
_libc = ctypes.CDLL(None, use_errno=True)


def exchange(a, b):
    if _libc.renameat2(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e), a)


class Swapper:
    """Exchanges |folder| and |link| every |period_s| until stopped; leaves
    |folder| a folder again at the end."""

    def __init__(self, folder, link, period_s=0.003):
        self.folder, self.link, self.period_s = folder, link, period_s
        self.swaps = 0
        self.stop_flag = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)

    def loop(self):
        while not self.stop_flag.is_set():
            exchange(self.folder, self.link)
            self.swaps += 1
            time.sleep(self.period_s)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop_flag.set()
        self.thread.join(10)
        if os.path.islink(self.folder):
            exchange(self.folder, self.link)
        assert os.path.isdir(self.folder) and not os.path.islink(self.folder)


@pytest.fixture
def world():
    """A folder nobody can read into (the sandbox runs submissions as nobody)."""
    base = tempfile.mkdtemp(prefix="relaylab-swap-")
    os.chmod(base, 0o755)
    yield base
    shutil.rmtree(base, ignore_errors=True)


def run(argv, cwd, timeout=120):
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def refused_as_link(text):
    # The folder named a link when the grader opened it, or a word of the
    # command led out of it when it was checked (the name was the link).
    return "is a symbolic link, not a folder: not followed" in text or "leads outside" in text


@pytest.mark.parametrize("named", ["F", "./F"], ids=["as-prefix", "other-spelling"])
def test_a_config_folder_swapped_mid_grading_is_never_graded_as_the_classmates(world, named):
    mine, theirs = os.path.join(world, "F"), os.path.join(world, "G")
    os.makedirs(mine)
    os.makedirs(theirs)
    with open(os.path.join(mine, "retry.json"), "w") as f:
        f.write("{ not json\n")  # FAILs check
    shutil.copy(GOOD_RETRY, os.path.join(theirs, "retry.json"))  # PASSes check
    os.symlink("G", os.path.join(world, "L"))
    subprocess.run(["chmod", "-R", "o+rX", world], check=True)
    out = os.path.join(world, "results.json")
    # "./F" with "F/retry.json": the config is not named below --dir as
    # given, so the grader places it by resolving the name, which a swap
    # can race; it must still be read against the folder it holds.
    argv = ["retry", "--only", "check", "--dir", named, "--submission", "F/retry.json", "--json", out, "--quiet"]
    verdicts = {}
    with Swapper(mine, os.path.join(world, "L")) as sw:
        for _ in range(40):
            p = run_grader(*argv, cwd=world, timeout=120)
            said = p.out + p.err
            res = p.results
            if res["tests"]:
                v = res["tests"][0]["extra_data"]["verdict"]
                fb = res["tests"][0]["extra_data"]["feedback"]
                assert v == "FAIL", (v, said)  # PASS: the classmate's config
                assert "not valid JSON" in fb or "leading out of the submission's folder" in fb, res
            else:
                v = "refused"
                assert p.rc == 2 and refused_as_link(said), said
            verdicts[v] = verdicts.get(v, 0) + 1
    assert sw.swaps > 100, sw.swaps
    # Both outcomes must have happened, or the swap did not race the grader.
    assert verdicts.get("FAIL", 0) >= 1, verdicts


def relay_of(folder, good):
    os.makedirs(folder)
    path = os.path.join(folder, "relay.py")
    if good:
        # relay_good.py, its protocol stubs from the kit's build/gen (shown in
        # the sandbox) rather than relative to the tests' folder.
        text = open(os.path.join(SUBMISSIONS, "relay_good.py")).read()
        gen = os.path.realpath(os.path.join(os.path.dirname(bin_path("grader")), "..", "build", "gen", "py"))
        if not os.path.isdir(gen):  # a sanitizer build (build/address/bin): the kit is the checkout
            gen = os.path.join(REPO, "build", "gen", "py")
        marker = 'sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", ' \
                 '"gen", "py"))'
        assert marker in text
        text = text.replace(marker, f"sys.path.insert(0, {gen!r})")
    else:
        text = "import sys\nsys.exit(3)\n"  # exits at once: NOT-READY
    with open(path, "w") as f:
        f.write(text)


@pytest.mark.timeout(300)
def test_a_relay_folder_swapped_mid_grading_is_never_graded_as_the_classmates(world):
    mine, theirs = os.path.join(world, "F"), os.path.join(world, "G")
    relay_of(mine, good=False)
    relay_of(theirs, good=True)
    os.symlink("G", os.path.join(world, "L"))
    subprocess.run(["chmod", "-R", "o+rX", world], check=True)
    out = os.path.join(world, "results.json")
    argv = ["deadline", "--only", "shrinks", "--dir", "F", "--submission", "python3 F/relay.py", "--json", out,
            "--quiet"]
    # The classmate's relay passes when graded on its own: a PASS below
    # would be the classmate's work.
    p = run_grader(*argv[:3], "--dir", "G", "--submission", "python3 G/relay.py", "--json", out, "--quiet", cwd=world,
                   timeout=120)
    assert p.results["tests"][0]["extra_data"]["verdict"] == "PASS", p.out + p.err
    verdicts = {}
    with Swapper(mine, os.path.join(world, "L")) as sw:
        for _ in range(11):
            p = run_grader(*argv, cwd=world, timeout=120)
            said = p.out + p.err
            res = p.results
            if res["tests"]:
                v = res["tests"][0]["extra_data"]["verdict"]
                assert v == "NOT-READY", (v, said)
                assert "exited with status 3" in res["tests"][0]["extra_data"]["feedback"], res
            else:
                v = "refused"
                assert p.rc == 2 and refused_as_link(said), said
            verdicts[v] = verdicts.get(v, 0) + 1
    assert sw.swaps > 100, sw.swaps
    assert verdicts.get("NOT-READY", 0) >= 1, verdicts


def retry_starter(student, config_text):
    d = os.path.join(student, "retry")
    os.makedirs(d)
    with open(os.path.join(d, "config.json"), "w") as f:
        f.write(config_text)
    with open(os.path.join(d, ".relaylab"), "w") as f:
        f.write("exercises retry\nlang json\nsubmission config.json\nvariant \n")


@pytest.mark.timeout(300)
def test_grade_class_grades_a_swapped_student_folder_as_checked_or_refuses_it(world):
    cls = os.path.join(world, "class")
    alice, bob = os.path.join(cls, "alice"), os.path.join(cls, "bob")
    retry_starter(alice, "{ not json\n")
    retry_starter(bob, open(GOOD_RETRY).read())
    link = os.path.join(cls, ".swap")  # hidden: not a student of its own
    os.symlink("bob", link)
    subprocess.run(["chmod", "-R", "o+rX", world], check=True)
    seen = {}
    with Swapper(alice, link) as sw:
        for i in range(6):
            out = os.path.join(world, f"out{i}")
            p = run([bin_path("grade-class"), cls, "--out", out, "--exercises", "retry/check", "--quiet"], world,
                    timeout=240)
            assert p.returncode == 0, p.stderr
            with open(os.path.join(out, "grades.csv")) as f:
                rows = [line.split(",", 4) for line in f.read().splitlines()[1:]]
            got = {r[0]: r[3] for r in rows}
            assert got.get("bob") == "PASS", (got, p.stderr)
            # Alice's own config FAILs; the classmate's would PASS.
            assert got.get("alice") in ("FAIL", "ERROR"), (got, p.stderr)
            if got["alice"] == "ERROR":
                text = open(os.path.join(out, "grades.csv")).read()
                assert "symlink" in text, text
            seen[got["alice"]] = seen.get(got["alice"], 0) + 1
    assert sw.swaps > 50, sw.swaps
    assert seen.get("FAIL", 0) >= 1, seen
