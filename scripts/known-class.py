#!/usr/bin/env python3
"""Builds a class folder for bin/grade-class from the known submissions of
tests/verdicts.json: one student folder a matrix row, holding one folder the
way `lab init` leaves it (a .relaylab marker naming its exercises and its
submission: a `run` script, or the config file), so that the row's program
runs from its own folder as a student's does (the sandbox shows it nothing
else of the kit). Also writes the verdict each scenario must get.

    scripts/known-class.py DEST [--only TEXT,TEXT] [--limit N]
    scripts/known-class.py DEST --full N   # N students, each with every exercise
    scripts/known-class.py DEST --check OUT     # OUT/grades.csv against DEST/expect.json

DEST/class/STUDENT/sub/ is the class (grade DEST/class, not DEST: DEST holds the
class folder and expect.json); DEST/expect.json maps each student to
its row's 'expect'. The known class is graded with
    bin/grade-class DEST/class --out OUT --variant-from marker \\
        --world keepalive=tests/configs/worlds/nat-350s.json
(the markers name no variant: the worlds' defaults, as the matrix grades).

Rows left out, and why: the hostile ones (they need the grader's --dir to be
tests/submissions, or their own --memory-limit: they test the sandbox, not a
class), rows judged in a world other than nat-350s (one class has one
world an exercise), and rows that run some scenarios only (--only)."""

import argparse
import glob
import json
import os
import re
import shutil
import stat
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUBS = os.path.join(ROOT, "tests", "submissions")
CLASS_WORLDS = {"keepalive": "tests/configs/worlds/nat-350s.json"}
# The PROTO line of tests/submissions/node/common.js, which finds the proto
# three folders up; a student's folder has its own copy (as `lab init`'s).
NODE_PROTO = "path.join(__dirname, '..', '..', '..', 'proto', 'relaylab.proto')"


def bin_dir():
    return os.environ.get("RELAYLAB_BIN", os.path.join(ROOT, "bin"))


def usable(row):
    """(True, None) or (False, why) for a matrix row."""
    if "hostile/" in row["run"]:
        return False, "hostile: tests the sandbox with its own grader options"
    kind = row["run"].partition(":")[0]
    if kind == "starter":
        return False, "a starter as lab init hands it out: graded through lab check in a fresh folder"
    if kind == "go":
        return False, "a known Go submission: built by scripts/go-known.sh for the selftest only"
    args = list(row.get("args", []))
    while args:
        opt, val = args[0], args[1]
        args = args[2:]
        if opt == "--world":
            ex = [e for e in row["expect"]]
            if any(CLASS_WORLDS.get(e) != val for e in ex):
                return False, f"judged in its own world {val}"
        elif opt != "--ready-timeout":  # only shortens a NOT-READY: same verdict
            return False, f"needs the grader option {opt}"
    return True, None


def slug(i, name):
    s = re.sub(r"[^A-Za-z0-9._-]+", "-", name.split(" (")[0]).strip("-.")
    return f"k{i:02d}-{s}"[:60]


def write_run(path, line):
    with open(path, "w") as f:
        f.write("#!/bin/sh\n# What the grader runs (the marker's submission).\n"
                'cd "$(dirname "$0")" || exit 1\n' + line + "\n")
    os.chmod(path, 0o755)


def make_sub(row, sub):
    """Fills |sub| for |row|; returns the marker's submission."""
    kind, _, arg = row["run"].partition(":")
    words = arg.split()
    os.makedirs(sub)
    if kind == "python":
        for f in glob.glob(os.path.join(SUBS, "*.py")):
            shutil.copy(f, sub)
        shutil.copytree(os.path.join(ROOT, "build", "gen", "py"), os.path.join(sub, "gen"))
        write_run(os.path.join(sub, "run"), "PYTHONPATH=gen exec /usr/bin/python3 " + " ".join(words))
        return "./run"
    if kind == "node":
        nd = os.path.join(SUBS, "node")
        for f in glob.glob(os.path.join(nd, "*.js")) + glob.glob(os.path.join(nd, "*.json")):
            shutil.copy(f, sub)
        # Hard links: node_modules is large and read-only here.
        shutil.copytree(os.path.join(nd, "node_modules"), os.path.join(sub, "node_modules"),
                        copy_function=os.link)
        os.makedirs(os.path.join(sub, "proto"))
        shutil.copy(os.path.join(ROOT, "proto", "relaylab.proto"), os.path.join(sub, "proto"))
        common = os.path.join(sub, "common.js")
        text = open(common).read()
        if NODE_PROTO not in text:
            raise SystemExit(f"known-class: {common} no longer finds the proto as expected")
        with open(common, "w") as f:
            f.write(text.replace(NODE_PROTO, "path.join(__dirname, 'proto', 'relaylab.proto')"))
        write_run(os.path.join(sub, "run"), "exec node " + " ".join(words))
        return "./run"
    if kind == "bin":
        shutil.copy(os.path.join(bin_dir(), words[0]), sub)
        write_run(os.path.join(sub, "run"), "exec ./" + " ".join(words))
        return "./run"
    if kind == "config":
        shutil.copy(os.path.join(ROOT, arg), sub)
        return os.path.basename(arg)
    raise ValueError(f"unknown run kind in {row['run']!r}")


def open_up(path):
    """Readable by others, as the sandbox (user nobody) needs."""
    for d, dirs, files in os.walk(path):
        for n in dirs + files:
            p = os.path.join(d, n)
            if not os.path.islink(p):
                m = os.stat(p).st_mode
                os.chmod(p, m | stat.S_IROTH | (stat.S_IXOTH if m & stat.S_IXUSR else 0))
    os.chmod(path, 0o755)


def prepare(rows):
    """Makes sure what |rows| copy exists before anything is written, so a
    missing piece is a clear message, not a traceback and a half-built
    class: the Node submissions' node_modules (installed here with
    scripts/node-deps.sh, `npm ci` from the npm registry, when missing),
    the Python stubs and the programs (`make` builds them)."""
    kinds = {r["run"].partition(":")[0] for r in rows}
    if "node" in kinds and not os.path.isdir(os.path.join(SUBS, "node", "node_modules")):
        print("known-class: tests/submissions/node/node_modules is missing: installing it "
              "(sh scripts/node-deps.sh, npm ci)", file=sys.stderr)
        r = subprocess.run(["sh", os.path.join(ROOT, "scripts", "node-deps.sh")], cwd=ROOT)
        if r.returncode != 0 or not os.path.isdir(os.path.join(SUBS, "node", "node_modules")):
            raise SystemExit("known-class: the Node submissions need tests/submissions/node/node_modules, and "
                             "scripts/node-deps.sh could not install it (see build/node-deps.log; `make node-deps` "
                             "runs the same); nothing was written")
    if "python" in kinds and not os.path.isdir(os.path.join(ROOT, "build", "gen", "py")):
        raise SystemExit("known-class: the Python submissions need the generated stubs in build/gen/py: run `make` "
                         "first; nothing was written")
    if "bin" in kinds and not os.path.isfile(os.path.join(bin_dir(), "relay")):
        raise SystemExit(f"known-class: the reference programs are not built ({bin_dir()}/relay is missing): run "
                         "`make` first; nothing was written")


def build(dest, only=None, limit=None, rows=None):
    """Makes dest/class and dest/expect.json; returns {student: expect}."""
    doc = json.load(open(os.path.join(ROOT, "tests", "verdicts.json")))
    prepare([r for r in doc["submissions"] if (not only or any(t in r["name"] for t in only)) and usable(r)[0]])
    cls = os.path.join(dest, "class")
    os.makedirs(cls)
    expect, left_out = {}, []
    for i, row in enumerate(doc["submissions"]):
        if only and not any(t in row["name"] for t in only):
            continue
        ok, why = usable(row)
        if not ok:
            left_out.append((row["name"], why))
            continue
        student = slug(i, row["name"])
        submission = make_sub(row, os.path.join(cls, student, "sub"))
        with open(os.path.join(cls, student, "sub", ".relaylab"), "w") as f:
            f.write("# written by scripts/known-class.py, as `lab init` writes it\n"
                    f"exercises {' '.join(row['expect'])}\nlang known\nsubmission {submission}\nvariant \n")
        expect[student] = {"row": row["name"], "expect": row["expect"]}
        if limit and len(expect) >= limit:
            break
    open_up(dest)
    with open(os.path.join(dest, "expect.json"), "w") as f:
        json.dump({"students": expect, "left_out": left_out}, f, indent=1)
    return expect


def build_full(dest, n):
    """Makes a class of |n| students who each hand in every exercise: for
    each exercise, student j takes the j-th usable row that has it (cycling
    through them), in a folder of its own. The class a grading-time goal
    is measured on ("40 students, every exercise"); the mix of good and
    mistaken rows is the matrix's. Returns {student: expect}."""
    doc = json.load(open(os.path.join(ROOT, "tests", "verdicts.json")))
    by_ex = {}
    for row in doc["submissions"]:
        if usable(row)[0]:
            for ex in row["expect"]:
                by_ex.setdefault(ex, []).append(row)
    prepare([r for rows in by_ex.values() for r in rows[:n]])
    cls = os.path.join(dest, "class")
    os.makedirs(cls)
    expect = {}
    for j in range(n):
        student = f"s{j:03d}"
        exp = {"row": {}, "expect": {}}
        for ex, rows in sorted(by_ex.items()):
            row = rows[j % len(rows)]
            sub = os.path.join(cls, student, ex)
            submission = make_sub(row, sub)
            with open(os.path.join(sub, ".relaylab"), "w") as f:
                f.write("# written by scripts/known-class.py --full, as `lab init` writes it\n"
                        f"exercises {ex}\nlang known\nsubmission {submission}\nvariant \n")
            exp["row"][ex] = row["name"]
            exp["expect"][ex] = row["expect"][ex]
        expect[student] = exp
    open_up(dest)
    with open(os.path.join(dest, "expect.json"), "w") as f:
        json.dump({"students": expect, "left_out": []}, f, indent=1)
    return expect


def read_csv(path):
    """{(student, exercise, scenario): row dict} of a grades.csv."""
    import csv
    with open(path, newline="") as f:
        return {(r["student"], r["exercise"], r["scenario"]): r for r in csv.DictReader(f)}


def check(dest, out):
    """Mismatches between OUT/grades.csv and DEST/expect.json, as lines: every
    scenario of an expected exercise must get its verdict, every other
    exercise must be MISSING, and every student must be there."""
    exp = json.load(open(os.path.join(dest, "expect.json")))["students"]
    got = read_csv(os.path.join(out, "grades.csv"))
    bad, seen = [], set()
    for (student, ex, sc), r in sorted(got.items()):
        seen.add(student)
        if student not in exp:
            bad.append(f"{student}: not a student of the class")
            continue
        want = exp[student]["expect"].get(ex)
        if want is None:
            want = "MISSING"
        elif isinstance(want, dict):
            want = want.get(sc, want.get("*"))
        if r["verdict"] != want:
            bad.append(f"{student} {ex}/{sc}: expected {want}, got {r['verdict']}: {r['feedback'][:200]}")
    for student in exp:
        if student not in seen:
            bad.append(f"{student}: no row in grades.csv")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dest")
    ap.add_argument("--only", help="comma-separated texts: rows whose name has one")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--check", metavar="OUT", help="compare OUT/grades.csv with DEST/expect.json")
    ap.add_argument("--full", type=int, metavar="N", help="N students, each with every exercise")
    a = ap.parse_args()
    if a.check:
        bad = check(a.dest, a.check)
        for line in bad:
            print(line)
        print(f"known-class: {'every verdict as expected' if not bad else f'{len(bad)} verdicts not as expected'}")
        return 1 if bad else 0
    if a.full:
        exp = build_full(a.dest, a.full)
        print(f"known-class: {len(exp)} students, each with every exercise, in {os.path.join(a.dest, 'class')} "
              f"(grade that folder: bin/grade-class {os.path.join(a.dest, 'class')} --out OUT ...)")
        return 0
    exp = build(a.dest, a.only.split(",") if a.only else None, a.limit)
    print(f"known-class: {len(exp)} students in {os.path.join(a.dest, 'class')} "
          f"(grade that folder: bin/grade-class {os.path.join(a.dest, 'class')} --out OUT ...)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
