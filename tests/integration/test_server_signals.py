# Every reference server takes SIGTERM and SIGINT in rl_server_wait alone:
# a signal handed to one of gRPC's own threads (started by grpc_init, before
# rl_server_start) would end the process by its default action. Regression
# test for that: two SIGTERMs in a row (the second cuts the drain short)
# end each server with status 0, never by the signal, five times each.
import os
import signal
import time

import pytest

from conftest import bin_path


@pytest.mark.parametrize("name", ["relay", "baseline", "streamer"])
def test_two_sigterms_end_a_server_cleanly(start_program, baseline, name):
    env = dict(os.environ, RELAYLAB_LISTEN="127.0.0.1:0", RELAYLAB_BASELINE=baseline.addr)
    argv = [bin_path(name)] + (["--listen", "127.0.0.1:0"] if name == "baseline" else [])
    for _ in range(5):
        server = start_program(argv, env=env)
        server.signal(signal.SIGTERM)
        time.sleep(0.01)  # the second signal lands during the drain, the case that killed it
        server.signal(signal.SIGTERM)
        status = server.wait_exit(10)
        assert status == 0, f"{name} ended with {status} after two SIGTERMs:\n{server.stderr()}"
