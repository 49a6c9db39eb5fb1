# fork_bomb (hostile, or a relay that starts a process per call without a
# bound): before it would listen it starts sleeping children until the kernel
# refuses one (at most argv[1], default 2000), and then exits (status 3)
# without ever listening.
# Under the sandbox the refusal is its pids cgroup's task limit (512); the
# scenario's own verdict is NOT-READY ("exited ... before it listened"), which alone would
# read as the exercise's usual advice.
#
# Must get, under `grader deadline` (sandboxed, root): NOT-READY whose
# feedback first names the sandbox's task limit of 512 (issue 34, item 6).
# Bounded: at most argv[1] children, each a `sleep 60`; the sandbox kills
# the whole PID namespace at the end of the scenario.
import os
import sys
import time

if __name__ == "__main__":
    most = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    started = 0
    refused = None
    # posix_spawn (a vfork) rather than fork: a fork of Python copies its
    # page tables, ~30 ms each on a loaded 2-core machine, too slow to reach
    # the limit before the ready timeout; a spawned sleep costs ~1 ms.
    for _ in range(most):
        try:
            os.posix_spawn("/bin/sleep", ["sleep", "60"], {})
        except OSError as e:
            refused = e
            break
        started += 1
    print(f"started {started} children; refused: {refused}", flush=True)
    # Refused at last: exit (the start ends at once as NOT-READY); never
    # refused (no limit): wait, as a program that never listens.
    if refused:
        sys.exit(3)
    time.sleep(120)
