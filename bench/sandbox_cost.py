#!/usr/bin/env python3
"""What the grader's sandbox costs: the same scenarios graded N times with
the sandbox (the default) and with --no-sandbox, alternating, and the
grader's wall time per scenario run compared (median and 90th percentile).
Also the cost of the start-up check (the probe through unshare and the
jail), as the wall time of a grading with nothing to run.

    bench/sandbox_cost.py [--runs N]

Needs root and the sandbox's kernel features (docs/sandbox.md). Prints a
Markdown table; the figures recorded are in bench/results/sandbox.md."""

import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("RELAYLAB_BIN", os.path.join(ROOT, "bin"))
SUB = os.path.join(ROOT, "tests", "submissions")
PY = "/usr/bin/python3"

CASES = [
    ("deadline", "once", f"{BIN}/relay", "C relay"),
    ("deadline", "once", f"{PY} {SUB}/relay_good.py", "grpcio relay"),
    ("deadline", "once", f"node {SUB}/node/relay_good.js", "grpc-js relay"),
    ("flow", "stall", f"{BIN}/streamer", "C streamer"),
]


def wall(argv):
    t0 = time.monotonic()
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, timeout=300)
    dt = time.monotonic() - t0
    if p.returncode not in (0, 1):
        sys.exit(f"grader failed ({p.returncode}): {' '.join(argv)}\n{p.stdout.decode()}{p.stderr.decode()}")
    return dt


def ms(xs, q):
    xs = sorted(xs)
    return 1000 * (statistics.median(xs) if q == 50 else xs[min(len(xs) - 1, int(len(xs) * q / 100))])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=10)
    a = ap.parse_args()
    print(f"{a.runs} gradings of one scenario each way, alternating\n")
    print("| submission | scenario | sandboxed median | unsandboxed median | cost (median) | sandboxed p90 | unsandboxed p90 |")
    print("|---|---|---|---|---|---|---|")
    for ex, sc, cmd, name in CASES:
        on, off = [], []
        for _ in range(a.runs):
            base = [f"{BIN}/grader", ex, "--only", sc, "--quiet", "--submission", cmd]
            on.append(wall(base))
            off.append(wall(base + ["--no-sandbox"]))
        print(f"| {name} | {ex}/{sc} | {ms(on, 50):.0f} ms | {ms(off, 50):.0f} ms | {ms(on, 50) - ms(off, 50):+.0f} ms "
              f"| {ms(on, 90):.0f} ms | {ms(off, 90):.0f} ms |", flush=True)
    # The start-up check alone: --only with a scenario whose submission
    # never listens would still run it; instead time `true` as a submission
    # that exits at once, with and without the sandbox.
    on, off = [], []
    for _ in range(a.runs):
        base = [f"{BIN}/grader", "deadline", "--only", "once", "--quiet", "--ready-timeout", "1", "--submission",
                "exit 0"]
        on.append(wall(base))
        off.append(wall(base + ["--no-sandbox"]))
    print(f"| `exit 0` (start-up check and one jail) | deadline/once | {ms(on, 50):.0f} ms | {ms(off, 50):.0f} ms "
          f"| {ms(on, 50) - ms(off, 50):+.0f} ms | {ms(on, 90):.0f} ms | {ms(off, 90):.0f} ms |")


if __name__ == "__main__":
    main()
