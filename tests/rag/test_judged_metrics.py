"""The judged RAG reviewers through the fake OpenAI-compatible server (real client paths)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from agent_eval._trace import (
    AgentTrace,
    AssistantMessage,
    Retrieval,
    RetrievedDocument,
    UserMessage,
)
from agent_eval.errors import JudgeOutputError
from agent_eval.formatting._registry import get_formatter
from agent_eval.judges._openai_judge import OpenAIJudge
from agent_eval.metrics._answer_correctness import AnswerCorrectness
from agent_eval.metrics._answer_relevance import AnswerRelevance, RelevanceVerdict
from agent_eval.metrics._base import CallTally, MetricInput
from agent_eval.metrics._context_precision import LLMContextPrecision
from agent_eval.metrics._context_recall import LLMContextRecall
from agent_eval.metrics._refusal import Refusal
from agent_eval.metrics._units import answer_units
from agent_eval.run._engine import Engine
from agent_eval.testing import FakeModelServer, Structured

QUESTION = "How long do I have to return the blender?"
PASSAGES = (
    ("p1", "Returns are accepted within 14 calendar days of receipt."),
    ("p2", "Our stores open at 9am."),
)
ANSWER = "You can return it within 30 days, and return shipping is free."
REFERENCE = "You can return it within 14 calendar days of receipt, unused."


def _trace(
    answer: str = ANSWER, reference: str | None = REFERENCE, tag: str = "ANSWERABLE"
) -> AgentTrace:
    docs = tuple(RetrievedDocument(id=i, content=t) for i, t in PASSAGES)
    labels: dict[str, Any] = {"answerability": tag, "relevance": {"p1": 1, "p2": 0}}
    if reference is not None:
        labels["reference"] = reference
    return AgentTrace(
        conversation_id="shop",
        messages=(UserMessage(content=QUESTION), AssistantMessage(content=answer)),
        retrievals=(Retrieval(after_message=1, documents=docs),),
        labels={"turns": {"1": labels}},
    )


def _sample(trace: AgentTrace, reference: bool = False) -> MetricInput:
    unit = answer_units(trace)[0]
    return MetricInput(
        conversation="", unit=unit, trace=trace, reference=unit.reference if reference else None
    )


@pytest.fixture
async def judge(fake_server: FakeModelServer) -> AsyncIterator[OpenAIJudge]:
    judge = OpenAIJudge("fake-model", base_url=fake_server.base_url, api_key="sk-x", timeout=15)
    yield judge
    await judge.aclose()


def _verdicts(*pairs: tuple[int, str]) -> dict[str, Any]:
    return {"verdicts": [{"passage": n, "reason": "r", "verdict": v} for n, v in pairs]}


async def test_llm_context_precision_one_verdict_per_passage(
    fake_server: FakeModelServer, judge: OpenAIJudge
) -> None:
    fake_server.add_rule(Structured(_verdicts((1, "1"))), times=1)  # one short: re-asked
    fake_server.add_rule(Structured(_verdicts((2, "1"), (1, "0"))), times=1)  # misnumbered
    fake_server.add_rule(Structured(_verdicts((1, "1"), (2, "0"))))
    tally = CallTally()
    outcome = await LLMContextPrecision().evaluate(_sample(_trace()), judge, tally)
    assert outcome.score == 0.5 and outcome.details["average_precision"] == 1.0
    assert outcome.details["human_labels"] == [1, 0]
    assert [a.label for a in outcome.atoms or ()] == ["1", "0"]
    assert tally.attempts == 3
    request = fake_server.requests[0]
    assert request.schema_name == "PassageVerdicts2"
    assert QUESTION in request.text and PASSAGES[0][1] in request.text
    assert ANSWER not in request.text  # retrieval is judged before looking at the answer


async def test_llm_context_recall_needs_a_reference(
    fake_server: FakeModelServer, judge: OpenAIJudge
) -> None:
    metric = LLMContextRecall()
    assert metric.skip_reason(_sample(_trace(reference=None), reference=True)) == (
        "missing_reference"
    )
    fake_server.add_rule(
        Structured(
            {
                "statements": [
                    {"statement": "Returns within 14 days.", "reason": "p1", "verdict": "1"},
                    {"statement": "The item must be unused.", "reason": "absent", "verdict": "0"},
                ]
            }
        )
    )
    outcome = await metric.evaluate(_sample(_trace(), reference=True), judge, CallTally())
    assert outcome.score == 0.5 and outcome.details["k_of_n"] == "1 of 2"
    assert REFERENCE in fake_server.requests[0].text


@pytest.mark.parametrize("bad", ["5", 5.0, 0, 6, True, None])
def test_relevance_verdict_is_an_integer_from_1_to_5(bad: object) -> None:
    with pytest.raises(ValueError):
        RelevanceVerdict.model_validate({"reason": "r", "verdict": bad})


async def test_answer_relevance_sees_question_and_answer_only(
    fake_server: FakeModelServer, judge: OpenAIJudge
) -> None:
    fake_server.add_rule(Structured({"reason": "string verdict", "verdict": "4"}), times=1)
    fake_server.add_rule(Structured({"reason": "answers it", "verdict": 4}))
    tally = CallTally()
    outcome = await AnswerRelevance().evaluate(_sample(_trace()), judge, tally)
    assert (outcome.verdict, outcome.score) == ("4", 0.75) and tally.attempts == 2
    text = fake_server.requests[0].text
    assert QUESTION in text and ANSWER in text
    assert PASSAGES[0][1] not in text and REFERENCE not in text


async def test_answer_correctness_reports_wrong_critical_facts(
    fake_server: FakeModelServer, judge: OpenAIJudge
) -> None:
    facts = [
        {"fact": "14 calendar days", "status": "wrong", "rationale": "says 30 days"},
        {"fact": "unused", "status": "missing", "rationale": "not said"},
    ]
    # verdict 2 with a wrong critical fact is inconsistent: re-asked
    fake_server.add_rule(
        Structured({"critical_facts": facts, "reason": "r", "verdict": 2}), times=1
    )
    fake_server.add_rule(
        Structured({"critical_facts": facts, "reason": "wrong days", "verdict": 0})
    )
    tally = CallTally()
    metric = AnswerCorrectness()
    outcome = await metric.evaluate(_sample(_trace(), reference=True), judge, tally)
    assert (outcome.verdict, outcome.score) == ("0", 0.0) and tally.attempts == 2
    assert outcome.details["wrong_critical_facts"] == ["14 calendar days"]
    assert outcome.details["missing_critical_facts"] == ["unused"]
    assert outcome.details["critical_facts"] == "0 of 2 correct"
    assert [a.label for a in outcome.atoms or ()] == ["wrong", "missing"]
    text = fake_server.requests[0].text
    assert REFERENCE in text and ANSWER in text and PASSAGES[0][1] not in text


async def test_answer_correctness_partial_scores_half_and_skips_without_reference(
    fake_server: FakeModelServer, judge: OpenAIJudge
) -> None:
    fake_server.add_rule(Structured({"critical_facts": [], "reason": "part", "verdict": 1}))
    engine = Engine(
        metric=AnswerCorrectness(), formatter=get_formatter("json@1"), judge=judge, run_id="r"
    )
    summary = await engine.run(
        [_trace(), _trace(reference=None).model_copy(update={"conversation_id": "noref"})]
    )
    rows = {r.conversation_id: r for r in summary.results}
    assert rows["shop"].score == 0.5 and rows["shop"].reference == REFERENCE
    assert rows["noref"].status == "skipped" and rows["noref"].error_type == "missing_reference"
    assert summary.accounting_line.endswith("1 + 1 + 0 = 2")


async def test_refusal_is_binary_with_expected_behaviour(
    fake_server: FakeModelServer, judge: OpenAIJudge
) -> None:
    fake_server.add_rule(
        Structured({"reason": "r", "kind": "declined", "verdict": "0"}), times=1
    )  # kind and verdict disagree: re-asked
    fake_server.add_rule(Structured({"reason": "declines", "kind": "declined", "verdict": "1"}))
    tally = CallTally()
    trace = _trace(answer="I don't have that information.", tag="UNANSWERABLE")
    outcome = await Refusal().evaluate(_sample(trace), judge, tally)
    assert outcome.verdict == "1" and outcome.score == 1.0 and tally.attempts == 2
    assert outcome.details == {"kind": "declined", "expected": "decline", "appropriate": True}
    fake_server.add_rule(Structured({"reason": "declines", "kind": "declined", "verdict": "1"}))
    refused_answerable = await Refusal().evaluate(_sample(_trace()), judge, CallTally())
    assert refused_answerable.details["appropriate"] is False


async def test_invalid_rubric_after_reasks_is_an_error(
    fake_server: FakeModelServer, judge: OpenAIJudge
) -> None:
    fake_server.add_rule(Structured({"reason": "r", "verdict": 7}))
    with pytest.raises(JudgeOutputError):
        await AnswerRelevance().evaluate(_sample(_trace()), judge, CallTally())
