# One verdict on every path (issue 22): the same folders, made by `lab init
# --student alice` (a Python relay, a Node streamer uploaded without its
# node_modules, an untouched C starter, an untouched Go starter, a keepalive config reasoned out for
# alice's deployment, a Python tunnel agent for coverage: a client that
# dials out, where the others are servers), go through `lab check`, `bin/grader`, grade-class
# (identity from --roster), Gradescope's run_autograder (a fake /autograder
# with submission_metadata.json) and the CI workflow's own grading step, and
# get the same verdict on each. A classmate's copy of the config, graded as
# the copier (bob) on grade-class and Gradescope, is judged in bob's
# deployment: it fails, and the feedback says so first with the command that
# makes the folder right. One cheap scenario a folder, and three gradings
# at once (each its own grader: --jobs changes no verdict, README.md), keep
# this small.
#
# Also Gradescope's uploads that are not what was expected: nothing gradable
# gets one entry naming what came and the hidden .relaylab; a config folder
# whose .relaylab was dropped is recognised by its file and says so.
import json
import os
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor

import pytest
import yaml

from conftest import run_grader

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("RELAYLAB_BIN", os.path.join(ROOT, "bin"))
KIT = os.path.dirname(BIN)


def _sanitized_kit():
    grader = os.path.join(BIN, "grader")
    with open(grader, "rb") as f:
        return b"__asan_init" in f.read()


# A kit is its bin/ beside its build/ (the Node packages, the stubs), as
# `lab init`, run_autograder and the CI step find it; `make check` builds
# its ASan programs into build/address/bin, a folder with no kit around it.
# The paths are the real build's; the ASan grader is judged by the rest.
pytestmark = pytest.mark.skipif(os.path.exists(os.path.join(BIN, "grader")) and _sanitized_kit(),
                                reason="every path grades with a kit's layout: the real build's, not make check's")

ALICE, BOB = "alice", "bob"
# Each folder's exercise and the one scenario every path grades it on.
SCENARIOS = {"py": ("deadline", "shrinks"), "node": ("flow", "stall"), "c": ("deadline", "shrinks"),
             "go": ("deadline", "shrinks"), "cfg": ("keepalive", "check")}
EXPECT = {"py": "PASS", "node": "FAIL", "c": "FAIL", "go": "FAIL", "cfg": "PASS"}
# The coverage folder (a Python tunnel agent: the client that dials out)
# goes every path too, in `make selftest` (RELAYLAB_ALL_PATHS_COVERAGE=1):
# its burst-uniform PASS got FAIL once on Gradescope's path with make
# test's four groups beside it (bench/results/soak.md), so it is not yet a
# verdict make test can hold.
if os.environ.get("RELAYLAB_ALL_PATHS_COVERAGE") == "1":
    SCENARIOS["cov"] = ("coverage", "burst-uniform")
    EXPECT["cov"] = "PASS"
ONLY = ",".join(sorted({f"{ex}/{sc}" for ex, sc in SCENARIOS.values()}))


def run(argv, timeout=180, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)


def open_tmpdir():
    """A folder user nobody can reach (the sandbox runs submissions as nobody)."""
    base = os.path.join(tempfile.gettempdir(), "relaylab-all-paths")
    os.makedirs(base, exist_ok=True)
    os.chmod(base, 0o755)
    path = tempfile.mkdtemp(dir=base)
    os.chmod(path, 0o755)
    return path


def open_up(path):
    for d, dirs, files in os.walk(path):
        os.chmod(d, 0o755)
        for f in files:
            p = os.path.join(d, f)
            if not os.path.islink(p):
                os.chmod(p, os.stat(p).st_mode | 0o444)


def deployments():
    world = json.load(open(os.path.join(ROOT, "grader", "worlds", "keepalive.json")))
    return {d["name"]: d for d in world["deployments"]}


def solution(d):
    """A keepalive config for deployment |d| (as test_grader_world derives
    it): pings above the servers' floor, well inside the idle timeout."""
    idle = d["intermediary"]["idle_timeout_ms"]
    floor = d["server"]["grpc.http2.min_ping_interval_without_data_ms"]
    return {"client": {"grpc.keepalive_time_ms": floor + (idle - floor) // 4, "grpc.keepalive_timeout_ms": 20000,
                       "grpc.keepalive_permit_without_calls": 1, "grpc.http2.max_pings_without_data": 0}}


def lab_init(base, name, *args):
    r = run([os.path.join(BIN, "lab"), "init", *args, "--student", ALICE, os.path.join(base, name)])
    assert r.returncode == 0, r.stdout + r.stderr
    return os.path.join(base, name), r.stdout


def set_exercises(folder, exercises):
    """The relay starters are for deadline and cancel; the CI step grades
    every exercise a marker lists, so these list the one graded here."""
    path = os.path.join(folder, ".relaylab")
    text = open(path).read()
    lines = [f"exercises {exercises}" if ln.startswith("exercises ") else ln for ln in text.splitlines()]
    open(path, "w").write("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def folders():
    packages = os.path.join(KIT, "build", "node-packages", "node_modules")
    assert os.path.isdir(packages), f"{packages} is missing: `make node-deps` installs the starters' Node packages"
    base = open_tmpdir()
    made = {}
    # npm ci and make take the time: side by side.
    with ThreadPoolExecutor(2) as pool:
        node = pool.submit(lab_init, base, "node", "flow", "--lang", "node")
        c = pool.submit(lab_init, base, "c", "deadline", "--lang", "c")
        made["node"], _ = node.result()
        made["c"], _ = c.result()
    made["go"], _ = lab_init(base, "go", "deadline", "--lang", "go")
    made["py"], _ = lab_init(base, "py", "deadline", "--lang", "python")
    # A known-good relay as the student's relay.py, its stubs from the folder's gen/.
    good = open(os.path.join(ROOT, "tests", "submissions", "relay_good.py")).read()
    old = 'os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "gen", "py")'
    assert old in good, "relay_good.py no longer finds its stubs as this test expects"
    open(os.path.join(made["py"], "relay.py"), "w").write(
        good.replace(old, 'os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen")'))
    set_exercises(made["py"], "deadline")
    if "cov" in SCENARIOS:
        # A known-good agent as the student's agent.py, the same way.
        made["cov"], _ = lab_init(base, "cov", "coverage", "--lang", "python")
        good = open(os.path.join(ROOT, "tests", "submissions", "coverage_good.py")).read()
        assert old in good, "coverage_good.py no longer finds its stubs as this test expects"
        open(os.path.join(made["cov"], "agent.py"), "w").write(
            good.replace(old, 'os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen")'))
    shutil.rmtree(os.path.join(made["node"], "node_modules"))  # what students upload
    set_exercises(made["c"], "deadline")
    set_exercises(made["go"], "deadline")
    made["cfg"], out = lab_init(base, "cfg", "keepalive")
    mine = out.split("your deployment: ")[1].split(":")[0]
    with open(os.path.join(made["cfg"], "keepalive.json"), "w") as f:
        json.dump(solution(deployments()[mine]), f)
    for d in made.values():
        open_up(d)
    made["base"], made["deployment"] = base, mine
    yield made
    shutil.rmtree(base, ignore_errors=True)


def verdicts_of(results):
    """{(exercise, scenario): (verdict, score)} of a results.json."""
    return {(t["extra_data"]["exercise"], t["extra_data"]["scenario"]): (t["extra_data"]["verdict"], t["score"])
            for t in results["tests"] if "exercise" in t.get("extra_data", {})}


def feedback_of(results, exercise, scenario):
    return [t["extra_data"]["feedback"] for t in results["tests"]
            if t.get("extra_data", {}).get("exercise") == exercise
            and t["extra_data"].get("scenario") == scenario][0]


# ---- the paths ----

def by_lab_check(folder, name, out):
    ex, sc = SCENARIOS[name]
    js = os.path.join(out, f"labcheck-{name}.json")
    r = run([os.path.join(BIN, "lab"), "check", ex, "--only", sc, "--json", js], cwd=folder)
    assert r.returncode in (0, 1), r.stdout + r.stderr
    return json.load(open(js))


def by_grader(folder, name, out):
    ex, sc = SCENARIOS[name]
    js = os.path.join(out, f"grader-{name}.json")
    sub = ["--submission", "keepalive.json", "--student", ALICE] if name == "cfg" else ["--submission", "./run"]
    r = run_grader(ex, *sub, "--only", sc, "--json", js, cwd=folder, grader=os.path.join(BIN, "grader"), timeout=180)
    assert r.rc in (0, 1), r.out + r.err
    return r.results


def by_grade_class(made, out, students):
    """|students|: {student folder: (folder to copy, id in the roster)}."""
    cls = os.path.join(made["base"], "class")
    roster = os.path.join(made["base"], "roster.csv")
    with open(roster, "w") as f:
        f.write("folder,id\n" + "".join(f"{s},{who}\n" for s, (_, who) in students.items()))
    for s, (src, _) in students.items():
        shutil.copytree(src, os.path.join(cls, s, os.path.basename(src)), symlinks=True)
    open_up(cls)
    r = run([os.path.join(BIN, "grade-class"), cls, "--out", out, "--roster", roster, "--exercises", ONLY,
             "--quiet"], timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return {s: json.load(open(os.path.join(out, s, "results.json"))) for s in students}


def fake_autograder(made, name, entries, sid, flat=False):
    """A fake /autograder: |entries| (folder names of |made|) uploaded as
    folders, or the one folder's files at the top (|flat|), and
    submission_metadata.json in Gradescope's documented shape with the
    roster's sid."""
    root = os.path.join(made["base"], "ag-" + name)
    sub = os.path.join(root, "submission")
    if flat:
        shutil.copytree(made[entries[0]], sub, symlinks=True)
    else:
        for e in entries:
            shutil.copytree(made[e], os.path.join(sub, e), symlinks=True)
    meta = {"id": 1, "assignment": {"title": "relaylab"}, "submission_method": "upload",
            "users": [{"email": f"{sid}@example.edu", "id": 7, "name": sid.title(), "sid": sid}],
            "previous_submissions": []}
    if sid is None:
        meta["users"] = []
    with open(os.path.join(root, "submission_metadata.json"), "w") as f:
        json.dump(meta, f)
    return root


def run_autograder(root, exercises=ONLY):
    env = dict(os.environ, RELAYLAB_AUTOGRADER_ROOT=root, RELAYLAB_KIT=KIT, RELAYLAB_EXERCISES=exercises)
    r = run([os.path.join(ROOT, "scripts", "gradescope", "run_autograder")], env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.load(open(os.path.join(root, "results", "results.json"))), r.stderr


def ci_step():
    """The CI workflow's grading step, as GitHub runs it (bash -eo pipefail)."""
    wf = yaml.safe_load(open(os.path.join(ROOT, "scripts", "ci", "relaylab.yml")))
    steps = wf["jobs"]["check"]["steps"]
    return [s for s in steps if s.get("name") == "Grade every folder lab init made"][0]["run"]


def by_ci(made, name, student):
    """The workflow's step in a repository holding folder |name| alone (its
    LAB_CHECK_ARGS picks that folder's scenario), graded as |student| (the
    RELAYLAB_STUDENT setting)."""
    ex, sc = SCENARIOS[name]
    ws = os.path.join(made["base"], "ws-" + name)
    shutil.copytree(made[name], os.path.join(ws, name), symlinks=True)
    env = dict(os.environ, GITHUB_WORKSPACE=ws, RUNS="1", RELAYLAB_KIT_DIR=KIT, RELAYLAB_STUDENT=student,
               LAB_CHECK_ARGS=f"--only {sc}")
    r = run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", ci_step()], cwd=ws, env=env, timeout=300)
    assert r.returncode in (0, 1), r.stdout + r.stderr
    return json.load(open(os.path.join(ws, "results", f"._{name}-{ex}.json")))


# Five folders on five paths, three gradings at once: 36 s on a quiet
# machine before the coverage folder; the limit leaves room for a busy one.
@pytest.mark.timeout(300)
def test_every_path_gives_the_same_verdict(folders):
    made = folders
    out = os.path.join(made["base"], "out")
    os.makedirs(out)
    got = {name: {} for name in SCENARIOS}
    # grade-class: one student folder each, and a classmate (bob) who copied
    # alice's config folder, .relaylab and all. The roster gives each folder
    # an id of its own (one id for two folders is refused: grade-class's
    # roster check); alice's on the config folder, whose deployment it picks,
    # and alice-NAME on the others, whose verdicts no identity changes.
    students = {f"s-{name}": (made[name], ALICE if name == "cfg" else f"{ALICE}-{name}") for name in SCENARIOS}
    students["s-copy"] = (made["cfg"], BOB)
    # Gradescope: alice uploads py, node (no node_modules), cfg and cov as
    # folders, the C starter flattened (its files at the top), and in an
    # upload of its own (a second deadline folder beside py's would share
    # its results' rows) the Go starter as lab check leaves it, built; bob
    # uploads alice's config folder.
    uploaded = [name for name in ("py", "node", "cfg", "cov") if name in SCENARIOS]
    trees = {"folders": fake_autograder(made, "folders", uploaded, ALICE),
             "flat": fake_autograder(made, "flat", ["c"], ALICE, flat=True),
             "go": fake_autograder(made, "go", ["go"], ALICE),
             "copy": fake_autograder(made, "copy", ["cfg"], BOB)}
    with ThreadPoolExecutor(3) as pool:
        per_folder = {(name, path): pool.submit(fn, name)
                      for name in SCENARIOS
                      for path, fn in (("lab check", lambda n: by_lab_check(made[n], n, out)),
                                       ("bin/grader", lambda n: by_grader(made[n], n, out)),
                                       ("CI", lambda n: by_ci(made, n, ALICE)))}
        gc_job = pool.submit(by_grade_class, made, os.path.join(made["base"], "gc"), students)
        ag = {k: pool.submit(run_autograder, root) for k, root in trees.items()}
        for (name, path), f in per_folder.items():
            got[name][path] = verdicts_of(f.result())[SCENARIOS[name]]
        gc = gc_job.result()
        up, _ = ag["folders"].result()
        flat, _ = ag["flat"].result()
        go, _ = ag["go"].result()
        bobs, log = ag["copy"].result()
    for name in SCENARIOS:
        got[name]["grade-class"] = verdicts_of(gc[f"s-{name}"])[SCENARIOS[name]]
    for name in uploaded:
        got[name]["Gradescope"] = verdicts_of(up)[SCENARIOS[name]]
    got["c"]["Gradescope"] = verdicts_of(flat)[SCENARIOS["c"]]
    got["go"]["Gradescope"] = verdicts_of(go)[SCENARIOS["go"]]

    for name, paths in got.items():
        assert {v for v, _ in paths.values()} == {EXPECT[name]}, (name, paths)
        assert len({s for _, s in paths.values()}) == 1, (name, paths)
    # The Node folder ran with the kit's packages, not MODULE_NOT_FOUND.
    assert "MODULE_NOT_FOUND" not in feedback_of(up, "flow", "stall")
    assert "produce()" in feedback_of(up, "flow", "stall")

    # The copy: graded as bob, in bob's deployment, it fails, and says why first.
    copy = gc["s-copy"]
    verdict, score = verdicts_of(copy)[("keepalive", "check")]
    fb = feedback_of(copy, "keepalive", "check")
    assert verdict == "FAIL" and score == 0, fb
    assert fb.startswith(f'this folder was made for "{ALICE}" (its .relaylab) and is graded as "{BOB}"'), fb
    assert f"lab init keepalive --student {BOB} NEW-FOLDER" in fb
    # ... and the same on Gradescope, uploaded by bob.
    assert f"grading as {BOB}" in log
    verdict, score = verdicts_of(bobs)[("keepalive", "check")]
    assert verdict == "FAIL" and score == 0
    assert feedback_of(bobs, "keepalive", "check").startswith(f'this folder was made for "{ALICE}"')


def test_the_deployments_differ_for_the_two_ids(folders):
    """The copy test means something only if bob's deployment is not alice's."""
    r = run_grader("keepalive", "--submission", os.path.join(folders["cfg"], "keepalive.json"), "--student", BOB,
                   "--only", "check", grader=os.path.join(BIN, "grader"), timeout=180)
    assert f'(picked by variant "{BOB}"' in r.out
    assert f"world {folders['deployment']} " not in r.out, r.out


def test_the_starters_pin_one_set_of_node_packages():
    """The kit installs one set (starters/streamer/node's lock) for every
    Node starter: they must pin the same."""
    sets = set()
    for kind in ("relay", "streamer", "shutdown", "overload"):
        lock = json.load(open(os.path.join(ROOT, "starters", kind, "node", "package-lock.json")))
        sets.add(tuple(sorted((k, v.get("version")) for k, v in lock["packages"].items() if k)))
    assert len(sets) == 1


# ---- uploads that are not what was expected ----

def test_an_upload_with_nothing_gradable_gets_one_clear_entry(folders):
    root = os.path.join(folders["base"], "ag-junk")
    sub = os.path.join(root, "submission")
    os.makedirs(os.path.join(sub, "Downloads"))
    open(os.path.join(sub, "Downloads", "notes\x1b[31m.txt"), "w").write("x")
    open(os.path.join(sub, "screenshot.png"), "w").write("x")
    res, _ = run_autograder(root)
    assert len(res["tests"]) == 1, res
    t = res["tests"][0]
    assert t["status"] == "failed" and t["score"] == 0 and res["max_score"] > 0
    out = t["output"]
    assert "What was uploaded:" in out and "  Downloads/\n    notes\\x1b[31m.txt\n" in out and "screenshot.png" in out
    assert "\x1b" not in out
    assert ".relaylab" in out and "What was expected" in out
    # An empty upload: the same one entry.
    os.makedirs(os.path.join(folders["base"], "ag-empty", "submission"))
    res, _ = run_autograder(os.path.join(folders["base"], "ag-empty"))
    assert len(res["tests"]) == 1 and "(empty)" in res["tests"][0]["output"]


def test_a_folder_without_its_relaylab_is_recognised(folders):
    # Uploaded as a zip of the folder that holds it (one more level), its
    # .relaylab left out.
    root = fake_autograder(folders, "dropped", ["cfg"], ALICE)
    sub = os.path.join(root, "submission")
    os.unlink(os.path.join(sub, "cfg", ".relaylab"))
    os.makedirs(os.path.join(sub, "my-work"))
    os.rename(os.path.join(sub, "cfg"), os.path.join(sub, "my-work", "cfg"))
    res, _ = run_autograder(root, exercises="keepalive/check")
    verdict, _ = verdicts_of(res)[("keepalive", "check")]
    assert verdict == "PASS", res
    assert "has no .relaylab" in res["output"] and "recognised by its config file keepalive.json" in res["output"]


def test_lab_check_grades_as_the_identity_it_is_given(folders):
    """`lab check --student ID` (the CI setting) grades a config as ID and
    says first that the folder was made for another; a bad id is refused."""
    for args in (["--student", BOB], [f"--student={BOB}"]):
        r = run([os.path.join(BIN, "lab"), "check", "keepalive", *args, "--only", "check"], cwd=folders["cfg"])
        assert r.returncode == 1, r.stdout + r.stderr
        assert f"--submission keepalive.json --student {BOB} --only check" in r.stdout
        row = [ln for ln in r.stdout.splitlines() if ln.startswith("check ")][0]
        assert "FAIL" in row and f'this folder was made for "{ALICE}"' in row, row
    r = run([os.path.join(BIN, "lab"), "check", "--student", "bad id"], cwd=folders["cfg"])
    assert r.returncode == 2 and "--student takes an id" in r.stderr
    r = run([os.path.join(BIN, "lab"), "init", "keepalive", "--student", "-x",
             os.path.join(folders["base"], "never")])
    assert r.returncode == 2 and "--student takes your id" in r.stderr
    assert not os.path.exists(os.path.join(folders["base"], "never"))
