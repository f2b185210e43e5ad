"""A trace folded into the later one that replays it keeps what it knew (trial7 #15, follow-up).

A RAG chat app on a bare instrumented client, no conversation id: each user turn is a trace of
its own, an OpenInference RETRIEVER span then a GenAI ``chat`` span (v1.37 attributes) whose
input replays the turns before. The response model and the reasoning of turn 1's answer are
recorded only on turn 1's ``chat`` span (the replay in turn 2's input carries neither), and
turn 1's retrieval only in turn 1's trace. Folding turn 1 into turn 2 must keep them all: the
answer's model and reasoning, and the retrieval at the point it happened, with its span id.
Spans are written as the Collector's OTLP JSON lines (:mod:`agent_eval.testing._otlp`) and read
through ``ingest``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from agent_eval._trace import (
    AgentTrace,
    AssistantMessage,
    Message,
    ModelUsage,
    OpaquePart,
    Retrieval,
    SourceInfo,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from agent_eval.ingest import ingest
from agent_eval.ingest._folding import PrefixFolder
from agent_eval.testing._otlp import export_request, span

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


def _bare(n: int, messages: tuple[Message, ...], **fields: Any) -> AgentTrace:
    """A one-trace conversation named after its trace, as assembly gives a bare call."""
    tid = trace_id(n)
    return AgentTrace(conversation_id=tid, trace_ids=(tid,), messages=messages,
                      source=SourceInfo(container="otlp-json", conventions=("genai",),
                                        files=("calls.jsonl",)), **fields)  # fmt: skip


def test_every_field_a_folded_trace_knew_is_kept_and_its_cut_short_note_dropped() -> None:
    ask, call = UserMessage(content="Weather?"), ToolCall(id="c1", name="weather")
    cut_short = f"span {sid(0, 2)} (trace {trace_id(0)}, calls.jsonl): the last LLM call ..."
    first = _bare(
        0,
        (ask, AssistantMessage(tool_calls=(call,), span_ids=(sid(0, 2),)),
         ToolMessage(content="18C", tool_call_id="c1", is_error=False,
                     parts=(OpaquePart(type="image", data={"url": "u"}),),
                     span_ids=(sid(0, 3),))),
        retrievals=(Retrieval(after_message=1, span_id=sid(0, 1)),),
        notes=("tool result at message 2 paired by order", cut_short),
        reference_tool_calls=(call,), labels={"success": 1},
        final_reply_missing=sid(0, 2),
    )  # fmt: skip
    second = _bare(
        1,
        (ask, AssistantMessage(tool_calls=(call,), span_ids=(sid(1, 2),)),
         ToolMessage(content="18C", tool_call_id="c1", span_ids=(sid(1, 2),)),
         AssistantMessage(content="18C.", span_ids=(sid(1, 2),))),
        retrievals=(Retrieval(after_message=0, span_id=sid(1, 1)),
                    Retrieval(after_message=3, span_id=sid(1, 4))),
        notes=("own note",), metadata={"task": "t"},
    )  # fmt: skip
    folder = PrefixFolder()
    folder.add(first)
    folder.add(second)
    [(trace, folded)] = folder.drain()
    assert folded == [first]
    assert [r.span_id for r in trace.retrievals] == [sid(1, 1), sid(0, 1), sid(1, 4)]
    tool = trace.messages[2]
    assert isinstance(tool, ToolMessage)
    assert (tool.is_error, tool.parts, tool.span_ids) == (False, first.messages[2].parts,
                                                          (sid(0, 3), sid(1, 2)))  # fmt: skip
    assert trace.notes[0] == "own note" and trace.notes[2:] == (
        "tool result at message 2 paired by order",
    )  # the cut-short note is not kept: the replay has the reply
    assert (trace.reference_tool_calls, trace.labels, trace.metadata) == (
        (call,), {"success": 1}, {"task": "t"},
    )  # fmt: skip
    assert trace.final_reply_missing is None


def test_identical_unanswered_first_calls_of_two_users_go_one_to_each() -> None:
    """Two users, the same first question, neither reply recorded: each keeps one first call."""
    ask = UserMessage(content="Weather in Paris?")
    calls = [_bare(n, (ask,), usage=(ModelUsage(model="m", output_tokens=7, calls=1),))
             for n in range(2)]  # fmt: skip
    answer = AssistantMessage(content="Sunny.")
    later = [_bare(2 + n, (ask, answer, UserMessage(content=f"And {city}?")),
                   usage=(ModelUsage(model="m", output_tokens=5, calls=1),))
             for n, city in enumerate(("Rome", "Oslo"))]  # fmt: skip
    folder = PrefixFolder()
    for one in calls:
        folder.add(one, unanswered=True)
    for one in later:
        folder.add(one)
    drained = folder.drain()
    assert [(t.trace_ids, t.usage[0].calls, t.usage[0].output_tokens) for t, _ in drained] == [
        ((trace_id(0), trace_id(2)), 2, 12), ((trace_id(1), trace_id(3)), 2, 12),
    ]  # fmt: skip
    assert folder.unanswered_left == []
    alone = PrefixFolder()
    alone.add(calls[0], unanswered=True)
    assert (alone.drain(), alone.unanswered_left) == ([], [calls[0]])
