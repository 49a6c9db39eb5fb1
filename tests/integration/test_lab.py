# `lab list`, `lab show` and `lab demo deadline|cancel|shutdown` (lab/handout.c,
# lab/demo.c): every handout in lab/exercises is listed with its title and
# shown byte for byte, a wrong name or a missing data folder is a clear error,
# and each demo row shows what its relay really did: the reference passes the
# time left, propagates the cancel and drains at SIGTERM, each mistake shows
# its own symptom.
import os
import re
import shutil
import subprocess

import pytest

from conftest import REPO, bin_path
from tolerances import CANCEL_MS, deadline_lower_ms

EXERCISES = os.path.join(REPO, "lab", "exercises")


def lab(*args, env=None, timeout=120, exe=None):
    return subprocess.run([exe or bin_path("lab"), *args], capture_output=True, text=True, timeout=timeout, env=env,
                          stdin=subprocess.DEVNULL)


def handouts():
    return sorted(f[:-3] for f in os.listdir(EXERCISES) if f.endswith(".md"))


def test_list_names_every_handout_with_its_title():
    p = lab("list")
    assert p.returncode == 0, p.stderr
    listed = {}
    for line in p.stdout.splitlines()[1:]:
        name, _, title = line.strip().partition(" ")
        listed[name] = title.strip()
    assert sorted(listed) == handouts(), p.stdout
    for name, title in listed.items():
        with open(os.path.join(EXERCISES, name + ".md")) as f:
            assert "# " + title == f.readline().rstrip("\n"), (name, title)


def without_marks(text):
    """A handout as `lab show` prints it: the marks around what only the
    instructor's kit holds (lab/handout.h) left out, what they mark kept."""
    marks = ("<!--instructor-->", "<!--/instructor-->")
    kept = "".join(line for line in text.splitlines(keepends=True) if line.rstrip("\n") not in marks)
    return kept.replace(marks[0], "").replace(marks[1], "")


@pytest.mark.parametrize("name", handouts())
def test_show_prints_the_handout_unchanged(name):
    p = lab("show", name)
    assert p.returncode == 0, p.stderr
    with open(os.path.join(EXERCISES, name + ".md")) as f:
        assert p.stdout == without_marks(f.read())


@pytest.mark.parametrize("args,message", [
    (["show", "nosuch"], "no exercise named 'nosuch'"),
    (["show"], "usage: lab show EXERCISE"),
    (["demo", "nosuch"], "no demo named 'nosuch'; demos: deadline cancel shutdown flow balance overload"),
    (["bogus"], "unknown command 'bogus'"),
])
def test_bad_arguments_exit_2_with_a_message(args, message):
    p = lab(*args)
    assert p.returncode == 2, p.stdout + p.stderr
    assert message in p.stderr


def test_missing_handout_folder_names_relaylab_home(tmp_path):
    # A lab binary away from the checkout finds no lab/exercises next to it;
    # RELAYLAB_HOME pointing at the checkout fixes that.
    exe = tmp_path / "lab"
    shutil.copy(bin_path("lab"), exe)
    env = {k: v for k, v in os.environ.items() if k != "RELAYLAB_HOME"}
    p = lab("show", "deadline", env=env, exe=str(exe))
    assert p.returncode == 1, p.stdout
    assert "set RELAYLAB_HOME" in p.stderr and p.stdout == ""
    p = lab("show", "deadline", env=dict(env, RELAYLAB_HOME=REPO), exe=str(exe))
    assert p.returncode == 0 and p.stdout.startswith("# Exercise: deadlines"), p.stderr


# `lab demo deadline`: each relay gets 1000 ms and Lookup takes 300 ms.
DEMO_BUDGET_MS = 1000
DEMO_LOOKUP_MS = 300
HOP = r"(none|\d+ ms)(?: \((\d+) left\))?"
DEADLINE_ROW = re.compile(rf"^(\S+)\s+(OK|\S+)\s+{HOP}\s+{HOP}\s*(.*)$")


def hop(received, left):
    """(received ms or None, left ms or None) from one demo cell."""
    return (None if received == "none" else int(received.split()[0]), None if left is None else int(left))


def deadline_tables(out):
    """The demo's two tables as [{relay: (status, lookup hop, work hop)}]."""
    tables, rows = [], None
    for line in out.splitlines():
        if line.startswith("relay "):
            rows = {}
            tables.append(rows)
            continue
        m = DEADLINE_ROW.match(line)
        if rows is not None and m:
            rows[m.group(1)] = (m.group(2), hop(m.group(3), m.group(4)), hop(m.group(5), m.group(6)))
    return tables


def test_demo_deadline_shows_each_relay_doing_what_it_does():
    p = lab("demo", "deadline")
    assert p.returncode == 0, p.stdout + p.stderr
    tables = deadline_tables(p.stdout)
    relays = ["reference", "forward-timeout", "drop-deadline", "huge-timeout"]
    assert len(tables) == 2 and all(list(t) == relays for t in tables), p.stdout
    with_deadline, without = tables
    assert all(status == "OK" for status, _, _ in with_deadline.values()), p.stdout
    # The one difference the demo is about: Work is given the time left, or
    # the time left plus Lookup's 300 ms (the original timeout forwarded).
    # Half of Lookup's time separates the two with 150 ms to spare either
    # side, beyond any scheduling delay the grader's judges allow (25 ms plus
    # rounding) or measured (83 ms for a grpc-js relay with a core busy).
    split_ms = DEMO_LOOKUP_MS / 2
    for relay in ("reference", "huge-timeout"):
        _, lookup, work = with_deadline[relay]
        for received, left in (lookup, work):
            assert received is not None and deadline_lower_ms(left) <= received < left + split_ms, p.stdout
        assert work[1] <= DEMO_BUDGET_MS - DEMO_LOOKUP_MS, p.stdout
    _, lookup, work = with_deadline["forward-timeout"]
    assert lookup[0] < lookup[1] + split_ms, p.stdout
    assert work[0] >= work[1] + split_ms, p.stdout
    _, lookup, work = with_deadline["drop-deadline"]
    assert lookup[0] is None and work[0] is None and lookup[1] > 0, p.stdout
    # Without a deadline: none at every hop, except the huge-timeout mistake,
    # which invents a finite one of about 2^31 ms (24.8 days).
    for relay in ("reference", "forward-timeout", "drop-deadline"):
        _, lookup, work = without[relay]
        assert lookup == (None, None) and work == (None, None), p.stdout
    _, lookup, work = without["huge-timeout"]
    assert lookup[0] > 2_000_000_000 and work[0] > 2_000_000_000, p.stdout


CANCEL_ROW = re.compile(r"^(\S+)\s+(CANCELLED|OK) (\d+) ms after, (\d+) steps\s+(CANCELLED|OK) (\d+) ms after, "
                        r"(\d+) steps / (.*?)\s*$")


def test_demo_cancel_shows_the_cancel_reaching_the_baseline_or_not():
    p = lab("demo", "cancel")
    assert p.returncode == 0, p.stdout + p.stderr
    rows = {m.group(1): m.groups()[1:] for m in map(CANCEL_ROW.match, p.stdout.splitlines()) if m}
    assert set(rows) == {"reference", "ignore-cancel"}, p.stdout
    # Work is 100 steps of 20 ms, Lookup 1000 ms (the demo's own header).
    w_status, w_ms, w_steps, l_status, l_ms, l_steps, after = rows["reference"]
    assert w_status == "CANCELLED" and int(w_ms) <= CANCEL_MS and int(w_steps) < 100, p.stdout
    assert l_status == "CANCELLED" and int(l_ms) <= CANCEL_MS, p.stdout
    assert after == "never called", p.stdout
    w_status, w_ms, w_steps, l_status, l_ms, l_steps, after = rows["ignore-cancel"]
    assert w_status == "OK" and int(w_steps) == 100, p.stdout
    assert l_status == "OK" and after.startswith("started after the cancel"), p.stdout
    assert "100 steps" in after, p.stdout
    assert "100 steps of 20 ms" in p.stdout and "Lookup (1000 ms)" in p.stdout


SHUTDOWN_ROW = re.compile(r"^(\S+)\s+(\S+) at (\d+) ms\s+(refused|failed|served) (\S+) in (\d+) ms\s+"
                          r"(cancelled|completed|still running|\S+) at (\d+) ms\s+"
                          r"(status \d+|died of \S+|killed) at (\d+) ms\s")


def test_demo_shutdown_shows_each_relay_ending_its_own_way():
    p = lab("demo", "shutdown")
    assert p.returncode == 0, p.stdout + p.stderr
    grace_ms = int(re.search(r"with a (\d+) ms grace", p.stdout).group(1))
    rows = {}
    for m in map(SHUTDOWN_ROW.match, p.stdout.splitlines()):
        if m:
            relay, short, short_ms, new, new_status, _, work, work_ms, how, exit_ms = m.groups()
            rows[relay] = dict(short=short, short_ms=int(short_ms), new=new, new_status=new_status, work=work,
                               work_ms=int(work_ms), exit=how, exit_ms=int(exit_ms))
    assert list(rows) == ["reference", "no-handler", "stop-now", "wait-forever", "listener-last"], p.stdout
    # The rule: the short call completes, admission is closed, the long
    # call's Work is cancelled at the grace (counted from the demo's own
    # signal, so never before it; as late as a cancel may take), exit 0.
    ref = rows["reference"]
    assert ref["short"] == "OK" and ref["short_ms"] < grace_ms, p.stdout
    assert ref["new"] == "refused" and ref["new_status"] != "OK", p.stdout
    assert ref["work"] == "cancelled" and grace_ms <= ref["work_ms"] <= grace_ms + CANCEL_MS, p.stdout
    assert ref["exit"] == "status 0", p.stdout
    # No handler: the process dies of the signal and the short call with it.
    assert rows["no-handler"]["exit"] == "died of SIGTERM", p.stdout
    assert rows["no-handler"]["short"] != "OK", p.stdout
    # A grace of 0: the calls are cut at once, the exit is clean.
    stop = rows["stop-now"]
    assert stop["short"] != "OK" and stop["short_ms"] < grace_ms, p.stdout
    assert stop["work"] == "cancelled" and stop["work_ms"] < grace_ms, p.stdout
    assert stop["exit"] == "status 0", p.stdout
    # No bound: the long call holds the process past the grace until killed.
    forever = rows["wait-forever"]
    assert forever["short"] == "OK", p.stdout
    assert forever["exit"] == "killed" and forever["exit_ms"] > grace_ms, p.stdout
    assert forever["work"] == "still running" and forever["work_ms"] > grace_ms, p.stdout
    # Admission closed last: the new call is served during the drain.
    last = rows["listener-last"]
    assert last["short"] == "OK" and last["new"] == "served" and last["new_status"] == "OK", p.stdout
