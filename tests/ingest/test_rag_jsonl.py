"""RAG JSON Lines: single and multi-turn records become turns whose context is their passages."""

from __future__ import annotations

import json
from pathlib import Path

from agent_eval.ingest._pipeline import detect_container, ingest
from agent_eval.ingest.containers._base import Skipped
from agent_eval.ingest.containers._rag_jsonl import RagJsonlContainer
from agent_eval.metrics._units import answer_units

POLICY = "Returns are accepted within 14 calendar days of receipt. The product must be unused."
ANSWER = "You can return it within 14 days, and return shipping is free."


def write(tmp_path: Path, records: list[object], name: str = "rag.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_single_turn_record_is_one_unit_with_its_passages(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        [
            {
                "id": "returns-1",
                "question": "Can I return the kettle?",
                "contexts": [
                    {"id": "policy", "text": POLICY, "relevant": True},
                    "A plain string passage.",
                ],
                "answer": ANSWER,
                "reference": "Yes, within 14 calendar days, if unused.",
                "labels": {"faithful": 0},
            }
        ],
    )
    assert detect_container(str(path)).name == "rag-jsonl"
    (trace,) = ingest(path).collect()
    assert trace.conversation_id == "returns-1"
    assert trace.source.container == "rag-jsonl"
    (unit,) = answer_units(trace)
    assert unit.id == "turn:1"
    assert unit.question == "Can I return the kettle?"
    assert unit.answer == ANSWER
    assert [(c.id, c.text, c.source) for c in unit.contexts] == [
        ("policy", POLICY, "retrieval"),
        (None, "A plain string passage.", "retrieval"),
    ]
    assert unit.contexts[0].metadata == {"relevant": True}
    assert [c.rank for c in unit.contexts] == [0, 1]
    assert unit.reference == "Yes, within 14 calendar days, if unused."
    assert unit.labels == {"faithful": 0}
    assert trace.reference == "Yes, within 14 calendar days, if unused."


def test_multi_turn_record_keeps_each_turns_own_passages(tmp_path: Path) -> None:
    record = {
        "conversation_id": "chat-7",
        "labels": {"source": "test"},
        "metadata": {"tenant": "a"},
        "turns": [
            {"question": "q1", "contexts": [{"id": 1, "text": "p1"}], "answer": "a1"},
            {"question": "q2", "contexts": [{"id": "d2", "text": "p2", "score": 0.5}]},
            {"question": "q3", "answer": "a3", "reference": "r3", "labels": {"faithfulness": 4}},
        ],
    }
    (trace,) = ingest(write(tmp_path, [record])).collect()
    units = answer_units(trace)
    assert [u.id for u in units] == ["turn:1", "turn:2", "turn:3"]
    assert [[c.text for c in u.contexts] for u in units] == [["p1"], ["p2"], []]
    assert units[0].contexts[0].id == "1"
    assert [u.answer for u in units] == ["a1", "", "a3"]
    assert units[2].reference == "r3" and units[2].labels == {"faithfulness": 4}
    assert trace.labels["source"] == "test"
    assert trace.metadata == {"tenant": "a"}
    assert trace.reference is None


def test_bad_lines_are_skipped_with_line_and_field_and_the_rest_read(tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    good = {"question": "q", "contexts": ["p"], "answer": "a"}
    lines = [
        json.dumps(good),
        json.dumps({"question": 3, "answer": "a"}),
        "{not json",
        json.dumps({"turns": [], "question": "q"}),
        json.dumps({"answer": "no question"}),
        json.dumps({"question": "q", "contexts": [{"id": "x"}]}),
        json.dumps(good),
    ]
    path.write_text("\n".join(lines) + "\n")
    items = list(RagJsonlContainer().read(str(path)))
    skipped = [i for i in items if isinstance(i, Skipped)]
    traces = [i for i in items if not isinstance(i, Skipped)]
    assert [t.conversation_id for t in traces] == ["mixed/1", "mixed/7"]
    assert [s.source.line for s in skipped if s.source] == [2, 3, 4, 5, 6]
    assert [s.reason for s in skipped] == [
        "invalid_rag_record",
        "invalid_json",
        *["invalid_rag_record"] * 3,
    ]
    assert "question" in skipped[0].detail
    assert "contexts.0" in skipped[4].detail and "text" in skipped[4].detail
    assert "not both" in skipped[2].detail


def test_other_jsonl_formats_are_not_taken_for_rag(tmp_path: Path) -> None:
    chat = write(tmp_path, [{"messages": [{"role": "user", "content": "hi"}]}], "chat.jsonl")
    assert detect_container(str(chat)).name != "rag-jsonl"
