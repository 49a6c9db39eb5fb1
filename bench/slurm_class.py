#!/usr/bin/env python3
"""The same known class graded by bin/grade-class locally and through a
single-node Slurm started here (tests/integration/slurm_cluster.py: munged,
slurmctld and slurmd in a network namespace of their own, loopback only,
stopped after), with the wall time of each, the load average around them,
the verdicts of each against tests/verdicts.json, and whether the two CSVs
give the same verdicts. Needs root and slurm-wlm, munge (scripts/install-deps.sh).

    bench/slurm_class.py DEST [--full N | --only TEXT,TEXT] [--exercises LIST] [--jobs N]

--jobs is the local run's graders at once; the Slurm run gets --jobs 5 (a task
a CPU, 5 graders in it), so on a node of C CPUs it runs 5*C graders at once:
give the local run --jobs 5*C to compare like with like (10 on 2 cores)."""

import argparse
import importlib.util
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import slurm_cluster  # noqa: E402

_spec = importlib.util.spec_from_file_location("known_class", os.path.join(ROOT, "scripts", "known-class.py"))
known_class = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(known_class)


def load():
    return open("/proc/loadavg").read().split()[0]


def verdicts(out):
    return {k: r["verdict"] for k, r in known_class.read_csv(os.path.join(out, "grades.csv")).items()}


def timed(what, run):
    before = load()
    t0 = time.monotonic()
    r = run()
    wall = time.monotonic() - t0
    print(f"{what}: exit {r.returncode}, {wall:.1f} s wall, load {before} -> {load()}", flush=True)
    if r.returncode != 0:
        print(r.stderr[-3000:], file=sys.stderr)
    return wall


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dest")
    ap.add_argument("--full", type=int)
    ap.add_argument("--only")
    ap.add_argument("--exercises", default="all")
    ap.add_argument("--jobs", type=int, default=10)
    a = ap.parse_args()
    if a.full:
        known_class.build_full(a.dest, a.full)
    else:
        known_class.build(a.dest, only=a.only.split(",") if a.only else None)
    gc = [os.path.join(known_class.bin_dir(), "grade-class"), os.path.join(a.dest, "class"), "--exercises",
          a.exercises, "--variant-from", "marker", "--world",
          "keepalive=" + os.path.join(ROOT, "tests/configs/worlds/nat-350s.json")]
    local, slurm = os.path.join(a.dest, "out-local"), os.path.join(a.dest, "out-slurm")
    cluster = slurm_cluster.Cluster()
    try:
        t0 = time.monotonic()
        cluster.start()
        print(f"cluster up in {time.monotonic() - t0:.1f} s ({cluster.cpus} CPUs)", flush=True)
        walls = {
            "local": timed(f"local --jobs {a.jobs}", lambda: subprocess.run(
                gc + ["--out", local, "--jobs", str(a.jobs)], capture_output=True, text=True)),
            "slurm": timed("--slurm --jobs 5", lambda: cluster.run(
                gc + ["--out", slurm, "--jobs", "5", "--slurm"], timeout=7200, cwd=ROOT)),
        }
    finally:
        cluster.stop()
        cluster.cleanup()
    for name, out in (("local", local), ("slurm", slurm)):
        bad = known_class.check(a.dest, out)
        n = len(known_class.read_csv(os.path.join(out, "grades.csv")))
        print(f"{name}: {walls[name]:.1f} s, {n - len(bad)} of {n} verdicts as expected")
        for line in bad:
            print("  " + line)
    v1, v2 = verdicts(local), verdicts(slurm)
    diff = [k for k in v1 if v1[k] != v2.get(k)]
    print(f"local and slurm verdicts: {'the same' if not diff and v1.keys() == v2.keys() else diff}")


if __name__ == "__main__":
    main()
