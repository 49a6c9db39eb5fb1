# docs/DESIGN.md's checklist for a new exercise, held: every exercise of the
# table in grader/exercises.c (as `grader list` prints it, with its
# scenarios) has a rubric entry per scenario and no other, verdict-matrix
# rows that pass it whole and fail it somewhere (naming only its real
# scenarios), a handout, a row in lab/init.c's starter table, and the
# starters and test solutions that row names. Reads files and runs `grader
# list` alone: no grading, well under a second.
import json
import os
import re
import subprocess

import pytest

from conftest import REPO, bin_path

LANG_DIRS = {"LANG_PYTHON": ("python", ".py"), "LANG_NODE": ("node", ".js"), "LANG_C": ("c", ".c"),
             "LANG_GO": ("go", ".go")}


def read(*parts):
    with open(os.path.join(REPO, *parts)) as f:
        return f.read()


def table():
    """The X(name) entries of grader/exercises.c's EXERCISES macro."""
    src = read("grader", "exercises.c")
    m = re.search(r"#define EXERCISES\(X\)((?:[^\n]*\\\n)*[^\n]*)", src)
    assert m, "grader/exercises.c has no EXERCISES(X) table"
    return re.findall(r"X\((\w+)\)", m.group(1))


def listed():
    """`grader list`: {exercise: [scenario ids]} in its order."""
    out = subprocess.run([bin_path("grader"), "list"], capture_output=True, text=True, timeout=30, check=True).stdout
    exercises, current = {}, None
    for line in out.splitlines():
        head = re.match(r"^(\w+): ", line)
        if head:
            current = exercises.setdefault(head.group(1), [])
        elif line.startswith("  ") and current is not None:
            current.append(line.split()[0])
    return exercises


def init_rows():
    """lab/init.c's starter table: {exercise: (kind, langs)}."""
    src = read("lab", "init.c")
    body = re.search(r"static const starter starters\[\] = \{(.*?)\n\};", src, re.S)
    assert body, "lab/init.c has no starters[] table"
    rows = {}
    for ex, kind, langs in re.findall(r'\{"(\w+)",\s*"(\w+)",\s*"[^"]*",\s*([A-Z_ |0]+),', body.group(1)):
        rows[ex] = (kind, [w for w in re.findall(r"LANG_\w+", langs)])
    return rows


TABLE = table()
RUBRIC = json.loads(read("grader", "rubric.json"))
MATRIX = json.loads(read("tests", "verdicts.json"))["submissions"]


@pytest.fixture(scope="module")
def scenarios():
    return listed()


def ids_of(scenarios, exercise):
    assert scenarios.get(exercise), f"`grader list` shows no scenario of {exercise!r} (rebuild?)"
    return scenarios[exercise]


def test_grader_lists_the_table(scenarios):
    assert TABLE, "no exercise in grader/exercises.c"
    assert list(scenarios) == TABLE, "`grader list` is not grader/exercises.c's table (rebuild?)"


@pytest.mark.parametrize("exercise", TABLE)
def test_rubric_has_one_entry_per_scenario(exercise, scenarios):
    assert exercise in RUBRIC, f"grader/rubric.json has no {exercise!r}"
    assert sorted(RUBRIC[exercise]) == sorted(ids_of(scenarios, exercise)), (
        f"grader/rubric.json's {exercise!r} scenarios are not the grader's"
    )


def verdict(row, exercise, scenario):
    """What |row| expects of |scenario|, None when the row leaves it out."""
    want = row["expect"][exercise]
    return want if isinstance(want, str) else want.get(scenario, want.get("*"))


@pytest.mark.parametrize("exercise", TABLE)
def test_matrix_passes_and_fails_it(exercise, scenarios):
    ids = ids_of(scenarios, exercise)
    rows = [r for r in MATRIX if exercise in r["expect"]]
    assert rows, f"tests/verdicts.json has no row for {exercise!r}"
    for r in rows:
        want = r["expect"][exercise]
        named = [] if isinstance(want, str) else [s for s in want if s != "*"]
        named += [k.split("/", 1)[1] for k in r.get("says", {}) if k.split("/", 1)[0] == exercise]
        unknown = sorted(set(named) - set(ids))
        assert not unknown, f"tests/verdicts.json row {r['name']!r} names no scenario of {exercise!r}: {unknown}"
    assert any(all(verdict(r, exercise, s) == "PASS" for s in ids) for r in rows), (
        f"tests/verdicts.json has no row that passes {exercise!r} whole (a reference)"
    )
    assert any(any(verdict(r, exercise, s) == "FAIL" for s in ids) for r in rows), (
        f"tests/verdicts.json has no row that fails {exercise!r} (a mistake)"
    )


@pytest.mark.parametrize("exercise", TABLE)
def test_handout(exercise):
    path = os.path.join(REPO, "lab", "exercises", exercise + ".md")
    assert os.path.isfile(path) and os.path.getsize(path) > 0, f"no handout lab/exercises/{exercise}.md"


@pytest.mark.parametrize("exercise", TABLE)
def test_lab_init_row_and_starters(exercise):
    rows = init_rows()
    assert exercise in rows, f"lab/init.c's starters[] has no row for {exercise!r}"
    kind, langs = rows[exercise]
    if kind == "config":
        # A config exercise: the starter JSON, the world lab init adds to
        # it, and test_starters' solution.
        for path in (("starters", "config"), ("grader", "worlds"), ("tests", "starters")):
            f = os.path.join(REPO, *path, exercise + ".json")
            assert os.path.isfile(f), f"a config exercise needs {os.path.relpath(f, REPO)}"
        return
    assert langs, f"lab/init.c's row for {exercise!r} offers no language"
    for lang in langs:
        folder, ext = LANG_DIRS[lang]
        d = os.path.join(REPO, "starters", kind, folder)
        assert os.path.isfile(os.path.join(d, "run")), f"no starters/{kind}/{folder}/run"
        assert any(n.endswith(ext) for n in os.listdir(d)), f"no {ext} file in starters/{kind}/{folder}"
        solution = os.path.join(REPO, "tests", "starters", kind + ext)
        assert os.path.isfile(solution), f"no tests/starters/{kind}{ext} (the filled-in TODO the starter tests use)"
