# The student kit (scripts/student-kit.sh, `make student-kit`): what the
# tarball holds is listed against a deny list (nothing that answers an
# exercise) and an allow list (everything a student needs), and the
# "Getting started" path of its README is followed from the unpacked kit:
# `make demo` makes a starter and grades it untouched (FAIL at its TODO),
# and the same starter, filled in, passes: the kit's own programs, handouts,
# worlds and starters, not the checkout's. The kit's handouts (and the
# READMEs `lab init` writes from it) name only files and commands the kit
# holds, and its `lab demo`s either run or say they need the instructor's
# kit, printing no conclusion of a demo that did not run.
import os
import re
import shutil
import subprocess
import tarfile
import tempfile

import pytest

from conftest import REPO, grade, sanitizer_build

SOLUTIONS = os.path.join(REPO, "tests", "starters")
NAME = "relaylab-student"

# Paths (relative to the kit's root) that must never ship: the model
# solutions and every known-good submission or config, and the tests'
# solutions to the starters.
DENY = [
    r"^relay/", r"^streamer/", r"^agent/", r"^bench/", r"^tests/", r"^bin/relay$", r"^bin/streamer$",
    r"^bin/agent$", r"^bin/bench-",
    r"_good\.(py|js|json)$", r"(^|/)relay_[^/]*\.(py|js)$", r"(^|/)streamer_[^/]*\.(py|js)$",
    r"(^|/)node_modules/", r"^build/(?!gen/)",
    r"(^|/)overload\.(py|js|c|go)$",  # the overload starters' solutions, wherever they might land
]
NEED = ["bin/baseline", "bin/tunnel", "bin/grader", "bin/lab", "bin/channel-config", "bin/jail", "proto/relaylab.proto",
        "proto/health.proto",
        "grader/rubric.json", "grader/worlds/keepalive.json", "grader/worlds/retry.json", "Makefile", "README.md",
        "channel_config/README.md", "scripts/install-deps.sh"]


@pytest.fixture(scope="module")
def kit():
    if sanitizer_build():
        pytest.skip("the kit ships the plain build's programs (bin/), not a sanitizer build's")
    base = os.path.join(REPO, "build", "test-kit")
    os.makedirs(base, exist_ok=True)
    os.chmod(base, 0o755)
    dest = tempfile.mkdtemp(dir=base)
    os.chmod(dest, 0o755)
    p = subprocess.run(["sh", os.path.join(REPO, "scripts", "student-kit.sh"), dest], capture_output=True, text=True,
                       timeout=300, stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p.stdout + p.stderr
    yield dest
    shutil.rmtree(dest, ignore_errors=True)


def members(dest):
    with tarfile.open(os.path.join(dest, NAME + ".tar.gz")) as t:
        names = [m.name for m in t.getmembers() if m.isfile()]
    assert all(n.startswith(NAME + "/") for n in names), names
    return sorted(n[len(NAME) + 1:] for n in names)


def test_kit_holds_no_answer(kit):
    files = members(kit)
    bad = [f for f in files if any(re.search(d, f) for d in DENY)]
    assert not bad, f"answers in the student kit: {bad}"
    for f in files:
        with open(os.path.join(kit, NAME, f), "rb") as fh:
            assert b"the test's own solution" not in fh.read(), f
    if "channel_config/lab.json" in files:
        # The worked example ships only while it answers neither config exercise.
        lab_json = os.path.join(REPO, "channel_config", "lab.json")
        for argv in (["keepalive", "--only", "check"], ["retry"]):
            g = grade(argv[0], lab_json, *argv[1:], timeout=120)
            assert g.rc == 1, f"lab.json passes {argv[0]} and is in the kit:\n{g.out}"


def test_kit_holds_what_a_student_needs(kit):
    files = set(members(kit))
    need = list(NEED)
    need += ["lab/exercises/" + f for f in os.listdir(os.path.join(REPO, "lab", "exercises"))]
    for root, _, names in os.walk(os.path.join(REPO, "starters")):
        if "node_modules" not in root:
            need += [os.path.relpath(os.path.join(root, n), REPO) for n in names]
    need.remove("starters/README.md")  # the maintainers' notes on the starters, not a student's
    missing = [f for f in need if f not in files]
    assert not missing, missing


def test_getting_started_from_the_unpacked_kit(kit):
    with tarfile.open(os.path.join(kit, NAME + ".tar.gz")) as t:
        unpacked = os.path.join(kit, "unpacked")
        t.extractall(unpacked)
    root = os.path.join(unpacked, NAME)
    os.chmod(unpacked, 0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("RELAYLAB_HOME", "RELAYLAB_BIN", "MAKEFLAGS", "MAKELEVEL")}
    p = subprocess.run(["make", "demo"], cwd=root, capture_output=True, text=True, timeout=300, env=env,
                       stdin=subprocess.DEVNULL)
    out = p.stdout + p.stderr
    assert p.returncode == 0, out
    assert "FAILed at its TODO" in out and "TODO in relay.py" in out, out
    # The kit's own starter, filled in, passes in the kit's own grader.
    folder = os.path.join(root, "demo", "deadline")
    path = os.path.join(folder, "relay.py")
    with open(path) as f:
        text = f.read()
    block = re.search(r"^ *# >>> TODO.*?^ *# <<< TODO\n", text, re.S | re.M).group(0)
    with open(os.path.join(SOLUTIONS, "relay.py")) as f:
        text = text.replace(block, f.read())
    with open(path, "w") as f:
        f.write(text)
    p = subprocess.run([os.path.join(root, "bin", "lab"), "check", "deadline", "--only", "shrinks"], cwd=folder,
                       capture_output=True, text=True, timeout=300, env=env, stdin=subprocess.DEVNULL)
    assert p.returncode == 0 and "PASS" in p.stdout, p.stdout + p.stderr


def test_c_starter_from_the_unpacked_kit(kit):
    # The C starter builds from the kit alone (its own proto and Makefile,
    # nothing of the checkout's lib/) and, untouched, FAILs at its TODO.
    unpacked = os.path.join(kit, "unpacked-c")
    with tarfile.open(os.path.join(kit, NAME + ".tar.gz")) as t:
        t.extractall(unpacked)
    os.chmod(unpacked, 0o755)
    root = os.path.join(unpacked, NAME)
    env = {k: v for k, v in os.environ.items() if k not in ("RELAYLAB_HOME", "RELAYLAB_BIN", "MAKEFLAGS", "MAKELEVEL")}
    folder = os.path.join(root, "c-deadline")
    lab = os.path.join(root, "bin", "lab")
    p = subprocess.run([lab, "init", "deadline", "--lang", "c", folder], capture_output=True, text=True,
                       timeout=300, env=env, stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p.stdout + p.stderr
    with open(os.path.join(folder, "Makefile")) as f:
        assert "lib/" not in f.read()
    p = subprocess.run([lab, "check", "deadline", "--only", "shrinks"], cwd=folder, capture_output=True, text=True,
                       timeout=300, env=env, stdin=subprocess.DEVNULL)
    out = p.stdout + p.stderr
    assert p.returncode == 1 and "FAIL" in out and "TODO in relay.c" in out, out


# ---- the handouts hold only what the kit has ----

# The top-level folders of the checkout: a path starting with one names a
# file of the kit, and must be there.
TOP = ("bin", "relay", "streamer", "tests", "grader", "lab", "bench", "docs", "channel_config", "proto",
       "starters", "scripts", "baseline", "build", "fuzz", "jail", "grade_class", "lib")
PATH_RE = re.compile(r"(?<![\w/.~$@-])((?:%s)/[\w./*+{},-]*)" % "|".join(TOP))
# What each `lab demo` runs beside the baseline (lab/main.c's table).
DEMO_NEEDS = {"deadline": "relay", "cancel": "relay", "shutdown": "relay", "flow": "streamer", "balance": None,
              "overload": "relay"}
# Every .md of the kit is held to it, docs/sandbox.md too: its references
# to the grader's sources and tests are the instructor's kit's alone.
NOT_HANDOUTS = set()


def kit_root(kit):
    return os.path.join(kit, NAME)


def handouts(kit):
    """{name: text} of every handout of the kit, and of the READMEs `lab init`
    writes from it (a relay, a streamer, a config)."""
    root = kit_root(kit)
    out = {}
    for dirpath, _, names in os.walk(root):
        for n in names:
            rel = os.path.relpath(os.path.join(dirpath, n), root)
            if n.endswith(".md") and rel not in NOT_HANDOUTS and not rel.startswith("made/"):
                with open(os.path.join(dirpath, n)) as f:
                    out[rel] = f.read()
    env = {k: v for k, v in os.environ.items() if k not in ("RELAYLAB_HOME", "RELAYLAB_BIN")}
    for ex, lang in (("deadline", "python"), ("flow", "python"), ("flow", "node"), ("keepalive", None)):
        folder = os.path.join(root, "made", f"{ex}-{lang}")
        if not os.path.isdir(folder):
            argv = [os.path.join(root, "bin", "lab"), "init", ex] + (["--lang", lang] if lang else []) + [folder]
            p = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env, stdin=subprocess.DEVNULL)
            assert p.returncode == 0, p.stdout + p.stderr
        with open(os.path.join(folder, "README.md")) as f:
            out[f"(lab init {ex} {lang or ''})/README.md"] = f.read()
    return out


def exists_in_kit(root, ref):
    """|ref| (a path, maybe with a glob or an ALL-CAPS placeholder) is in the kit."""
    ref = ref.rstrip(".,:;)")
    parts = [p for p in ref.split("/") if p]
    pattern = "/".join("*" if re.fullmatch(r"[A-Z][A-Z_-]*(\.\w+)?", p) or "*" in p or "{" in p else p
                       for p in parts)
    if pattern != "/".join(parts):
        import glob
        return bool(glob.glob(os.path.join(root, pattern.replace(".*", "*") if "*" in pattern else pattern)))
    return os.path.exists(os.path.join(root, *parts))


def test_handouts_name_only_what_the_kit_holds(kit):
    root = kit_root(kit)
    repo_files = subprocess.run(["git", "-C", REPO, "ls-files"], capture_output=True, text=True,
                                check=True).stdout.split()
    repo_names = {os.path.basename(f) for f in repo_files}
    kit_names = {n for _, _, names in os.walk(root) for n in names}
    bad = []
    for name, text in handouts(kit).items():
        here = os.path.dirname(name) if not name.startswith("(") else ""
        for m in PATH_RE.finditer(text):
            ref = m.group(1)
            if not exists_in_kit(root, ref) and not (here and exists_in_kit(os.path.join(root, here), ref)):
                bad.append(f"{name}: {ref}")
        # A file named alone (`streamer_nocancel.py`) that the checkout has and the kit does not.
        for m in re.finditer(r"`([^`]+)`", text):
            for w in m.group(1).split():
                w = w.strip("'\"(),;")
                if re.fullmatch(r"[\w.+-]+\.(py|js|c|h|json|sh|proto|md)", w) and w in repo_names \
                        and w not in kit_names:
                    bad.append(f"{name}: {w}")
        for m in re.finditer(r"lab demo (\w+)", text):
            needs = DEMO_NEEDS.get(m.group(1), "?")
            if needs and not os.path.exists(os.path.join(root, "bin", needs)):
                bad.append(f"{name}: {m.group(0)} (needs bin/{needs})")
        assert "<!--instructor-->" not in text and "<!--/instructor-->" not in text, name
    assert not bad, "the student kit's handouts name what it lacks:\n" + "\n".join(sorted(set(bad)))


def test_starter_readmes_say_only_what_applies(kit):
    texts = handouts(kit)
    # A streamer calls nobody: its README has no baseline address for it.
    for lang in ("python", "node"):
        assert "RELAYLAB_BASELINE" not in texts[f"(lab init flow {lang})/README.md"]
    assert "RELAYLAB_BASELINE" in texts["(lab init deadline python)/README.md"]
    # No example value the checker refuses (keepalive's args are milliseconds).
    assert '"0.1s"' not in texts["(lab init keepalive )/README.md"]


def test_demos_run_or_say_they_need_the_instructors_kit(kit):
    root = kit_root(kit)
    env = {k: v for k, v in os.environ.items() if k not in ("RELAYLAB_HOME", "RELAYLAB_BIN")}
    for name, needs in DEMO_NEEDS.items():
        if needs is None or os.path.exists(os.path.join(root, "bin", needs)):
            continue
        p = subprocess.run([os.path.join(root, "bin", "lab"), "demo", name], capture_output=True, text=True,
                           timeout=60, env=env, cwd=kit, stdin=subprocess.DEVNULL)
        assert p.returncode == 2, (name, p.stdout, p.stderr)
        assert "only the instructor's kit holds" in p.stderr and f"bin/{needs}" in p.stderr, p.stderr
        assert p.stdout == "", f"lab demo {name} printed as if it had run:\n{p.stdout}"
    p = subprocess.run([os.path.join(root, "bin", "lab"), "compare-memory"], capture_output=True, text=True,
                       timeout=60, env=env, cwd=kit, stdin=subprocess.DEVNULL)
    assert p.returncode != 0 and "instructor's kit" in p.stderr and "--submission" in p.stderr, p.stderr
    assert not [f for f in os.listdir(kit) if f.endswith(".svg")], "a demo wrote a picture into the current folder"
