# relay_forks_child: a correct relay that starts a long-lived helper process
# ("sleep 600", standing in for a cache daemon) at start-up and never stops
# it. The child stays in the relay's process group.
#
# Must pass: every scenario of both exercises. After grading, no process of
# this submission (the relay or its "sleep 600") may be left running: the
# grader must kill the submission's whole process group, not just its pid.
import subprocess

from relay_good import serve

if __name__ == "__main__":
    helper = subprocess.Popen(["sleep", "600"])  # BUG: outlives the relay
    print(f"helper pid {helper.pid}", flush=True)
    serve()
