# The per-test time limit of conftest.py, run on a small suite of its own in a
# child pytest: a test past its limit fails with a message naming it, even
# one that catches Exception, its fixtures still tear down, and the tests
# after it run.
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

SUITE = '''
import os
import time

import pytest


@pytest.fixture
def marker_file():
    yield
    open(os.environ["TEARDOWN_MARK"], "w").close()


@pytest.mark.timeout(1)
def test_hangs(marker_file):
    try:
        time.sleep(60)
    except Exception:
        pass
    time.sleep(60)


@pytest.mark.timeout(5)
def test_after_the_hung_one_runs():
    time.sleep(0.1)
'''


def test_a_hung_test_fails_and_its_fixtures_tear_down(tmp_path):
    shutil.copy(os.path.join(HERE, "conftest.py"), tmp_path / "conftest.py")
    (tmp_path / "test_suite.py").write_text(SUITE)
    mark = tmp_path / "torn-down"
    env = dict(os.environ, TEARDOWN_MARK=str(mark), RELAYLAB_TEST_LIMIT_SCALE="1")
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    took = time.monotonic() - t0
    out = p.stdout + p.stderr
    assert p.returncode == 1, out
    assert "TIMEOUT: test_suite.py::test_hangs call still running after the test's 1 s limit" in out, out
    assert "1 failed, 1 passed" in out, out
    assert mark.exists(), "the fixture's teardown did not run"
    assert took < 30, out
