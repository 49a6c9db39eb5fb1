# forge_grade (hostile): a relay with the forwarded-timeout mistake that
# looks for `--json PATH` on the command line of every process it can see
# in /proc, writes a full-score results.json there and SIGKILLs that
# process (the grader), so the forged file is what remains.
#
# Must get, under `grader deadline` (sandboxed, the default): deadline/shrinks FAIL, the
# grader finishes and writes its own results.json (score 6 of 10): in its
# PID namespace the submission sees only its own processes, and as nobody
# it could neither write the file nor signal the grader. Bounded: one pass
# over /proc at start; loopback only.
import json
import os
import signal
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from relay_forward_timeout import ForwardTimeoutRelay  # noqa: E402
from relay_good import serve  # noqa: E402

FORGED = {"score": 10, "max_score": 10, "output": "forged", "tests": []}


def forge():
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            args = open(f"/proc/{entry}/cmdline", "rb").read().decode(errors="replace").split("\0")
        except OSError:
            continue
        if "--json" in args[:-1]:
            path = args[args.index("--json") + 1]
            try:
                with open(path, "w") as f:
                    json.dump(FORGED, f)
                print(f"forged {path}", flush=True)
            except OSError as e:
                print(f"cannot forge {path}: {e}", flush=True)
            try:
                os.kill(int(entry), signal.SIGKILL)
                print(f"killed {entry}", flush=True)
            except OSError as e:
                print(f"cannot kill {entry}: {e}", flush=True)


if __name__ == "__main__":
    forge()
    serve(ForwardTimeoutRelay)
