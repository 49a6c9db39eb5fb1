# driver_exits_on_sigterm: not a lab submission: the grader's own test of
# signalling the submission (the hidden driver-test exercise,
# tests/integration/test_grader_driver.py). relay_good, except that on
# SIGTERM it prints "draining", waits 300 ms, prints "bye" and exits with
# status 7: a known status after a delay the grader's measure must cover.
import os
import signal
import time

from relay_good import serve

DELAY_S = 0.3


def on_term(*_):
    print("draining", flush=True)
    time.sleep(DELAY_S)
    print("bye", flush=True)
    os._exit(7)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, on_term)
    serve()
