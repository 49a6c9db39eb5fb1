# A CRASH names the mistake when the submission's last words say it: a relay
# that dies with Python's "can't start new thread" started a thread per call
# and met the sandbox's task limit, and the feedback says so (the grader's
# crash_feedback, grader/run.c); a crash without those words is described as
# before. The relay is a copy of the good one whose Process prints the words
# and dies, in a folder of its own that user nobody can read.
import os
import shutil
import tempfile

from conftest import PYTHON, REPO, SUBMISSIONS, bin_path, grade

DIES = '''import os
import sys

from relay_good import Relay, serve


class DiesOfThreads(Relay):
    def Process(self, request, context):
        sys.stderr.write("RuntimeError: {words}\\n")
        sys.stderr.flush()
        os._exit(1)


if __name__ == "__main__":
    serve(DiesOfThreads)
'''


def folder_for(words):
    base = os.path.join(tempfile.gettempdir(), "relaylab-crash-feedback")
    os.makedirs(base, exist_ok=True)
    os.chmod(base, 0o755)
    d = tempfile.mkdtemp(dir=base)
    os.chmod(d, 0o755)
    shutil.copy(os.path.join(SUBMISSIONS, "relay_good.py"), d)
    with open(os.path.join(d, "relay_dies.py"), "w") as f:
        f.write(DIES.replace("{words}", words))
    for n in os.listdir(d):
        os.chmod(os.path.join(d, n), 0o644)
    # The stubs come from the kit's build/gen, which the sandbox shows.
    gen = os.path.join(os.path.dirname(os.path.dirname(bin_path("grader"))), "build", "gen", "py")
    if not os.path.isdir(gen):  # a sanitizer build's bin/ is build/SAN/bin: the checkout's
        gen = os.path.join(REPO, "build", "gen", "py")
    return d, f"PYTHONPATH={gen} {PYTHON} {d}/relay_dies.py"


def test_a_crash_out_of_threads_names_a_thread_per_call():
    d, cmd = folder_for("can't start new thread")
    try:
        g = grade("deadline", cmd, "--only", "once")
        feedback = g.feedback["once"]
        assert g.verdicts["once"] == "CRASH", g.out
        assert "a thread per call" in feedback and "task" in feedback, feedback
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_another_crash_names_no_thread_mistake():
    d, cmd = folder_for("something else went wrong")
    try:
        g = grade("deadline", cmd, "--only", "once")
        # The test's output: the feedback and the submission's last words.
        output = g.tests["once"]["output"]
        assert g.verdicts["once"] == "CRASH", g.out
        assert "thread" not in output and "something else went wrong" in output, output
    finally:
        shutil.rmtree(d, ignore_errors=True)
