# The starters (`lab init`, lab/init.c, starters/): every exercise's starter,
# in every language it is offered in, untouched, goes through the grader as
# `lab check` runs it (exactly `bin/grader EXERCISE --submission ./run` in
# the folder) and FAILs every scenario its TODO is about, never NOT-READY or
# CRASH, with feedback that quotes its TODO; with its TODO block replaced by
# this test's own solution (tests/starters/) it PASSes. So a starter cannot rot when the
# proto, a handout or the grader changes. The filled-in starters run one or
# two scenarios each here; RELAYLAB_STARTERS_FULL=1 (make selftest) runs all
# of them. Plus `lab init`'s, `lab stubs`' and `lab check`'s errors.
import json
import os
import re
import shutil
import subprocess
import tempfile
import uuid

import pytest

from conftest import REPO, bin_path, grade, sanitizer_build

SOLUTIONS = os.path.join(REPO, "tests", "starters")
FULL = os.environ.get("RELAYLAB_STARTERS_FULL") == "1"

# (starter, language): the file holding the TODO block, the solution's file
# in tests/starters/, and for each exercise the folder is graded on, the
# scenarios a filled-in starter runs in `make test`.
COMMAND_STARTERS = {
    ("deadline", "python"): ("relay.py", "relay.py", {"deadline": "shrinks", "cancel": "during-work"}),
    ("deadline", "node"): ("relay.js", "relay.js", {"deadline": "shrinks", "cancel": "during-work"}),
    ("deadline", "c"): ("relay.c", "relay.c", {"deadline": "shrinks", "cancel": "during-work"}),
    ("flow", "python"): ("streamer.py", "streamer.py", {"flow": "stall"}),
    ("flow", "node"): ("streamer.js", "streamer.js", {"flow": "stall"}),
    ("flow", "c"): ("streamer.c", "streamer.c", {"flow": "stall"}),
    ("shutdown", "python"): ("relay.py", "shutdown.py", {"shutdown": "in-flight,grace-ends"}),
    ("shutdown", "node"): ("relay.js", "shutdown.js", {"shutdown": "in-flight,grace-ends"}),
    ("shutdown", "c"): ("relay.c", "shutdown.c", {"shutdown": "in-flight,grace-ends"}),
    ("overload", "python"): ("relay.py", "overload.py", {"overload": "overload"}),
    ("overload", "node"): ("relay.js", "overload.js", {"overload": "overload"}),
    ("overload", "c"): ("relay.c", "overload.c", {"overload": "overload"}),
    ("deadline", "go"): ("relay.go", "relay.go", {"deadline": "shrinks", "cancel": "during-work"}),
    ("flow", "go"): ("streamer.go", "streamer.go", {"flow": "stall"}),
    ("shutdown", "go"): ("relay.go", "shutdown.go", {"shutdown": "in-flight,grace-ends"}),
    ("overload", "go"): ("relay.go", "overload.go", {"overload": "overload"}),
}
# Scenarios an untouched starter passes: the shutdown starter cuts its calls
# at once (its TODO), which closes admission too, as refuses-new asks; the
# overload starter's server is given (a fail-fast channel) and its gate lets
# one call through at a time, which is all that refused and recovers need
# (blackhole FAILs: its plain Process hands no deadline on and cancels
# nothing, so the one call it lets through stays open at the backend).
UNTOUCHED_MAY_PASS = {"shutdown": {"refuses-new"}, "overload": {"refused", "recovers"}}
# Scenarios an untouched starter must FAIL quoting its TODO (the rest of the
# FAILs may all but one name what is undone instead).
UNTOUCHED_QUOTES = {"overload": {"overload"}}
# The exercises a starter is checked on in `make test` when not all of its
# folder's (building C with protoc-c and make, or Go, is slow): the rest in make selftest.
QUICK_EXERCISES = {("deadline", "c"): ["deadline"], ("deadline", "go"): ["deadline"]}
# Starters checked in make selftest only (one C and one Go starter in make
# test are enough to keep their build paths from rotting there).
SELFTEST_ONLY = {("shutdown", "c"), ("flow", "c"), ("overload", "c"),
                 ("shutdown", "go"), ("flow", "go"), ("overload", "go")}
CONFIG_STARTERS = {"keepalive": "check", "retry": "check", "balance": "check"}


@pytest.fixture
def workdir():
    """A folder the sandbox's nobody can read (pytest's tmp_path is 0700),
    under build/ so the sandbox's view of the system's folders shows it."""
    base = os.path.join(REPO, "build", "test-starters")
    os.makedirs(base, exist_ok=True)
    os.chmod(base, 0o755)
    path = tempfile.mkdtemp(dir=base)
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def lab(*args, cwd=None, timeout=600):
    return subprocess.run([bin_path("lab"), *args], capture_output=True, text=True, cwd=cwd, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def init(workdir, exercise, *args):
    folder = os.path.join(workdir, exercise + "-" + uuid.uuid4().hex[:6])
    p = lab("init", exercise, *args, folder, timeout=180)
    assert p.returncode == 0, p.stdout + p.stderr
    return folder


# The grader refuses to judge a run the machine was too busy to time (ERROR
# "... grade again", e.g. "grade again: the machine stalled", measured with
# an untouched overload starter at load 15): that is its answer on a machine
# too busy to measure, not the starter's verdict, so the check is made again,
# as its feedback says, up to this many times in all.
STALL_TRIES = 3


def check(folder, exercise, *args):
    """`lab check EXERCISE` in |folder|: {scenario: (verdict, feedback)} from
    the grader's results.json, and lab's exit code; made again when the
    grader said the machine stalled."""
    for _ in range(STALL_TRIES):
        rc, verdicts, out = check_once(folder, exercise, *args)
        if not any(v == "ERROR" and "grade again" in fb for v, fb in verdicts.values()):
            break
    return rc, verdicts, out


def check_once(folder, exercise, *args):
    out = os.path.join(folder, "..", f"results-{uuid.uuid4().hex[:6]}.json")
    extra = ("--memory-limit", "0") if sanitizer_build() else ()
    p = lab("check", exercise, "--json", out, "--quiet", *extra, *args, cwd=folder)
    assert os.path.exists(out), f"no results.json (exit {p.returncode}):\n{p.stdout}\n{p.stderr}"
    with open(out) as f:
        results = json.load(f)
    os.unlink(out)
    verdicts = {}
    for t in results["tests"]:
        sid = t["name"].split(":", 1)[0].split("/", 1)[1]
        verdict, _, feedback = t["output"].partition(": ")
        verdicts[sid] = (verdict.split()[0], feedback)
    return p.returncode, verdicts, p.stdout + p.stderr


def fill(path, solution):
    """Replaces the one `>>> TODO` ... `<<< TODO` block of |path| (marker
    lines included) with the file |solution|."""
    with open(path) as f:
        text = f.read()
    blocks = re.findall(r"^[ \t]*(?:#|//|/\*) >>> TODO.*?^[ \t]*(?:#|//|/\*) <<< TODO[^\n]*\n", text, re.S | re.M)
    assert len(blocks) == 1, f"{path}: {len(blocks)} TODO blocks, expected one"
    with open(os.path.join(SOLUTIONS, solution)) as f:
        text = text.replace(blocks[0], f.read())
    with open(path, "w") as f:
        f.write(text)


def exercises_of(folder):
    with open(os.path.join(folder, ".relaylab")) as f:
        for line in f:
            if line.startswith("exercises "):
                return line.split()[1:]
    raise AssertionError(".relaylab names no exercises")


@pytest.mark.parametrize("starter,lang", sorted(COMMAND_STARTERS))
def test_command_starter_fails_at_its_todo_then_passes_filled_in(workdir, starter, lang):
    if not FULL and (starter, lang) in SELFTEST_ONLY:
        pytest.skip("make selftest runs it (RELAYLAB_STARTERS_FULL=1)")
    code_file, solution, smoke = COMMAND_STARTERS[(starter, lang)]
    folder = init(workdir, starter, "--lang", lang)
    assert os.stat(folder).st_mode & 0o005 == 0o005
    for name in ("run", code_file, "README.md", "proto/relaylab.proto"):
        assert os.path.exists(os.path.join(folder, name)), name
    assert exercises_of(folder) == sorted(smoke, key=list(smoke).index)
    if not FULL and (starter, lang) in QUICK_EXERCISES:
        smoke = {ex: smoke[ex] for ex in QUICK_EXERCISES[(starter, lang)]}
    # Untouched: every scenario run answers (never NOT-READY, TIMEOUT or
    # CRASH) and FAILs, but those the TODO does not reach; those that quote
    # Process's or Produce's status quote the TODO.
    for exercise, only in smoke.items():
        rc, verdicts, out = check(folder, exercise, *(() if FULL else ("--only", only)))
        assert rc == 1, out
        may_pass = UNTOUCHED_MAY_PASS.get(exercise, set())
        failed = {sid: fb for sid, (v, fb) in verdicts.items() if v == "FAIL"}
        assert failed and set(verdicts) - set(failed) <= may_pass, verdicts
        assert all(verdicts[sid][0] == "PASS" for sid in set(verdicts) - set(failed)), verdicts
        quoting = [sid for sid, fb in failed.items() if f"TODO in {code_file}" in fb]
        assert len(quoting) >= len(failed) - 1, verdicts
        assert UNTOUCHED_QUOTES.get(exercise, set()) & set(verdicts) <= set(quoting), verdicts
    # Filled in with the test's solution: it passes.
    fill(os.path.join(folder, code_file), solution)
    for exercise, only in smoke.items():
        args = () if FULL else ("--only", only)
        rc, verdicts, out = check(folder, exercise, *args)
        assert rc == 0 and all(v == "PASS" for v, _ in verdicts.values()), out


# What a relay whose Process drops the deadline and lets Work run on after
# the client left is told: the deadline and cancel exercises' answers are
# not in a starter that gives Process away. Each is `bin/grader EXERCISE
# --submission ./run --only ONLY` in the starter's folder: what a student
# would run to try the starter on another exercise.
NEITHER_DEADLINE_NOR_CANCEL = (("deadline", "shrinks", "the deadline was dropped"),
                               ("cancel", "during-work", "cancellation is not propagated"))


@pytest.mark.parametrize("lang", ["python", "node", "c", "go"] if FULL else ["python"])
def test_shutdown_starters_process_answers_neither_deadline_nor_cancel(workdir, lang):
    # The shutdown starter gives Process away, so the kit must not gain a
    # deadline or cancel answer through it: it drops the deadline and lets
    # Work run on after the client left. (Node's, C's and Go's in make
    # selftest only.)
    folder = init(workdir, "shutdown", "--lang", lang)
    for exercise, only, says in NEITHER_DEADLINE_NOR_CANCEL:
        g = grade(exercise, "./run", "--only", only, cwd=folder, timeout=300)
        (test,) = g.results["tests"]
        output = test["output"]
        assert g.rc == 1 and output.startswith("FAIL") and says in output, output


@pytest.mark.parametrize("lang", ["python", "node", "c", "go"] if FULL else ["python", "node"])
def test_overload_starters_answer_neither_deadline_nor_cancel_nor_shutdown(workdir, lang):
    # The overload starter gives the relay around its gate away, and
    # Process, the deadline and cancel exercises' lesson, is in its TODO
    # block: untouched, it is the plain relay the shutdown starter gives,
    # and its SIGTERM handling is the deadline starter's (1 s, then cut), so
    # shutdown's drain is not in it either: the call that outlives the
    # grace is cut before the grace ends, or not at all. (C's and Go's in
    # make selftest only.)
    folder = init(workdir, "overload", "--lang", lang)
    for exercise, only, says in NEITHER_DEADLINE_NOR_CANCEL:
        g = grade(exercise, "./run", "--only", only, cwd=folder, timeout=300)
        (test,) = g.results["tests"]
        output = test["output"]
        assert g.rc == 1 and output.startswith("FAIL") and says in output, output
    g = grade("shutdown", "./run", "--only", "grace-ends", cwd=folder, timeout=300)
    (test,) = g.results["tests"]
    output = test["output"]
    assert g.rc == 1 and output.startswith("FAIL") and "2000 ms grace" in output, output


@pytest.mark.parametrize("exercise", sorted(CONFIG_STARTERS))
def test_config_starter_fails_at_its_todos_then_passes_filled_in(workdir, exercise):
    with open(os.path.join(SOLUTIONS, exercise + ".json")) as f:
        solution = json.load(f)
    variant = solution["variant"]
    folder = init(workdir, exercise, *(("--variant", variant) if variant else ()))
    path = os.path.join(folder, exercise + ".json")
    with open(path) as f:
        cfg = json.load(f)
    # The world is filled in: the deployment's own sections, as the grader's
    # world file has them; so the check warns of nothing it ignores.
    with open(os.path.join(REPO, "grader", "worlds", exercise + ".json")) as f:
        world = json.load(f)
    deps = world.get("deployments", [world])
    dep = next(d for d in deps if d["name"] == (variant or world.get("default", deps[0]["name"])))
    for key in ("intermediary", "calls"):
        assert cfg.get(key) == dep.get(key), key
    for arg, value in dep.get("server", {}).items():
        assert cfg["server"][arg] == value
    todo_paths = []

    def walk(node, path):
        if node == "TODO":
            todo_paths.append(path)
        elif isinstance(node, dict):
            for k, v in node.items():
                walk(v, f'{path}["{k}"]' if "." in k else f"{path}.{k}")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{path}[{i}]")

    # The choices are in the client's section (keepalive, retry) or the
    # server's (balance: the connection age), beside the world's own args.
    walk(cfg.get("client"), "$.client")
    walk({k: v for k, v in cfg.get("server", {}).items() if k not in dep.get("server", {})}, "$.server")
    assert todo_paths, "the starter leaves no choice open"
    rc, verdicts, out = check(folder, exercise, "--only", "check")
    assert rc == 1 and verdicts["check"][0] == "FAIL", out
    assert "ignored" not in verdicts["check"][1], verdicts
    # Every choice left open is named by its path (the method name "TODO" is
    # a warning, unknown-method, which the check's line does not list).
    named = [p for p in todo_paths if p in verdicts["check"][1]]
    assert len(named) >= len(todo_paths) - 1, (todo_paths, verdicts)
    for section in ("client", "server"):
        if section in solution:
            cfg[section] = {**cfg.get(section, {}), **solution[section]}
    with open(path, "w") as f:
        json.dump(cfg, f, indent=2)
    rc, verdicts, out = check(folder, exercise, *(() if FULL else ("--only", CONFIG_STARTERS[exercise])))
    assert rc == 0 and all(v == "PASS" for v, _ in verdicts.values()), out


def test_cancel_starter_is_the_relay_checked_on_both(workdir):
    folder = init(workdir, "cancel")
    assert exercises_of(folder) == ["deadline", "cancel"]
    assert os.path.exists(os.path.join(folder, "relay.py"))


def test_stubs_makes_the_generated_code_again(workdir):
    folder = init(workdir, "deadline")
    gen = os.path.join(folder, "gen")
    shutil.rmtree(gen)
    p = lab("stubs", "python", folder)
    assert p.returncode == 0, p.stderr
    assert sorted(os.listdir(gen)) == ["relaylab_pb2.py", "relaylab_pb2_grpc.py"]
    assert os.stat(gen).st_mode & 0o005 == 0o005


@pytest.mark.parametrize("args,message", [
    (["init"], "usage: lab init EXERCISE"),
    (["init", "nosuch"], "no starter for 'nosuch'; starters: deadline cancel flow keepalive retry shutdown balance overload"),
    (["init", "deadline", "--lang", "cobol"], "deadline has no cobol starter"),
    (["init", "keepalive", "--lang", "python"], "keepalive's submission is a JSON channel config: no --lang"),
    (["init", "flow", "--variant", "x"], "--variant is for the config exercises"),
    (["stubs", "rust", "."], "stubs for python, node, c or go, not 'rust'"),
    (["init", "keepalive", "--lang", "c"], "keepalive's submission is a JSON channel config: no --lang"),
    (["init", "deadline", "--lang", "rust"], "deadline has no rust starter; --lang python, node, c or go\n"),
    (["init", "keepalive", "--lang", "go"], "keepalive's submission is a JSON channel config: no --lang"),
    (["check"], "this folder is not a starter (no .relaylab)"),
])
def test_bad_arguments_are_clear(workdir, args, message):
    p = lab(*args, cwd=workdir)
    assert p.returncode == 2, p.stdout + p.stderr
    assert message in p.stderr


def test_init_never_writes_over_a_folder(workdir):
    with open(os.path.join(workdir, "mine.py"), "w") as f:
        f.write("precious\n")
    p = lab("init", "deadline", workdir)
    assert p.returncode == 1 and "is not empty" in p.stderr, p.stderr
    assert os.listdir(workdir) == ["mine.py"]


def test_check_names_the_folders_exercises(workdir):
    folder = init(workdir, "flow")
    p = lab("check", "deadline", cwd=folder)
    assert p.returncode == 2 and "this folder is for flow, not 'deadline'" in p.stderr, p.stderr


def test_c_starter_is_built_by_check_and_its_stubs_made_again(workdir):
    # The grader's sandbox cannot build: `lab init --lang c` and `lab check`
    # run make, and a build that fails stops the check with make's message.
    folder = init(workdir, "deadline", "--lang", "c")
    assert os.access(os.path.join(folder, "relay"), os.X_OK)
    gen = os.path.join(folder, "gen")
    shutil.rmtree(gen)
    p = lab("stubs", "c", folder)
    assert p.returncode == 0, p.stderr
    assert sorted(os.listdir(gen)) == ["relaylab.pb-c.c", "relaylab.pb-c.h"]
    with open(os.path.join(folder, "relay.c"), "a") as f:
        f.write("static int unused_by_anyone;\n")
    p = lab("check", "deadline", cwd=folder)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "unused_by_anyone" in p.stdout + p.stderr and "`make` failed" in p.stderr, p.stdout + p.stderr
    assert "bin/grader" not in p.stdout


def test_go_starter_is_built_by_check_and_its_stubs_made_again(workdir):
    # As the C starter: `lab init --lang go` and `lab check` run make (go vet,
    # then go build in GOPATH mode, no module proxy), and a finding stops
    # the check with its message; `lab stubs go` makes gen/ again.
    folder = init(workdir, "deadline", "--lang", "go")
    assert os.access(os.path.join(folder, "relay"), os.X_OK)
    pb = os.path.join(folder, "gen", "src", "relaylab", "pb")
    shutil.rmtree(os.path.join(folder, "gen"))
    p = lab("stubs", "go", folder)
    assert p.returncode == 0, p.stderr
    assert sorted(os.listdir(pb)) == ["relaylab.pb.go", "relaylab_grpc.pb.go"]
    assert os.stat(pb).st_mode & 0o005 == 0o005
    with open(os.path.join(folder, "relay.go"), "a") as f:
        f.write('\nfunc unusedByAnyone() { fmt.Printf("%d\\n", "not a number") }\n')
    p = lab("check", "deadline", cwd=folder)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "Printf format %d has arg" in p.stdout + p.stderr and "`make` failed" in p.stderr, p.stdout + p.stderr
    assert "bin/grader" not in p.stdout
