"""Reviewer agreement on the shared MTRAG data with scripted judges (fake server): the figures
equal scikit-learn's and scipy's on vectors computed independently here from the raw labels."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from scipy.stats import kendalltau, spearmanr
from sklearn.metrics import cohen_kappa_score

from agent_eval._trace import AgentTrace
from agent_eval.formatting._registry import get_formatter
from agent_eval.ingest import ingest
from agent_eval.ingest._rag_labels import answerability
from agent_eval.judges._openai_judge import OpenAIJudge
from agent_eval.metrics._spec import build_metric
from agent_eval.metrics._units import answer_units
from agent_eval.rag._agreement import reviewer_agreement
from agent_eval.run._engine import Engine
from agent_eval.run._turns import turn_records, turn_rows
from agent_eval.testing import FakeModelServer, Structured
from agent_eval.testing._recording import RecordedRequest

_PASSAGE = re.compile(r"^\[(\d+)\](?: \([^)]*\))?\n", re.MULTILINE)


def _question_words(question: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]{6,}", question.lower())}


def _passage_rule(request: RecordedRequest) -> Structured:
    """Scripted reviewer: a passage is relevant when it shares a 6+ letter word with the
    question."""
    user = request.messages[-1]["content"]
    question = user.split("Question:\n", 1)[1].split("\n\nPassages:", 1)[0]
    bodies = _PASSAGE.split(user.split("Passages:\n", 1)[1])[1:]
    words = _question_words(question)
    verdicts = [
        {
            "passage": int(number),
            "reason": "scripted",
            "verdict": str(int(bool(words & _question_words(text)))),
        }
        for number, text in zip(bodies[::2], bodies[1::2], strict=True)
    ]
    return Structured({"verdicts": verdicts})


def _rubric(answer: str) -> int:
    """Scripted relevance reviewer: longer answers score higher, refusals 1."""
    if "do not have" in answer.lower() or "don't have" in answer.lower():
        return 1
    return min(5, 2 + len(answer) // 300)


def _relevance_rule(request: RecordedRequest) -> Structured:
    answer = request.messages[-1]["content"].split("Answer:\n", 1)[1]
    return Structured({"reason": "scripted", "verdict": _rubric(answer)})


@pytest.fixture
async def judge(fake_server: FakeModelServer) -> AsyncIterator[OpenAIJudge]:
    judge = OpenAIJudge("fake-model", base_url=fake_server.base_url, api_key="sk-x", timeout=15)
    yield judge
    await judge.aclose()


async def _run(metric: str, traces: list[AgentTrace], judge: OpenAIJudge):  # type: ignore[no-untyped-def]
    engine = Engine(
        metric=build_metric(metric), formatter=get_formatter("json@1"), judge=judge, concurrency=8
    )
    return await engine.run(traces)


async def test_llm_context_precision_against_mtrag_relevance_labels(
    shared_data: Path, fake_server: FakeModelServer, judge: OpenAIJudge
) -> None:
    traces = list(ingest([str(shared_data / "mtrag-conversations" / "conversations")]))
    fake_server.add_rule(_passage_rule)
    summary = await _run("llm_context_precision@1", traces, judge)
    assert summary.scored == 56 and summary.errored == 0
    rows = turn_rows(turn_records(traces), summary.results)
    (agreement,) = reviewer_agreement(rows)
    judge_flags, human = [], []
    for trace in traces:
        for unit in answer_units(trace):
            words = _question_words(unit.question)
            relevance = dict(unit.labels["relevance"])  # type: ignore[call-overload]
            for context in unit.contexts:
                judge_flags.append(int(bool(words & _question_words(context.text))))
                human.append(int(relevance[context.id]))
    assert len(human) == 184 and agreement.n == 184
    assert agreement.kappa == pytest.approx(cohen_kappa_score(judge_flags, human))
    assert agreement.agreement == pytest.approx(
        sum(a == b for a, b in zip(judge_flags, human, strict=True)) / 184
    )


async def test_answer_relevance_against_mtrag_human_ratings(
    shared_data: Path, fake_server: FakeModelServer, judge: OpenAIJudge
) -> None:
    traces = list(ingest([str(shared_data / "mtrag-human-eval")]))
    fake_server.add_rule(_relevance_rule)
    summary = await _run("answer_relevance@1", traces, judge)
    assert summary.scored == 177
    rows = turn_rows(turn_records(traces), summary.results)
    found = {a.against: a for a in reviewer_agreement(rows)}
    scores, appropriateness = [], []
    for trace in traces:
        for unit in answer_units(trace):
            scores.append((_rubric(unit.answer) - 1) / 4)
            appropriateness.append(unit.labels["human_ratings"]["appropriateness"])  # type: ignore[index,call-overload]
    got = found["human appropriateness"]
    assert got.n == 177
    assert got.spearman == pytest.approx(spearmanr(scores, appropriateness).statistic)
    assert got.kendall == pytest.approx(kendalltau(scores, appropriateness).statistic)
    assert "human completeness" in found
    assert sum(answerability(r.turn.labels) == "UNANSWERABLE" for r in rows) == 12
