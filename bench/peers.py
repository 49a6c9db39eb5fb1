#!/usr/bin/python3
"""peers: the reference relay beside its peers, in one run, driven by h2load.

bench/peers.py [--seconds S] [--connections C] [--streams M] [--rounds N] [--skip NAME]...

Rows, each measured alone (its server started, warmed up, measured, stopped)
against one bin/baseline on loopback:
  baseline      Lookup straight to the baseline (one call per op)
  nginx         Lookup through nginx's grpc_pass (one hop, no logic)
  relay         bin/relay at its defaults (the adaptive limit)
  unlimited     bin/relay --max-inflight 100000
  fixed-8       bin/relay --max-inflight 8 (the overload lab's fixed gate)
  unlimited-8   bin/relay --max-inflight 100000 with 8 calls in flight (C
                connections x 8/C streams): the fixed gate's downstream
                concurrency without its queue, so that fixed-8 against it is
                what the queue costs and fixed-8 against unlimited is what
                gRPC costs at 8 calls in flight instead of C x M
  one-loop      bin/relay --threads 1 (one server loop, whatever the cores)
  per-core      bin/relay --threads CORES (a server loop per core)
  grpcio        tests/submissions/relay_good.py (a correct grpcio relay)
  grpc-js       tests/submissions/node/relay_good.js (a correct grpc-js relay)
The relays serve Process(steps=0, lookup_delay_ms=0): one served call and two
client calls (Lookup, Work) to the baseline per op.

The load is h2load (nghttp2-client): C connections x M streams, a warm-up
run of 2000 calls, then S seconds measured. CPU per call is user+system time
(/proc/PID/stat) of the measured server's process group over the measured
run, divided by the calls served; the baseline's is reported beside it. A
call counts as served when its reply carried a message: h2load sees HTTP
status 200 for a gRPC error too, so the bench compares the DATA bytes it
received with what the served replies weigh (the "served" column).
Switches per call are the context switches of the server's threads
(/proc/PID/task/*/status) over the run: each is a thread put to sleep, or
woken, or preempted, so they count what a second loop costs in hand-overs.

Ratios printed below the table are the issue's goals (bench/results/relay.md).
Every server listens on 127.0.0.1 only, is stopped by pid (SIGTERM, SIGKILL
after 5 s), and each h2load run is bounded by a timeout. The machine, and the
load average before and after every row, go with the figures: compare ratios
within one run only.
"""
import argparse
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("RELAYLAB_BIN", os.path.join(ROOT, "bin"))
sys.path.insert(0, os.path.join(ROOT, "build", "gen", "py"))
import relaylab_pb2 as pb  # noqa: E402

TAG = "p"
READY_S = 30
CLK_TCK = os.sysconf("SC_CLK_TCK")


def grpc_frame(msg):
    body = msg.SerializeToString()
    return b"\x00" + len(body).to_bytes(4, "big") + body


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, timeout=READY_S):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return True
        except OSError:
            time.sleep(0.05)
    return False


def group_cpu_s(pgid):
    """User+system seconds of every live process in process group |pgid|."""
    total = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[2]) == pgid:  # pgrp
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / CLK_TCK


def task_switches(pid):
    """Context switches (voluntary and not) of every thread of process |pid|:
    a thread that sleeps and is woken again counts one per wake-up."""
    total = 0
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                for line in f:
                    if line.startswith(("voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:")):
                        total += int(line.split()[1])
        except (OSError, ValueError, IndexError):
            continue
    return total


class Server:
    """A server in a process group of its own, stopped by pid."""

    def __init__(self, name, argv, port, env=None, cwd=None):
        self.name = name
        self.port = port
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     env=env, cwd=cwd, start_new_session=True)

    def ready(self):
        return wait_port(self.port, self.proc)

    def cpu(self):
        return group_cpu_s(self.proc.pid)

    def switches(self):
        return task_switches(self.proc.pid)

    def output(self):
        # pread: the log's file offset is also the running child's, and a
        # seek here would make its next lines overwrite its first ones.
        fd = self.log.fileno()
        return os.pread(fd, os.fstat(fd).st_size, 0).decode(errors="replace")[-2000:]

    def stop(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


def h2load(port, path, body_file, args, n=None, seconds=None, log=None, streams=None):
    argv = ["h2load", "-c", str(args.connections), "-m", str(streams or args.streams), "-t", "1",
            "-d", body_file, "-H", "content-type: application/grpc", "-H", "te: trailers",
            f"http://127.0.0.1:{port}{path}"]
    argv[1:1] = ["-n", str(n)] if n else ["-D", str(seconds)]
    if log:
        argv[1:1] = ["--log-file", log]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=(seconds or 60) + 60).stdout
    m = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded", out)
    d = re.search(r"traffic: .*?\((\d+)\) data", out)
    if not m:
        raise RuntimeError("h2load printed no request counts:\n" + out[-1500:])
    return int(m.group(4)), int(d.group(1)) if d else 0, out


def latencies_ms(log):
    us = []
    with open(log) as f:
        for line in f:
            cols = line.split("\t")
            if len(cols) >= 3 and cols[1] == "200":
                us.append(int(cols[2]))
    us.sort()
    if not us:
        return 0.0, 0.0
    return us[len(us) // 2] / 1000, us[min(len(us) - 1, int(len(us) * 0.99))] / 1000


def loadavg():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def machine():
    model = ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return f"{os.cpu_count()} CPUs ({model}), Linux {platform.release()}"


NGINX_CONF = """
daemon off;
master_process on;
worker_processes auto;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {tmp}/body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    # nginx closes a connection after 1000 calls by default (HTTP/2 from
    # 1.19.7 too); h2load does not reconnect.
    keepalive_requests 100000000;
    upstream baseline {{ server 127.0.0.1:{bport}; keepalive 32; keepalive_requests 100000000; }}
    server {{
        listen 127.0.0.1:{port} http2;
        location / {{ grpc_pass grpc://baseline; }}
    }}
}}
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--connections", type=int, default=4)
    ap.add_argument("--streams", type=int, default=16)
    ap.add_argument("--skip", action="append", default=[])
    ap.add_argument("--rounds", type=int, default=1,
                    help="measure every path this many times, in turn (a shared machine's noise shows)")
    args = ap.parse_args()
    args.seconds = max(1, min(args.seconds, 60))
    args.rounds = max(1, min(args.rounds, 10))
    for tool in ("h2load", "nginx"):
        if not shutil.which(tool) and not os.path.exists("/usr/sbin/" + tool):
            sys.exit(f"peers: {tool} is missing: `make bench-peers` installs it (nghttp2-client, nginx-core)")
    tmp = tempfile.mkdtemp(prefix="relaylab-peers-")
    lookup = os.path.join(tmp, "lookup.bin")
    process = os.path.join(tmp, "process.bin")
    with open(lookup, "wb") as f:
        f.write(grpc_frame(pb.LookupRequest(tag=TAG)))
    with open(process, "wb") as f:
        f.write(grpc_frame(pb.ProcessRequest(tag=TAG)))
    # What a served reply weighs in DATA bytes (frame header included).
    reply_bytes = {"lookup": len(grpc_frame(pb.LookupReply(tag=TAG))),
                   "process": len(grpc_frame(pb.ProcessReply(tag=TAG)))}

    bport = free_port()
    baseline = Server("baseline", [os.path.join(BIN, "baseline"), "--listen", f"127.0.0.1:{bport}"], bport)
    servers = [baseline]
    rows = []
    try:
        if not baseline.ready():
            sys.exit("peers: the baseline did not start:\n" + baseline.output())
        env = dict(os.environ, RELAYLAB_BASELINE=f"127.0.0.1:{bport}")
        relay = os.path.join(BIN, "relay")
        cores = os.cpu_count() or 1
        few = max(1, 8 // args.connections)  # streams per connection for 8 calls in flight
        paths = [
            ("baseline", "Lookup straight to the baseline", None, "lookup"),
            ("nginx", "Lookup through nginx grpc_pass", "nginx", "lookup"),
            ("relay", "bin/relay, defaults (adaptive limit)", [relay], "process"),
            ("unlimited", "bin/relay --max-inflight 100000", [relay, "--max-inflight", "100000"], "process"),
            ("fixed-8", "bin/relay --max-inflight 8", [relay, "--max-inflight", "8"], "process"),
            ("unlimited-8", f"bin/relay --max-inflight 100000, {args.connections * few} calls in flight",
             [relay, "--max-inflight", "100000"], "process", few),
            ("one-loop", "bin/relay --threads 1", [relay, "--threads", "1"], "process"),
            ("per-core", f"bin/relay --threads {cores}", [relay, "--threads", str(cores)], "process"),
            ("grpcio", "grpcio relay (relay_good.py)",
             ["/usr/bin/python3", os.path.join(ROOT, "tests/submissions/relay_good.py")], "process"),
            ("grpc-js", "grpc-js relay (node/relay_good.js)",
             ["node", os.path.join(ROOT, "tests/submissions/node/relay_good.js")], "process"),
        ]
        for rnd, (name, label, cmd, kind, *streams) in [(r, p) for r in range(args.rounds) for p in paths]:
            streams = streams[0] if streams else None
            if name in args.skip:
                continue
            load0 = loadavg()
            server = None
            if cmd is None:
                port = bport
            else:
                port = free_port()
                if cmd == "nginx":
                    ndir = os.path.join(tmp, "nginx")
                    os.makedirs(ndir, exist_ok=True)
                    conf = os.path.join(ndir, "nginx.conf")
                    with open(conf, "w") as f:
                        f.write(NGINX_CONF.format(tmp=ndir, bport=bport, port=port))
                    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
                    server = Server(name, [nginx, "-p", ndir, "-c", conf], port)
                else:
                    senv = dict(env, RELAYLAB_LISTEN=f"127.0.0.1:{port}")
                    argv = cmd + ["--listen", f"127.0.0.1:{port}"] if cmd[0] == relay else cmd
                    server = Server(name, argv, port, env=senv)
                servers.append(server)
                if not server.ready():
                    rows.append({"round": rnd, "name": name, "label": label,
                                 "error": "did not start: " + server.output()[-300:]})
                    server.stop()
                    continue
            path = "/relaylab.Baseline/Lookup" if kind == "lookup" else "/relaylab.Relay/Process"
            body = lookup if kind == "lookup" else process
            try:
                h2load(port, path, body, args, n=2000, streams=streams)  # warm-up
                log = os.path.join(tmp, name + ".log")
                b0 = baseline.cpu()
                s0 = server.cpu() if server else 0
                w0 = (server or baseline).switches()
                t0 = time.monotonic()
                ok, data, _ = h2load(port, path, body, args, seconds=args.seconds, log=log, streams=streams)
                wall = time.monotonic() - t0
                b1 = baseline.cpu()
                s1 = server.cpu() if server else 0
                w1 = (server or baseline).switches()
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                rows.append({"round": rnd, "name": name, "label": label, "error": str(e)[-300:]})
                if server:
                    server.stop()
                continue
            if server:
                server.stop()
            served = min(ok, data // reply_bytes[kind])
            p50, p99 = latencies_ms(log)
            rows.append({"round": rnd, "name": name, "label": label, "calls": ok, "served": served, "rate": served / wall,
                         "p50": p50, "p99": p99,
                         "cpu_us": ((s1 - s0) if server else (b1 - b0)) / served * 1e6 if served else None,
                         "base_us": (b1 - b0) / served * 1e6 if served else None,
                         "switches": (w1 - w0) / served if served else None,
                         "load": f"{load0}-{loadavg()}"})
    finally:
        for s in servers:
            s.stop()
        shutil.rmtree(tmp, ignore_errors=True)

    print(f"bench peers, {time.strftime('%Y-%m-%d %H:%M')}: {machine()}")
    print(f"h2load: {args.connections} connections x {args.streams} streams, {args.seconds} s measured after "
          f"2000 calls of warm-up; relays: Process(steps=0), baseline and nginx: Lookup\n")
    print("| round | path | calls | served | calls/s | p50 ms | p99 ms | server CPU us/call "
          "| baseline CPU us/call | server switches/call | load avg |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    rounds = [{} for _ in range(args.rounds)]
    for r in rows:
        if "error" in r:
            print(f"| {r['round'] + 1} | {r['label']} | - | - | - | - | - | - | - | - | {r['error'][:120]} |")
            continue
        rounds[r["round"]][r["name"]] = r
        cpu = f"{r['cpu_us']:.1f}" if r["cpu_us"] is not None else "-"
        base = f"{r['base_us']:.1f}" if r["base_us"] is not None else "-"
        sw = f"{r['switches']:.2f}" if r["switches"] is not None else "-"
        print(f"| {r['round'] + 1} | {r['label']} | {r['calls']} | {r['served']} | {r['rate']:.0f} | {r['p50']:.2f} "
              f"| {r['p99']:.2f} | {cpu} | {base} | {sw} | {r['load']} |")
    print("\nRatios, one per round (each within its round):")

    def ratio(what, num, den, goal):
        vals = []
        for by in rounds:
            a, b = by.get(num[0]), by.get(den[0])
            if a and b and a[num[1]] is not None and b[den[1]]:
                vals.append(a[num[1]] / b[den[1]])
        if vals:
            print(f"- {what}: {', '.join(f'{v:.2f}' for v in vals)} ({goal})")

    ratio("relay CPU per call at defaults / baseline CPU per served Lookup", ("relay", "cpu_us"),
          ("baseline", "base_us"), "goal <= 3.3")
    ratio("relay calls/s at defaults / unlimited", ("relay", "rate"), ("unlimited", "rate"), "goal >= 0.9")
    ratio("relay CPU per call at defaults / unlimited", ("relay", "cpu_us"), ("unlimited", "cpu_us"), "goal <= 1.1")
    ratio("relay CPU per call at --max-inflight 8 / unlimited", ("fixed-8", "cpu_us"), ("unlimited", "cpu_us"),
          "goal <= 1.15 as filed: the queue and gRPC at 8 calls in flight instead of 64")
    ratio("relay CPU per call at --max-inflight 8 / unlimited with 8 calls in flight", ("fixed-8", "cpu_us"),
          ("unlimited-8", "cpu_us"), "goal <= 1.15: what the queue costs")
    ratio("relay CPU per call with one loop / a loop per core", ("one-loop", "cpu_us"), ("per-core", "cpu_us"),
          "the default's choice")
    ratio("relay calls/s with one loop / a loop per core", ("one-loop", "rate"), ("per-core", "rate"),
          "the default's choice")
    ratio("grpcio relay CPU per call / relay at defaults", ("grpcio", "cpu_us"), ("relay", "cpu_us"), "goal >= 10")
    ratio("grpc-js relay CPU per call / relay at defaults", ("grpc-js", "cpu_us"), ("relay", "cpu_us"), "goal >= 8")
    return 0 if all("error" not in r for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
