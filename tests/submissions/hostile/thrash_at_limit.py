# thrash_at_limit (hostile, or merely unlucky): a start that holds argv[1]
# MiB of private memory, close under the sandbox's memory limit, and then
# keeps reading the system's shared libraries (each dropped from the page
# cache first, so that every read is charged to this run's cgroup), so every
# page it reads must first evict another: the memory cgroup hits its limit all the time, and
# the program makes no progress toward listening. Without swap the kernel's
# OOM killer never ends it (page cache can always be reclaimed), so how long
# it would take to be judged depended on the machine.
#
# Must get, under `grader deadline --memory-limit M` with argv[1] a little
# under M (sandboxed, root): CRASH, ended by the grader after one second of
# hitting the memory limit, which the feedback names. Bounded: it gives up
# after 100 s of reading; the grader ends it long before.
import glob
import os
import sys
import time

if __name__ == "__main__":
    mib = int(sys.argv[1]) if len(sys.argv) > 1 else 140
    held = bytearray(mib << 20)
    for off in range(0, len(held), 4096):
        held[off] = 1
    libs = [f for f in glob.glob("/usr/lib/*/*.so*") + glob.glob("/usr/lib/*.so*") if os.path.isfile(f)]
    print(f"holding {mib} MiB, reading {len(libs)} libraries", flush=True)
    until = time.monotonic() + 100
    while time.monotonic() < until:
        for path in libs:
            try:
                with open(path, "rb") as f:
                    # Out of the page cache first: a page another cgroup
                    # (an earlier run) read stays charged to it, and reading
                    # it again would charge this one nothing.
                    os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
                    while f.read(1 << 20):
                        pass
            except OSError:
                pass
