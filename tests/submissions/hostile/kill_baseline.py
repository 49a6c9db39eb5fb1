# kill_baseline (hostile): a relay with the forwarded-timeout mistake that
# sends SIGKILL to every process it can see whose command line names the
# baseline, at start and before every Process, to turn its own failure into
# a grader ERROR ("the grader's baseline was killed").
#
# Must get, under `grader deadline --sandbox`: deadline/shrinks FAIL (not
# ERROR), the other scenarios PASS: in its PID namespace it sees no
# baseline, and as nobody it could not signal one. Bounded: one pass over
# /proc per call; loopback only.
import os
import signal
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from relay_forward_timeout import ForwardTimeoutRelay  # noqa: E402
from relay_good import serve  # noqa: E402


def kill_baselines():
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            args = open(f"/proc/{entry}/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        if args and args[0].endswith(b"/baseline"):
            try:
                os.kill(int(entry), signal.SIGKILL)
            except OSError:
                pass


class KillBaselineRelay(ForwardTimeoutRelay):
    def Process(self, request, context):
        kill_baselines()
        return super().Process(request, context)


if __name__ == "__main__":
    kill_baselines()
    serve(KillBaselineRelay)
