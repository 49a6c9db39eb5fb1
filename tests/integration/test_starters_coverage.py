# The coverage starters (`lab init coverage`, starters/coverage/): untouched,
# the agent keeps its first streams, so the burst scenarios FAIL on their
# rule, named as the starter's TODO (the agent says TODO on stderr, and the
# judge reads its output when it opened no stream while calls queued), and
# the scenarios the TODO does not reach may pass (their points count only
# once the burst passes: grader/rubric.json); filled in with this test's solution
# (tests/starters/coverage.*) they PASS. `make test` runs burst-skewed in
# Python; RELAYLAB_STARTERS_FULL=1 (make selftest) every scenario in the
# four languages. Helpers and the sandbox-readable work folder: test_starters.py.
import os

import pytest

from test_starters import FULL, check, exercises_of, fill, init, workdir  # noqa: F401 (a fixture)

CODE = {"python": ("agent.py", "coverage.py"), "node": ("agent.js", "coverage.js"), "c": ("agent.c", "coverage.c"),
        "go": ("agent.go", "coverage.go")}
UNTOUCHED_MAY_PASS = {"unfillable", "rest"}


@pytest.mark.timeout(400)
@pytest.mark.parametrize("lang", ["python", "node", "c", "go"] if FULL else ["python"])
def test_coverage_starter_fails_untouched_then_passes_filled_in(workdir, lang):  # noqa: F811
    code_file, solution = CODE[lang]
    folder = init(workdir, "coverage", "--lang", lang)
    for name in ("run", code_file, "README.md", "proto/relaylab.proto"):
        assert os.path.exists(os.path.join(folder, name)), name
    assert exercises_of(folder) == ["coverage"]
    only = () if FULL else ("--only", "burst-skewed")
    rc, verdicts, out = check(folder, "coverage", *only)
    assert rc == 1, out
    failed = {sid for sid, (v, _) in verdicts.items() if v == "FAIL"}
    assert "burst-skewed" in failed, verdicts
    assert set(verdicts) - failed <= UNTOUCHED_MAY_PASS, verdicts
    assert all(verdicts[sid][0] == "PASS" for sid in set(verdicts) - failed), verdicts
    assert "the starter's TODO" in verdicts["burst-skewed"][1], verdicts
    fill(os.path.join(folder, code_file), solution)
    rc, verdicts, out = check(folder, "coverage", *only)
    assert rc == 0 and all(v == "PASS" for v, _ in verdicts.values()), out
