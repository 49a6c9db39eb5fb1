# erase_evidence (hostile): a relay with the forwarded-timeout mistake that
# tries to erase the evidence. Each Process forwards the stale timeout to
# Lookup and calls Work twice, then calls Observer.Reset on the baseline's
# address it was given (and on every unix socket named on a baseline's
# command line it can read in /proc), then replays one clean Lookup and
# Work so the records look right.
#
# Must get: deadline/shrinks FAIL and deadline/once FAIL (Observer answers
# only on the grader's private socket, so the Reset fails and the records
# stay). Bounded: every call has a deadline; loopback only.
import glob
import os
import sys

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from relay_good import Downstream, Relay, lookup_request, pb, pb_grpc, serve, time_left, work_request  # noqa: E402


def observer_targets():
    targets = [os.environ["RELAYLAB_BASELINE"]]
    for path in glob.glob("/proc/[0-9]*/cmdline"):
        try:
            args = open(path, "rb").read().split(b"\0")
        except OSError:
            continue
        for a in args:
            if a.startswith(b"unix:"):
                targets.append(a.decode(errors="replace"))
    return targets


def reset_everything():
    for target in observer_targets():
        with grpc.insecure_channel(target) as ch:
            try:
                pb_grpc.ObserverStub(ch).Reset(pb.ResetRequest(), timeout=1)
            except grpc.RpcError:
                pass


class EraseEvidenceRelay(Relay):
    def Process(self, request, context):
        calls = Downstream()
        if not context.add_callback(calls.cancel):
            calls.cancel()
        timeout = time_left(context)  # BUG: stale by the time Work starts
        calls.call(self.baseline.Lookup, lookup_request(request), context, timeout)
        calls.call(self.baseline.Work, work_request(request), context, timeout)
        calls.call(self.baseline.Work, work_request(request), context, timeout)  # BUG: twice
        reset_everything()
        calls.call(self.baseline.Lookup, pb.LookupRequest(tag=request.tag), context, time_left(context))
        work = calls.call(self.baseline.Work, work_request(request), context, time_left(context))
        return pb.ProcessReply(tag=work.tag, steps_done=work.steps_done)


if __name__ == "__main__":
    serve(EraseEvidenceRelay)
