# `lab demo balance` / `lab compare-balance` (lab/demo_balance.c on
# lib/worlds/rl_balance_world.c): each of the four cases shows its shape, measured
# from what the baselines recorded. Behind the L4 balancer without an age the
# joining backend gets nothing and the first two split the calls evenly; with
# an age it takes its share and no call fails; client-side round_robin gives
# about equal thirds; one busy client among quiet ones loads its backend
# several times more though connections are spread evenly. The SVG holds
# the four series.
import re

from conftest import bin_path, sanitized
import subprocess

CASE = re.compile(r"^(\d)\. ")
LAST = re.compile(r"^  last 2 s, calls/s: ([\d ]+); calls (\d+), failed (\d+)")
ROW = re.compile(r"^\s+\d+\.\d-\d+\.\d\s+([\d ]+?)\s+\[([\d ]+)\]")
# Of a case's twelve 500 ms windows, how many must have carried calls.
MIN_WINDOWS = 8


def parse(out):
    cases = {}
    current = None
    for line in out.splitlines():
        m = CASE.match(line)
        if m:
            current = int(m.group(1))
            cases[current] = {"rows": []}
            continue
        m = ROW.match(line)
        # A window in which no call ran at all is not judged: before the
        # first call the clients may still be starting, and later it is the
        # whole machine stalled (ASan's build beside the whole suite made
        # none in the first 500 ms, and once none in a later window at load
        # average 11). Where connections go shows only where calls ran; the
        # test asks for most windows to have run (MIN_WINDOWS).
        if m and current:
            if any(int(x) for x in m.group(2).split()):
                cases[current]["rows"].append(([int(x) for x in m.group(1).split()],
                                               [int(x) for x in m.group(2).split()]))
            continue
        m = LAST.match(line)
        if m and current:
            cases[current].update(rates=[int(x) for x in m.group(1).split()], calls=int(m.group(2)),
                                  failed=int(m.group(3)))
    return cases


def test_compare_balance_shows_the_four_shapes_and_plots_them(tmp_path):
    svg = tmp_path / "balance.svg"
    p = subprocess.run([bin_path("lab"), "compare-balance", "--svg", str(svg)], capture_output=True, text=True,
                       timeout=240, stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p.stdout + p.stderr
    cases = parse(p.stdout)
    assert sorted(cases) == [1, 2, 3, 4], p.stdout
    assert all(len(c["rows"]) >= MIN_WINDOWS for c in cases.values()), p.stdout
    # 1. No age: six connections, 3 and 3, made once; the third backend starves.
    c = cases[1]
    assert c["rates"][2] == 0 and all(r[1] == [3, 3, 0] for r in c["rows"]), p.stdout
    assert abs(c["rates"][0] - c["rates"][1]) <= 0.1 * c["rates"][0], p.stdout
    # 2. Age: the third backend takes a fair share (a third; 25 % at least:
    # one connection of six would be 17 %), and no call failed.
    c = cases[2]
    # No failed call is the real build's timing: the demo's balancer and
    # clients run inside lab itself, and an ASan lab beside the whole suite
    # (`make check`) ran a 0.6 s call past its 1 s grace (7 of 1840). The
    # grader's balance verdicts are likewise the real build's
    # (test_verdict_matrix.py skips them under ASan).
    if not sanitized(bin_path("lab")):
        assert c["failed"] == 0, p.stdout
    assert c["rates"][2] >= 0.25 * sum(c["rates"]), p.stdout
    # 3. Client-side round_robin: every client on every backend, thirds.
    c = cases[3]
    total = sum(c["rates"])
    assert all(abs(r - total / 3) <= 0.1 * total / 3 for r in c["rates"]), p.stdout
    assert all(r[1] == [6, 6, 6] for r in c["rows"]), p.stdout
    # 4. Skew: 2 and 2 connections, yet the busy client's backend carries
    # 10 + 1 units against 1 + 1 (5.5 times).
    c = cases[4]
    assert all(r[1] == [2, 2] for r in c["rows"]), p.stdout
    assert c["rates"][0] >= 4 * c["rates"][1], p.stdout
    text = svg.read_text()
    assert text.startswith("<svg") or text.startswith("<?xml"), text[:100]
    for label in ("L4, no age", "L4, age 2 s", "client round_robin", "fair share: 33 %", "backend 3 joins"):
        assert label in text, label
    # One quantity per plot: the skew case's share is a plot of its own.
    skew = (tmp_path / "balance-skew.svg").read_text()
    assert "busy client" in skew and "fair share: 50 %" in skew
    assert "busy client" not in text


def test_compare_balance_refuses_bad_arguments():
    p = subprocess.run([bin_path("lab"), "compare-balance", "--case", "9"], capture_output=True, text=True,
                       timeout=30, stdin=subprocess.DEVNULL)
    assert p.returncode == 2 and "usage" in p.stderr
    p = subprocess.run([bin_path("lab"), "compare-balance", "--case", "1", "--svg", "x.svg"], capture_output=True,
                       text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert p.returncode == 2 and "not with --case" in p.stderr
