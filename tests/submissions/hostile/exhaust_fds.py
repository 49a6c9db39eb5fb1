# exhaust_fds (hostile): a correct relay that, before it listens, starts 24
# helper processes, each opening 900 idle TCP connections to the baseline's
# public port (RELAYLAB_BASELINE) and holding them: 21,600 in all, past the
# baseline's file descriptors (RLIMIT_NOFILE 20,000 on the machine this was
# measured on), so that the baseline could accept nothing more, not even
# the grader's calls to its private observer socket. The grader then said
# ERROR "the baseline's observer did not answer", blaming itself.
#
# Must get, under `grader deadline --only shrinks`: FAIL naming the
# connections it opened to the baseline, never ERROR, and the grader ends in
# its usual time. Bounded: 24 x 900 connects to loopback, each helper ends
# after 90 s or when the relay's process is gone.
import os
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from relay_good import serve  # noqa: E402

# `exhaust_fds.py [HELPERS [PER_HELPER]]`: the tests use fewer.
HELPERS = int(sys.argv[1]) if len(sys.argv) > 1 else 24
PER_HELPER = int(sys.argv[2]) if len(sys.argv) > 2 else 900
HOLD_S = 90


def hold(addr, parent):
    host, port = addr.rsplit(":", 1)
    socks = []
    for _ in range(PER_HELPER):
        try:
            s = socket.create_connection((host, int(port)), timeout=2)
            socks.append(s)
        except OSError:
            break
    print(f"helper {os.getpid()}: {len(socks)} connections", flush=True)
    end = time.monotonic() + HOLD_S
    while time.monotonic() < end and os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


if __name__ == "__main__":
    addr = os.environ["RELAYLAB_BASELINE"]
    me = os.getpid()
    kids = []
    for _ in range(HELPERS):
        pid = os.fork()
        if pid == 0:
            hold(addr, me)
        kids.append(pid)
    serve()
