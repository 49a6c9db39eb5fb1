# outlive (hostile): a correct relay that also starts a chain of processes,
# each forking the next in a session of its own and exiting, to keep ahead
# of any sweep of the grader's children. Every link carries the marker given
# as the first argument on its command line, so a test can look for
# survivors.
#
# Must get, under `grader deadline` (sandboxed, the default): PASS on every scenario (the
# relay is correct) and no process with the marker left when the grader has
# exited, also when the grader is killed with SIGKILL: the chain lives in
# the submission's PID namespace, which dies with it. Bounded: a link lives
# at most 0.2 s, the chain stops after 600 links (about 2 minutes at most).
import os
import sys
import time

MARKER = sys.argv[1] if len(sys.argv) > 1 else "relaylab-outlive"
LINKS = 600


def chain(n):
    # Runs in a forked child: fork the next link in its own session, exit.
    while n < LINKS:
        time.sleep(0.2)
        if os.fork() != 0:
            os._exit(0)
        os.setsid()
        n += 1
        # A fresh command line with the marker for every link.
        os.execv(sys.executable, [sys.executable, os.path.abspath(__file__), MARKER, "--link", str(n)])
    os._exit(0)


if __name__ == "__main__":
    if "--link" in sys.argv:
        chain(int(sys.argv[sys.argv.index("--link") + 1]))
    if os.fork() == 0:
        chain(0)
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from relay_good import serve  # noqa: E402

    serve()
