#!/usr/bin/python3
"""What SIGTERM does to calls, measured: the C reference relay (and its
shutdown mistakes), the grpcio and the grpc-js relays in tests/submissions.

  RELAYLAB_BIN=bin PYTHONPATH=build/gen/py /usr/bin/python3 bench/shutdown.py [--runs N] [--only TEXT]

Each run starts a fresh bin/baseline and the relay under test on loopback,
then one of three cases:
  inflight  a Process of 10 x 50 ms Work; SIGTERM once Work reached the
            baseline. The call's status, and when the process exited after
            the call ended.
  refuse    a 20 s Process holds the relay up; SIGTERM; then calls on new
            connections until one is refused. The refusal's status and how
            long the refused call took; how long after SIGTERM admission had
            closed (the first refusal's start).
  grace     a 20 s Process, grace 1000 ms (--grace-ms / RELAYLAB_GRACE_MS).
            When the baseline saw Work end after SIGTERM, whether it was
            cancelled, the client's status, the exit status and time.
Instants are CLOCK_MONOTONIC on both sides. Every wait is bounded; a relay
that has not exited 4 s after the grace is SIGKILLed and reported so.
Prints a Markdown table (min / median / max over the runs) and the load.

--rolling N instead: N rolling restarts of two C relays behind one grpcio
round_robin channel (8 client threads calling Process in a loop; each relay
in turn gets SIGTERM, exits, and starts again on its port), without and with
--drain-delay-ms 300 plus client-side health checking (healthCheckConfig);
prints the calls' statuses per run.
"""
import json
import threading
import argparse
import os
import signal
import statistics
import sys
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "integration"))
os.environ.setdefault("RELAYLAB_BIN", os.path.join(REPO, "bin"))

import grpc  # noqa: E402

import relaylab_pb2 as pb  # noqa: E402
import relaylab_pb2_grpc as pbg  # noqa: E402
from conftest import Observer, Program, bin_path, channel  # noqa: E402

MS = 1_000_000
GRACE_MS = 1000
SUBS = os.path.join(REPO, "tests", "submissions")


def c_relay(*args):
    return lambda base, grace: ([bin_path("relay"), "--listen", "127.0.0.1:0", "--baseline", base, "--grace-ms",
                                 str(grace), *args], None)


def script(interp, path):
    def make(base, grace):
        env = dict(os.environ, RELAYLAB_LISTEN="127.0.0.1:0", RELAYLAB_BASELINE=base, RELAYLAB_GRACE_MS=str(grace))
        env["PYTHONPATH"] = os.path.join(REPO, "build", "gen", "py")
        return [interp, path], env
    return make


SUBJECTS = [
    ("C relay", c_relay()),
    ("C relay --mistake stop-now", c_relay("--mistake", "stop-now")),
    ("C relay --mistake no-handler", c_relay("--mistake", "no-handler")),
    ("C relay --mistake wait-forever", c_relay("--mistake", "wait-forever")),
    ("C relay --mistake listener-last", c_relay("--mistake", "listener-last")),
    ("grpcio relay_shutdown_good.py (stop(grace))", script("/usr/bin/python3", os.path.join(SUBS, "relay_shutdown_good.py"))),
    ("grpcio relay_shutdown_stop_now.py (stop(0))", script("/usr/bin/python3", os.path.join(SUBS, "relay_shutdown_stop_now.py"))),
    ("grpcio relay_shutdown_no_handler.py", script("/usr/bin/python3", os.path.join(SUBS, "relay_shutdown_no_handler.py"))),
    ("grpcio relay_shutdown_wait_forever.py", script("/usr/bin/python3", os.path.join(SUBS, "relay_shutdown_wait_forever.py"))),
    ("grpc-js relay_shutdown_good.js (tryShutdown, forceShutdown at the grace)", script("node", os.path.join(SUBS, "node", "relay_shutdown_good.js"))),
    ("grpc-js relay_shutdown_force_now.js (forceShutdown)", script("node", os.path.join(SUBS, "node", "relay_shutdown_force_now.js"))),
    ("grpc-js relay_shutdown_no_handler.js", script("node", os.path.join(SUBS, "node", "relay_shutdown_no_handler.js"))),
]


def wait_until(pred, timeout):
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.002)
    return True


def code_of(fut, timeout):
    try:
        fut.result(timeout=timeout)
        return "OK"
    except grpc.FutureTimeoutError:
        return "no answer"
    except grpc.RpcError as e:
        return e.code().name


class Run:
    def __init__(self, make, grace):
        self.base = Program([bin_path("baseline"), "--listen", "127.0.0.1:0"])
        self.obs = Observer(self.base.addr)
        argv, env = make(self.base.addr, grace)
        self.relay = Program(argv, env=env)
        self.ch = channel(self.relay.addr)
        self.stub = pbg.RelayStub(self.ch)

    def start(self, tag, steps, step_ms):
        fut = self.stub.Process.future(pb.ProcessRequest(tag=tag, steps=steps, step_ms=step_ms), timeout=30)
        ok = wait_until(lambda: any(c.method == "Work" for c in self.obs.calls(tag)), 10)
        assert ok, f"Work never reached the baseline:\n{self.relay.stderr()}"
        return fut

    def sigterm(self):
        t = time.monotonic_ns()
        self.relay.signal(signal.SIGTERM)
        return t

    def exit(self, bound_s):
        """(exit status or 'SIGKILLed', CLOCK_MONOTONIC ns when seen)."""
        rc = self.relay.wait_exit(bound_s)
        t = time.monotonic_ns()
        if rc is None:
            self.relay.kill()
            return "SIGKILLed", t
        return rc, t

    def close(self):
        self.ch.close()
        self.obs.close()
        self.relay.kill()
        self.base.kill()


def fresh(addr, tag):
    ch = channel(addr)
    t0 = time.monotonic_ns()
    try:
        pbg.RelayStub(ch).Process(pb.ProcessRequest(tag=tag, steps=1, step_ms=1), timeout=5)
        code = "OK"
    except grpc.RpcError as e:
        code = e.code().name
    ch.close()
    return code, t0, time.monotonic_ns()


def case_inflight(make):
    r = Run(make, 20000)
    try:
        fut = r.start("in", 10, 50)
        t_sig = r.sigterm()
        code = code_of(fut, 10)
        t_call = time.monotonic_ns()
        rc, t_exit = r.exit(25)
        return {"call": code, "exit": rc, "exit after call ms": (t_exit - t_call) / MS,
                "exit after SIGTERM ms": (t_exit - t_sig) / MS}
    finally:
        r.close()


def case_refuse(make):
    r = Run(make, 20000)
    try:
        fut = r.start("hold", 400, 50)  # noqa: F841 (kept: a dropped future cancels its call)
        t_sig = r.sigterm()
        admitted = 0
        while True:
            code, t0, t1 = fresh(r.relay.addr, f"late{admitted}")
            if code != "OK" or (t1 - t_sig) / MS > 10000:
                break
            admitted += 1
        out = {"refusal": code, "refusal took ms": (t1 - t0) / MS, "closed after SIGTERM ms": (t0 - t_sig) / MS,
               "admitted after SIGTERM": admitted}
        r.relay.signal(signal.SIGKILL)
        return out
    finally:
        r.close()


def case_grace(make):
    r = Run(make, GRACE_MS)
    try:
        fut = r.start("grace", 400, 50)
        t_sig = r.sigterm()
        code = code_of(fut, GRACE_MS / 1000 + 4)
        rc, t_exit = r.exit(GRACE_MS / 1000 + 4)
        wait_until(lambda: all(c.ended for c in r.obs.calls("grace", "Work")), 3)
        (work,) = r.obs.calls("grace", "Work")
        return {"call": code, "Work end after SIGTERM ms": (work.end_ns - t_sig) / MS if work.ended else None,
                "Work cancelled": work.cancelled, "exit": rc, "exit after SIGTERM ms": (t_exit - t_sig) / MS}
    finally:
        r.close()


def rolling_run(drain_delay_ms, health_check):
    """One rolling restart; returns {status: count}."""
    base = Program([bin_path("baseline"), "--listen", "127.0.0.1:0"])
    extra = ["--drain-delay-ms", str(drain_delay_ms)] if drain_delay_ms else []
    relays = [Program([bin_path("relay"), "--listen", "127.0.0.1:0", "--baseline", base.addr, "--grace-ms", "3000",
                       *extra]) for _ in range(2)]
    addrs = [r.addr for r in relays]
    config = {"loadBalancingConfig": [{"round_robin": {}}]}
    if health_check:
        config["healthCheckConfig"] = {"serviceName": ""}
    ch = grpc.insecure_channel("ipv4:" + ",".join(addrs), options=[("grpc.service_config", json.dumps(config)),
                                                                   ("grpc.use_local_subchannel_pool", 1)])
    stub = pbg.RelayStub(ch)
    counts, lock, stop = {}, threading.Lock(), threading.Event()

    def client():
        while not stop.is_set():
            try:
                stub.Process(pb.ProcessRequest(tag="r", steps=1, step_ms=2), timeout=5)
                key = "OK"
            except grpc.RpcError as e:
                key = e.code().name
            with lock:
                counts[key] = counts.get(key, 0) + 1

    threads = [threading.Thread(target=client) for _ in range(8)]
    for t in threads:
        t.start()
    try:
        time.sleep(1.0)  # steady load before the first restart
        for i in range(2):
            relays[i].signal(signal.SIGTERM)
            assert relays[i].wait_exit(10) == 0, relays[i].stderr()
            relays[i].kill()
            relays[i] = Program([bin_path("relay"), "--listen", addrs[i], "--baseline", base.addr, "--grace-ms",
                                 "3000", *extra])
            time.sleep(1.0)
    finally:
        stop.set()
        for t in threads:
            t.join()
        ch.close()
        for r in relays:
            r.kill()
        base.kill()
    return counts


def summary(values):
    nums = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if len(nums) == len(values) and nums:
        return f"{min(nums):.0f} / {statistics.median(nums):.0f} / {max(nums):.0f}"
    distinct = sorted({str(v) for v in values})
    return ", ".join(distinct)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", default="")
    ap.add_argument("--rolling", type=int, default=0)
    args = ap.parse_args()
    if args.rolling:
        print(f"load before: {os.getloadavg()[0]:.2f}")
        for delay, hc in ((0, False), (300, True)):
            print(f"drain delay {delay} ms, client health checking {'on' if hc else 'off'}:")
            for _ in range(args.rolling):
                print("  ", rolling_run(delay, hc))
        print(f"load after: {os.getloadavg()[0]:.2f}")
        return
    print(f"load before: {os.getloadavg()[0]:.2f} (1-min average), {os.cpu_count()} cores; {args.runs} runs a cell;"
          " numbers are min / median / max")
    for name, make in SUBJECTS:
        if args.only not in name:
            continue
        print(f"\n### {name}\n\n| case | measure | result |\n| --- | --- | --- |")
        for case in (case_inflight, case_refuse, case_grace):
            results = [case(make) for _ in range(args.runs)]
            for key in results[0]:
                print(f"| {case.__name__[5:]} | {key} | {summary([res[key] for res in results])} |")
        sys.stdout.flush()
    print(f"\nload after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
