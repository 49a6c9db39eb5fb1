# `lab demo coverage` (lab/demo_coverage.c on lib/worlds/rl_tworld): the reference
# agent and `--mistake total` in fresh worlds on the same skewed placement.
# Per server, the burst's calls are handed out at once; as a total, most of
# them are still queued at the end behind the busy server's few streams
# while idle streams sit elsewhere. One SVG per agent, with its series.
import os
import re
import subprocess

from conftest import bin_path

ROW = re.compile(r"^(reference \(per server\)|--mistake total)\s+(\d+) ms\s+(\d+) ms\s+(\d+) of (\d+)\s+(\d+) streams\s+(\d+) streams\s+(\d+)$", re.M)


def test_demo_coverage_shows_the_incident_beside_the_fix(tmp_path):
    env = dict(os.environ, RELAYLAB_DEMO_SVG=str(tmp_path / "cov.svg"))
    r = subprocess.run([bin_path("lab"), "demo", "coverage"], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=100)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = {m.group(1): [int(x) for x in m.groups()[1:]] for m in ROW.finditer(r.stdout)}
    assert set(rows) == {"reference (per server)", "--mistake total"}, r.stdout
    ref, tot = rows["reference (per server)"], rows["--mistake total"]
    # longest wait, median, never handed, of, busy server held, idle elsewhere, peak
    assert ref[2] == 0, r.stdout  # every call handed out within the watch
    assert tot[2] > ref[3] // 4, r.stdout  # most still queued as a total
    assert tot[0] > 2 * ref[0], r.stdout
    assert ref[4] > 10 * tot[4] or ref[4] >= 50, r.stdout  # it grew where the calls are
    assert tot[5] >= 2, r.stdout  # idle streams elsewhere hid the busy one
    for which in ("reference", "total"):
        svg = (tmp_path / f"cov-{which}.svg").read_text()
        assert svg.count("<polyline") == 5, which
        for label in ("streams on A", "calls queued at the busy server", "calls in flight on the busy server"):
            assert label in svg, (which, label)
        if which == "total":
            # Its few streams lie flat on the scale it shares with the
            # reference: the caption gives their figures, and the queue's.
            m = re.search(r"Sized as a total: at most (\d+) streams a server and (\d+) calls in flight on the busy "
                          r"one, while up to (\d+) calls queued there", svg)
            assert m, svg[-2000:]
            assert int(m.group(3)) > int(m.group(2)), m.group(0)
        wait = (tmp_path / f"cov-{which}-wait.svg").read_text()
        assert wait.count("<polyline") == 1 and "(ms)" in wait, which
