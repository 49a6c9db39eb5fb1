#!/usr/bin/env python3
"""Writes GitHub Classroom's autograding configuration
(.github/classroom/autograding.json) for relaylab exercises: one test a
scenario, worth the rubric's points, that runs the grader on that scenario
alone (`--only ID`) in the folder the student's `lab init` made. A scenario
the rubric marks as a regression guard ("needs": the lesson's scenarios)
runs with those it needs (`--only GUARD,LESSON`), so that its test, which
passes only when every scenario run passed, scores only with the lesson, as
the grader's own points do. The
exercises and scenarios come from `bin/grader list`, the points from
grader/rubric.json, so nothing here goes stale when exercises are added.

    scripts/ci/classroom.py --folder deadline=relay --folder cancel=relay \\
        --kit-url URL [--runs 3] > autograding.json

Classroom runs each test on its own Ubuntu runner (with passwordless sudo):
the setup installs the student kit (its `make deps`, the distribution's
packages; Ubuntu 24.04 ships gRPC 1.51 as Debian 12 does, an assumption
this machine could not try) and the grader runs as root so that its
sandbox has cgroups. --runs: see the note on noisy runners in relaylab.yml."""

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def exercises(bin_dir):
    """{name: (config?, [scenario ids])} from `grader list`."""
    out = subprocess.run([os.path.join(bin_dir, "grader"), "list"], capture_output=True, text=True,
                         check=True).stdout
    ex, cur = {}, None
    for line in out.splitlines():
        if line.startswith(" ") and cur:
            ex[cur][1].append(line.split()[0])
        elif ":" in line:
            cur = line.split(":")[0]
            ex[cur] = ("(--submission FILE)" in line, [])
    return ex


def points(entry):
    return entry["points"] if isinstance(entry, dict) else entry


def needs(entry):
    n = entry.get("needs", []) if isinstance(entry, dict) else []
    return [n] if isinstance(n, str) else list(n)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--folder", action="append", required=True, metavar="EXERCISE=DIR",
                    help="the folder of the repository graded on EXERCISE")
    ap.add_argument("--kit-url", required=True, help="where relaylab-student.tar.gz is published")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--timeout-min", type=int, default=10, help="each test's time limit, minutes")
    a = ap.parse_args()
    known = exercises(os.environ.get("RELAYLAB_BIN", os.path.join(ROOT, "bin")))
    rubric = json.load(open(os.path.join(ROOT, "grader", "rubric.json")))
    setup = ("sudo apt-get update -qq && sudo apt-get install -y -qq curl make && "
             f"curl -fsSL '{a.kit_url}' -o /tmp/kit.tar.gz && sudo tar xzf /tmp/kit.tar.gz -C /opt && "
             "sudo make -C /opt/relaylab-student deps && sudo chmod -R o+rX . && "
             "d=$PWD; while [ \"$d\" != / ]; do sudo chmod o+x \"$d\"; d=$(dirname \"$d\"); done")
    tests, first = [], True
    for spec in a.folder:
        ex, _, folder = spec.partition("=")
        if ex not in known or not folder:
            sys.exit(f"classroom: --folder takes EXERCISE=DIR with an exercise of `grader list`, not {spec!r}")
        for sc in known[ex][1]:
            tests.append({
                "name": f"{ex}/{sc}",
                "setup": setup if first else "",
                # lab check reads the folder's .relaylab (the config file, and
                # the identity for the config exercises unless RELAYLAB_STUDENT
                # is set where the tests run: README.md, "One identity") and
                # passes --only on.
                "run": (f"cd '{folder}' && sudo /opt/relaylab-student/bin/lab check {ex} "
                        '${RELAYLAB_STUDENT:+--student "$RELAYLAB_STUDENT"} '
                        f"--only {','.join([sc] + needs(rubric[ex][sc]))} --runs {a.runs}"),
                "input": "",
                "output": "",
                "comparison": "included",
                "timeout": a.timeout_min,
                "points": points(rubric[ex][sc]),
            })
            first = False
    json.dump({"tests": tests}, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
