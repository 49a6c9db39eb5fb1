# Timing tolerances for the integration tests, taken from the grader's own
# judges so a test and a verdict never disagree about what "on time" means.
#
# The numbers are read from grader/judge.h and the exercises' judges
# (grader/deadline_judge.h, cancel_judge.h, shutdown_judge.h), where each is derived from measurements (the
# .c beside each explains how): a test that wants "the relay
# passed the time that was left" uses the same bound as the grader's
# deadline judge, and "a cancel reached the baseline promptly" the same
# allowance as the grader's cancel judge. None of them is a speed goal; speed
# goals are benchmarks (bench/). What each allowance covers:
#   SCHED_MS   the baseline's floor to whole ms and C-core's cached clock, on
#              top of the grpc-timeout wire rounding and the time a relay or
#              client itself spent before the call arrived (measured: W - T
#              up to +42 ms for bin/relay with a core busy, of which 20 ms is
#              the rounding of two hops);
#   CANCEL_MS  a client's cancel to the end of the downstream call (measured
#              0..64 ms, the worst under other builds on both cores);
#   EXPIRE_MS  a deadline to the status that reports it;
#   LATE_CALL_WINDOW_MS  how long to watch for a call that must not come (a
#              relay that makes it anyway does so within a few ms);
#   ADMISSION_MS  SIGTERM to a closed listener;
#   GRACE_LATE_MS, GRACE_EARLY_MS  how late (early) after a shutdown's
#              grace the Work it cut may end: a submission's own timer,
#              measured 292 ms late for grpc-js with a hog on each core;
#   refused()  what counts as a refusal at shutdown (REFUSE_MS and the
#              statuses that are not one, GR_SHUTDOWN_NOT_REFUSALS).
import os
import re

import grpc

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


# Where each tolerance is defined: the shared judge (grader/judge.h) or the
# exercise's own (grader/NAME_judge.h), with its macro's prefix there.
_HEADERS = (
    ("judge.h", "GR_JUDGE_", ("EXPIRE_MS", "LATE_CALL_WINDOW_MS")),
    ("deadline_judge.h", "GR_DL_", ("SCHED_MS", "MARGIN_MIN_MS", "MARGIN_FRAC")),
    ("cancel_judge.h", "GR_", ("CANCEL_MS",)),
    ("shutdown_judge.h", "GR_SHUTDOWN_", ("ADMISSION_MS", "REFUSE_MS", "GRACE_LATE_MS", "GRACE_EARLY_MS")),
)


def _judge_constants():
    found = {}
    for header, prefix, need in _HEADERS:
        path = os.path.join(REPO, "grader", header)
        with open(path) as f:
            text = f.read()
        here = {m.group(1): int(m.group(2)) for m in re.finditer(r"#define " + prefix + r"(\w+)\s+(\d+)", text)}
        missing = [n for n in need if n not in here]
        assert not missing, f"{path} no longer defines {prefix}{missing}: update tests/integration/tolerances.py"
        found.update({n: here[n] for n in need})
        if prefix == "GR_SHUTDOWN_":
            m = re.search(r"#define GR_SHUTDOWN_NOT_REFUSALS\s+(.+)", text)
            assert m, f"{path} no longer defines GR_SHUTDOWN_NOT_REFUSALS: update tests/integration/tolerances.py"
            found["NOT_REFUSALS"] = [n.strip() for n in m.group(1).split(",")]
    return found


_J = _judge_constants()
SCHED_MS = _J["SCHED_MS"]
MARGIN_MIN_MS = _J["MARGIN_MIN_MS"]
MARGIN_FRAC = _J["MARGIN_FRAC"]
EXPIRE_MS = _J["EXPIRE_MS"]
CANCEL_MS = _J["CANCEL_MS"]
LATE_CALL_WINDOW_MS = _J["LATE_CALL_WINDOW_MS"]
ADMISSION_MS = _J["ADMISSION_MS"]
REFUSE_MS = _J["REFUSE_MS"]
GRACE_LATE_MS = _J["GRACE_LATE_MS"]
GRACE_EARLY_MS = _J["GRACE_EARLY_MS"]


def _status_codes(names):
    """grpc.StatusCode members for C-core's GRPC_STATUS_<NAME> names (the
    same names, without the prefix)."""
    codes = []
    for n in names:
        assert n.startswith("GRPC_STATUS_") and n[len("GRPC_STATUS_"):] in grpc.StatusCode.__members__, \
            f"GR_SHUTDOWN_NOT_REFUSALS names {n!r}, not a GRPC_STATUS_ constant: update tests/integration/tolerances.py"
        codes.append(grpc.StatusCode[n[len("GRPC_STATUS_"):]])
    return frozenset(codes)


NOT_REFUSALS = _status_codes(_J["NOT_REFUSALS"])


def refused(code, took_ms):
    """True when a call that ended with grpc.StatusCode |code| |took_ms| after
    it started was refused, as the grader's gr_shutdown_refused
    (grader/shutdown_judge.h): fast, with any status but those in
    GR_SHUTDOWN_NOT_REFUSALS. gRPC, not the
    server, picks the status: CANCELLED for a stream that reached the draining
    connection before the client saw its GOAWAY, UNAVAILABLE on a refused
    connection."""
    return code not in NOT_REFUSALS and took_ms <= REFUSE_MS


def wire_rounding_ms(ms):
    """The most grpc-timeout's encoding rounds |ms| up: exact below 1 s, then
    10 ms steps below 10 s, 100 ms below 100 s (lib/rl_deadline.c)."""
    if ms < 1000:
        return 0
    if ms < 10_000:
        return 10
    if ms < 100_000:
        return 100
    return 1000


def deadline_upper_ms(budget_ms, true_ms, relay_ms):
    """The largest received deadline a correct hop may show, as the grader's
    gr_dl_upper (grader/deadline_judge.h): what truly remained, plus the
    rounding of both hops, plus |relay_ms| (time spent before the call arrived, outside any
    downstream call: a runtime may re-anchor the deadline that late), plus
    SCHED_MS."""
    relay_ms = max(relay_ms, 0)
    round1 = wire_rounding_ms(budget_ms)
    round2 = wire_rounding_ms(true_ms + round1 + relay_ms + SCHED_MS)
    return true_ms + round1 + round2 + relay_ms + SCHED_MS


def deadline_lower_ms(true_ms):
    """The smallest received deadline a correct relay may show, as the
    grader's gr_dl_lower: a relay may keep back a safety margin of
    max(MARGIN_MIN_MS, MARGIN_FRAC % of what remained)."""
    margin = max(MARGIN_MIN_MS, true_ms * MARGIN_FRAC / 100)
    return max(true_ms - margin, 0)
