"""A trace folded into the later one that replays it keeps what it knew (trial7 #15, follow-up).

A RAG chat app on a bare instrumented client, no conversation id: each user turn is a trace of
its own, an OpenInference RETRIEVER span then a GenAI ``chat`` span (v1.37 attributes) whose
input replays the turns before. The response model and the reasoning of turn 1's answer are
recorded only on turn 1's ``chat`` span (the replay in turn 2's input carries neither), and
turn 1's retrieval only in turn 1's trace. Folding turn 1 into turn 2 must keep them all: the
answer's model and reasoning, and the retrieval at the point it happened, with its span id.
Spans are written as the Collector's OTLP JSON lines (:mod:`agent_eval.testing.otlp`) and read
through ``ingest``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from agent_eval.ingest import ingest
from agent_eval.testing.otlp import export_request, span
from agent_eval.trace import AssistantMessage, ModelUsage

MODEL = "gpt-4o-mini-2024-07-18"
SYSTEM = "Answer from the retrieved documents."
TURNS = [
    ("Where is the Louvre?", "The Louvre is in Paris.", "The document says Paris.",
     "The Louvre museum is in Paris, France."),
    ("And the Prado?", "The Prado is in Madrid.", None, "The Prado museum is in Madrid, Spain."),
]  # fmt: skip


def trace_id(turn: int) -> str:
    return f"{turn + 1:032x}"


def sid(turn: int, n: int) -> str:
    return f"{turn + 1:08x}{n:08x}"


def text(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": content}]}


def turn_spans(turn: int) -> list[dict[str, Any]]:
    """One request: RETRIEVER span, then the ``chat`` span replaying the turns before."""
    ask, answer, reasoning, document = TURNS[turn]
    history = [text("system", SYSTEM)]
    for earlier_ask, earlier_answer, _, _ in TURNS[:turn]:
        history += [text("user", earlier_ask), text("assistant", earlier_answer)]  # no reasoning
    history.append(text("user", ask))
    output: dict[str, Any] = text("assistant", answer)
    if reasoning is not None:
        output["parts"].insert(0, {"type": "reasoning", "content": reasoning})
    t, start = trace_id(turn), 1_000_000_000 * (turn + 1)
    return [
        span(t, sid(turn, 1), "retrieve", start=start, end=start + 100,
             attributes={"openinference.span.kind": "RETRIEVER", "input.value": ask,
                         "retrieval.documents.0.document.id": f"doc-{turn}",
                         "retrieval.documents.0.document.content": document}),
        span(t, sid(turn, 2), f"chat {MODEL}", start=start + 200, end=start + 900,
             attributes={"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini",
                         "gen_ai.response.model": MODEL, "gen_ai.usage.input_tokens": 20 + turn,
                         "gen_ai.usage.output_tokens": 7,
                         "gen_ai.input.messages": orjson.dumps(history).decode(),
                         "gen_ai.output.messages": orjson.dumps([output]).decode()}),
    ]  # fmt: skip


def write(path: Path, turns: int) -> Path:
    path.write_bytes(
        b"".join(orjson.dumps(export_request(turn_spans(t))) + b"\n" for t in range(turns))
    )
    return path


def test_a_folded_trace_keeps_its_answers_model_and_reasoning_and_its_retrieval(
    tmp_path: Path,
) -> None:
    (trace,) = list(ingest(write(tmp_path / "rag.otlp.jsonl", 2)))
    assert trace.trace_ids == (trace_id(0), trace_id(1))
    assert any("1 earlier trace(s) folded in" in note for note in trace.notes)
    assert [(m.role, m.content) for m in trace.messages] == [
        ("system", SYSTEM), ("user", TURNS[0][0]), ("assistant", TURNS[0][1]),
        ("user", TURNS[1][0]), ("assistant", TURNS[1][1]),
    ]  # fmt: skip
    first, second = trace.messages[2], trace.messages[4]
    assert isinstance(first, AssistantMessage) and isinstance(second, AssistantMessage)
    # turn 1's answer: read from turn 2's replay, model and reasoning from turn 1's chat span
    assert (first.model, first.reasoning) == (MODEL, "The document says Paris.")
    assert first.span_ids == (sid(0, 2), sid(1, 2))
    assert (second.model, second.reasoning, second.span_ids) == (MODEL, None, (sid(1, 2),))
    # each retrieval where it happened (before the call it fed), with its span and documents
    assert [(r.after_message, r.span_id, r.query, [(d.id, d.content) for d in r.documents])
            for r in trace.retrievals] == [
        (2, sid(0, 1), TURNS[0][0], [("doc-0", TURNS[0][3])]),
        (4, sid(1, 1), TURNS[1][0], [("doc-1", TURNS[1][3])]),
    ]  # fmt: skip
    assert trace.usage == (ModelUsage(model=MODEL, input_tokens=41, output_tokens=14, calls=2),)
    assert trace.source.conventions == ("genai", "openinference")


def test_the_last_turn_alone_has_only_its_own_retrieval(tmp_path: Path) -> None:
    """The contrast: without the earlier trace, turn 1's answer has no model, no retrieval."""
    path = tmp_path / "rag.otlp.jsonl"
    path.write_bytes(orjson.dumps(export_request(turn_spans(1))) + b"\n")
    (trace,) = list(ingest(path))
    first = trace.messages[2]
    assert isinstance(first, AssistantMessage)
    assert (first.model, first.reasoning) == (None, None)
    assert [r.span_id for r in trace.retrievals] == [sid(1, 1)]
