# The verdict matrix, one run per cell: every known submission in
# tests/verdicts.json graded on every exercise it belongs to, and every
# scenario held to its expected verdict -- the passing ones as much as the
# failing ones, so a judge that starts failing a correct part of a mistaken
# submission is caught. `make selftest` runs the same matrix 20 times per
# cell, quiet or with every core loaded (LOAD=1).
import importlib.util
import os

import pytest

from conftest import REPO, bin_path

_spec = importlib.util.spec_from_file_location("selftest", os.path.join(REPO, "scripts", "selftest.py"))
selftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(selftest)

CELLS = selftest.load_matrix()


def sanitized(path):
    with open(path, "rb") as f:
        return b"__asan_init" in f.read()


@pytest.mark.parametrize("row,exercise,want", CELLS, ids=[f"{r['name']}-{ex}" for r, ex, _ in CELLS])
def test_every_scenario_gets_its_verdict(row, exercise, want):
    args = list(row.get("args", ()))
    if row["run"].startswith("bin:") and sanitized(bin_path("grader")):
        # RLIMIT_DATA stops an ASan binary before it listens, and its shadow
        # and quarantine are not the memory the lab measures; test_relay.py
        # and test_streamer.py cover the sanitized builds.
        pytest.skip("the matrix judges the reference programs' real build, not the ASan one")
    code, got, feedback, err = selftest.grade(row["run"], exercise, 1, timeout_s=600, args=args)
    assert got, f"the grader printed no runs (exit {code}):\n{err[-3000:]}"
    wrong = []
    for sid, verdicts in got.items():
        exp = selftest.expected(want, sid)
        if verdicts != [exp]:
            wrong.append(f"{sid}: want {exp}, got {verdicts[0]}: {feedback[(sid, verdicts[0])]}")
    for key, phrase in row.get("says", {}).items():
        ex, _, sid = key.partition("/")
        if ex == exercise and sid in got and phrase not in feedback[(sid, got[sid][0])]:
            wrong.append(f"{sid}: the feedback does not say {phrase!r}: {feedback[(sid, got[sid][0])]}")
    assert not wrong, "\n".join(wrong)
    every_pass = all(v == ["PASS"] for v in got.values())
    assert code == (0 if every_pass else 1), f"exit {code} for {'all PASS' if every_pass else 'a non-PASS'}"
