# shared_memory (hostile): a correct relay that first maps argv[1] MiB of
# MAP_SHARED anonymous memory and touches every page, memory that
# RLIMIT_DATA (the --memory-limit outside the sandbox) does not count.
#
# Must get, under `grader deadline --memory-limit M` with argv[1] > M
# (sandboxed): killed by the memory cgroup (SIGKILL), so it fails; the
# sandbox's memory limit counts shared pages. Bounded: argv[1] MiB once.
import mmap
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from relay_good import serve  # noqa: E402

if __name__ == "__main__":
    mib = int(sys.argv[1]) if len(sys.argv) > 1 else 384
    m = mmap.mmap(-1, mib << 20, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)
    page = mmap.PAGESIZE
    for off in range(0, mib << 20, page):
        m[off] = 1
    serve()
