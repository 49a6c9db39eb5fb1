# relay_hang: accepts Process and never answers: the handler waits forever,
# whatever deadline the call had, and never calls the baseline.
#
# Must fail: every scenario with verdict TIMEOUT (the grader's own limit ran
# out with no reply; with a client deadline only DEADLINE_EXCEEDED from the
# client's side ever comes back). The process stays alive and listening.
import threading

from relay_good import Relay, serve


class HangingRelay(Relay):
    def Process(self, request, context):
        threading.Event().wait()  # BUG: never returns, never looks at the deadline


if __name__ == "__main__":
    serve(HangingRelay)
