# bench-relay's peers table: every --relay command gets a row measured against
# the same baseline, and one that cannot start gets a line saying so instead
# of a crash or a hang. The figures themselves are measurements
# (bench/results/relay.md); this only checks the table's shape and that the
# relays that ran completed calls and were charged CPU time.
import os
import re
import subprocess

from conftest import PYTHON, SUBMISSIONS, bin_path



def rows(out):
    """{name: [cells]} for the table's body rows."""
    table = {}
    for line in out.splitlines():
        if line.startswith("| ") and not line.startswith("| relay |"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            table[cells[0]] = cells[1:]
    return table


def test_each_relay_gets_a_row_and_a_broken_one_a_clear_line():
    # A leading NAME=value word, as students write them: it starts the way
    # the grader starts it (exec env), not as `exec NAME=value` would fail.
    good = f"RELAYLAB_BENCH_T=1 {PYTHON} {os.path.join(SUBMISSIONS, 'relay_good.py')}"
    broken = "echo cannot-start; exit 3"
    p = subprocess.run(
        [bin_path("bench-relay"), "--seconds", "0.5", "--concurrency", "8", "--relay", good, "--relay", broken],
        capture_output=True,
        text=True,
        timeout=60,
    )
    table = rows(p.stdout)
    names = list(table)
    assert len(names) == 4, p.stdout + p.stderr
    assert names[0] == "reference (bin/relay)" and names[3].startswith("direct")
    # The broken relay: one line saying why, and the run's status says a path failed.
    why = table[names[2]][0]
    assert "did not start" in why and "status 3" in why and "cannot-start" in why, why
    assert p.returncode == 1, p.stderr
    for name in names[:2]:
        ops, ops_s, p50, p99, errors, relay_us, cores, base_us = table[name]
        assert int(ops) > 0 and errors == "0", (name, table[name])
        # CPU charged to the relay's process group and to the baseline.
        assert float(relay_us) > 0 and float(base_us) > 0, (name, table[name])
    assert int(table[names[3]][0]) > 0 and table[names[3]][4] == "0"
    assert re.search(r"^reference against `.*relay_good\.py`: ops/s x[0-9.]+", p.stdout, re.M), p.stdout
