#!/usr/bin/env python3
"""The verdict matrix: grades every known submission in tests/verdicts.json on
every exercise it belongs to, N runs each, optionally with a CPU hog on every
core, and prints expected against got for every scenario (and, for a row with
a "score", the score: the starters as `lab init` hands them out and the empty
configs must score 0).

    scripts/selftest.py [--runs N] [--load] [--jobs N] [--only TEXT]
                        [--exercise EX] [--selftest-only] [--report FILE] [--json FILE]

A cell is right only when every run got the expected verdict (read from the
grader's per-run progress lines, so 19 FAILs and one CRASH are not taken for
20 FAILs). Exit status: 0 when every cell is right, 1 when one is not, 2 when
the matrix could not be run (a grader that would not start, a bad matrix)."""

import argparse
import collections
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MATRIX = os.path.join(ROOT, "tests", "verdicts.json")
SUBMISSIONS = os.path.join(ROOT, "tests", "submissions")
PYTHON = "/usr/bin/python3"
VERDICTS = ("PASS", "FAIL", "TIMEOUT", "CRASH", "NOT-READY", "ERROR")
# "deadline/shrinks run 3/20: FAIL (2.1 s) feedback..."
RUN_RE = re.compile(r"^(\S+)/(\S+) run (\d+)/(\d+): (\S+) \(([0-9.]+) s\) ?(.*)$")


def bin_dir():
    return os.environ.get("RELAYLAB_BIN", os.path.join(ROOT, "bin"))


_go_built = None
_go_lock = threading.Lock()


def go_known():
    """build/go-known/known, the known Go submissions' program, built once
    per process (scripts/go-known.sh; Go's cache makes a rebuild about 1 s).
    Raises RuntimeError with the build's output when it fails."""
    global _go_built
    with _go_lock:
        if _go_built is None:
            p = subprocess.run(["sh", os.path.join(ROOT, "scripts", "go-known.sh")], capture_output=True, text=True,
                               stdin=subprocess.DEVNULL, timeout=600)
            if p.returncode != 0:
                raise RuntimeError(f"scripts/go-known.sh failed: {p.stdout}{p.stderr}")
            _go_built = os.path.join(ROOT, "build", "go-known", "known")
        return _go_built


def command(run):
    """The grader's --submission for a matrix row's 'run' (not 'starter:')."""
    kind, _, arg = run.partition(":")
    if kind == "go":
        return f"{go_known()} {arg}"
    if kind == "python":
        return f"{PYTHON} {os.path.join(SUBMISSIONS, arg)}"
    if kind == "node":
        return f"node {os.path.join(SUBMISSIONS, 'node', arg)}"
    if kind == "bin":
        return os.path.join(bin_dir(), arg)
    if kind == "config":
        return os.path.join(ROOT, arg)
    raise ValueError(f"unknown run kind in {run!r}")


def starter(run):
    """A fresh `lab init` folder for a row's 'starter:EXERCISE/LANG' (a
    command starter) or 'starter:EXERCISE' (a config starter, made for the
    id S1), as a student gets it, in a folder the sandbox's nobody can read
    (under build/, as tests/integration/test_starters.py makes them). The
    caller removes its parent."""
    exercise, _, lang = run.partition(":")[2].partition("/")
    base = os.path.join(ROOT, "build", "matrix-starters")
    os.makedirs(base, exist_ok=True)
    os.chmod(base, 0o755)
    parent = tempfile.mkdtemp(dir=base)
    os.chmod(parent, 0o755)
    folder = os.path.join(parent, exercise)
    argv = [os.path.join(bin_dir(), "lab"), "init", exercise, *(("--lang", lang) if lang else ("--student", "S1")),
            folder]
    p = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300)
    if p.returncode != 0:
        shutil.rmtree(parent, ignore_errors=True)
        raise RuntimeError(f"{' '.join(argv)} failed: {p.stdout}{p.stderr}")
    return parent, folder


def load_matrix(path=MATRIX):
    """[(row, exercise, {scenario or '*': verdict})] in file order."""
    with open(path) as f:
        doc = json.load(f)
    cells = []
    for row in doc["submissions"]:
        for ex, want in row["expect"].items():
            want = {"*": want} if isinstance(want, str) else dict(want)
            for v in want.values():
                if v not in VERDICTS:
                    raise ValueError(f"{row['name']}: unknown verdict {v!r}")
            cells.append((row, ex, want))
    return cells


def expected(want, scenario):
    return want.get(scenario, want.get("*"))


def grade(run, exercise, runs, timeout_s=None, args=()):
    """Runs the grader once for |runs| runs of every scenario; a 'starter:'
    row through `lab check` in a fresh starter folder, as a student would.
    Returns (exit code, {scenario: [verdict per run]}, {scenario: last
    feedback per verdict}, stderr text, the score results.json gave, and
    {scenario: its output in results.json})."""
    parent = None
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "results.json")
        common = ["--runs", str(runs), "--json", out, "--verbose", *args]
        if run.startswith("starter:"):
            parent, cwd = starter(run)
            argv = [os.path.join(bin_dir(), "lab"), "check", exercise, *common]
        else:
            cwd = ROOT
            argv = [os.path.join(bin_dir(), "grader"), exercise, "--submission", command(run), *common]
        # A scenario run is bounded by the grader's 60 s watchdog; seven
        # scenarios at most per exercise.
        timeout_s = timeout_s or 120 + runs * 7 * 60
        try:
            p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout_s, cwd=cwd,
                               stdin=subprocess.DEVNULL)
        finally:
            if parent:
                shutil.rmtree(parent, ignore_errors=True)
        err = p.stderr.decode(errors="replace")
        verdicts = collections.OrderedDict()
        feedback = {}
        for line in err.splitlines():
            m = RUN_RE.match(line)
            if m and m.group(1) == exercise:
                verdicts.setdefault(m.group(2), []).append(m.group(5))
                feedback[(m.group(2), m.group(5))] = m.group(7)
        score, outputs = None, {}
        try:
            with open(out) as f:
                results = json.load(f)
            score = results.get("score")
            # What results.json tells each scenario: the verdict, why points
            # were held (a guard waiting for its lesson), the feedback.
            outputs = {t["name"].split(":", 1)[0].partition("/")[2]: t.get("output", "")
                       for t in results.get("tests", [])}
        except (OSError, ValueError, KeyError, AttributeError):
            pass
        return p.returncode, verdicts, feedback, err, score, outputs


def wrong_score(row, score):
    """Why the row's 'score' (what every exercise of it must score: 0 for a
    starter as handed out or an empty config) was not met, or None."""
    want = row.get("score")
    if want is None or score == want:
        return None
    return f"scored {score}, not {want}: points for a lesson not learned"


def timed_grade(row, exercise, runs):
    t0 = time.monotonic()
    result = grade(row["run"], exercise, runs, args=row.get("args", ()))
    return result, time.monotonic() - t0


class Hog:
    """One busy loop per core, so that the matrix also runs on a machine with
    every core taken; stopped (by pid) on exit."""

    def __init__(self, on):
        self.procs = []
        if on:
            for _ in range(os.cpu_count() or 2):
                self.procs.append(subprocess.Popen(["/bin/sh", "-c", "while :; do :; done"]))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.kill()
            p.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=int(os.environ.get("RUNS", "1")))
    ap.add_argument("--load", action="store_true", default=os.environ.get("LOAD", "0") == "1",
                    help="a CPU hog on every core while grading (also LOAD=1)")
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("JOBS", "1")),
                    help="graders at once (each cell is still graded by one grader, its runs in order)")
    ap.add_argument("--only", action="append",
                    help="rows whose name or run contains this text (repeat it: rows matching any)")
    ap.add_argument("--exercise", action="append", help="only this exercise (repeat it: any of them)")
    ap.add_argument("--skip-exercise", action="append", default=[], help="leave this exercise out (repeat it)")
    ap.add_argument("--selftest-only", action="store_true",
                    help="only the rows marked selftest_only (the ones make test leaves out)")
    ap.add_argument("--report", help="also write the matrix as Markdown here")
    ap.add_argument("--json", help="also write the matrix as JSON here")
    a = ap.parse_args()
    try:
        cells = load_matrix()
    except (OSError, ValueError, KeyError) as e:
        print(f"selftest: cannot read {MATRIX}: {e}", file=sys.stderr)
        return 2
    cells = [c for c in cells
             if (not a.only or any(t in c[0]["name"] or t in c[0]["run"] for t in a.only))
             and (not a.exercise or c[1] in a.exercise) and c[1] not in a.skip_exercise
             and (not a.selftest_only or c[0].get("selftest_only"))]
    if not cells:
        print("selftest: no row matches", file=sys.stderr)
        return 2
    rows, bad, t0 = [], 0, time.monotonic()
    print(f"verdict matrix: {len(cells)} submission x exercise cells, {a.runs} run(s) each"
          f"{', every core loaded' if a.load else ''}{f', {a.jobs} graders at once' if a.jobs > 1 else ''}",
          flush=True)
    with Hog(a.load), concurrent.futures.ThreadPoolExecutor(max(1, a.jobs)) as pool:
        jobs = [(row, ex, want, pool.submit(timed_grade, row, ex, a.runs)) for row, ex, want in cells]
        for row, ex, want, job in jobs:
            try:
                (code, got, feedback, err, score, _), secs = job.result()
            except subprocess.TimeoutExpired:
                print(f"selftest: the grader did not finish: {row['name']} {ex}", file=sys.stderr)
                return 2
            if not got:
                print(f"selftest: the grader printed no runs for {row['name']} {ex} (exit {code}):\n{err[-2000:]}",
                      file=sys.stderr)
                return 2
            for sid, vs in got.items():
                exp = expected(want, sid)
                n = sum(v == exp for v in vs)
                ok = n == len(vs)
                bad += not ok
                counts = collections.Counter(vs)
                gotstr = ", ".join(f"{v} {c}/{len(vs)}" for v, c in counts.most_common())
                worst = next((feedback[(sid, v)] for v in counts if v != exp), "")
                rows.append({"submission": row["name"], "exercise": ex, "scenario": sid, "expected": exp,
                             "got": dict(counts), "runs": len(vs), "ok": ok, "feedback": worst})
                print(f"{'ok ' if ok else 'BAD'} {row['name'][:34]:34} {ex:9} {sid:18} want {exp:9} got {gotstr}"
                      + ("" if ok else f"\n    {worst}"), flush=True)
            why = wrong_score(row, score)
            if why:
                bad += 1
                rows.append({"submission": row["name"], "exercise": ex, "scenario": "(score)", "expected":
                             str(row["score"]), "got": {str(score): 1}, "runs": 1, "ok": False, "feedback": why})
                print(f"BAD {row['name'][:34]:34} {ex:9} {why}", flush=True)
            print(f"    ({secs:.0f} s)", flush=True)
    secs = time.monotonic() - t0
    print(f"{len(rows) - bad} right, {bad} wrong of {len(rows)} scenario cells in {secs:.0f} s")
    if a.report:
        write_report(a.report, rows, a.runs, a.load, a.jobs, secs)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"runs": a.runs, "load": a.load, "seconds": round(secs), "cells": rows}, f, indent=1)
    return 0 if bad == 0 else 1


def write_report(path, rows, runs, load, jobs, secs):
    with open(path, "w") as f:
        f.write(f"# Verdict matrix: {runs} run(s) per scenario, {'every core loaded' if load else 'quiet'}\n\n")
        f.write(f"Recorded {time.strftime('%Y-%m-%d')} by `scripts/selftest.py --runs {runs}"
                f"{' --load' if load else ''}{f' --jobs {jobs}' if jobs > 1 else ''}` in {secs:.0f} s on a "
                f"{os.cpu_count()}-core machine.\n\n")
        f.write("| submission | exercise | scenario | expected | got | right |\n|---|---|---|---|---|---|\n")
        for r in rows:
            got = ", ".join(f"{v} {c}/{r['runs']}" for v, c in r["got"].items())
            f.write(f"| {r['submission']} | {r['exercise']} | {r['scenario']} | {r['expected']} | {got} | "
                    f"{'yes' if r['ok'] else 'NO: ' + r['feedback'].replace('|', '/')} |\n")
        bad = sum(not r["ok"] for r in rows)
        f.write(f"\n{len(rows) - bad} of {len(rows)} cells right.\n")


if __name__ == "__main__":
    sys.exit(main())
