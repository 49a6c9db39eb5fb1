#!/usr/bin/env python3
"""The balance exercise's figures over many runs: for each config given, runs
`bin/grader balance --runs N --verbose` once (optionally with a CPU hog on
every core) and prints, per scenario, the verdicts and the distribution of the
measured figures the feedback quotes: the joining backend's fill-up time and
share, reconnects per client per minute, the most reconnects within 1.5 s,
failed calls, and how late the grader's own thread ran (its lag).

    bench/balance.py [--runs 20] [--load] CONFIG...

A measurement, not a test: record what it prints in bench/results/balance.md
with the date and the machine's load."""
import argparse
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import selftest  # noqa: E402  (the Hog and the run-line format)

FIGURES = {
    "fills": [("fill s", r"its share \(\d+ % or more over 30 s\) (\d+) s after"),
              ("share after %", r"s\), (\d+) % of the calls from then on")],
    "no-failures": [("failed", r"^(\d+) of \d+ calls failed"), ("lag ms", r"lagged (?:at most )?(\d+) ms")],
    "churn": [("reconnects/client/min", r"([\d.]+) (?:reconnects )?per client per minute")],
    "no-storm": [("most within 1.5 s", r"at most (\d+) within|up to (\d+) reconnects")],
}


def spread(xs):
    if not xs:
        return "-"
    xs = sorted(xs)
    return f"{xs[0]:g} / {statistics.median(xs):g} / {xs[-1]:g}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--load", action="store_true", help="a CPU hog on every core")
    ap.add_argument("configs", nargs="+")
    a = ap.parse_args()
    grader = os.path.join(ROOT, "bin", "grader")
    with selftest.Hog(a.load):
        for cfg in a.configs:
            p = subprocess.run([grader, "balance", "--submission", cfg, "--runs", str(a.runs), "--verbose"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               timeout=120 + a.runs * 5 * 60, cwd=ROOT)
            print(f"\n{cfg}: {a.runs} runs{', every core loaded' if a.load else ''} (exit {p.returncode})")
            verdicts, figs = {}, {}
            for line in p.stderr.splitlines():
                m = selftest.RUN_RE.match(line)
                if not m or m.group(1) != "balance":
                    continue
                sid, verdict, feedback = m.group(2), m.group(5), m.group(7)
                verdicts.setdefault(sid, []).append(verdict)
                for name, rx in FIGURES.get(sid, []):
                    f = re.search(rx, feedback)
                    if f:
                        figs.setdefault((sid, name), []).append(float(next(g for g in f.groups() if g)))
                    elif name == "failed" and verdict == "PASS":
                        figs.setdefault((sid, name), []).append(0.0)
            for sid, vs in verdicts.items():
                counts = ", ".join(f"{v} {vs.count(v)}" for v in sorted(set(vs)))
                extra = "; ".join(f"{name} {spread(figs.get((sid, name), []))}" for name, _ in FIGURES.get(sid, []))
                print(f"  {sid:12} {counts:24} {extra}")


if __name__ == "__main__":
    main()
