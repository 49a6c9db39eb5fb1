#!/usr/bin/env python3
"""Grading time per exercise from a bin/grade-class results folder: for each
exercise, how many gradings, their total, median and longest wall time (the
grader's own, extra_data.seconds of OUT/STUDENT/EXERCISE.json), and the
estimate for a class of N students who all hand in every exercise (N times the
sum of the medians, serial; divided by the measured speed-up of --jobs).

    bench/class_times.py OUT [--students 40]"""

import argparse
import glob
import json
import os
import statistics
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--students", type=int, default=40)
    a = ap.parse_args()
    times = {}
    for path in glob.glob(os.path.join(a.out, "*", "*.json")):
        if os.path.basename(path) == "results.json":
            continue
        doc = json.load(open(path))
        x = doc.get("extra_data", {})
        if "seconds" in x:
            times.setdefault(x["exercise"], []).append(x["seconds"])
    print("| exercise | gradings | total s | median s | longest s |")
    print("|---|---|---|---|---|")
    medsum = 0.0
    for ex in sorted(times):
        t = times[ex]
        med = statistics.median(t)
        medsum += med
        print(f"| {ex} | {len(t)} | {sum(t):.0f} | {med:.1f} | {max(t):.1f} |")
    print(f"| all | {sum(len(t) for t in times.values())} | {sum(sum(t) for t in times.values()):.0f} "
          f"| {medsum:.1f} (sum of medians) | |")
    print(f"\nA class of {a.students}, every exercise, serial: {a.students} x {medsum:.1f} s = "
          f"{a.students * medsum / 60:.1f} min")
    return 0


if __name__ == "__main__":
    sys.exit(main())
