# setsid_streamer (hostile): the unbounded streamer, run in a child that
# calls setsid(), so the process that grows is outside the process group
# the grader started; the leader only waits for it.
#
# Must get, under `grader flow` (sandboxed, the default): the verdicts of
# streamer_unbounded.py (stall, cancel, slow-reader FAIL; resume, no-leak
# PASS), because the sandbox measures the submission's cgroup, not its
# process group. Bounded: the child dies with the sandbox; loopback only.
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

pid = os.fork()
if pid == 0:
    os.setsid()
    os.execv(sys.executable, [sys.executable, os.path.join(HERE, "..", "streamer_unbounded.py")])
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status) & 0xFF)
