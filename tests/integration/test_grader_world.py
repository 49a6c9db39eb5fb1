# bin/grader judges the config exercises in the exercise's world, never in
# the one a submission declares: grader/worlds/EXERCISE.json (or --world),
# one deployment of it picked by --variant. A config that declares a gentle
# world fails; a config reasoned out for the exercise's world passes; a seed
# picks a deployment deterministically, and one config passes one deployment
# and fails another; the handout's worked example passes none of them. Most
# tests run only the static `check` scenario; two run live keepalive
# scenarios (~15 s and ~40 s).
import json
import os
import subprocess

import pytest

from conftest import REPO, bin_path, grade, run_grader

CONFIGS = os.path.join(REPO, "tests", "configs")
KEEPALIVE_WORLD = os.path.join(REPO, "grader", "worlds", "keepalive.json")
RETRY_WORLD = os.path.join(REPO, "grader", "worlds", "retry.json")
LAB = os.path.join(REPO, "channel_config", "lab.json")
LAB_WORLD = os.path.join(REPO, "channel_config", "lab-world.json")

with open(KEEPALIVE_WORLD) as f:
    KA = json.load(f)
NAMES = [d["name"] for d in KA["deployments"]]
DEPLOYMENTS = {d["name"]: d for d in KA["deployments"]}
DEFAULT = KA["default"]
with open(os.path.join(CONFIGS, "expect.json")) as f:
    EXPECT = json.load(f)

# The example: it declares a NAT that waits 24 h, so that a 2 h
# keepalive on both sides looks right; it scored 10/10 when the grader
# believed the file.
GENTLE = {
    "intermediary": {"kind": "nat", "idle_timeout_ms": 86400000},
    "client": {"grpc.keepalive_time_ms": 7200000, "grpc.keepalive_permit_without_calls": 1,
               "grpc.http2.max_pings_without_data": 0},
    "server": {"grpc.keepalive_time_ms": 7200000, "grpc.keepalive_permit_without_calls": 1,
               "grpc.http2.max_pings_without_data": 0,
               "grpc.http2.min_ping_interval_without_data_ms": 3600000},
}


def fnv_pick(seed, n):
    """The grader's pick, recomputed: FNV-1a-64 of the seed's bytes, mod n."""
    h = 0xcbf29ce484222325
    for b in seed.encode():
        h = ((h ^ b) * 0x100000001b3) % 2**64
    return h % n


def solution(d):
    """What a student reasons out for deployment |d|: the client pings above
    the servers' fixed minimum interval (no strikes) and well below the
    intermediary's idle timeout (room for a late ping), between calls too,
    with no limit on pings without data. Derived, so no answer sits in the
    repository."""
    idle = d["intermediary"]["idle_timeout_ms"]
    floor = d["server"]["grpc.http2.min_ping_interval_without_data_ms"]
    return {
        "client": {"grpc.keepalive_time_ms": floor + (idle - floor) // 4,
                   "grpc.keepalive_timeout_ms": 20000,
                   "grpc.keepalive_permit_without_calls": 1,
                   "grpc.http2.max_pings_without_data": 0},
    }


def write(tmp_path, name, obj):
    p = tmp_path / name
    p.write_text(json.dumps(obj))
    return str(p)


def check(tmp_path, exercise, config, *args):
    g = grade(exercise, config, "--only", "check", *args)
    verdict, feedback = g.verdicts["check"], g.feedback["check"]
    return g, verdict, feedback


# ---- the handout's worked example ----

def test_the_worked_example_is_not_one_of_the_graded_deployments():
    with open(LAB_WORLD) as f:
        own = json.load(f)
    for d in KA["deployments"]:
        assert (d.get("intermediary"), d.get("calls"), d.get("server", {})) != \
            (own.get("intermediary"), own.get("calls"), own.get("server", {})), d["name"]


@pytest.mark.parametrize("variant", [None] + NAMES)
def test_the_worked_example_fails_check_in_every_graded_deployment(tmp_path, variant):
    g, verdict, feedback = check(tmp_path, "keepalive", LAB, *(["--variant", variant] if variant else []))
    assert g.rc == 1
    assert verdict.startswith("FAIL")
    assert feedback.startswith(f"[world {variant or DEFAULT}]")
    # Its 60 s pings are strikes against every platform's policy, and its
    # 30 s grace cuts the graded deployments' longer calls short.
    assert "keepalive.min-ping-interval" in feedback and "age.grace-below-deadline" in feedback


def test_the_worked_example_passes_check_in_its_own_world(tmp_path):
    g, verdict, feedback = check(tmp_path, "keepalive", LAB, "--world", LAB_WORLD)
    assert verdict.startswith("PASS"), feedback
    assert feedback.startswith("[world worked-example]")
    assert "ignored" not in feedback  # it declared exactly its own world


# ---- a declared world is ignored ----

def test_a_declared_gentle_world_is_ignored_by_check(tmp_path):
    g, verdict, feedback = check(tmp_path, "keepalive", write(tmp_path, "gentle.json", GENTLE))
    assert verdict.startswith("FAIL")
    idle = DEPLOYMENTS[DEFAULT]["intermediary"]["idle_timeout_ms"]
    assert "keepalive.idle-timeout" in feedback and f"idle timeout {idle} ms" in feedback
    assert "your $.intermediary" in feedback and "ignored" in feedback


def test_a_declared_gentle_world_loses_the_connection_live(tmp_path):
    g = grade("keepalive", write(tmp_path, "gentle.json", GENTLE), "--only", "idle")
    verdict, feedback = g.verdicts["idle"], g.feedback["idle"]
    assert verdict.startswith("FAIL")
    idle = DEPLOYMENTS[DEFAULT]["intermediary"]["idle_timeout_ms"]
    assert "dropped 1 connection" in feedback
    assert f"not more often than the l4-lb forgets ({idle} ms)" in feedback
    assert f"world {DEFAULT}" in feedback


def test_a_config_reasoned_out_for_the_default_world_passes_live(tmp_path):
    d = DEPLOYMENTS[DEFAULT]
    g = grade("keepalive", write(tmp_path, "mine.json", solution(d)))
    assert g.rc == 0, g.out
    assert g.failing() == set()
    assert g.results["score"] == g.results["max_score"]
    k = d["intermediary"]["idle_timeout_ms"] / 4000
    assert f"world {DEFAULT}: its l4-lb's" in g.feedback["idle"]
    assert f"scaled 1:{k:.0f}" in g.feedback["idle"]


# ---- variants ----

@pytest.mark.parametrize("name", NAMES)
def test_each_deployment_has_a_config_that_passes_check(tmp_path, name):
    g, verdict, feedback = check(tmp_path, "keepalive", write(tmp_path, "mine.json", solution(DEPLOYMENTS[name])),
                                 "--variant", name)
    assert verdict.startswith("PASS"), feedback
    assert feedback.startswith(f"[world {name}]")


def test_one_config_passes_one_deployment_and_fails_the_others(tmp_path):
    mine = write(tmp_path, "mine.json", solution(DEPLOYMENTS["azure-lb"]))
    for name in NAMES:
        g, verdict, feedback = check(tmp_path, "keepalive", mine, "--variant", name)
        if name == "azure-lb":
            assert verdict.startswith("PASS"), feedback
        else:
            # 150 s pings are early for servers that allow one per 3 or 5 min.
            assert verdict.startswith("FAIL"), feedback
            assert "keepalive.min-ping-interval" in feedback


def test_a_seed_picks_a_deployment_deterministically(tmp_path):
    # Seeds that the recomputed FNV-1a sends to every deployment.
    seeds = {}
    for i in range(100):
        seeds.setdefault(fnv_pick(f"student-{i}", len(NAMES)), f"student-{i}")
    assert len(seeds) == len(NAMES)
    mine = write(tmp_path, "mine.json", solution(DEPLOYMENTS["azure-lb"]))
    for index, seed in sorted(seeds.items()):
        for _ in range(2):  # the same seed, the same deployment
            g, verdict, feedback = check(tmp_path, "keepalive", mine, "--variant", seed)
            assert feedback.startswith(f'[world {NAMES[index]} (picked by variant "{seed}")]'), feedback
            assert verdict.startswith("PASS" if NAMES[index] == "azure-lb" else "FAIL")


def test_channel_config_check_picks_the_same_deployment(tmp_path):
    seed = "student-7"
    name = NAMES[fnv_pick(seed, len(NAMES))]
    p = subprocess.run([bin_path("channel-config"), "check", "--no-grpc", "--world", KEEPALIVE_WORLD,
                        "--variant", seed, write(tmp_path, "gentle.json", GENTLE)],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 1
    assert p.stdout.startswith(f"world: {name}: ")
    assert "warning[world.ignored] $.intermediary:" in p.stdout


# ---- the instructor's world ----

def test_a_world_file_the_grader_cannot_use_is_a_grader_error(tmp_path):
    mine = write(tmp_path, "mine.json", solution(DEPLOYMENTS["azure-lb"]))
    bad = write(tmp_path, "world.json", {"name": "typo", "intermediary": {"idle_timeout_ms": 240000},
                                         "server": {"grpc.http2.min_recv_ping_interval_without_data_ms": 1}})
    g = grade("keepalive", mine, "--world", bad)
    assert g.rc == 2
    assert "arg.macro-name" in g.results["output"]
    g = grade("keepalive", mine, "--world", write(tmp_path, "none.json", {"name": "direct"}))
    assert g.rc == 2
    assert "needs an intermediary" in g.results["output"]
    g = grade("keepalive", mine, "--world", str(tmp_path / "missing.json"))
    assert g.rc == 2
    assert "missing.json" in g.results["output"]


def test_world_options_are_for_config_exercises_only():
    p = run_grader("deadline", "--submission", "true", "--variant", "s1", timeout=30)
    assert p.rc == 2
    assert "--world and --variant are for the config exercises" in p.err


# ---- the retry exercise's world ----

def test_retry_judges_in_its_own_world(tmp_path):
    # lab.json declares a 350 s balancer and 30 s calls: not the retry world.
    g, verdict, feedback = check(tmp_path, "retry", LAB)
    assert verdict.startswith("PASS"), feedback
    assert feedback.startswith("[world relay-callers]")
    assert "your $.intermediary, $.calls are ignored" in feedback
    with open(RETRY_WORLD) as f:
        deadline = json.load(f)["calls"]["longest_deadline_ms"]
    assert f"calls run up to {deadline} ms" in feedback
    assert "a restarting backend fails up to 3 attempts in a row UNAVAILABLE" in feedback


def test_the_worked_example_fails_retry_in_the_graded_world(tmp_path):
    # lab.json's maxAttempts 3 outlasts its own world's 2 failures in a row,
    # not the graded world's 3.
    with open(RETRY_WORLD) as f:
        run = json.load(f)["backend"]["unavailable_in_a_row"]
    g = grade("retry", LAB, "--only", "retries-unavailable")
    verdict, feedback = g.verdicts["retries-unavailable"], g.feedback["retries-unavailable"]
    assert verdict.startswith("FAIL")
    assert f"UNAVAILABLE {run} times in a row" in feedback
    assert f"saw 3 attempts and the client got UNAVAILABLE; expected {run + 1} attempts" in feedback
    assert "maxAttempts is 3" in feedback
    g = grade("retry", LAB, "--only", "retries-unavailable", "--world", LAB_WORLD)
    verdict, feedback = g.verdicts["retries-unavailable"], g.feedback["retries-unavailable"]
    assert verdict.startswith("PASS"), feedback
    assert "UNAVAILABLE 2 times in a row, then OK: 3 attempts" in feedback


def test_retry_world_deadline_must_be_one_the_grader_can_wait_for(tmp_path):
    g = grade("retry", LAB, "--world",
              write(tmp_path, "slow.json", {"calls": {"longest_deadline_ms": 60000}}))
    assert g.rc == 2
    assert "100..30000 ms" in g.results["output"]


# ---- the known-bad configs whose rule needs their own world ----

def own_world(rel):
    with open(os.path.join(CONFIGS, rel)) as f:
        config = json.load(f)
    return {k: config[k] for k in ("intermediary", "calls") if k in config}


WORLD_BAD = sorted(k for k in EXPECT if k.startswith("bad/") and own_world(k))


@pytest.mark.parametrize("bad", WORLD_BAD)
def test_bad_config_fails_check_in_the_world_it_was_written_for(tmp_path, bad):
    rule, path = EXPECT[bad]["rule"], EXPECT[bad]["path"]
    if rule.startswith("schema.") and path.startswith(("$.intermediary", "$.calls")):
        # A malformed world section is no world: the exercise's replaces it,
        # and the feedback says what was ignored.
        g, verdict, feedback = check(tmp_path, "retry", os.path.join(CONFIGS, bad))
        assert "your $.intermediary is ignored" in feedback
        assert rule not in feedback
        return
    # The keepalive exercise needs an intermediary (the retry one would not
    # wait for 30 s calls): a 350 s NAT where the file names none.
    world = write(tmp_path, "own.json",
                  {"intermediary": {"kind": "nat", "idle_timeout_ms": 350000}, **own_world(bad)})
    g, verdict, feedback = check(tmp_path, "keepalive", os.path.join(CONFIGS, bad), "--world", world)
    assert g.rc == 1
    assert verdict.startswith("FAIL")
    assert rule in feedback
