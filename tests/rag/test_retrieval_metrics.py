"""Judge-free retrieval metrics: no server, no key; every edge case ends as a counted row."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from agent_eval._result import MetricResult
from agent_eval._trace import (
    AgentTrace,
    AssistantMessage,
    Retrieval,
    RetrievedDocument,
    UserMessage,
)
from agent_eval.errors import InputError
from agent_eval.formatting._registry import get_formatter
from agent_eval.ingest import ingest
from agent_eval.ingest._rag_labels import load_turn_labels
from agent_eval.metrics._passages import average_precision
from agent_eval.metrics._spec import build_metric
from agent_eval.run._engine import Engine
from agent_eval.run._turn_labels import attach_turn_labels


def _trace(cid: str, *turns: tuple[list[tuple[str, str]], dict[str, Any] | None]) -> AgentTrace:
    """Turns of (passages as (id, text), labels); every turn answered."""
    messages: list[Any] = []
    retrievals = []
    labels: dict[str, Any] = {}
    for number, (passages, turn_labels) in enumerate(turns, 1):
        messages.append(UserMessage(content=f"question {number}"))
        if passages:
            docs = tuple(RetrievedDocument(id=i, content=t) for i, t in passages)
            retrievals.append(Retrieval(after_message=len(messages), documents=docs))
        messages.append(AssistantMessage(content=f"answer {number}"))
        if turn_labels is not None:
            labels[str(number)] = turn_labels
    return AgentTrace(
        conversation_id=cid,
        messages=tuple(messages),
        retrievals=tuple(retrievals),
        labels={"turns": labels},
    )


def _score(metric: str, traces: list[AgentTrace]) -> dict[str, MetricResult]:
    engine = Engine(metric=build_metric(metric), formatter=get_formatter("json@1"), judge=None)
    summary = asyncio.run(engine.run(traces))
    assert summary.scored + summary.skipped + summary.errored == summary.input
    return {r.subject: r for r in summary.results}


def test_average_precision_is_rank_aware() -> None:
    assert average_precision([True, False, True]) == pytest.approx((1 + 2 / 3) / 2)
    assert average_precision([False, True, True]) == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert average_precision([False, False]) == 0.0
    assert average_precision([True]) == 1.0


def test_context_precision_from_labels_share_and_average_precision() -> None:
    rel = {"relevance": {"a": 1, "b": 0, "c": "yes"}}
    rows = _score(
        "context_precision",
        [_trace("t", ([("a", "A"), ("b", "B"), ("c", "C")], rel))],
    )
    row = rows["t/turn:1"]
    assert row.status == "ok" and row.score == pytest.approx(2 / 3)
    assert row.judge_model == "none" and row.formatter == "none" and row.prompt_sha256 == ""
    assert row.details["average_precision"] == pytest.approx((1 + 2 / 3) / 2)
    assert row.details["k_of_n"] == "2 of 3" and row.details["unjudged"] == 0
    assert [a.label for a in row.atoms or ()] == ["relevant", "not_relevant", "relevant"]
    assert (row.atoms or ())[0].text == "#1 a: A"


def test_duplicates_are_counted_once_and_unjudged_are_not_relevant() -> None:
    passages = [("a", "A"), ("b", "B"), ("a", "A again"), ("c", "C")]
    rows = _score("context_precision", [_trace("t", (passages, {"relevance": {"a": 1, "b": 0}}))])
    row = rows["t/turn:1"]
    assert row.details["passages"] == 3 and row.details["duplicates"] == 1
    assert row.details["unjudged"] == 1 and row.score == pytest.approx(1 / 3)
    assert [a.label for a in row.atoms or ()] == ["relevant", "not_relevant", "unjudged"]


def test_document_metadata_labels_are_read_when_the_turn_has_none() -> None:
    docs = (
        RetrievedDocument(id="x", content="X", metadata={"relevant": True}),
        RetrievedDocument(id="y", content="Y", metadata={"relevant": "no"}),
    )
    trace = AgentTrace(
        conversation_id="m",
        messages=(UserMessage(content="q"), AssistantMessage(content="a")),
        retrievals=(Retrieval(after_message=1, documents=docs),),
    )
    assert _score("context_precision", [trace])["m/turn:1"].score == 0.5


def test_edge_cases_skip_or_error_with_reasons_and_all_are_counted() -> None:
    traces = [
        _trace("none", ([], {"relevance": {}})),  # no passages
        _trace("unlabelled", ([("a", "A")], None)),
        _trace("bad", ([("a", "A")], {"relevance": {"zzz": 1}})),  # id not retrieved
    ]
    rows = _score("context_precision", traces)
    assert rows["none/turn:1"].status == "skipped"
    assert rows["none/turn:1"].error_type == "no_passages"
    assert "retrieved no passages" in (rows["none/turn:1"].error_message or "")
    assert rows["unlabelled/turn:1"].error_type == "no_relevance_labels"
    bad = rows["bad/turn:1"]
    assert bad.status == "error" and bad.error_type == "invalid_input"
    assert "'zzz'" in (bad.error_message or "") and "'a'" in (bad.error_message or "")
    recall = _score("context_recall", traces)
    assert recall["none/turn:1"].error_type == "no_passages"
    assert recall["unlabelled/turn:1"].error_type == "no_gold_passages"
    assert recall["bad/turn:1"].error_type == "invalid_input"


def test_context_recall_against_the_gold_set() -> None:
    gold = {"relevant_passages": ["a", "z", "c"], "relevance": {"a": 1}}
    rows = _score(
        "context_recall",
        [
            _trace("t", ([("a", "A"), ("b", "B"), ("c", "C"), ("c", "C")], gold)),
            _trace("u", ([("a", "A")], {"relevant_passages": []})),
        ],
    )
    row = rows["t/turn:1"]
    assert row.score == pytest.approx(2 / 3) and row.details["k_of_n"] == "2 of 3"
    assert [(a.text, a.label) for a in row.atoms or ()] == [
        ("a (#1)", "retrieved"),
        ("z", "missing"),
        ("c (#3)", "retrieved"),
    ]
    assert rows["u/turn:1"].error_type == "no_relevant_passages"


def test_turn_labels_file_attaches_and_names_file_and_line(tmp_path: Path) -> None:
    trace = _trace("c1", ([("a", "A"), ("b", "B")], None), ([("c", "C")], None))
    good = tmp_path / "labels.jsonl"
    good.write_text(
        '{"conversation_id": "c1", "turn": 1, "relevance": {"a": 1, "b": 0}}\n\n'
        '{"conversation_id": "c1", "turn": 2, "relevant_passages": ["c", "d"], '
        '"reference": "R"}\n'
    )
    (labelled,) = attach_turn_labels([trace], load_turn_labels(good), good)
    rows = _score("context_precision", [labelled])
    assert rows["c1/turn:1"].score == 0.5
    assert _score("context_recall", [labelled])["c1/turn:2"].score == 0.5
    for text, message in [
        ('{"conversation_id": "c1", "turn": 1, "relevance": {"q": 1}}', "'q'"),
        ('{"conversation_id": "nope", "turn": 1}', "'nope' is not in the input"),
        ('{"conversation_id": "c1", "turn": 3}', "has 2 turn(s), not 3"),
        ('{"conversation_id": "c1", "turn": 0}', "1-based"),
        ('{"conversation_id": "c1", "turn": 1, "relevance": {"a": "maybe"}}', "relevance must"),
        ("not json", "not valid JSON"),
    ]:
        bad = tmp_path / "bad.jsonl"
        bad.write_text('{"conversation_id": "c1", "turn": 1}\n' + text + "\n")
        with pytest.raises(InputError, match=r"bad\.jsonl:2") as caught:
            attach_turn_labels([trace], load_turn_labels(bad), bad)
        assert message in str(caught.value)


def test_mtrag_precision_equals_the_share_of_yes_judgements(shared_data: Path) -> None:
    """Judge-free on real data: precision per turn = yes / passages, from the raw counts."""
    traces = list(ingest([str(shared_data / "mtrag-conversations" / "conversations")]))
    rows = _score("context_precision", traces)
    ok = [r for r in rows.values() if r.status == "ok"]
    skipped = [r for r in rows.values() if r.status == "skipped"]
    assert len(ok) + len(skipped) == 56
    assert sum(r.details["passages"] for r in ok) == 184  # type: ignore[misc]
    assert sum(r.details["relevant"] for r in ok) == 114  # type: ignore[misc]
    assert {r.error_type for r in skipped} <= {"no_passages"}


def test_rag_jsonl_passage_flags_and_turn_labels_feed_the_judge_free_metrics(
    tmp_path: Path,
) -> None:
    """The claim-level issue's RAG JSON Lines: ``relevant`` on a context, gold set in labels."""
    path = tmp_path / "rag.jsonl"
    path.write_text(
        '{"id": "r1", "question": "How long?", "answer": "14 days.", '
        '"contexts": [{"id": "a", "text": "14 days.", "relevant": true}, '
        '{"id": "b", "text": "Open 9am.", "relevant": false}], '
        '"labels": {"relevant_passages": ["a", "z"]}}\n'
    )
    traces = list(ingest([str(path)]))
    assert len(traces) == 1
    (precision,) = _score("context_precision", traces).values()
    (recall,) = _score("context_recall", traces).values()
    assert precision.score == 0.5 and recall.score == 0.5
