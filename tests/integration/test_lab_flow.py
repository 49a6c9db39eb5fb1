# `lab compare-memory` and `lab demo flow` (lab/compare_memory.c): the table
# puts the paced reference far under the grader's budget and the unbounded
# one far over it, and the SVG is a well-formed plot with one line per
# producer and labelled axes. Skipped until lab/main.c wires the commands in.
import subprocess
import xml.etree.ElementTree as ET


from conftest import PYTHON, SUBMISSIONS, bin_path

SVG_NS = "{http://www.w3.org/2000/svg}"


def test_lab_help_lists_the_flow_commands():
    out = subprocess.run([bin_path("lab"), "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=10)
    text = out.stdout.decode(errors="replace")
    assert "compare-memory" in text and "flow" in text


def growth_by_producer(table):
    """{label prefix: growth MiB} from the printed table."""
    rows = {}
    for line in table.splitlines():
        if "MiB" in line and ("within" in line or "OVER" in line):
            fields = line.split("MiB")
            rows[line[:34].strip()] = float(fields[2].split()[-1])
    return rows


def test_compare_memory_table_and_plot(tmp_path):
    svg = tmp_path / "rss.svg"
    sub = f"{PYTHON} {SUBMISSIONS}/streamer_good.py"
    proc = subprocess.run([bin_path("lab"), "compare-memory", "--seconds", "1.5", "--svg", str(svg),
                           "--submission", sub], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    out = proc.stdout.decode(errors="replace")
    assert proc.returncode == 0, out + proc.stderr.decode(errors="replace")
    rows = growth_by_producer(out)
    assert len(rows) == 3, out
    paced = [g for label, g in rows.items() if label.startswith("streamer (paced")]
    unbounded = [g for label, g in rows.items() if label.startswith("streamer --unbounded")]
    assert paced and paced[0] < 16, out
    assert unbounded and unbounded[0] > 144, out
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
    assert "OVER 48 MiB" in out and "within 48 MiB" in out
