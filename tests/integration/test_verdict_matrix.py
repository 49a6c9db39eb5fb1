# The verdict matrix, one run per cell: every known submission in
# tests/verdicts.json graded on every exercise it belongs to, and every
# scenario held to its expected verdict -- the passing ones as much as the
# failing ones, so a judge that starts failing a correct part of a mistaken
# submission is caught. `make selftest` runs the same matrix 20 times per
# cell, quiet or with every core loaded (LOAD=1).
#
# The cells are graded three at a time, the first time a cell's test asks:
# most of a scenario is waiting (for a stall to go flat, a deadline, a
# readiness bound), and a verdict has to hold on a busy machine anyway --
# `make selftest LOAD=1` shows it holds with a CPU hog on every core.
import concurrent.futures
import importlib.util
import os
import threading

import pytest

from conftest import REPO, bin_path, sanitized

_spec = importlib.util.spec_from_file_location("selftest", os.path.join(REPO, "scripts", "selftest.py"))
selftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(selftest)

CELLS = selftest.load_matrix()
JOBS = 3



def skip_reason(row):
    if row.get("selftest_only"):
        # The same lesson is already judged in `make test` by a sibling row
        # (and the server behaviour by its own tests); every row runs in
        # `make selftest`. Keeps `make test` under its 10 minutes.
        return "checked by make selftest only (tests/verdicts.json: selftest_only)"
    if "balance" in row["expect"] and sanitized(bin_path("grader")):
        # The balance world drives 300 calls/s through the grader's own
        # balancer and judges a run by its timing; an ASan grader lags up
        # to 200 ms alone (its stall limit is 300 ms) and beside the whole
        # matrix it stalls. tests/unit/lib/worlds/test_rl_balance_world.c and
        # test_intermediary.c run under ASan; the verdicts are the real build's.
        return "the balance world's timing is judged with the real build, not the ASan one"
    if row["run"].startswith("bin:") and sanitized(bin_path("grader")):
        # RLIMIT_DATA stops an ASan binary before it listens, and its shadow
        # and quarantine are not the memory the lab measures; test_relay.py
        # and test_streamer.py cover the sanitized builds.
        return "the matrix judges the reference programs' real build, not the ASan one"
    return None


class Grades:
    """Every cell's grading, started on first use with JOBS graders at once,
    in the matrix's order, so that the tests asking in that order wait
    for their own cell only."""

    def __init__(self):
        self.lock = threading.Lock()
        self.pool = None
        self.futures = {}

    def get(self, index):
        with self.lock:
            if self.pool is None:
                self.pool = concurrent.futures.ThreadPoolExecutor(JOBS)
                for i, (row, exercise, _) in enumerate(CELLS):
                    if not skip_reason(row):
                        # Graders side by side grade one scenario at a time, as
                        # grade-class has them (each grading's lanes at once,
                        # beside the suite's other groups, starved an ASan
                        # build: bench/results/class.md, "Lanes"); the lanes
                        # are judged by `make selftest` and test_grader_driver.
                        args = list(row.get("args", ()))
                        if JOBS > 1:
                            args += ["--parallel", "1"]
                        self.futures[i] = self.pool.submit(selftest.grade, row["run"], exercise, 1, 600, args)
        return self.futures[index].result()

    def close(self):
        if self.pool:
            for f in self.futures.values():
                f.cancel()
            self.pool.shutdown(wait=True)


@pytest.fixture(scope="module")
def grades():
    g = Grades()
    yield g
    g.close()


@pytest.mark.parametrize("index", range(len(CELLS)), ids=[f"{r['name']}-{ex}" for r, ex, _ in CELLS])
def test_every_scenario_gets_its_verdict(grades, index):
    row, exercise, want = CELLS[index]
    reason = skip_reason(row)
    if reason:
        pytest.skip(reason)
    code, got, feedback, err, score, outputs = grades.get(index)
    assert got, f"the grader printed no runs (exit {code}):\n{err[-3000:]}"
    wrong = []
    for sid, verdicts in got.items():
        exp = selftest.expected(want, sid)
        if verdicts != [exp]:
            wrong.append(f"{sid}: want {exp}, got {verdicts[0]}: {feedback[(sid, verdicts[0])]}")
    for key, phrase in row.get("says", {}).items():
        ex, _, sid = key.partition("/")
        # The run's feedback, or what results.json adds to it (a guard's
        # held points are the report's, not the run's).
        if ex == exercise and sid in got and phrase not in feedback[(sid, got[sid][0])] + outputs.get(sid, ""):
            wrong.append(f"{sid}: the feedback does not say {phrase!r}: {feedback[(sid, got[sid][0])]}")
    why = selftest.wrong_score(row, score)
    if why:
        wrong.append(why)
    assert not wrong, "\n".join(wrong)
    every_pass = all(v == ["PASS"] for v in got.values())
    assert code == (0 if every_pass else 1), f"exit {code} for {'all PASS' if every_pass else 'a non-PASS'}"
