# relay_leaks_on_cancel: a correct relay that keeps an audit file per call and
# closes it only when the call succeeds.
#
# Mistake: every Process opens an audit file and registers it in a table of
# calls in flight; the success path closes it and removes the entry, but a
# cancelled call leaves by the exception context.abort() raises, so its file
# stays open in the table forever: one open file per cancelled call. It
# forwards deadlines and cancels like relay_good, so it must pass every
# deadline scenario and cancel's during-work, during-lookup and
# keeps-serving, and fail cancel/no-leak (open files grow by one per call).
import tempfile
import threading

from relay_good import Relay, serve


class AuditingRelay(Relay):
    def __init__(self, baseline):
        super().__init__(baseline)
        self.lock = threading.Lock()
        self.in_flight = {}

    def Process(self, request, context):
        audit = tempfile.TemporaryFile()
        with self.lock:
            self.in_flight[id(audit)] = audit
        audit.write(request.tag.encode() + b" started\n")
        reply = super().Process(request, context)  # BUG: raises on cancel
        audit.close()
        with self.lock:
            del self.in_flight[id(audit)]
        return reply


if __name__ == "__main__":
    serve(AuditingRelay)
