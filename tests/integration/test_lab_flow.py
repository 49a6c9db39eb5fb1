# `lab compare-memory` and `lab demo flow` (lab/compare_memory.c): the table
# puts the paced reference far under the grader's budget and the unbounded
# one far over it, and the SVG is a well-formed plot with one line per
# producer and labelled axes. Each row's verdict column is checked against
# its own producer and its own growth.
import re
import subprocess
import xml.etree.ElementTree as ET


from conftest import PYTHON, SUBMISSIONS, bin_path, sanitized

SVG_NS = "{http://www.w3.org/2000/svg}"
BUDGET_MIB = 48  # grader/flow_judge.h GR_FLOW_BUDGET_MIB


def paced_max_mib():
    """How much the paced reference may grow: far under the budget (it grows
    ~1 MiB, bench/results/streamer.md), but an ASan build's quarantine keeps
    freed chunks (17.5 MiB seen under `make check`): there, the budget."""
    return BUDGET_MIB if sanitized(bin_path("streamer")) else BUDGET_MIB / 3
# A table row: label, baseline, peak and growth in MiB, then the verdict.
ROW_RE = re.compile(r"^(.*?)\s+([0-9.]+) MiB\s+([0-9.]+) MiB\s+([0-9.]+) MiB\s+(within|OVER) (\d+) MiB\s*$")


def test_lab_help_lists_the_flow_commands():
    out = subprocess.run([bin_path("lab"), "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=10)
    text = out.stdout.decode(errors="replace")
    assert "compare-memory" in text and "flow" in text


def growth_by_producer(table):
    """{label: growth MiB} from the printed table. Every row's verdict must
    say what its own growth means against the budget it names: "within"
    at or under it, "OVER" above it."""
    rows = {}
    for line in table.splitlines():
        m = ROW_RE.match(line)
        if not m:
            continue
        label, base, peak, grew, verdict, budget = m.groups()
        assert int(budget) == BUDGET_MIB, line
        assert abs(float(peak) - float(base) - float(grew)) <= 0.15, line  # one decimal each
        assert verdict == ("OVER" if float(grew) > BUDGET_MIB else "within"), line
        rows[label.strip()] = float(grew)
    return rows


def test_compare_memory_table_and_plot(tmp_path):
    svg = tmp_path / "rss.svg"
    sub = f"{PYTHON} {SUBMISSIONS}/streamer_good.py"
    # The unbounded producer's thread grows the RSS for as long as the reader
    # stalls, at whatever speed the machine gives it: with both cores busy it
    # reached only 59 MiB in 1.5 s. 3 s (the demo's stall) keeps it over the
    # budget with room to spare on a loaded machine.
    proc = subprocess.run([bin_path("lab"), "compare-memory", "--seconds", "3", "--svg", str(svg),
                           "--submission", sub], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    out = proc.stdout.decode(errors="replace")
    assert proc.returncode == 0, out + proc.stderr.decode(errors="replace")
    rows = growth_by_producer(out)
    assert len(rows) == 3, out
    paced = [g for label, g in rows.items() if label.startswith("streamer (paced")]
    unbounded = [g for label, g in rows.items() if label.startswith("streamer --unbounded")]
    # The paced one holds a window (measured ~1 MiB): a third of the budget
    # leaves room. The unbounded one is over the budget, which is what the
    # table claims (its "OVER" checked above); how far over depends on the
    # machine's speed during the stall, so that is not asserted.
    assert paced and paced[0] < paced_max_mib(), out
    assert unbounded and unbounded[0] > BUDGET_MIB, out
    root = ET.parse(svg).getroot()
    assert root.tag == SVG_NS + "svg"
    assert len(root.findall(f"{SVG_NS}polyline")) == 3
    texts = [t.text or "" for t in root.iter(f"{SVG_NS}text")]
    assert any("(s)" in t for t in texts) and any("(MiB)" in t for t in texts)
    assert any("streamer_good.py" in t for t in texts)


def test_demo_flow_shows_both_producers():
    proc = subprocess.run([bin_path("lab"), "demo", "flow"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=120)
    out = proc.stdout.decode(errors="replace")
    assert proc.returncode == 0, out
    rows = growth_by_producer(out)
    assert len(rows) == 2, out
    paced = [g for label, g in rows.items() if label.startswith("streamer (paced")]
    unbounded = [g for label, g in rows.items() if label.startswith("streamer --unbounded")]
    # The paced producer well within the budget and the unbounded one over
    # it, each on its own row (growth_by_producer checked the verdict words);
    # the same bounds as compare-memory above.
    assert paced and paced[0] < paced_max_mib(), out
    assert unbounded and unbounded[0] > BUDGET_MIB, out
