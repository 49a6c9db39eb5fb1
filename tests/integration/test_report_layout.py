# The student's report, as a browser draws it: every exercise graded whole
# for a passing and a failing known submission (bin/grader --html), each
# page rendered in headless chromium (Debian's package; skipped with the
# reason when it is absent), and in the rendered page: one picture per
# scenario, failing or passing, no two text boxes of a picture intersecting
# and no text box crossed by a series' line (the bounding boxes as the
# browser laid them out, each line sampled every 2 px along its length, read
# by a small script run in a copy of the page, printed with --dump-dom).
# The gradings run three at a time; the whole file takes 3.4-4.5 min here,
# so it is `make report-layout`, left out of `make test` (the Makefile).
# Only the reports the selected tests need are graded: `-k coverage` grades
# coverage's two.
import concurrent.futures
import html.parser
import json
import os
import re
import shutil
import subprocess

import pytest

from conftest import bin_path, grade

# The gradings run in the first test's setup: 2 min measured for all
# eighteen (three at once on a 2-core machine also running other work).
pytestmark = pytest.mark.timeout(600)

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIGS = os.path.join(TESTS, "configs")
SUBMISSIONS = os.path.join(TESTS, "submissions")

NAT_350S = ("--world", os.path.join(CONFIGS, "worlds", "nat-350s.json"))
# exercise: (passing submission, failing submission); a submission is
# ("bin", "relay --mistake x"), ("config", path) or ("python", file), then
# grader options.
REPORTS = {
    "deadline": (("bin", "relay"), ("bin", "relay --mistake forward-timeout")),
    "cancel": (("bin", "relay"), ("bin", "relay --mistake ignore-cancel")),
    "flow": (("bin", "streamer"), ("bin", "streamer --unbounded")),
    # Judged in the NAT world the matrix grades them in (tests/verdicts.json).
    "keepalive": (("config", "good/nat-client-idle-timeout.json", *NAT_350S),
                  ("config", "live/too-many-pings.json", *NAT_350S)),
    "retry": (("config", "good/lab-retry.json"), ("config", "bad/retry.disabled.json")),
    "shutdown": (("bin", "relay"), ("bin", "relay --mistake listener-last")),
    "balance": (("config", "good/balance.json"), ("config", "live/balance.grace-short.json")),
    "overload": (("bin", "relay"), ("bin", "relay --mistake wait-for-ready")),
    "coverage": (("python", "coverage_good.py"), ("python", "coverage_total.py")),
}

# Run in a copy of each page: the bounding box of every <text> of every
# picture, the points of every series' line (every 2 px of its length, in
# the page's pixels), and per scenario section its verdict and how many
# pictures it holds, as JSON in a <pre id="layout">.
PROBE = """<script>
window.addEventListener('load', () => {
  const out = {sections: [], boxes: []};
  document.querySelectorAll('section.scenario').forEach(sec => {
    const svgs = sec.querySelectorAll('svg');
    out.sections.push({id: sec.id, cls: sec.className, svgs: svgs.length});
    svgs.forEach((svg, k) => {
      const texts = [];
      svg.querySelectorAll('text').forEach(t => {
        const r = t.getBoundingClientRect();
        if (r.width > 0 && r.height > 0 && t.textContent.trim())
          texts.push({t: t.textContent, x0: r.left, y0: r.top, x1: r.right, y1: r.bottom});
      });
      const lines = [];
      svg.querySelectorAll('polyline.series, path.series').forEach(l => {
        const m = l.getScreenCTM(), pts = [];
        const len = l.getTotalLength();
        for (let d = 0; d <= len; d += 2) {
          const p = l.getPointAtLength(d).matrixTransform(m);
          pts.push([Math.round(p.x * 10) / 10, Math.round(p.y * 10) / 10]);
        }
        lines.push({stroke: l.getAttribute('stroke'), pts: pts});
      });
      out.boxes.push({id: sec.id, k: k, texts: texts, lines: lines});
    });
  });
  const pre = document.createElement('pre');
  pre.id = 'layout';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""

# Known gaps, each with whose it is; take an entry out when its picture
# comes. (coverage/rest's FAIL picture came with 6c763c3.)
LET_OFF = set()

# Two boxes may touch: glyph boxes include the line's leading, so text on
# adjacent lines 1-2 px apart is not an overlap a reader sees.
SLACK_PX = 2.0


def chromium():
    return shutil.which("chromium") or shutil.which("chromium-browser")


def command(kind, arg):
    if kind == "bin":
        prog, *rest = arg.split()
        return " ".join(["exec", bin_path(prog), *rest])
    if kind == "config":
        return os.path.join(CONFIGS, arg)
    return f"/usr/bin/python3 {os.path.join(SUBMISSIONS, arg)}"


@pytest.fixture(scope="module")
def reports(request, tmp_path_factory):
    browser = chromium()
    if not browser:
        pytest.skip("chromium is not installed: scripts/install-deps.sh installs it (Debian's chromium package)")
    tmp = tmp_path_factory.mktemp("layout")
    # The reports the selected tests name (all of them unless -k chose).
    wanted = {item.callspec.params["name"] for item in request.session.items
              if hasattr(item, "callspec") and "name" in item.callspec.params}

    def page(name, ex, kind, arg, more):
        g = grade(ex, command(kind, arg), "--html", str(tmp / f"{name}.html"), *more, timeout=400, results=False)
        path = tmp / f"{name}.html"
        assert path.exists(), g.out + g.err
        return path

    # Three gradings at a time: each is a whole exercise (5-90 s).
    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        jobs = {}
        for ex, pair in REPORTS.items():
            for which, (kind, arg, *more) in zip(("pass", "fail"), pair):
                name = f"{ex}-{which}"
                if name in wanted:
                    jobs[name] = pool.submit(page, name, ex, kind, arg, more)
        done = {name: f.result() for name, f in jobs.items()}
    layouts = {}
    for name, path in done.items():
        probe = path.with_name(name + "-probe.html")
        probe.write_text(path.read_text().replace("</body>", PROBE + "</body>"))
        r = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                            f"--user-data-dir={tmp / 'profile'}", "--window-size=1000,2000",
                            "--virtual-time-budget=5000", "--dump-dom", probe.as_uri()],
                           capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        m = re.search(r'<pre id="layout">(.*?)</pre>', r.stdout, re.S)
        assert m, (name, r.stderr[-2000:])
        layouts[name] = json.loads(html.unescape(m.group(1)))
    return done, layouts


def intersect(a, b):
    return (min(a["x1"], b["x1"]) - max(a["x0"], b["x0"]) > SLACK_PX and
            min(a["y1"], b["y1"]) - max(a["y0"], b["y0"]) > SLACK_PX)


@pytest.mark.parametrize("name", [f"{ex}-{w}" for ex in REPORTS for w in ("pass", "fail")])
def test_one_picture_per_scenario(reports, name):
    """Every scenario the grader judged (PASS or FAIL: what a student meets)
    has exactly one picture; a scenario the machine could not judge (ERROR)
    is let off, and said."""
    _, layouts = reports
    sections = layouts[name]["sections"]
    assert sections, name
    judged = [s for s in sections if {"PASS", "FAIL"} & set(s["cls"].split())]
    assert judged, sections
    missing = [s["id"] for s in judged if s["svgs"] != 1 and (name, s["id"]) not in LET_OFF]
    assert missing == [], (name, sections)
    verdicts = {s["id"]: s["cls"] for s in sections}
    if name.endswith("-fail"):
        assert any("FAIL" in c.split() for c in verdicts.values()), verdicts


@pytest.mark.parametrize("name", [f"{ex}-{w}" for ex in REPORTS for w in ("pass", "fail")])
def test_no_two_labels_of_a_picture_overlap(reports, name):
    _, layouts = reports
    clashes = []
    for fig in layouts[name]["boxes"]:
        t = fig["texts"]
        for i in range(len(t)):
            for j in range(i + 1, len(t)):
                if intersect(t[i], t[j]):
                    clashes.append((fig["id"], t[i]["t"], t[j]["t"]))
    assert clashes == [], clashes


# A line within this many px of a text box crosses it: the boxes include
# the line's leading, so the glyphs themselves are a pixel or two inside.
LINE_MARGIN_PX = 1.0


@pytest.mark.parametrize("name", [f"{ex}-{w}" for ex in REPORTS for w in ("pass", "fail")])
def test_no_series_line_crosses_a_label(reports, name):
    """No text of a picture (labels of references and events, legend, tick
    values, titles) has a series' line through it: a label over a curve
    hides the evidence or reads as part of it."""
    _, layouts = reports
    crossed = []
    for fig in layouts[name]["boxes"]:
        for t in fig["texts"]:
            for line in fig["lines"]:
                hit = next((p for p in line["pts"]
                            if t["x0"] - LINE_MARGIN_PX <= p[0] <= t["x1"] + LINE_MARGIN_PX
                            and t["y0"] - LINE_MARGIN_PX <= p[1] <= t["y1"] + LINE_MARGIN_PX), None)
                if hit:
                    crossed.append((fig["id"], t["t"], line["stroke"], hit))
                    break
    assert crossed == [], crossed
