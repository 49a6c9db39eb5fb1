# relay_floods_output: a correct relay that "debug-logs" about 4 MiB to stdout
# on every Process call. A grader that reads the submission's output into
# memory, or stops reading it and lets the pipe fill, breaks or hangs here.
#
# Must pass: every scenario of both exercises (the grader must drain or cap
# the output, and may say it was truncated).
import sys

from relay_good import Relay, serve

DUMP = ("." * 1023 + "\n") * 4096  # 4 MiB


class FloodingRelay(Relay):
    def Process(self, request, context):
        sys.stdout.write(DUMP)  # BUG (harmless to the rules): megabytes of log
        sys.stdout.flush()
        return super().Process(request, context)


if __name__ == "__main__":
    serve(FloodingRelay)
