"""The MTRAG files ingest as conversations with per-turn labels, with the counts their
PROVENANCE.md states (skipped when ../shared is absent)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from agent_eval._trace import AgentTrace
from agent_eval.ingest import ingest
from agent_eval.ingest._rag_labels import answerability
from agent_eval.ingest.containers._base import containers
from agent_eval.metrics._units import answer_units


def _traces(path: Path) -> list[AgentTrace]:
    run = ingest([str(path)])
    traces = list(run)
    assert not [f for f in run.report.files if f.error], run.report.to_json()
    return traces


def test_mtrag_conversations_match_provenance(shared_data: Path) -> None:
    folder = shared_data / "mtrag-conversations" / "conversations"
    traces = _traces(folder)
    assert {t.source.container for t in traces} == {"mtrag"}
    assert len(traces) == 8
    units = [u for t in traces for u in answer_units(t)]
    assert len(units) == 56  # user turns
    assert Counter(answerability(u.labels) for u in units) == {
        "ANSWERABLE": 35,
        "UNANSWERABLE": 13,
        "PARTIAL": 5,
        "CONVERSATIONAL": 3,
    }
    passages = [c for u in units for c in u.contexts if c.source == "retrieval"]
    assert len(passages) == 184
    relevance = Counter(v for u in units for v in dict(u.labels.get("relevance") or {}).values())
    assert relevance == {1: 114, 0: 70}
    conflicting = sum(
        len({j["value"] for j in c.metadata["judgements"]}) > 1  # type: ignore[index,union-attr]
        for c in passages
    )
    assert conflicting == 24
    # answer = the generator's original text, reference = the repaired text: 51 of 56 differ
    assert sum(u.answer != u.reference for u in units) == 51
    assert all(u.reference for u in units)


def test_mtrag_last_judgement_wins(shared_data: Path) -> None:
    """Computed independently from the raw file: the latest-timestamp judgement."""
    path = shared_data / "mtrag-conversations" / "conversations" / "13.json"
    raw = json.loads(path.read_text())
    expected = {}
    agent_turns = [m for m in raw["messages"] if m["speaker"] == "agent"]
    for turn, message in enumerate(agent_turns, 1):
        for context in message["contexts"]:
            judgements = context["feedback"]["relevant"].values()
            last = max(judgements, key=lambda j: j["timestamp"])
            expected[(turn, context["document_id"])] = int(last["value"] == "yes")
    (trace,) = _traces(path)
    got = {
        (u.turn, doc): value
        for u in answer_units(trace)
        for doc, value in dict(u.labels.get("relevance") or {}).items()
    }
    assert got == expected
    assert trace.conversation_id == "mtrag/13"


def test_mtrag_un_matches_provenance(shared_data: Path) -> None:
    traces = _traces(shared_data / "mtrag-un" / "reference.subset.jsonl")
    assert len(traces) == 60 and {t.source.container for t in traces} == {"mtrag-un"}
    last = [answer_units(t)[-1] for t in traces]
    tags = Counter(answerability(u.labels) for u in last)
    assert tags == {"ANSWERABLE": 20, "UNANSWERABLE": 16, "UNDERSPECIFIED": 14, "PARTIAL": 10}
    passages = {u.id: len(u.contexts) for u in last}
    by_tag: dict[str | None, list[int]] = {}
    for u in last:
        by_tag.setdefault(answerability(u.labels), []).append(len(u.contexts))
    assert by_tag["UNANSWERABLE"] == [0] * 16
    assert sorted(n == 0 for n in by_tag["UNDERSPECIFIED"]).count(True) == 7
    assert all(3 <= n <= 8 for n in by_tag["UNDERSPECIFIED"] if n)
    assert all(1 <= n <= 7 for n in by_tag["ANSWERABLE"])
    assert all(1 <= n <= 5 for n in by_tag["PARTIAL"])
    assert passages
    multi = Counter(u.labels.get("multi_turn") for u in last)
    assert multi == {"Follow-up": 33, "N/A": 16, "Clarification": 11}
    # the task's turn number is its position in the conversation; no reference is set
    for trace, unit in zip(traces, last, strict=True):
        assert unit.turn == int(str(trace.metadata["task_id"]).split("<::>")[1])
    assert all(u.reference is None and u.answer for u in last)


def test_mtrag_human_eval_matches_provenance(shared_data: Path) -> None:
    traces = _traces(shared_data / "mtrag-human-eval")
    assert {t.source.container for t in traces} == {"mtrag-human-eval"}
    assert len(traces) == 24  # 8 conversations x 3 models
    units = [u for t in traces for u in answer_units(t)]
    assert len(units) == 177  # evaluations
    reference_units = [
        u for t in traces if t.metadata["model_id"] == "reference" for u in answer_units(t)
    ]
    assert len(reference_units) == 59  # tasks
    assert Counter(answerability(u.labels) for u in reference_units) == {
        "ANSWERABLE": 47,
        "PARTIAL": 7,
        "UNANSWERABLE": 4,
        "CONVERSATIONAL": 1,
    }
    documents = {c.id for u in units for c in u.contexts}
    assert len(documents) == 116
    faithfulness = Counter(u.labels["human_ratings"]["faithfulness"] for u in units)  # type: ignore[index,call-overload]
    assert faithfulness == {1: 17, 2: 16, 3: 30, 4: 114}
    completeness = Counter(u.labels["human_ratings"]["completeness"] for u in units)  # type: ignore[index,call-overload]
    assert completeness == {1: 18, 2: 7, 3: 13, 4: 139}
    appropriateness = Counter(u.labels["human_ratings"]["appropriateness"] for u in units)  # type: ignore[index,call-overload]
    assert appropriateness == {1: 1, 2: 2, 3: 32, 4: 142}
    merged: dict[object, Counter[object]] = {}
    for t in traces:
        merged.setdefault(t.metadata["model_id"], Counter()).update(
            u.labels["human_ratings"]["faithfulness"]  # type: ignore[index,call-overload]
            for u in answer_units(t)
        )
    assert merged["reference"] == {1: 4, 2: 3, 3: 6, 4: 46}
    assert merged["gpt-4o"] == {1: 7, 2: 5, 3: 11, 4: 36}
    # unanswerable responses that answer anyway (conditional_idk 0) are rated unfaithful
    unanswerable = [u for u in units if answerability(u.labels) == "UNANSWERABLE"]
    assert len(unanswerable) == 12
    answered = [u for u in unanswerable if u.labels["conditional_idk"] == 0]
    assert len(answered) == 6
    assert all(u.labels["human_ratings"]["faithfulness"] == 1 for u in answered)  # type: ignore[index,call-overload]


def test_each_mtrag_file_is_recognised_by_its_own_container(shared_data: Path) -> None:
    cases = {
        "mtrag": shared_data / "mtrag-conversations" / "conversations" / "6.json",
        "mtrag-un": shared_data / "mtrag-un" / "reference.subset.jsonl",
        "mtrag-human-eval": shared_data
        / "mtrag-human-eval"
        / "reference_subset_with_human_evaluations.subset.json",
    }
    for name, path in cases.items():
        head = path.read_bytes()[:65536]
        assert [n for n, c in containers if c.sniff(str(path), head)] == [name]


def test_bad_mtrag_records_are_skipped_with_a_reason(tmp_path: Path) -> None:
    conversation = tmp_path / "c.json"
    conversation.write_text(
        json.dumps({"author": "a", "retriever": {}, "messages": [{"speaker": "bot", "text": "x"}]})
    )
    tasks = tmp_path / "t.jsonl"
    good = {
        "conversation_id": "c",
        "task_id": "c<::>1",
        "input": [{"speaker": "user", "text": "q?"}],
        "contexts": [],
        "targets": [{"text": "I don't know."}],
        "answerability": ["UNANSWERABLE"],
    }
    tasks.write_text(json.dumps(good) + "\n" + json.dumps({**good, "input": []}) + "\n")
    run = ingest([str(conversation), str(tasks)])
    traces = list(run)
    assert [t.conversation_id for t in traces] == ["mtrag-un/c<::>1"]
    skipped = run.report.to_json()
    text = json.dumps(skipped)
    assert "invalid_mtrag_conversation" in text and "speaker 'bot'" in text
    assert "invalid_mtrag_un_task" in text and "t.jsonl:2" in text


def test_mtrag_human_eval_records_are_its_evaluations(shared_data: Path) -> None:
    """24 conversations from 177 evaluations (PROVENANCE): the record accounting counts the
    evaluations, not the conversations they were grouped into."""
    run = ingest([str(shared_data / "mtrag-human-eval")])
    assert len(list(run)) == 24
    assert run.report.records_json() == {"read": 177, "used": 177, "skipped": {}}
