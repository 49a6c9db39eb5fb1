#!/usr/bin/python3
"""The soak: runs the integration suite RUNS times from a fresh clone of this
checkout's HEAD under a 0700 folder, half of the runs with a CPU hog on every
core, and prints every test that failed with its rate, quiet and loaded apart.

`make soak` (RUNS=5 by default) runs it; it is not part of `make test`, whose
integration suite alone takes 7 to 10 minutes a run. What it shows:

- a fresh clone: nothing of this checkout's build/, node_modules or stray
  files is used, only what HEAD holds (uncommitted changes are not soaked:
  it says so);
- a 0700 folder above the clone (what `mktemp -d` makes, and what a Debian
  home folder is): a test that assumes the checkout is world-readable (the
  grader's sandbox runs submissions, and some tests the grader, as nobody)
  fails here;
- loaded runs: one busy process per core for the whole run, on top of
  whatever else the machine does. Every verdict is meant to hold there.

Each run is the clone's `make integration` (the same four pytest groups as
`make test`, side by side), with JUNIT set so that every group writes a
pytest junitxml report; the reports are parsed for failures and errors and
kept under build/soak/ of this checkout. The hogs are processes this script
starts and ends by pid; each also ends by itself after the run's time limit,
so an interrupted soak leaves none behind. The clone is removed at the end
unless --keep.
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, ".."))
PYTHON = "/usr/bin/python3"
# A run of `make integration` took 7 to 10 minutes on 2 cores; one that is
# still going after RUN_LIMIT_S hangs, and is ended (its process group).
RUN_LIMIT_S = 45 * 60
BUILD_LIMIT_S = 30 * 60
# A busy loop that ends itself after argv[1] seconds.
HOG_CODE = "import sys, time\nend = time.monotonic() + float(sys.argv[1])\nwhile time.monotonic() < end:\n    pass\n"


def say(*args):
    print("soak:", *args, flush=True)


def git(*args, cwd=REPO):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True,
                          stdin=subprocess.DEVNULL).stdout.strip()


class Hogs:
    """One busy process per core while a loaded run lasts; ended by pid on
    exit, and each ends itself after |seconds| whatever happens here."""

    def __init__(self, on, seconds):
        self.on, self.seconds, self.procs = on, seconds, []

    def __enter__(self):
        if self.on:
            for _ in range(os.cpu_count() or 2):
                self.procs.append(subprocess.Popen([PYTHON, "-c", HOG_CODE, str(self.seconds)],
                                                   stdin=subprocess.DEVNULL))
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait()
        self.procs = []


def clone_env():
    """The environment for the clone's make: nothing of an enclosing make
    (`make soak`'s MAKEFLAGS would pass its variables and jobserver on)."""
    return {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")}


def run_limited(argv, cwd, limit_s, log_path, env=None):
    """Runs |argv| in its own session with output to |log_path|; ends its
    process group after |limit_s|. Returns (exit status or None on the
    limit, seconds taken)."""
    t0 = time.monotonic()
    with open(log_path, "w") as log:
        p = subprocess.Popen(argv, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             start_new_session=True, env=env)
        try:
            rc = p.wait(limit_s)
        except subprocess.TimeoutExpired:
            rc = None
        finally:
            if p.poll() is None or rc is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait()
    return rc, time.monotonic() - t0


def node_id(case):
    """tests/integration/test_x.py::test_y[param] from a junitxml testcase
    (xunit1: it carries the file)."""
    name = case.get("name", "?")
    path = case.get("file")
    classname = case.get("classname", "")
    if not path:
        return f"{classname.replace('.', '/')}.py::{name}"
    module = path[:-3].replace("/", ".") if path.endswith(".py") else path
    inner = classname[len(module) + 1:] if classname.startswith(module + ".") else ""
    return f"{path}::{inner + '::' if inner else ''}{name}"


def read_report(path):
    """(tests run, {node id: first line of why it failed}) from a junitxml
    file."""
    root = ET.parse(path).getroot()
    cases, failed = 0, {}
    for case in root.iter("testcase"):
        cases += 1
        for child in case:
            if child.tag in ("failure", "error"):
                msg = (child.get("message") or child.text or child.tag).strip().splitlines()
                failed[node_id(case)] = f"{child.tag}: {msg[0][:200] if msg else ''}"
                break
    return cases, failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=int(os.environ.get("RUNS", "5")),
                    help="runs of the integration suite (also RUNS; default 5), half of them loaded")
    ap.add_argument("--keep", action="store_true", help="keep the clone (its path is printed)")
    ap.add_argument("--reports", default=os.path.join(REPO, "build", "soak"),
                    help="where each run's junitxml reports and make output are kept (default build/soak)")
    args = ap.parse_args()
    if args.runs < 1:
        ap.error("--runs must be at least 1")

    head = git("rev-parse", "HEAD")
    if git("status", "--porcelain", "--untracked-files=no"):
        say(f"this checkout has uncommitted changes; the soak runs HEAD {head[:12]} without them")
    top = tempfile.mkdtemp(prefix="relaylab-soak-")  # 0700, as mktemp -d makes it
    os.chmod(top, 0o700)
    clone = os.path.join(top, "relaylab")
    shutil.rmtree(args.reports, ignore_errors=True)
    os.makedirs(args.reports)
    # Loaded runs alternate with quiet ones, so that what the rest of the
    # machine does falls on both alike; the first is quiet.
    loaded = [i % 2 == 1 for i in range(args.runs)]
    ncores = os.cpu_count() or 2
    say(f"{args.runs} runs of the integration suite at {head[:12]} in {clone} (its parent is 0700): "
        f"{loaded.count(False)} quiet, {loaded.count(True)} with a CPU hog on each of {ncores} cores")
    results = []  # (loaded, {id: why} or None when no report, tests, seconds, make status)
    try:
        git("clone", "-q", "--no-hardlinks", REPO, clone, cwd=top)
        git("checkout", "-q", "--detach", head, cwd=clone)
        rc, secs = run_limited(["make", "-j2"], clone, BUILD_LIMIT_S, os.path.join(args.reports, "build.log"),
                               clone_env())
        if rc != 0:
            say(f"the clone did not build (make exit status {rc}); see {args.reports}/build.log")
            return 2
        say(f"built in {secs:.0f} s")
        for i, load in enumerate(loaded, 1):
            base = os.path.join(args.reports, f"run{i}")
            with Hogs(load, RUN_LIMIT_S + 60):
                rc, secs = run_limited(["make", "--no-print-directory", "integration", f"JUNIT={base}"], clone,
                                       RUN_LIMIT_S, base + ".log", clone_env())
            tests, failed, missing = 0, {}, []
            for group in ("matrix", "demos", "whole", "rest"):
                path = f"{base}-{group}.xml"
                try:
                    n, f = read_report(path)
                except (OSError, ET.ParseError):
                    missing.append(group)
                    continue
                tests += n
                failed.update(f)
            how = "loaded" if load else "quiet"
            status = "hit the run's time limit" if rc is None else f"make exit status {rc}"
            say(f"run {i}/{args.runs} {how}: {tests} tests, {len(failed)} failed, {secs / 60:.1f} min, {status}"
                + (f"; no report from the {', '.join(missing)} group (see {base}.log)" if missing else ""))
            if rc != 0 and not failed and not missing:
                failed[f"(make integration, run {i})"] = f"{status} with no failed test; see {base}.log"
            for group in missing:
                failed[f"(the {group} group's report)"] = f"missing: {status}; see {base}.log"
            results.append((load, failed))
    except KeyboardInterrupt:
        say("interrupted")
    finally:
        if args.keep:
            say(f"kept the clone: {clone}")
        else:
            shutil.rmtree(top, ignore_errors=True)
    summarize(results)
    return 1 if any(f for _, f in results) else 0


def summarize(results):
    quiet = [f for load, f in results if not load]
    busy = [f for load, f in results if load]
    ids = sorted({t for _, f in results for t in f})
    say(f"{len(results)} runs done ({len(quiet)} quiet, {len(busy)} loaded)")
    if not ids:
        say("no test failed")
        return
    say("failed tests: all runs (quiet, loaded)")
    rows = []
    for t in ids:
        nq = sum(t in f for f in quiet)
        nb = sum(t in f for f in busy)
        rows.append((-(nq + nb), t, nq, nb))
    for _, t, nq, nb in sorted(rows):
        print(f"  {nq + nb}/{len(results)} (quiet {nq}/{len(quiet)}, loaded {nb}/{len(busy)}) {t}")
    say("why each failed, first time seen:")
    for t in ids:
        why = next(f[t] for _, f in results if t in f)
        print(f"  {t}: {why}")


if __name__ == "__main__":
    sys.exit(main())
