# relay_ignores_sigterm: a correct relay that ignores SIGTERM, so only
# SIGKILL ends it.
#
# Must pass: every scenario of both exercises. The grader must still end it
# (SIGKILL after a short grace) between scenarios and leave nothing running.
import signal

from relay_good import serve

if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # BUG: cannot be stopped politely
    serve()
