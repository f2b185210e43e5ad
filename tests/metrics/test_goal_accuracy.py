"""goal_accuracy@1: strict verdict parsing, prompts as hashed data, requests, both variants."""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator
from importlib.resources import files

import pytest
from pydantic import ValidationError

from agent_eval.errors import JudgeOutputError
from agent_eval.judges._openai_judge import OpenAIJudge
from agent_eval.metrics._base import CallTally, MetricInput, metrics
from agent_eval.metrics._goal_accuracy import GoalAccuracy, GoalAndOutcome, OutcomeComparison
from agent_eval.metrics._prompts import PromptSet
from agent_eval.testing import FakeModelServer, InvalidVerdict, Structured, Usage

CONVERSATION = "Human: refund order 7\nAI: Refund issued for order 7."


def test_registered_as_goal_accuracy() -> None:
    assert metrics.get("goal_accuracy@1") is GoalAccuracy
    assert GoalAccuracy().id == "goal_accuracy@1"
    assert GoalAccuracy.judge_calls == 2


@pytest.mark.parametrize("bad", [1, 0, "1.0", "yes", "no", True, False, None, "", " 1", "2"])
def test_verdict_accepts_only_the_strings_0_and_1(bad: object) -> None:
    with pytest.raises(ValidationError):
        OutcomeComparison.model_validate({"reason": "r", "verdict": bad})
    with pytest.raises(ValidationError):
        OutcomeComparison.model_validate_json(json.dumps({"reason": "r", "verdict": bad}))


def test_missing_verdict_or_reason_is_rejected() -> None:
    for data in ({"reason": "r"}, {"verdict": "1"}):
        with pytest.raises(ValidationError):
            OutcomeComparison.model_validate(data)
    with pytest.raises(ValidationError):
        GoalAndOutcome.model_validate({"user_goal": "g"})
    assert OutcomeComparison.model_validate({"reason": "r", "verdict": "0"}).verdict == "0"


def test_prompt_sha256_is_over_the_template_files() -> None:
    folder = files("agent_eval.metrics._prompts") / "goal_accuracy_v1"
    digest = hashlib.sha256()
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".j2"):
            digest.update(entry.name.encode() + b"\0" + entry.read_bytes() + b"\0")
    assert GoalAccuracy().prompt_sha256 == digest.hexdigest()
    assert len(GoalAccuracy.prompts.sources) == 4


def test_unknown_prompt_folder_is_an_error() -> None:
    with pytest.raises(FileNotFoundError):
        PromptSet("no_such_prompts_v9")


def test_requests_are_deterministic_and_carry_the_inputs() -> None:
    metric = GoalAccuracy()
    first = metric.infer_request(MetricInput(conversation=CONVERSATION))
    assert first == metric.infer_request(MetricInput(conversation=CONVERSATION))
    assert first.cache_key("m") == metric.infer_request(
        MetricInput(conversation=CONVERSATION)
    ).cache_key("m")
    assert [m["role"] for m in first.messages] == ["system", "user"]
    assert first.messages[1]["content"].endswith(CONVERSATION)
    assert (
        "user_goal" in first.messages[0]["content"] and "end_state" in first.messages[0]["content"]
    )
    assert first.response_model is GoalAndOutcome and first.temperature == 0.0
    second = metric.compare_request("a refund for order 7", "refund issued for order 7")
    assert second.response_model is OutcomeComparison
    user = second.messages[1]["content"]
    assert user.endswith(
        "Desired outcome: a refund for order 7\nArrived outcome: refund issued for order 7"
    )
    assert '"verdict": "1"' in user  # the worked example


def test_prompt_tokens_grow_with_the_conversation() -> None:
    metric = GoalAccuracy(with_reference=True)
    short = MetricInput(conversation="hi", reference="goal")
    long = MetricInput(conversation="hi " * 1000, reference="goal")
    assert metric.prompt_tokens(long) - metric.prompt_tokens(short) >= 900
    assert metric.planned_prompt_tokens(short) > metric.prompt_tokens(short)


def test_reference_variant_skips_samples_without_reference() -> None:
    assert (
        GoalAccuracy(with_reference=True).skip_reason(MetricInput(conversation="x"))
        == "missing_reference"
    )
    assert (
        GoalAccuracy(with_reference=True).skip_reason(MetricInput(conversation="x", reference="g"))
        is None
    )
    assert GoalAccuracy().skip_reason(MetricInput(conversation="x")) is None
    assert GoalAccuracy(with_reference=True).uses_reference and not GoalAccuracy().uses_reference


@pytest.fixture
async def judge(fake_server: FakeModelServer) -> AsyncIterator[OpenAIJudge]:
    judge = OpenAIJudge("fake-model", base_url=fake_server.base_url, api_key="sk-x", timeout=15)
    yield judge
    await judge.aclose()


@pytest.mark.parametrize(
    ("with_reference", "desired"), [(False, "refund order 7"), (True, "REFERENCE GOAL")]
)
async def test_two_stages_in_order(
    fake_server: FakeModelServer, judge: OpenAIJudge, with_reference: bool, desired: str
) -> None:
    fake_server.add_rule(
        Structured(
            {"user_goal": "refund order 7", "end_state": "refund issued"}, usage=Usage(10, 5)
        ),
        schema="GoalAndOutcome",
    )
    fake_server.add_rule(
        Structured({"reason": "same", "verdict": "1"}, usage=Usage(7, 3)),
        schema="OutcomeComparison",
    )
    tally = CallTally()
    sample = MetricInput(conversation=CONVERSATION, reference="REFERENCE GOAL")
    outcome = await GoalAccuracy(with_reference=with_reference).evaluate(sample, judge, tally)
    assert (outcome.verdict, outcome.reason) == ("1", "same")
    assert outcome.details == {"user_goal": "refund order 7", "end_state": "refund issued"}
    assert (tally.input_tokens, tally.output_tokens, tally.attempts) == (17, 8, 2)
    stage1, stage2 = fake_server.requests
    assert stage1.schema_name == "GoalAndOutcome" and CONVERSATION in stage1.text
    assert stage2.schema_name == "OutcomeComparison"
    assert f"Desired outcome: {desired}\nArrived outcome: refund issued" in stage2.text


async def test_invalid_stage_one_stops_before_stage_two(
    fake_server: FakeModelServer, judge: OpenAIJudge
) -> None:
    fake_server.add_rule(
        InvalidVerdict(missing=True, field="end_state", base={"user_goal": "g"}),
        schema="GoalAndOutcome",
    )
    tally = CallTally()
    with pytest.raises(JudgeOutputError):
        await GoalAccuracy().evaluate(MetricInput(conversation=CONVERSATION), judge, tally)
    assert tally.attempts == 3 and all(
        r.schema_name == "GoalAndOutcome" for r in fake_server.requests
    )
