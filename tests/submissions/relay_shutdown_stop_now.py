# relay_shutdown_stop_now: a relay that handles SIGTERM with server.stop(0).
#
# Mistake: a grace of 0. grpcio cancels every call in flight at once, so a
# call that had a few hundred ms left fails, and its downstream Work is
# cancelled the moment the signal arrives; the process exits 0. It must fail
# the shutdown exercise's in-flight scenario.
import signal

from relay_shutdown_good import leave, main


def stop_now(server):
    def on_signal(*_):
        server.stop(0).wait()  # BUG: no grace for the calls in flight
        leave(0)

    signal.signal(signal.SIGTERM, on_signal)


if __name__ == "__main__":
    main(install=stop_now)
