# bin/channel-config from the outside: every config in tests/configs gets
# the exit code and the rule id + JSON path its manifest (expect.json) says;
# every rule has a config that breaks it; invalid JSON is reported with its
# line and column; `args` output is what Python grpcio really takes (a real
# grpcio server and client use it, and the retry policy in it retries).
import ast
import json
import os
import re
import shutil
import subprocess
from concurrent import futures

import grpc
import pytest

from conftest import REPO, bin_path

CONFIGS = os.path.join(REPO, "tests", "configs")
LAB = os.path.join(REPO, "channel_config", "lab.json")
README = os.path.join(REPO, "channel_config", "README.md")
FINDING_RE = re.compile(r"^(\S+): (error|warning)\[([^\]]+)\] (\S+): (.+)$")

with open(os.path.join(CONFIGS, "expect.json")) as f:
    EXPECT = json.load(f)


def run(*args, timeout=30):
    return subprocess.run([bin_path("channel-config"), *args], capture_output=True, text=True,
                          timeout=timeout)


def findings(stdout):
    """(severity, rule, path, why) for each finding line."""
    out = []
    for line in stdout.splitlines():
        m = FINDING_RE.match(line)
        if m:
            out.append((m.group(2), m.group(3), m.group(4), m.group(5)))
    return out


def world_args(e):
    """--world for a config whose manifest entry names the world it is checked in."""
    return ["--world", os.path.join(CONFIGS, e["world"])] if "world" in e else []


def rule_ids():
    p = run("rules")
    assert p.returncode == 0
    return {line.split()[0]: line.split()[1] for line in p.stdout.splitlines()}


def test_manifest_lists_every_config_file():
    on_disk = set()
    for d in ("good", "bad", "warn", "invalid"):
        for name in os.listdir(os.path.join(CONFIGS, d)):
            on_disk.add(f"{d}/{name}")
    assert on_disk == set(EXPECT)


def test_every_rule_has_a_config_that_breaks_it():
    rules = rule_ids()
    covered = {e["rule"] for e in EXPECT.values() if "rule" in e}
    assert set(rules) - covered == set()
    # and a rule file sits in bad/ when the rule is an error, warn/ otherwise
    for name, e in EXPECT.items():
        if "rule" in e:
            assert name.startswith("bad/" if rules[e["rule"]] == "error" else "warn/"), name


@pytest.mark.parametrize("name", sorted(n for n in EXPECT if not n.startswith("invalid/")))
def test_config_gets_its_exit_code_rule_and_path(name):
    e = EXPECT[name]
    # gRPC's verdict is asked only where it is the point (a probe costs a
    # few hundred ms); the checker's own rules are exercised for all.
    ask_grpc = e.get("rule") == "grpc.rejected"
    p = run("check", *([] if ask_grpc else ["--no-grpc"]), *world_args(e), os.path.join(CONFIGS, name))
    assert p.returncode == e["exit"], p.stdout + p.stderr
    found = findings(p.stdout)
    if "rule" not in e:
        # A good config: no errors, and only the warnings it lists (the
        # keepalive lab's solution pings "too often" at lab speed).
        assert [(sev, rule) for sev, rule, _, _ in found] == \
            [("warning", w) for w in e.get("warnings", [])], p.stdout
        assert "0 errors," in p.stdout
        return
    if e["rule"] == "grpc.rejected":
        assert "gRPC: rejected: " in p.stdout
        assert "bogus_policy" in p.stdout
        assert "1 error," in p.stdout
        return
    assert any(rule == e["rule"] and path == e["path"] for _, rule, path, _ in found), p.stdout
    # Each file breaks one rule: no other rule reports an error.
    assert {rule for sev, rule, _, _ in found if sev == "error"} <= {e["rule"]}, p.stdout
    # every finding line is FILE: severity[rule] path: one line of why
    for sev, rule, path, why in found:
        assert path.startswith("$") and len(why) > 20


@pytest.mark.parametrize("name", sorted(n for n in EXPECT if n.startswith("warn/")))
def test_strict_turns_warnings_into_exit_1(name):
    p = run("check", "--no-grpc", "--strict", *world_args(EXPECT[name]), os.path.join(CONFIGS, name))
    assert p.returncode == 1, p.stdout


@pytest.mark.parametrize("name", sorted(n for n in EXPECT if n.startswith("invalid/")))
def test_invalid_json_names_line_and_column(name):
    e = EXPECT[name]
    path = os.path.join(CONFIGS, name)
    p = run("check", path)
    assert p.returncode == 2
    assert p.stdout == ""
    assert p.stderr.startswith(f"{path}:{e['line']}:{e['column']}: invalid JSON: "), p.stderr


def test_lab_json_is_clean_and_grpc_accepts_it():
    p = run("check", LAB)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "gRPC: accepted" in p.stdout
    assert p.stdout.rstrip().endswith("0 errors, 0 warnings")


def test_errors_come_before_warnings(tmp_path):
    # A warning first in the file (the risky code) and an error after it.
    with open(os.path.join(CONFIGS, "warn", "retry.risky-code.json")) as f:
        config = json.load(f)
    config["intermediary"] = {"idle_timeout_ms": 350000}
    config["client"]["grpc.keepalive_time_ms"] = 400000
    path = tmp_path / "both.json"
    path.write_text(json.dumps(config))
    p = run("check", "--no-grpc", str(path))
    sev = [s for s, _, _, _ in findings(p.stdout)]
    assert "error" in sev and "warning" in sev
    assert sev == sorted(sev)  # every "error" line before every "warning" line
    assert p.returncode == 1


def test_grpc_verdict_differs_from_the_checker_on_silent_mistakes():
    # gRPC accepts a name it will ignore; the checker does not.
    p = run("check", os.path.join(CONFIGS, "bad", "arg.unknown.json"))
    assert p.returncode == 1
    assert "gRPC: accepted" in p.stdout
    assert "did you mean \"grpc.keepalive_time_ms\"" in p.stdout


def test_grpc_and_checker_both_reject_max_attempts_1():
    p = run("check", os.path.join(CONFIGS, "bad", "retry.max-attempts.json"))
    assert p.returncode == 1
    assert "gRPC: rejected: " in p.stdout and "maxAttempts" in p.stdout.split("gRPC: rejected: ")[1]
    assert "2 errors," in p.stdout  # the rule and gRPC's verdict


def test_classic_macro_name_gets_its_specific_explanation():
    p = run("check", "--no-grpc", os.path.join(CONFIGS, "bad", "arg.macro-name.json"))
    (sev, rule, path, why), = findings(p.stdout)
    assert "GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS" in why
    assert '"grpc.http2.min_ping_interval_without_data_ms"' in why
    assert "too_many_pings" in why


@pytest.mark.parametrize("argv,code", [
    ([], 2),
    (["frobnicate"], 2),
    (["check"], 2),
    (["check", "a.json", "b.json"], 2),
    (["check", "--timeout-ms", "0", "x.json"], 2),
    (["args", "--format", "ruby", "x.json"], 2),
    (["args", "--side", "middle", "x.json"], 2),
    (["check", "/nonexistent/config.json"], 2),
    (["check", "/tmp"], 2),
])
def test_usage_and_unreadable_files_exit_2(argv, code):
    p = run(*argv)
    assert p.returncode == code
    assert p.stdout == ""
    assert p.stderr.strip() != ""


def test_help_documents_exit_codes():
    p = run("--help")
    assert p.returncode == 0
    for word in ("exit status", "0 clean", "1 rule errors", "2 usage", "3 internal"):
        assert word in p.stdout


def test_readme_documents_every_rule_and_exit_code():
    with open(README) as f:
        text = f.read()
    rules_section = text.split("\n## Rules\n")[1].split("\n## ")[0]
    documented = dict(re.findall(r"^\| `([a-z0-9.-]+)` \| (error|warning) \|", rules_section, re.M))
    assert documented == rule_ids()  # every id, with its severity
    for code in ("| 0 |", "| 1 |", "| 2 |", "| 3 |"):
        assert code in text


def python_options(*args):
    p = run("args", *args)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("options=[")
    return ast.literal_eval(p.stdout[len("options="):])


def test_args_python_is_a_literal_list_of_pairs():
    opts = python_options(LAB)
    names = [k for k, _ in opts]
    assert names[0] == "grpc.keepalive_time_ms" and dict(opts)["grpc.keepalive_time_ms"] == 60000
    sc = json.loads(dict(opts)["grpc.service_config"])
    (policy,) = [m["retryPolicy"] for m in sc["methodConfig"] if "retryPolicy" in m]
    assert policy["retryableStatusCodes"] == ["UNAVAILABLE"]


def test_args_node_is_a_json_object_with_the_same_options():
    p = run("args", "--format", "node", LAB)
    assert p.returncode == 0
    assert json.loads(p.stdout) == dict(python_options(LAB))


def test_args_refuses_a_config_with_errors():
    p = run("args", os.path.join(CONFIGS, "bad", "keepalive.min-ping-interval.json"))
    assert p.returncode == 1
    assert p.stdout == ""
    assert "error[keepalive.min-ping-interval]" in p.stderr


def test_args_drive_real_grpcio_and_the_retry_policy_retries():
    """Both sides' options from `args` go into grpcio as they are. The server
    fails the first attempt of each method UNAVAILABLE (Trailers-Only): Lookup
    only succeeds if lab.json's retry policy took effect, and Work, which it
    deliberately does not cover, must fail after one attempt."""
    attempts = {"Lookup": [], "Work": []}

    def handler(name):
        def serve(request, context):
            attempts[name].append(
                dict(context.invocation_metadata()).get("grpc-previous-rpc-attempts"))
            if len(attempts[name]) == 1:
                context.abort(grpc.StatusCode.UNAVAILABLE, "injected by the test")
            return b"ok"
        return grpc.unary_unary_rpc_method_handler(serve)

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2),
                         options=python_options("--side", "server", LAB))
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
        "relaylab.Baseline", {"Lookup": handler("Lookup"), "Work": handler("Work")}),))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        options = python_options(LAB) + [("grpc.use_local_subchannel_pool", 1)]
        with grpc.insecure_channel(f"127.0.0.1:{port}", options=options) as ch:
            reply = ch.unary_unary("/relaylab.Baseline/Lookup")(b"x", timeout=10)
            with pytest.raises(grpc.RpcError) as work_error:
                ch.unary_unary("/relaylab.Baseline/Work")(b"x", timeout=10)
    finally:
        server.stop(0)
    assert reply == b"ok"
    assert attempts["Lookup"] == [None, "1"]
    assert work_error.value.code() == grpc.StatusCode.UNAVAILABLE
    assert attempts["Work"] == [None]


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed")
@pytest.mark.skipif(os.sep + "address" + os.sep in bin_path("channel-config"),
                    reason="valgrind cannot run ASan binaries; `make check` is the leak check there")
@pytest.mark.parametrize("name", ["bad/sc.duplicate-name.json", "warn/retry.risky-code.json"])
def test_checker_is_valgrind_clean(name):
    p = subprocess.run(["valgrind", "--error-exitcode=99", "--leak-check=full",
                        "--errors-for-leak-kinds=definite,indirect", "-q",
                        bin_path("channel-config"), "check", "--no-grpc",
                        os.path.join(CONFIGS, name)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == EXPECT[name]["exit"], p.stderr
