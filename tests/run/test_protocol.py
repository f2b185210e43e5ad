"""The metric protocol beyond one verdict per conversation: units, atoms, judge-free metrics."""

from __future__ import annotations

from typing import ClassVar

import pytest

from agent_eval._result import Atom, MetricResult, score_from_atoms
from agent_eval._trace import AgentTrace, AssistantMessage, UserMessage
from agent_eval.formatting._registry import get_formatter
from agent_eval.judges._base import Judge
from agent_eval.metrics._base import CallTally, Metric, MetricInput, MetricOutcome, MetricParams
from agent_eval.run._engine import Engine
from agent_eval.run._store import ResultStore, load_results


class _WordParams(MetricParams):
    min_length: int = 3


class WordsMetric(Metric):
    """Judge-free: each word of a turn's answer is an atom; long words pass."""

    name: ClassVar[str] = "test_words"
    version: ClassVar[int] = 1
    Params = _WordParams
    unit_kind = "answer"
    requires_judge = False
    uses_formatter = False

    @property
    def prompt_sha256(self) -> str:
        return ""

    def prompt_tokens(self, sample: MetricInput) -> int:
        return 0

    def planned_prompt_tokens(self, sample: MetricInput) -> int:
        return 0

    async def evaluate(
        self, sample: MetricInput, judge: Judge | None, tally: CallTally
    ) -> MetricOutcome:
        assert judge is None and sample.conversation == ""
        if "CRASH" in sample.unit.answer:
            raise RuntimeError("metric bug")
        limit = self.params.min_length  # type: ignore[attr-defined]
        atoms = tuple(
            Atom(text=w, label="long" if len(w) >= limit else "short", passed=len(w) >= limit)
            for w in sample.unit.answer.split()
        )
        return MetricOutcome(atoms=atoms, details={"words": len(atoms)})


def _trace(cid: str, *answers: str) -> AgentTrace:
    messages: list[UserMessage | AssistantMessage] = []
    for i, answer in enumerate(answers):
        messages.append(UserMessage(content=f"question {i}"))
        if answer:
            messages.append(AssistantMessage(content=answer, span_ids=(f"{i:016x}",)))
    return AgentTrace(conversation_id=cid, messages=tuple(messages))


def _engine(**options: object) -> Engine:
    return Engine(
        metric=WordsMetric(_WordParams(min_length=4)),
        formatter=get_formatter("ragas-pretty@1"),
        judge=None,
        run_id="r1",
        **options,  # type: ignore[arg-type]
    )


def test_score_from_atoms_is_the_share_passed_and_none_for_no_atoms() -> None:
    atoms = [Atom(text=str(i), label="x", passed=i < 3) for i in range(5)]
    assert score_from_atoms(atoms) == 0.6
    assert score_from_atoms([]) is None


def test_outcome_derives_its_score_and_refuses_none() -> None:
    assert MetricOutcome(verdict="1").score == 1.0
    assert MetricOutcome(atoms=(Atom(text="a", label="0", passed=False),)).score == 0.0
    with pytest.raises(ValueError, match=r"score in \[0, 1\]"):
        MetricOutcome(verdict="4")
    with pytest.raises(ValueError, match=r"score in \[0, 1\]"):
        MetricOutcome(atoms=())


def test_metric_id_carries_parameters_that_differ_from_defaults() -> None:
    assert WordsMetric().id == "test_words@1"
    assert WordsMetric(_WordParams(min_length=4)).id == "test_words@1[min_length=4]"


async def test_judge_free_answer_metric_scores_each_turn_and_counts_every_unit(tmp_path) -> None:  # type: ignore[no-untyped-def]
    traces = [
        _trace("a", "one three", "seventeen words"),
        _trace("b", "", "CRASH now"),
        AgentTrace(conversation_id="empty"),
    ]
    with ResultStore(tmp_path) as store:
        summary = await _engine(store=store).run(traces)
    rows = {(r.conversation_id, r.unit_id): r for r in summary.results}
    assert set(rows) == {
        ("a", "turn:1"),
        ("a", "turn:2"),
        ("b", "turn:1"),
        ("b", "turn:2"),
        ("empty", "conversation"),
    }
    a1 = rows["a", "turn:1"]
    assert a1.status == "ok" and a1.score == 0.5 and a1.verdict is None
    assert [(x.text, x.passed) for x in a1.atoms or ()] == [("one", False), ("three", True)]
    assert a1.details == {"words": 2} and a1.span_id == "0" * 16
    assert a1.judge_model == "none" and a1.formatter == "none" and a1.metric.endswith("=4]")
    assert rows["a", "turn:2"].score == 1.0
    assert rows["b", "turn:1"].status == "skipped" and rows["b", "turn:1"].error_type == "no_answer"
    assert rows["b", "turn:2"].status == "error"
    assert rows["b", "turn:2"].error_type == "internal_error"
    assert rows["empty", "conversation"].error_type == "no_answer"
    assert summary.accounting_line == "scored + skipped + errored = units: 2 + 2 + 1 = 5"
    stored = load_results(tmp_path)
    assert sorted(stored, key=lambda r: r.subject) == sorted(
        summary.results, key=lambda r: r.subject
    )
    assert {r.subject for r in stored} >= {"a/turn:1", "empty"}


async def test_resume_skips_finished_units_only(tmp_path) -> None:  # type: ignore[no-untyped-def]
    traces = [_trace("a", "one three", "seventeen words")]
    with ResultStore(tmp_path) as store:
        first = await _engine(store=store).run(traces)
    done = {k: r for k, r in ((_engine().key(traces[0], r.unit_id), r) for r in first.results)}
    kept = {k: v for k, v in done.items() if v.unit_id == "turn:1"}
    summary = await _engine(done=kept).run(traces)
    assert summary.resumed == 1 and summary.input == 2
    assert [r.unit_id for r in summary.results] == ["turn:1", "turn:2"]


def test_result_rows_validate_score_range() -> None:
    base = dict(
        run_id="r",
        conversation_id="c",
        metric="m@1",
        formatter="f@1",
        formatter_fingerprint="",
        prompt_sha256="",
        judge_model="j",
        started_at="t",
    )
    MetricResult(status="ok", score=0.25, **base)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="score in"):
        MetricResult(status="ok", score=1.5, **base)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="carries no verdict"):
        MetricResult(status="skipped", score=0.5, error_type="x", **base)  # type: ignore[arg-type]
