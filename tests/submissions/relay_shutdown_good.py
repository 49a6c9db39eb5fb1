# relay_shutdown_good: a grpcio relay that shuts down by the rule; the
# shutdown lab's model answer in Python.
#
# Mistake: none. Process is relay_good's (the client leaving cancels the
# downstream call in flight). At SIGTERM it calls server.stop(grace): grpcio
# closes the listener and refuses new calls with UNAVAILABLE at once, lets
# the calls in flight run, and at the grace cancels the ones still running,
# which runs their add_callback hooks, so Process cancels its downstream call
# there too. When stop's event is set nothing is in flight any more and it
# leaves with os._exit(0): a plain return would wait for the worker threads
# (concurrent.futures joins them at exit), and a handler that never returns
# would hold the exit forever. A second SIGTERM or a SIGINT stops at once.
# The grace is RELAYLAB_GRACE_MS (default 5000 ms), well under an
# orchestrator's kill timeout (Kubernetes: 30 s by default).
# The other relay_shutdown_*.py files change serve_until_sigterm's handling.
import os
import signal
import sys
import threading
from concurrent import futures

import grpc

from relay_good import Relay, pb_grpc

GRACE_S = int(os.environ.get("RELAYLAB_GRACE_MS", "5000")) / 1000.0


def start(workers=16):
    """The relay's server, started on $RELAYLAB_LISTEN, after the readiness
    line. Returns the grpc.Server."""
    listen = os.environ.get("RELAYLAB_LISTEN", "127.0.0.1:0")
    baseline = os.environ.get("RELAYLAB_BASELINE")
    if not baseline:
        sys.exit("set RELAYLAB_BASELINE=host:port (where the baseline listens)")
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=workers))
    channel = grpc.insecure_channel(baseline)
    pb_grpc.add_RelayServicer_to_server(Relay(pb_grpc.BaselineStub(channel)), server)
    port = server.add_insecure_port(listen)
    if port == 0:
        sys.exit(f"cannot listen on {listen}")
    server.start()
    print(f"relay listening on {listen.rsplit(':', 1)[0]}:{port}", flush=True)
    return server


def leave(code=0):
    """Exits now, whatever threads are left (see the top of the file)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def drain_on_sigterm(server, grace_s=GRACE_S):
    """The rule: stop(grace) at the first signal, stop(0) at a second one or
    a SIGINT, exit 0 once grpcio says the server stopped."""
    stopped = threading.Event()

    def on_signal(signum, _frame):
        if stopped.is_set() or signum == signal.SIGINT:
            server.stop(0)
            return
        stopped.set()
        print(f"relay: SIGTERM: stopping with a {grace_s:.1f} s grace", file=sys.stderr, flush=True)
        done = server.stop(grace_s)
        # The handler runs on the main thread: wait elsewhere.
        threading.Thread(target=lambda: (done.wait(), leave(0)), daemon=True).start()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)


def main(install=drain_on_sigterm):
    server = start()
    if install:
        install(server)
    server.wait_for_termination()
    leave(0)


if __name__ == "__main__":
    main()
