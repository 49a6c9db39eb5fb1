# Integration tests for the config exercises of bin/grader (keepalive, retry):
# the reference config passes, every known-bad config fails `check` naming its
# rule, and the live scenarios fail exactly where the broken rule bites, with
# the measured cause in the feedback. Keepalive runs take ~10-15 s a scenario,
# so only the reference runs whole; the others run the scenarios they target.
import json
import os

import pytest

from conftest import REPO, grade

CONFIGS = os.path.join(REPO, "tests", "configs")
LAB = os.path.join(REPO, "channel_config", "lab.json")
# The grader judges in the exercise's world, not the file's: the worked
# example in its own deployment, the keepalive mistakes behind a 350 s NAT.
LAB_WORLD = ("--world", os.path.join(REPO, "channel_config", "lab-world.json"))

with open(os.path.join(CONFIGS, "expect.json")) as f:
    EXPECT = json.load(f)


def declares_world(rel):
    with open(os.path.join(CONFIGS, rel)) as f:
        return bool({"intermediary", "calls"} & set(json.load(f)))


# Files whose rule needs their own world: test_grader_world.py grades them in it.
BAD = sorted(k for k in EXPECT if k.startswith("bad/") and not declares_world(k))


def cfg(rel):
    return os.path.join(CONFIGS, rel)


@pytest.mark.parametrize("config,world", [(LAB, LAB_WORLD), (cfg("good/lab-retry.json"), ())],
                         ids=["lab.json", "lab-retry.json"])
def test_reference_configs_pass_retry(config, world):
    g = grade("retry", config, *world)
    assert g.rc == 0, g.out
    assert g.failing() == set()
    assert g.results["score"] == g.results["max_score"]


# channel_config/lab.json passing keepalive live in its own world is a row of
# the verdict matrix (tests/verdicts.json).


@pytest.mark.parametrize("bad", BAD)
def test_bad_config_fails_check_naming_its_rule(bad):
    g = grade("retry", cfg(bad), "--only", "check")
    assert g.rc == 1
    verdict, feedback = g.verdicts["check"], g.feedback["check"]
    assert verdict.startswith("FAIL")
    rule = EXPECT[bad]["rule"]
    if rule == "grpc.rejected":
        assert "gRPC rejected" in feedback
    else:
        assert rule in feedback


def test_retries_disabled_fails_the_retrying_scenarios():
    g = grade("retry", cfg("bad/retry.disabled.json"))
    assert g.failing() == {"check", "retries-unavailable", "gives-up"}
    assert "grpc.enable_retries is 0" in g.feedback["retries-unavailable"]


def test_retrying_an_answer_code_fails_not_an_answer():
    g = grade("retry", cfg("bad/retry.non-retryable-code.json"), "--only", "not-an-answer")
    verdict, feedback = g.verdicts["not-an-answer"], g.feedback["not-an-answer"]
    assert verdict.startswith("FAIL")
    assert "NOT_FOUND was tried 2 times" in feedback


def test_policy_gRPC_refuses_makes_every_live_call_fail():
    g = grade("retry", cfg("bad/retry.max-attempts.json"), "--only", "retries-unavailable,gives-up")
    for sid in ("retries-unavailable", "gives-up"):
        verdict, feedback = g.verdicts[sid], g.feedback[sid]
        assert verdict.startswith("FAIL")
        assert "gRPC refused the service config" in feedback


def test_missing_config_file_still_writes_results(tmp_path):
    g = grade("retry", str(tmp_path / "nope.json"), "--only", "check")
    assert g.rc == 2
    assert "cannot read the submission file" in g.results["output"]
    assert "nope.json" in g.results["output"]
