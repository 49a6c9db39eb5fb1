#!/usr/bin/env python3
"""Grading time per exercise from a bin/grade-class results folder: for each
exercise, how many gradings, their total, median and longest wall time (the
grader's own, extra_data.seconds of OUT/STUDENT/EXERCISE.json), and the
estimate for a class of N students who all hand in every exercise (N times the
sum of the medians, serial; divided by the measured speed-up of --jobs). Then,
scenario by scenario, where the time went: the wall time summed over the
gradings against the CPU of the grader and of the processes it ran (the
baselines, the submission, a world's servers; extra_data's cpu_grader_seconds
and cpu_others_seconds), largest first; what the CPU does not cover is waiting
(idle periods, watches, the world's clock, or a machine too busy to run them).
When a grading's lanes ran at once, its scenarios overlap and the script says
by how much. Last, the most a kept process could save: in each grading every
scenario after the first is charged nothing for the cheapest scenario's cost
(its submission's start, the baselines', the world's, the grader's calls), and
what is left is the CPU no reuse of processes can remove.

    bench/class_times.py OUT [--students 40] [--scenarios 15]"""

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
    ap.add_argument("--scenarios", type=int, default=15, help="how many scenarios to list, largest first")
    a = ap.parse_args()
    times, scen = {}, {}
    grading_wall = scenario_wall = 0.0
    cpu_all = reuse_bound = 0.0
    for path in glob.glob(os.path.join(a.out, "*", "*.json")):
        if os.path.basename(path) == "results.json":
            continue
        doc = json.load(open(path))
        x = doc.get("extra_data", {})
        if "seconds" in x:
            times.setdefault(x["exercise"], []).append(x["seconds"])
            grading_wall += x["seconds"]
            scenario_wall += sum(t.get("extra_data", {}).get("seconds", 0.0) for t in doc.get("tests", []))
        costs = []
        for t in doc.get("tests", []):
            tx = t.get("extra_data", {})
            if "cpu_grader_seconds" not in tx:
                continue
            costs.append(tx["cpu_grader_seconds"] + tx["cpu_others_seconds"])
            row = scen.setdefault(f"{tx['exercise']}/{tx['scenario']}", [0, 0.0, 0.0, 0.0])
            row[0] += 1
            row[1] += tx["seconds"]
            row[2] += tx["cpu_grader_seconds"]
            row[3] += tx["cpu_others_seconds"]
        if costs:
            cpu_all += sum(costs)
            reuse_bound += (len(costs) - 1) * min(costs)
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
    if scen:
        print("\n| scenario | gradings | wall s | grader CPU s | others' CPU s | not on a CPU s |")
        print("|---|---|---|---|---|---|")
        for name, (n, wall, cg, co) in sorted(scen.items(), key=lambda kv: -kv[1][1])[:a.scenarios]:
            print(f"| {name} | {n} | {wall:.0f} | {cg:.1f} | {co:.1f} | {max(0.0, wall - cg - co):.0f} |")
        # A grading whose lanes ran at once (grader --parallel above 1) has
        # scenarios that overlap: their walls, and so the waits above, add up
        # to more than the grading took.
        if grading_wall and scenario_wall > 1.05 * grading_wall:
            print(f"\nThe scenarios' wall times add up to {scenario_wall:.0f} s against {grading_wall:.0f} s of "
                  f"gradings ({scenario_wall / grading_wall:.1f} x): their lanes ran at once, so the waits "
                  f"overlap and the column 'not on a CPU' counts each lane's own.")
    if cpu_all:
        print(f"\nThe scenarios' CPU: {cpu_all:.0f} s. If every scenario after a grading's first cost "
              f"nothing of its cheapest scenario's CPU (a kept submission, baselines and world, and "
              f"the grader's calls for free), {reuse_bound:.0f} s would go and {cpu_all - reuse_bound:.0f} s "
              f"stay: on 2 cores, at least {(cpu_all - reuse_bound) / 2:.0f} s of wall time.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
