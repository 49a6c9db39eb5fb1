# oom_worker (hostile, or a relay whose helper process balloons): a correct
# relay that first runs a worker process mapping argv[1] MiB of MAP_SHARED
# anonymous memory (which RLIMIT_DATA does not count) and touching every
# page. Under a smaller --memory-limit the sandbox's memory cgroup has the
# OOM killer end the worker (the largest process); the relay itself lives
# on and serves.
#
# Must get, under `grader deadline --memory-limit M` with argv[1] > M
# (sandboxed, root): the relay's own verdict (PASS), with feedback that
# begins by naming the sandbox's memory limit and the OOM killer's kill
# (issue 34, item 6): its own process never died, so nothing else says so.
# Bounded: one worker, argv[1] MiB once.
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from relay_good import serve  # noqa: E402

WORKER = """
import mmap, sys
mib = int(sys.argv[1])
m = mmap.mmap(-1, mib << 20, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)
for off in range(0, mib << 20, mmap.PAGESIZE):
    m[off] = 1
"""

if __name__ == "__main__":
    mib = sys.argv[1] if len(sys.argv) > 1 else "384"
    worker = subprocess.run([sys.executable, "-c", WORKER, mib], timeout=60)
    print(f"worker ended with {worker.returncode}", flush=True)
    serve()
