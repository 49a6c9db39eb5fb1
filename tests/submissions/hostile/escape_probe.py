# escape_probe (hostile): a correct relay that first tries every way out of
# the sandbox a student could try, and crashes, naming each one that worked:
# a grader variable in its environment, another process (the grader) in its
# /proc, a capability, a user namespace of its own, reading /etc/shadow, the rubric or the model solution
# (bin/relay), writing into the kit, a file or /tmp beyond the scratch
# limit, a network interface besides loopback (0.0.0.0 would reach it), a
# listener outside the grader's network namespace (the port given as
# argv[1], on the host's loopback), more processes than the pids limit.
#
# Must get, under `grader deadline` (sandboxed, the default): every scenario
# PASS: no escape worked. Under --no-sandbox as root it escapes, exits 3
# before it listens (NOT-READY) and prints an "escaped:" line for each way
# out, which shows the probe can tell. Bounded: at most
# 600 sleeping children for a moment, 80 MiB of scratch, one connect with a
# 1 s timeout to loopback; everything it made is removed before it serves.
# All that takes seconds before it listens, many on a loaded machine (over
# 15 s at load 21, seen 8 of 20), so it is graded with --ready-timeout 60.
import os
import signal
import socket
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
KIT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))

# NODE_PATH is the grader's on purpose: the kit's Node packages
# (build/node-packages, read-only in the view), for a Node folder handed in
# without node_modules (docs/sandbox.md).
ALLOWED_ENV = {"RELAYLAB_LISTEN", "RELAYLAB_BASELINE", "RELAYLAB_BASELINES", "PATH", "HOME", "TMPDIR", "LANG", "PWD",
               "SHLVL", "_", "NODE_PATH"}


def readable(path):
    try:
        with open(path, "rb") as f:
            return len(f.read(16)) > 0
    except OSError:
        return False


def writes(paths, nbytes):
    """True if |nbytes| could be written at each of |paths| at once (all
    removed afterwards)."""
    chunk = b"x" * (1 << 20)
    try:
        for path in paths:
            with open(path, "wb") as f:
                for _ in range(0, nbytes, len(chunk)):
                    f.write(chunk[: min(nbytes, len(chunk))])
                f.flush()
                os.fsync(f.fileno())
        return True
    except OSError:
        return False
    finally:
        for path in paths:
            try:
                os.unlink(path)
            except OSError:
                pass


def other_processes():
    me = os.getpid()
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != me:
            try:
                argv = open(f"/proc/{entry}/cmdline", "rb").read().split(b"\0")
            except OSError:
                continue
            if os.path.basename(argv[0]) in (b"grader", b"baseline"):
                found.append(b" ".join(argv).decode(errors="replace").strip())
    return found


def forks(count):
    """How many sleeping children could be started, up to |count|."""
    pids = []
    try:
        for _ in range(count):
            pid = os.fork()
            if pid == 0:
                time.sleep(30)
                os._exit(0)
            pids.append(pid)
    except OSError:
        pass
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        for pid in pids:
            os.waitpid(pid, 0)
    return len(pids)


def listed(folder):
    try:
        return len(os.listdir(folder)) > 0
    except OSError:
        return False


def capabilities():
    """The effective capability mask when not empty. uid 0 alone is not
    root: in the grader's unprivileged sandbox the submission is uid 0 of a
    user namespace of its own, holding no capability."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("CapEff:"):
                mask = line.split()[1]
                return mask if int(mask, 16) else ""
    return ""


def makes_namespace():
    """True if unshare(CLONE_NEWUSER) works: a process in a user namespace of
    its own may make PID namespaces whose members the grader does not
    measure. Done in a child, which exits at once."""
    import ctypes

    pid = os.fork()
    if pid == 0:
        libc = ctypes.CDLL(None, use_errno=True)
        os._exit(0 if libc.unshare(0x10000000) == 0 else 1)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def connects(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def escapes(outside_port):
    found = []
    extra = sorted(set(os.environ) - ALLOWED_ENV)
    if extra:
        found.append(f"the grader's environment leaked in: {', '.join(extra[:5])}")
    caps = capabilities()
    if caps:
        found.append(f"holds capabilities (CapEff {caps})")
    if makes_namespace():
        found.append("made a user namespace of its own (capabilities over whatever it creates next)")
    seen = other_processes()
    if seen:
        found.append(f"sees the grader's processes: {seen[0][:80]}")
    for path, what in (("/etc/shadow", "/etc/shadow"), (os.path.join(KIT, "grader", "rubric.json"), "the rubric"),
                       (os.path.join(KIT, "bin", "relay"), "the model solution bin/relay"),
                       (os.path.join(KIT, "grader", "run.c"), "the grader's sources")):
        if readable(path):
            found.append(f"read {what}")
    for folder in ("/home", "/root", "/run", "/srv", "/mnt"):
        if listed(folder):
            found.append(f"listed {folder}, outside the system's folders (another student's files could be there)")
            break
    if writes([os.path.join(HERE, "escape-probe.tmp")], 1):
        found.append("wrote into its own folder in the kit")
    if writes(["/var/lib/escape-probe.tmp"], 1):
        found.append("wrote into /var/lib")
    if writes(["/tmp/escape-probe-1.tmp", "/tmp/escape-probe-2.tmp"], 40 << 20):
        found.append("wrote 80 MiB to /tmp, over the 64 MiB scratch")
    others = [name for _, name in socket.if_nameindex() if name != "lo"]
    if others:
        found.append(f"has network interfaces besides loopback, so 0.0.0.0 is more than loopback: {others[:3]}")
    if outside_port and connects(outside_port):
        found.append(f"reached a listener outside its network namespace (127.0.0.1:{outside_port})")
    n = forks(600)
    if n >= 600:
        found.append(f"started {n} processes, over the pids limit")
    return found


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    found = escapes(port)
    if found:
        for line in found:
            print(f"escaped: {line}", flush=True)
        sys.exit(3)
    from relay_good import serve  # noqa: E402

    serve()
