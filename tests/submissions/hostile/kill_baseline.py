# kill_baseline (hostile): a relay with the forwarded-timeout mistake that
# sends SIGKILL to the process listening on $RELAYLAB_BASELINE's port (found
# through /proc/net/tcp and every /proc/PID/fd it can read), at start and
# before every Process, to turn its own failure into a grader ERROR ("the
# grader's baseline was killed"). It kills that one process only, never
# another grader's.
#
# Must get, under `grader deadline` (sandboxed): deadline/shrinks FAIL (not
# ERROR), the other scenarios PASS: in its PID namespace it sees no
# baseline, and as nobody it could not signal one. Under --no-sandbox:
# FAIL, not ERROR, on the scenarios it breaks. Bounded: one pass over /proc
# per call; loopback only.
import os
import signal
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from relay_forward_timeout import ForwardTimeoutRelay  # noqa: E402
from relay_good import serve  # noqa: E402


def listening_inodes(port):
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = open(table).read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            # local_address is HEX_IP:HEX_PORT; state 0A is LISTEN
            if len(f) > 9 and int(f[1].rsplit(":", 1)[1], 16) == port and f[3] == "0A":
                inodes.add(f[9])
    return inodes


def kill_baselines():
    port = int(os.environ["RELAYLAB_BASELINE"].rsplit(":", 1)[1])
    inodes = listening_inodes(port)
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            fds = os.listdir(f"/proc/{entry}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(f"/proc/{entry}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:[") and target[8:-1] in inodes:
                try:
                    os.kill(int(entry), signal.SIGKILL)
                except OSError:
                    pass
                break


class KillBaselineRelay(ForwardTimeoutRelay):
    def Process(self, request, context):
        kill_baselines()
        return super().Process(request, context)


if __name__ == "__main__":
    kill_baselines()
    serve(KillBaselineRelay)
