"""A single-node Slurm cluster of the test's own: munged, slurmctld and slurmd
started in a network namespace made for them (its one interface is loopback,
so every daemon and port is on loopback only and no port can clash with the
machine's), with a munge key, a slurm.conf, state, spool and log folders of
their own under one temporary folder. Commands run inside it through
Cluster.run/popen (nsenter into the namespace, SLURM_CONF set).

Needs root (munged runs as user munge, the namespace is made with unshare)
and Debian's slurm-wlm and munge (22.05 checked). Cluster.start() raises
Unavailable with the reason when the cluster cannot start; stop() ends what
start() started, by pid, and nothing else.

    with slurm_cluster.Cluster() as c:
        c.run(["sbatch", "--wrap", "true"])
"""
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time

COMMANDS = ["munged", "mungekey", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "sinfo", "nsenter",
            "unshare", "setpriv"]
HOSTNAME = "relaylab-slurm"

# The namespace's first process: loopback up, the host name slurmctld checks
# against SlurmctldHost, "ready", then it holds the namespace until its
# stdin closes (the test ended, however it ended).
_HOLDER = r"""
import fcntl, socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
flags = struct.unpack("16sH", fcntl.ioctl(s, 0x8913, struct.pack("16sH", b"lo", 0)))[1]
fcntl.ioctl(s, 0x8914, struct.pack("16sH", b"lo", flags | 1))
# A second loopback address: getaddrinfo's AI_ADDRCONFIG (slurmctld's bind)
# finds no IPv4 address but 127.0.0.1 otherwise, and gives none.
addr = struct.pack("16sHH4s8x", b"lo:1", socket.AF_INET, 0, socket.inet_aton("127.0.0.2"))
fcntl.ioctl(s, 0x8916, addr)
socket.sethostname(%r)
print("ready", flush=True)
sys.stdin.read()
""" % HOSTNAME


class Unavailable(Exception):
    """Slurm cannot start here; the message says why."""


def missing():
    """Why this machine cannot run the cluster, or None."""
    if os.geteuid() != 0:
        return "needs root (munged runs as user munge; the network namespace is made with unshare)"
    absent = [c for c in COMMANDS if not shutil.which(c) and not os.path.exists("/usr/sbin/" + c)]
    if absent:
        return "missing " + ", ".join(absent) + " (apt-get install slurm-wlm munge)"
    try:
        pwd.getpwnam("munge")
    except KeyError:
        return "no user munge (Debian's munge package makes it)"
    return None


def _which(cmd):
    return shutil.which(cmd) or "/usr/sbin/" + cmd


class Cluster:
    def __init__(self, cpus=None, kill_wait=5):
        self.cpus = cpus or os.cpu_count() or 1
        self.kill_wait = kill_wait
        self.dir = None
        self.holder = None
        self.procs = []  # (name, Popen) the daemons, in start order

    # -- life ---------------------------------------------------------------
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def start(self, timeout_s=60):
        why = missing()
        if why:
            raise Unavailable(why)
        self.dir = tempfile.mkdtemp(prefix="relaylab-slurm-")
        os.chmod(self.dir, 0o755)  # the graders' sandbox runs submissions as nobody
        try:
            self._start(timeout_s)
        except BaseException:
            self.stop()
            raise

    def _start(self, timeout_s):
        self.holder = subprocess.Popen(["unshare", "--net", "--uts", "--", "python3", "-c", _HOLDER],
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                       text=True)
        line = self.holder.stdout.readline()
        if line.strip() != "ready":
            raise Unavailable("cannot make a network namespace: " + (line + self.holder.stdout.read(2000)).strip())
        self._start_munge()
        self._write_conf()
        for d in ("state", "spool"):
            os.makedirs(os.path.join(self.dir, d), exist_ok=True)
        self._daemon("slurmctld", [_which("slurmctld"), "-D", "-c", "-f", self.conf])
        self._daemon("slurmd", [_which("slurmd"), "-D", "-N", HOSTNAME, "-f", self.conf])
        self._wait_idle(timeout_s)

    def _start_munge(self):
        m = os.path.join(self.dir, "munge")
        os.makedirs(m)
        munge = pwd.getpwnam("munge")
        os.chown(m, munge.pw_uid, munge.pw_gid)
        os.chmod(m, 0o755)  # the socket is for everyone to reach; the key (0600) is not
        key = os.path.join(m, "munge.key")
        r = subprocess.run([_which("mungekey"), "-c", "-k", key], capture_output=True, text=True)
        if r.returncode != 0:
            raise Unavailable("mungekey -c failed: " + r.stderr.strip())
        os.chown(key, munge.pw_uid, munge.pw_gid)
        os.chmod(key, 0o600)
        self.munge_socket = os.path.join(m, "munge.sock")
        self._daemon("munged", ["setpriv", "--reuid=munge", "--regid=munge", "--init-groups", _which("munged"),
                                "-F", "--key-file=" + key, "--socket=" + self.munge_socket,
                                "--pid-file=" + os.path.join(m, "munged.pid"),
                                "--log-file=" + os.path.join(m, "munged.log"),
                                "--seed-file=" + os.path.join(m, "munged.seed")])
        self._wait(lambda: os.path.exists(self.munge_socket), 20, "munged's socket", "munged")

    def _write_conf(self):
        self.conf = os.path.join(self.dir, "slurm.conf")
        d = self.dir
        lines = [
            "ClusterName=relaylab",
            f"SlurmctldHost={HOSTNAME}(127.0.0.1)",
            # The namespace is the test's alone: these ports clash with nothing.
            "SlurmctldPort=6817", "SlurmdPort=6818",
            "SlurmUser=root", "SlurmdUser=root",
            "AuthType=auth/munge", "CredType=cred/munge", f"AuthInfo=socket={self.munge_socket}",
            f"StateSaveLocation={d}/state", f"SlurmdSpoolDir={d}/spool",
            f"SlurmctldPidFile={d}/slurmctld.pid", f"SlurmdPidFile={d}/slurmd.pid",
            f"SlurmctldLogFile={d}/slurmctld.log", f"SlurmdLogFile={d}/slurmd.log",
            "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
            "SelectType=select/cons_tres", "SelectTypeParameters=CR_CPU",
            "SchedulerType=sched/builtin", "MpiDefault=none", "ReturnToService=2",
            "AccountingStorageType=accounting_storage/none", "JobAcctGatherType=jobacct_gather/none",
            "JobCompType=jobcomp/none", f"KillWait={self.kill_wait}", "InactiveLimit=0",
            f"NodeName={HOSTNAME} NodeAddr=127.0.0.1 CPUs={self.cpus} State=UNKNOWN",
            f"PartitionName=grading Nodes={HOSTNAME} Default=YES MaxTime=INFINITE State=UP",
        ]
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        self.env = dict(os.environ, SLURM_CONF=self.conf)

    def _daemon(self, name, argv):
        log = open(os.path.join(self.dir, name + ".out"), "w")
        p = subprocess.Popen(self.wrap(argv), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                             env=getattr(self, "env", None), start_new_session=True)
        log.close()
        self.procs.append((name, p))

    def _wait(self, cond, timeout_s, what, name=None):
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            if cond():
                return
            for n, p in self.procs:
                if p.poll() is not None:
                    raise Unavailable(f"{n} exited (status {p.returncode}) before {what}: {self.log_tail(n)}")
            time.sleep(0.1)
        raise Unavailable(f"no {what} within {timeout_s} s: {self.log_tail(name) if name else ''}")

    def _wait_idle(self, timeout_s):
        def idle():
            r = self.run(["sinfo", "--noheader", "--format=%t"], timeout=20)
            return r.returncode == 0 and r.stdout.strip() == "idle"
        self._wait(idle, timeout_s, "idle node (sinfo)", "slurmctld")

    def log_tail(self, name, n=1500):
        text = ""
        for f in (name + ".out", name + ".log", os.path.join("munge", name + ".log")):
            try:
                text += open(os.path.join(self.dir, f), errors="replace").read()[-n:]
            except OSError:
                pass
        return text.strip()

    def stop(self):
        """Cancels the cluster's jobs, then ends every process in the
        namespace (all started here: the daemons, their job steps), by pid."""
        if self.procs and any(n == "slurmctld" and p.poll() is None for n, p in self.procs):
            self.run(["scancel", "--user=root"], timeout=20)
            end = time.monotonic() + self.kill_wait + 30
            while time.monotonic() < end:
                r = self.run(["squeue", "--noheader"], timeout=20)
                if r.returncode != 0 or not r.stdout.strip():
                    break
                time.sleep(0.2)
        ns = self._netns()
        for name, p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        self.procs = []
        if ns:
            self._kill_namespace(ns)
        if self.holder and self.holder.poll() is None:
            self.holder.stdin.close()
            try:
                self.holder.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.holder.kill()
                self.holder.wait()
        self.holder = None

    def _netns(self):
        try:
            return os.readlink(f"/proc/{self.holder.pid}/ns/net") if self.holder else None
        except OSError:
            return None

    def _kill_namespace(self, ns):
        """Whatever still runs in the namespace (a job step slurmd left)."""
        for _ in range(50):
            left = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != self.holder.pid
                    and _ns_of(p) == ns]
            if not left:
                return
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.1)

    def cleanup(self):
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    # -- commands inside ----------------------------------------------------
    def wrap(self, argv):
        return ["nsenter", f"--target={self.holder.pid}", "--net", "--uts", "--"] + list(argv)

    def run(self, argv, timeout=60, **kw):
        kw.setdefault("env", self.env)
        return subprocess.run(self.wrap(argv), capture_output=True, text=True, timeout=timeout, **kw)

    def popen(self, argv, **kw):
        kw.setdefault("env", self.env)
        return subprocess.Popen(self.wrap(argv), **kw)


def _ns_of(pid):
    try:
        return os.readlink(f"/proc/{pid}/ns/net")
    except OSError:
        return None
