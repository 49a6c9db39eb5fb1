# Shared fixtures for the integration tests: start a program on 127.0.0.1:0,
# wait for its readiness line with a deadline, kill its process group at
# teardown, read what the baseline observed through an Observer helper
# that polls for a condition instead of sleeping, and run bin/grader once
# (run_grader, grade: the sanitizer's memory rule, results.json read and
# checked, nothing of the run left behind).
import functools
import json
import os
import re
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import uuid

import grpc
import pytest

import relaylab_pb2 as pb
import relaylab_pb2_grpc as pb_grpc

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SUBMISSIONS = os.path.join(REPO, "tests", "submissions")
PYTHON = "/usr/bin/python3"
# "NAME listening on HOST:PORT", or "NAME listening on unix:PATH" for a
# server whose only listener is a unix socket (a coverage tunnel server).
READY_RE = re.compile(r"^(\S+) listening on (unix:\S+|\S+:\d+)\s*$")
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


@functools.lru_cache(maxsize=None)
def sanitized(path):
    """True for a binary built with ASan (`make check`)."""
    with open(path, "rb") as f:
        return b"__asan_init" in f.read()


def sanitizer_build():
    """True under `make check`: the kit's programs are built with ASan."""
    return sanitized(bin_path("grader"))


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
    """A started process in its own process group. |addr| is HOST:PORT (or
    unix:PATH) from its readiness line. Its stdout is drained by a thread; the first
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
                    self.name, self.addr = m.group(1), m.group(2)
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




# ---- bin/grader, run once ----
#
# Every test that grades runs bin/grader through run_grader (or grade, its
# usual form), which holds what each grading shares: the sanitizer's memory
# rule, a time limit whose error shows the grader's stderr, results.json
# read once and checked for Gradescope's fields, and no process of the run
# left behind once the grader exited.

GRADE_TIMEOUT_S = 240.0
GRADE_STOP_S = 30.0  # how long a grader past its limit has to stop at SIGTERM


class GraderError(AssertionError):
    """A grading that gave no results to judge: it outlived its time limit,
    or wrote no readable results.json. The message carries the grader's
    command line, exit status and the end of its stderr."""


def _tail(text, n=3000):
    return text if len(text) <= n else "..." + text[-n:]


def processes_of(grader_pid, marker):
    """Live pids of a grading run: those whose environment holds |marker|
    (the grader passes its own environment on to the baseline and, without
    the sandbox, to the submission and its children), their descendants
    (the sandboxed submission, whose environment is clean, runs under the
    grader), and every process still in one of the grader |grader_pid|'s
    sandbox cgroups ("relaylab-PID-N"), which is where a sandboxed process
    would be left after its grader exited. |grader_pid| may be None."""
    table = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as s:
                fields = s.read().rsplit(")", 1)[1].split()
            table[int(d)] = (int(fields[1]), fields[0])
        except (OSError, IndexError, ValueError):
            pass
    marked = set()
    needle = marker.encode()
    cgroup = f"/relaylab-{grader_pid}-" if grader_pid else None
    for pid in table:
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if needle in f.read():
                    marked.add(pid)
                    continue
            if cgroup:
                with open(f"/proc/{pid}/cgroup") as f:
                    if cgroup in f.read():
                        marked.add(pid)
        except OSError:
            pass
    found = []
    for pid, (ppid, state) in table.items():
        if state == "Z":
            continue
        p, hops = pid, 0
        while p and p not in marked and hops < 64:
            p, hops = table.get(p, (0, ""))[0], hops + 1
        if p in marked:
            found.append(pid)
    return found


def new_marker():
    """An environment variable name that tags every process of one grading."""
    return "RL_GRADER_TEST_" + uuid.uuid4().hex


class Graded:
    """One grading: |rc|, |out| and |err| (text; |stdout| and |stderr| the
    bytes), |seconds| from start to exit, |rusage| (os.wait4's: its
    ru_maxrss is the largest of the grader and the children it reaped),
    and results.json: |results| the raw document, |tests| {scenario id:
    its entry}, |verdicts| {scenario id: verdict name, "PASS"}, |feedback|
    {scenario id: feedback}, |score| and |max_score|. Scenario, verdict and
    feedback are each test's extra_data, written apart from the prose
    (grader/report.c); a test's "output" is what the student reads: the
    verdict with its runs ("PASS 2/3") and held points, the feedback and
    the submission's output. Each of these raises GraderError, with the
    grader's stderr, when the grader wrote no results.json."""

    def __init__(self, argv, rc, stdout, stderr, seconds, rusage, results):
        self.argv, self.rc, self.seconds, self.rusage = argv, rc, seconds, rusage
        self.stdout, self.stderr = stdout, stderr
        self.out = stdout.decode(errors="replace")
        self.err = stderr.decode(errors="replace")
        self._results = results
        self._tests = None
        if results is not None:
            self._tests = {t["extra_data"]["scenario"]: t for t in results["tests"]}

    @property
    def results(self):
        if self._results is None:
            raise GraderError(f"no results.json: {self.argv} exited {self.rc}\nstdout:\n{_tail(self.out)}\n"
                              f"stderr:\n{_tail(self.err)}")
        return self._results

    @property
    def tests(self):
        self.results
        return self._tests

    @property
    def verdicts(self):
        return {sid: t["extra_data"]["verdict"] for sid, t in self.tests.items()}

    @property
    def feedback(self):
        return {sid: t["extra_data"]["feedback"] for sid, t in self.tests.items()}

    @property
    def score(self):
        return self.results["score"]

    @property
    def max_score(self):
        return self.results["max_score"]

    def failing(self):
        """The scenarios whose verdict is not PASS."""
        return {sid for sid, v in self.verdicts.items() if v != "PASS"}


def _has_option(argv, name):
    return any(a == name or a.startswith(name + "=") for a in argv)


def _option_value(argv, name):
    for i, a in enumerate(argv):
        if a == name and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith(name + "="):
            return a[len(name) + 1:]
    return None


def _read_results(path):
    """results.json at |path| checked for Gradescope's fields, or None when
    the grader wrote none."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:  # not written, or a path the test made unwritable
        return None
    results = json.loads(text)
    for key in ("score", "max_score", "execution_time", "output", "tests"):
        assert key in results, f"results.json lacks {key}"
    for t in results["tests"]:
        assert set(t) >= {"name", "score", "max_score", "status", "output", "extra_data"}, t
        assert t["status"] in ("passed", "failed"), t
    return results


def run_grader(*args, timeout=GRADE_TIMEOUT_S, env=None, cwd=None, wrap=(), grader=None, marker=None,
               leftovers=True, results=True, on_start=None):
    """Runs |grader| (bin/grader) with |args| and waits for it, at most
    |timeout| seconds (then it is stopped, SIGTERM and after GRADE_STOP_S
    SIGKILL, and GraderError says so, with its stderr). The test's arguments are passed as given, with two additions:
    - the sanitizer's memory rule: a grader built with ASan grading a
      submission gets `--memory-limit 0` unless the test sets a limit:
      ASan reserves ~15 TB of shadow memory, which RLIMIT_DATA counts, so
      an ASan program under the default limit dies before it listens;
    - `--json FILE` in a private folder when the test passes no --json
      and |results| is true.
    |env| adds to this process's environment, |cwd| is the grader's folder,
    |wrap| a command the grader runs under (setpriv, unshare). Every
    process of the run carries |marker| (a fresh one when None) in its
    environment; with |leftovers| the test fails if one outlives the
    grader. |on_start|, if given, is called with the grader's pid once it
    started (to signal it mid-run); the time limit counts from its return.
    Returns a Graded; results.json, when written, is read and checked for
    Gradescope's fields."""
    grader = grader or bin_path("grader")
    argv = list(args)
    if "--submission" in argv and not _has_option(argv, "--memory-limit") and sanitized(grader):
        argv = [*argv[:1], "--memory-limit", "0", *argv[1:]]
    private, json_path = None, None
    if _has_option(argv, "--json"):
        json_path = _option_value(argv, "--json")
    elif results:
        private = tempfile.mkdtemp(prefix="relaylab-grade-")
        json_path = os.path.join(private, "results.json")
        argv += ["--json", json_path]
    if json_path and cwd:
        json_path = os.path.join(cwd, json_path)
    marker = marker or new_marker()
    full_env = dict(os.environ, **{marker: "1"}, **(env or {}))
    cmd = [*wrap, grader, *argv]
    try:
        return _run_and_reap(cmd, full_env, cwd, timeout, json_path, marker, leftovers, on_start)
    finally:
        if private:
            shutil.rmtree(private, ignore_errors=True)


def _run_and_reap(cmd, env, cwd, timeout, json_path, marker, leftovers, on_start):
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            cwd=cwd)
    outputs = {}

    def drain(name, f):
        outputs[name] = f.read()
        f.close()

    readers = [threading.Thread(target=drain, args=(n, f), daemon=True)
               for n, f in (("out", proc.stdout), ("err", proc.stderr))]
    for r in readers:
        r.start()
    if on_start:
        try:
            on_start(proc.pid)
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        t0_limit = time.monotonic()
    else:
        t0_limit = t0
    # The grader's exit, waited for on a pidfd with the deadline, then
    # reaped with wait4 for its resource usage.
    pidfd = os.pidfd_open(proc.pid)
    try:
        exited = select.select([pidfd], [], [], max(t0_limit + timeout - time.monotonic(), 0))[0]
    finally:
        os.close(pidfd)
    if not exited:
        # SIGTERM first: the grader's interrupt ends what it started and
        # writes its results (test_interrupted_grader_kills_children...);
        # SIGKILL if it outlives GRADE_STOP_S, which ends the grader alone.
        proc.terminate()
        try:
            proc.wait(GRADE_STOP_S)
            how = "interrupted (SIGTERM)"
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            how = f"killed (SIGKILL, {GRADE_STOP_S:.0f} s after SIGTERM)"
        for r in readers:
            r.join(10)
        raise GraderError(f"{cmd} still running after {timeout:g} s: {how}\nstderr:\n"
                          f"{_tail(outputs.get('err', b'').decode(errors='replace'))}")
    _, status, rusage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.monotonic() - t0
    # Its output ends when the last process holding the pipes exits: one
    # the grader left behind would hold them open.
    for r in readers:
        r.join(max(t0_limit + timeout - time.monotonic(), 5))
    if any(r.is_alive() for r in readers):
        raise GraderError(f"{cmd} exited {proc.returncode} but its output is still open, held by "
                          f"{processes_of(proc.pid, marker)}")
    g = Graded(cmd, proc.returncode, outputs["out"], outputs["err"], seconds, rusage,
               _read_results(json_path) if json_path else None)
    if leftovers:
        left = processes_of(proc.pid, marker)
        assert not left, f"processes left behind by the grader: {left}\n{g.out}"
    return g


def grade(exercise, submission, *args, **kw):
    """The usual grading: run_grader(|exercise|, "--submission",
    |submission|, "--quiet", *|args|)."""
    return run_grader(exercise, "--submission", submission, "--quiet", *args, **kw)
