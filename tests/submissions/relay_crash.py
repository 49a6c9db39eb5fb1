# relay_crash: dies of SIGSEGV on its first Process call, as a relay with a
# bad native extension (or a C relay dereferencing NULL) would: it reads
# address 0 through ctypes, so the fault is synchronous and no reply goes out.
#
# Must fail: every scenario of both exercises with verdict CRASH, naming the
# signal (SIGSEGV, 11). It listens normally, so it is never NOT-READY.
import ctypes

from relay_good import Relay, serve


class CrashingRelay(Relay):
    def Process(self, request, context):
        ctypes.string_at(0)  # BUG: NULL dereference; the whole process dies


if __name__ == "__main__":
    serve(CrashingRelay)
