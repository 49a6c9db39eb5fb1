# Shared fixtures for the integration tests: start a program on 127.0.0.1:0,
# wait for its readiness line with a deadline, kill its process group at
# teardown, and read what the baseline observed through an Observer helper
# that polls for a condition instead of sleeping.
import os
import re
import signal
import subprocess
import tempfile
import threading
import time

import grpc
import pytest

import relaylab_pb2 as pb
import relaylab_pb2_grpc as pb_grpc

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SUBMISSIONS = os.path.join(REPO, "tests", "submissions")
PYTHON = "/usr/bin/python3"
READY_RE = re.compile(r"^(\S+) listening on (\S+):(\d+)\s*$")
READY_TIMEOUT_S = 10.0
# How much of a program's stdout after the readiness line is kept for the
# test to look at; the rest is read and dropped so the program never blocks.
STDOUT_KEEP = 64 * 1024


# Every test gets a time limit, as libuv's runner gives each one: a hung test
# fails with a message naming its limit instead of stalling the suite, and its
# fixtures still tear down (kill the programs they started). SIGALRM
# interrupts the main thread, where pytest runs tests; the handler raises
# pytest's Failed, which a test's `except Exception` cannot swallow, and the
# traceback shows where the test was waiting. Setup and call share the limit,
# TEST_LIMIT_S unless the test is marked @pytest.mark.timeout(seconds);
# teardown gets TEARDOWN_LIMIT_S of its own. The slowest test took 36 s and
# the next ones 15-28 s at load 3.5 on 2 cores (pytest --durations), so
# 120 s holds under more than twice that load.
# Sanitizer builds (`make check`) get twice the limits; RELAYLAB_TEST_LIMIT_SCALE
# multiplies them (0: no limit, for a debugger).
TEST_LIMIT_S = 120.0
TEARDOWN_LIMIT_S = 60.0


def pytest_configure(config):
    config.addinivalue_line("markers", f"timeout(seconds): the test's time limit instead of {TEST_LIMIT_S:.0f} s")


def _limit_scale():
    env = os.environ.get("RELAYLAB_TEST_LIMIT_SCALE")
    if env:
        return float(env)
    return 2.0 if os.sep + "address" in os.environ.get("RELAYLAB_BIN", "") else 1.0


def _run_phase_limited(item, phase, seconds, what):
    """Runs the rest of a hook (the caller yields) under a SIGALRM after
    |seconds|; returns a function that disarms it."""

    def expired(signum, frame):
        signal.setitimer(signal.ITIMER_REAL, 0)
        pytest.fail(f"TIMEOUT: {item.nodeid} {phase} still running after {what}")

    old = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.001))

    def disarm():
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)

    return disarm


def _limited(item, phase):
    scale = _limit_scale()
    if scale <= 0:
        return lambda: None
    if phase == "teardown":
        limit = TEARDOWN_LIMIT_S * scale
        return _run_phase_limited(item, phase, limit, f"its {limit:.0f} s limit for teardown")
    marker = item.get_closest_marker("timeout")
    limit = (float(marker.args[0]) if marker else TEST_LIMIT_S) * scale
    if phase == "setup":
        item._rl_deadline = time.monotonic() + limit
    left = item._rl_deadline - time.monotonic()
    return _run_phase_limited(item, phase, left, f"the test's {limit:.0f} s limit (setup and call)")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    disarm = _limited(item, "setup")
    try:
        yield
    finally:
        disarm()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    disarm = _limited(item, "call")
    try:
        yield
    finally:
        disarm()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item):
    disarm = _limited(item, "teardown")
    try:
        yield
    finally:
        disarm()


def bin_path(name):
    bindir = os.environ.get("RELAYLAB_BIN")
    assert bindir, "RELAYLAB_BIN is not set: run through `make integration`"
    path = os.path.join(bindir, name)
    assert os.access(path, os.X_OK), f"{path} is missing: run `make`"
    return path


def sanitized(path):
    """True for a binary built with ASan (`make check`)."""
    with open(path, "rb") as f:
        return b"__asan_init" in f.read()


def channel(addr):
    # A local subchannel pool keeps one test's dead server from leaking into
    # the next test's connections (docs/grpc-facts.md, client calls).
    return grpc.insecure_channel(addr, options=[("grpc.use_local_subchannel_pool", 1)])


def read_shared(f):
    """All of file |f| that is also a running child's stderr, read without
    moving the one file offset the two share (the child writes at it): a
    seek(0) and read here, between two of the child's writes, sent its next
    line to offset 0 over its first ones, and a test counting SIGUSR1 lines
    waited 20 s for one it had overwritten (make soak, 3 times in 10 runs;
    reproduced with a streamer answering SIGUSR1 every 50 ms: stalls of up
    to 6 s while its reporter thread sat idle in sigtimedwait). pread leaves
    the offset alone."""
    fd = f.fileno()
    size = os.fstat(fd).st_size
    parts, off = [], 0
    while off < size:
        part = os.pread(fd, size - off, off)
        if not part:
            break
        parts.append(part)
        off += len(part)
    return b"".join(parts)


class Program:
    """A started process in its own process group. |addr| is HOST:PORT from
    its readiness line. Its stdout is drained by a thread; the first
    STDOUT_KEEP bytes after readiness are in |output| (call output_text())."""

    def __init__(self, argv, env=None, ready=True):
        self.argv = argv
        self.stderr_file = tempfile.TemporaryFile()
        self.popen = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self.stderr_file,
            env=env,
            start_new_session=True,  # its own group: teardown kills children too
        )
        self.pid = self.popen.pid
        self.addr = None
        self.name = None
        self.lines_before_ready = []
        self._output = bytearray()
        self._output_lock = threading.Lock()
        self._ready = threading.Event()
        self._eof = threading.Event()
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()
        if ready:
            self.wait_ready(READY_TIMEOUT_S)

    def _drain(self):
        out = self.popen.stdout
        for line in iter(out.readline, b""):
            if not self._ready.is_set():
                text = line.decode(errors="replace")
                m = READY_RE.match(text)
                if m:
                    self.name, host, port = m.group(1), m.group(2), m.group(3)
                    self.addr = f"{host}:{port}"
                    self._ready.set()
                else:
                    self.lines_before_ready.append(text.rstrip("\n"))
                continue
            with self._output_lock:
                room = STDOUT_KEEP - len(self._output)
                if room > 0:
                    self._output += line[:room]
        self._eof.set()

    def wait_ready(self, timeout):
        """Waits for the readiness line; fails the test if the program exits
        or stays silent for |timeout| seconds."""
        deadline = time.monotonic() + timeout
        while not self._ready.wait(0.02):
            if self.popen.poll() is not None:
                pytest.fail(f"{self.argv} exited with {self.popen.returncode} before listening:\n{self.stderr()}")
            if time.monotonic() > deadline:
                pytest.fail(f"{self.argv} not listening after {timeout} s:\n{self.stderr()}")
        return self.addr

    def output_text(self):
        with self._output_lock:
            return self._output.decode(errors="replace")

    def stderr(self, tail=4000):
        """The last |tail| characters of stderr (for messages); tail=None
        gives all of it (for counting lines: a sliding tail can hide a new
        line behind an old one leaving the window)."""
        text = read_shared(self.stderr_file).decode(errors="replace")
        return text if tail is None else text[-tail:]

    def wait_exit(self, timeout):
        """The exit status (negative: killed by that signal), or None if the
        process is still running after |timeout| seconds."""
        try:
            return self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def signal(self, sig):
        if self.popen.poll() is None:
            os.kill(self.pid, sig)

    def kill(self):
        """Kills the whole process group we created (its id is our child's
        pid), then reaps the child."""
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.popen.wait(10)
        self._eof.wait(5)
        self.popen.stdout.close()
        self.stderr_file.close()


@pytest.fixture
def start_program():
    """start_program(argv, env=None, ready=True) -> Program; every program
    started is killed at teardown."""
    started = []

    def start(argv, env=None, ready=True):
        p = Program(argv, env=env, ready=ready)
        started.append(p)
        return p

    yield start
    for p in started:
        p.kill()


@pytest.fixture
def baseline(start_program):
    """A fresh bin/baseline on 127.0.0.1:0."""
    return start_program([bin_path("baseline"), "--listen", "127.0.0.1:0"])


@pytest.fixture
def baseline_stub(baseline):
    ch = channel(baseline.addr)
    yield pb_grpc.BaselineStub(ch)
    ch.close()


@pytest.fixture
def observer(baseline):
    o = Observer(baseline.addr)
    yield o
    o.close()


@pytest.fixture
def start_submission(start_program, baseline):
    """start_submission("relay_good", ready=True) -> Program: runs
    tests/submissions/<name>.py as the grader would, against |baseline|."""

    def start(name, ready=True):
        env = dict(os.environ, RELAYLAB_LISTEN="127.0.0.1:0", RELAYLAB_BASELINE=baseline.addr)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [os.path.join(REPO, "build", "gen", "py"), env.get("PYTHONPATH")]))
        return start_program([PYTHON, os.path.join(SUBMISSIONS, name + ".py")], env=env, ready=ready)

    return start


class Observer:
    """Reads and steers what the baseline saw, through relaylab.Observer."""

    def __init__(self, addr):
        self._channel = channel(addr)
        self.stub = pb_grpc.ObserverStub(self._channel)

    def close(self):
        self._channel.close()

    def observe(self, tag=""):
        return self.stub.Observe(pb.ObserveRequest(tag=tag), timeout=5)

    def calls(self, tag="", method=None):
        return [c for c in self.observe(tag).calls if method is None or c.method == method]

    def reset(self):
        return self.stub.Reset(pb.ResetRequest(), timeout=5).cleared

    def set_fault(self, method, fail_first, status, after_first_message=False):
        self.stub.SetFault(
            pb.FaultRequest(method=method, fail_first=fail_first, status=status.value[0] if isinstance(status, grpc.StatusCode) else int(status), after_first_message=after_first_message),
            timeout=5,
        )

    def wait_for(self, predicate, timeout, tag="", method=None, interval=0.005):
        """Polls the records (filtered by |tag| and |method|) until
        predicate(records) is true and returns them; fails the test with the
        last records seen after |timeout| seconds."""
        deadline = time.monotonic() + timeout
        while True:
            records = self.calls(tag, method)
            if predicate(records):
                return records
            if time.monotonic() > deadline:
                pytest.fail(f"condition not met within {timeout} s; records:\n" + "\n".join(map(fmt_record, records)))
            time.sleep(interval)


def fmt_record(c):
    return (
        f"#{c.seq} {c.method} tag={c.tag!r} dl={'%d ms' % c.deadline_ms if c.has_deadline else 'none'} "
        f"steps={c.steps_done} ended={c.ended} status={c.status} cancelled={c.cancelled} "
        f"attempt={c.attempt} faulted={c.faulted} dur={(c.end_ns - c.arrival_ns) / 1e6 if c.ended else -1:.1f} ms"
    )


def ended(n=1):
    """Predicate: at least |n| records, all ended."""
    return lambda records: len(records) >= n and all(c.ended for c in records)


