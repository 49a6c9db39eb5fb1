# `lab demo overload` (lab/demo_overload.c): the reference relay and its two
# overload mistakes in front of a backend of 10 calls/s, at 1 to 10 times
# that. What the demo is for must show in its own table: at ten times the
# capacity the reference keeps serving (goodput held, the rest refused
# fast, no call failing late, no work wasted) while the unbounded queue's
# goodput collapses and its backend works for callers that have gone; with
# the backend's port closed the reference fails at once with UNAVAILABLE
# and wait-for-ready holds the call to its deadline. The plot holds the
# three series. (About 90 s, mostly waiting.)
import os
import re
import subprocess

import pytest

from conftest import bin_path

CAPACITY = 10.0  # calls/s: lab/demo_overload.c CAPACITY_PER_S
DEADLINE_MS = 2000
GOODPUT_SHARE = 0.3  # grader/overload_judge.h GR_OVERLOAD_GOODPUT_SHARE
ROW = re.compile(r"^(\S+)?\s+(\d+)\s+([\d.]+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+([\d.]+)$")
DOWN = re.compile(r"^\s+(\S+)\s+a call fails in (\d+) ms \((\w+)\)$")


def parse(out):
    """{relay: {offered: {goodput, refused, late, wasted}}}, {relay: (ms, status)}"""
    rows, down = {}, {}
    relay = None
    for line in out.splitlines():
        m = ROW.match(line)
        if m:
            relay = m.group(1) or relay
            rows.setdefault(relay, {})[int(m.group(2))] = {
                "goodput": float(m.group(3)), "refused": int(m.group(6)), "late": int(m.group(7)),
                "wasted": int(m.group(8))}
            continue
        m = DOWN.match(line)
        if m:
            down[m.group(1)] = (int(m.group(2)), m.group(3))
    return rows, down


@pytest.mark.timeout(300)  # 85 s here with every core busy; the run bounds itself at 240 s
def test_demo_overload_shows_goodput_held_and_collapsing(tmp_path):
    svg = tmp_path / "overload.svg"
    env = dict(os.environ, RELAYLAB_DEMO_SVG=str(svg))
    proc = subprocess.run([bin_path("lab"), "demo", "overload"], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=240)
    out = proc.stdout.decode(errors="replace")
    assert proc.returncode == 0, out
    rows, down = parse(out)
    assert set(rows) == {"reference", "unbounded-queue", "wait-for-ready"}, out
    assert all(sorted(r) == [10, 20, 50, 100] for r in rows.values()), out

    # 100 calls/s for 4 s: 400 calls. The reference held 8-10.5 calls/s of
    # goodput quiet (bench/results/overload.md) and 4.0 once in CI beside
    # make test's other groups (its 2 s late half is short: 8 calls). The
    # floor is the grader's (30 % of capacity, GR_OVERLOAD_GOODPUT_SHARE in
    # grader/overload_judge.h, from 6.8/s seen with every core busy twice
    # over), so the demo and the grade judge one rule. What it cannot serve
    # it refuses, not late: the grader allows 5 % late, here as well.
    ref = rows["reference"][100]
    assert ref["goodput"] >= GOODPUT_SHARE * CAPACITY, out
    assert ref["refused"] >= 200, out
    assert ref["late"] <= 20 and ref["wasted"] <= 20, out

    # The unbounded queue served nothing in time (0.0 calls/s, 379 of 400
    # wasted, measured): a fifth of the capacity and a quarter of the calls
    # leave room for timing and still tell the collapse apart.
    unb = rows["unbounded-queue"][100]
    assert unb["goodput"] <= CAPACITY / 5, out
    assert unb["wasted"] >= 100 and unb["late"] >= 100, out

    # Port closed: measured 2 ms against 2013 ms.
    assert down["reference"][1] == "UNAVAILABLE" and down["reference"][0] < DEADLINE_MS / 4, out
    assert down["wait-for-ready"][1] == "DEADLINE_EXCEEDED" and down["wait-for-ready"][0] >= DEADLINE_MS * 3 / 4, out

    text = svg.read_text()
    for name in ("reference", "unbounded-queue", "wait-for-ready"):
        assert name in text
    # wait-for-ready's harm, drawn: with the backend gone its call is held
    # to the deadline, a long red bar against the reference's short green one.
    down_svg = tmp_path / "overload-down.svg"
    assert down_svg.exists(), out
    down_text = down_svg.read_text()
    assert "each call&#39;s deadline (2000 ms)" in down_text and "wait-for-ready" in down_text
    bars = re.findall(r'<rect class="span" x="([\d.]+)" y="[\d.]+" width="([\d.]+)" height="[\d.]+" fill="(#[0-9A-F]+)"',
                      down_text)
    wfr = [float(w) for _, w, c in bars if c == "#D55E00"]
    assert wfr and max(wfr) > 400, bars  # most of the axis: about 2 s of 2.1
    assert "wait-for-ready holds it" in down_text
