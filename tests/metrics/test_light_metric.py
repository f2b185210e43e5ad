"""A judged metric written as one ``evaluate`` method plus its identity: planning, prompt hashing,
token estimates and judge-call accounting come from the protocol's defaults and the engine's
counting judge (issue 27, part 4). The built-in metrics keep their own overrides."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

import agent_eval
from agent_eval._trace import AgentTrace, AssistantMessage, UserMessage
from agent_eval.judges._base import Judge, JudgeRequest
from agent_eval.judges._openai_judge import OpenAIJudge
from agent_eval.metrics._base import CallTally, JudgeFreeMetric, Metric, MetricInput, MetricOutcome
from agent_eval.metrics._tool_calls import JudgeFreeMetric as OldPathJudgeFreeMetric
from agent_eval.run._store import load_results
from agent_eval.testing import FakeModelServer, Structured

PROMPT = "Is the user polite? Answer 1 for yes, 0 for no.\n\n{conversation}"


class Politeness(BaseModel):
    reason: str
    verdict: Literal["0", "1"]


class Polite(Metric):
    name = "polite_test"
    version = 1
    prompt_template = PROMPT

    async def evaluate(
        self, sample: MetricInput, judge: Judge | None, tally: CallTally
    ) -> MetricOutcome:
        assert judge is not None
        request = JudgeRequest(
            messages=(
                {"role": "user", "content": PROMPT.format(conversation=sample.conversation)},
            ),
            response_model=Politeness,
        )
        reply = await judge.ask(request)  # no accounting code: the judge counts itself
        return MetricOutcome(verdict=reply.output.verdict, reason=reply.output.reason)


def _trace(cid: str, text: str) -> AgentTrace:
    return AgentTrace(
        conversation_id=cid,
        messages=(UserMessage(content=text), AssistantMessage(content="Sure.")),
    )


def test_a_one_method_judged_metric_is_scored_planned_and_counted(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    fake_server.add_rule(Structured({"reason": "says please", "verdict": "1"}), schema="Politeness")
    judge = OpenAIJudge("fake-model", base_url=fake_server.base_url, api_key="sk-test")
    traces = [_trace("a", "Please book a table."), _trace("b", "Book a table, please.")]
    summary = agent_eval.score(traces, metric=Polite(), judge=judge, out=tmp_path / "run")
    assert (summary.scored, summary.errored) == (2, 0)
    rows = load_results(tmp_path / "run")
    assert {r.score for r in rows} == {1.0}
    assert {r.prompt_sha256 for r in rows} == {hashlib.sha256(PROMPT.encode()).hexdigest()}
    assert all(r.judge_calls == 1 and r.attempts == 1 for r in rows)  # counted by the engine
    assert all(r.input_tokens and r.input_tokens > 0 for r in rows)
    sample = MetricInput(
        conversation="hello there", unit=Polite().units(traces[0])[0], trace=traces[0]
    )
    assert Polite().planned_prompt_tokens(sample) == Polite().prompt_tokens(sample) > 0


def test_judge_free_metric_sits_beside_metric_and_keeps_its_old_path() -> None:
    assert OldPathJudgeFreeMetric is JudgeFreeMetric
    assert issubclass(JudgeFreeMetric, Metric) and not JudgeFreeMetric.requires_judge
