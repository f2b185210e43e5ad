"""A RAG chat engine without a session id: one conversation, each turn its passages (trial9 #2).

LlamaIndex's ``CondensePlusContextChatEngine`` instrumented by openinference
(``openinference.instrumentation.llama_index`` 4.6.1) records each ``engine.chat`` as a trace of
its own under a root CHAIN span when no ``using_session`` groups them: a condense-question call
(prompt-style LLM span, from turn 2 on), a RETRIEVER span, and the chat call, whose input
replays the whole history but starts with a new system message carrying that turn's retrieved
passages. Ingest gave one conversation per turn (each a prefix of the next) and ``score`` judged
the replayed turns again without their passages (phantom ``no_context`` skips). Spans mirror
the recorded shape, written as the Collector's OTLP JSON lines (:mod:`agent_eval.testing._otlp`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_eval.cli import app
from agent_eval.ingest import ingest
from agent_eval.run._artifacts import read_units
from agent_eval.run._store import load_results
from agent_eval.testing import ClaimScript, FakeModelServer
from agent_eval.testing._otlp import export_request, span

SCOPE = ("openinference.instrumentation.llama_index", "4.6.1")
DOCS = {
    "returns-policy": "Returns are accepted within 14 calendar days of receipt.",
    "warranty": "All kettles carry a 2-year limited warranty covering manufacturing defects.",
    "shipping-policy": "We ship to the EU and the UK only.",
}
TURNS = [  # question, condensed query, retrieved document ids, answer
    ("Can I return the kettle?", None, ["returns-policy"],
     "You can return it within 14 days, and return shipping is free."),
    ("What about the warranty?", "What is the warranty on the kettle?",
     ["returns-policy", "warranty"], "The kettle has a 2-year limited warranty."),
    ("Do you ship to Mars?", "Do you ship to Mars?", ["shipping-policy"],
     "Yes, we ship to Mars."),
]  # fmt: skip
STATEMENTS = {
    TURNS[0][3]: ["You can return the kettle within 14 days.", "Return shipping is free."],
    TURNS[1][3]: ["The kettle has a 2-year limited warranty."],
    TURNS[2][3]: ["The shop ships to Mars."],
}
LABELS = {
    "You can return the kettle within 14 days.": ("SUPPORTED", "within 14 calendar days"),
    "The kettle has a 2-year limited warranty.": ("SUPPORTED", "2-year limited warranty"),
    "The shop ships to Mars.": ("CONTRADICTED", "the EU and the UK only"),
}
runner = CliRunner()


def system_prompt(doc_ids: list[str]) -> str:
    passages = "\n\n".join(DOCS[d] for d in doc_ids)
    return (
        "\n  The following is a friendly conversation between a user and an AI assistant.\n"
        f"  Here are the relevant documents for the context:\n\n  {passages}\n\n"
        "  Instruction: Based on the above documents, provide a detailed answer.\n"
        "  You are the shop's support assistant."
    )


def trace_id(turn: int, prefix: str = "7") -> str:
    return f"{prefix}{turn:031x}"


def turn_spans(turn: int, system: str | None = None, *, prefix: str = "7") -> list[dict[str, Any]]:
    """Turn ``turn``'s spans (0-based), children first as the BatchSpanProcessor exports them."""
    question, condensed, doc_ids, answer = TURNS[turn]
    tid, start = trace_id(turn, prefix), 1_796_169_790_000_000_000 + turn * 1_000_000_000
    sid = [f"{prefix}{turn:x}{n:014x}" for n in range(4)]
    root, out = sid[0], []
    if condensed is not None:
        condense = {"openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini",
                    "llm.prompts": [f"Rephrase the follow up question: {question}"],
                    "output.value": condensed, "llm.token_count.prompt": 79,
                    "llm.token_count.completion": 8}  # fmt: skip
        out.append(span(tid, sid[1], "OpenAI.complete", parent_span_id=root, start=start + 1,
                        attributes=condense))  # fmt: skip
    query = condensed or question
    retrieval: dict[str, Any] = {"openinference.span.kind": "RETRIEVER", "input.value": query}
    for n, doc in enumerate(doc_ids):
        retrieval[f"retrieval.documents.{n}.document.id"] = doc
        retrieval[f"retrieval.documents.{n}.document.content"] = DOCS[doc]
        retrieval[f"retrieval.documents.{n}.document.score"] = 1.0
    out.append(span(tid, sid[2], "KeywordRetriever.retrieve", parent_span_id=root,
                    start=start + 2_000_000, attributes=retrieval))  # fmt: skip
    history = [("system", system or system_prompt(doc_ids))]
    for q, _, _, a in TURNS[:turn]:
        history += [("user", q), ("assistant", a)]
    history.append(("user", question))
    chat: dict[str, Any] = {
        "openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": answer,
        "llm.token_count.prompt": 100 + 50 * turn, "llm.token_count.completion": 15,
    }  # fmt: skip
    for n, (role, content) in enumerate(history):
        chat[f"llm.input_messages.{n}.message.role"] = role
        chat[f"llm.input_messages.{n}.message.content"] = content
    out.append(span(tid, sid[3], "OpenAI.chat", parent_span_id=root, start=start + 4_000_000,
                    attributes=chat))  # fmt: skip
    out.append(span(tid, root, "CondensePlusContextChatEngine.chat", start=start,
                    end=start + 9_000_000,
                    attributes={"openinference.span.kind": "CHAIN",
                                "input.value": json.dumps({"message": question}),
                                "output.value": json.dumps({"response": answer})}))  # fmt: skip
    return out


def write(path: Path, spans: list[dict[str, Any]]) -> Path:
    lines = [export_request([s], scope=SCOPE) for s in spans]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def chat_file(path: Path) -> Path:
    return write(path, [s for turn in range(3) for s in turn_spans(turn)])


def test_three_chat_traces_with_a_new_system_prompt_each_are_one_conversation(
    tmp_path: Path,
) -> None:
    run = ingest([chat_file(tmp_path / "rag.otlp.jsonl")])
    [trace] = list(run)
    assert run.report.conversations == 1
    assert trace.trace_ids == tuple(trace_id(n) for n in range(3))
    assert [m.role for m in trace.messages] == ["system", *["user", "assistant"] * 3]
    assert trace.messages[0].content == system_prompt(["shipping-policy"])  # the last call's
    assert trace.messages[0].span_ids == ("7200000000000003",)  # not the other prompts' spans
    assert trace.messages[1].span_ids == (
        "7000000000000003",
        "7100000000000003",
        "7200000000000003",
    )
    assert [m.content for m in trace.messages[2::2]] == [t[3] for t in TURNS]
    # each turn keeps its own retrieval, right before its answer
    assert [
        (r.after_message, r.span_id, [d.id for d in r.documents]) for r in trace.retrievals
    ] == [
        (2, "7000000000000002", ["returns-policy"]),
        (4, "7100000000000002", ["returns-policy", "warranty"]),
        (6, "7200000000000002", ["shipping-policy"]),
    ]
    [usage] = trace.usage  # 3 chat calls and 2 condense calls
    assert (usage.calls, usage.input_tokens, usage.output_tokens) == (5, 608, 61)
    [note] = [n for n in trace.notes if "except the system message" in n]
    assert f"trace(s) {trace_id(0)}, {trace_id(1)} were continued" in note
    assert "(message 1)" in note and "using_session" in note


def test_a_replay_that_changes_an_answer_is_not_folded(tmp_path: Path) -> None:
    turn2 = turn_spans(1)
    chat = next(s for s in turn2 if s["name"] == "OpenAI.chat")
    for attribute in chat["attributes"]:
        if attribute["key"] == "llm.input_messages.2.message.content":
            attribute["value"] = {"stringValue": "Returns are not accepted."}
    traces = list(ingest([write(tmp_path / "rag.otlp.jsonl", [*turn_spans(0), *turn2])]))
    assert [t.trace_ids for t in traces] == [(trace_id(0),), (trace_id(1),)]
    assert not any("except the system message" in n for t in traces for n in t.notes)


def test_a_call_keeping_its_own_system_prompt_wins_over_one_that_changed_it(
    tmp_path: Path,
) -> None:
    # two apps (system prompts "A" and "B") whose first turn is identical; app B's second turn
    # replays both first calls but keeps B's system prompt: it continues B's, A's stays apart
    first_a = turn_spans(0, "You are app A.", prefix="a")
    first_b = turn_spans(0, "You are app B.", prefix="b")
    second_b = turn_spans(1, "You are app B.", prefix="b")
    run = ingest([write(tmp_path / "two.otlp.jsonl", [*first_a, *first_b, *second_b])])
    traces = list(run)
    assert sorted(t.trace_ids for t in traces) == [
        (trace_id(0, "a"),),
        (trace_id(0, "b"), trace_id(1, "b")),
    ]
    [alone] = [t for t in traces if len(t.trace_ids) == 1]
    assert alone.messages[0].content == "You are app A."
    assert any("replayed whole by later conversation" in n for n in alone.notes)
    [both] = [t for t in traces if len(t.trace_ids) == 2]
    assert not any("except the system message" in n for n in both.notes)
    assert run.report.conversations == 2


@pytest.fixture
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "AGENT_EVAL_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    yield


@pytest.mark.usefixtures("_env")
def test_faithfulness_judges_each_turn_once_with_its_own_passages(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    ClaimScript(statements=STATEMENTS, labels=LABELS).install(fake_server)
    result = runner.invoke(app, [
        "score", str(chat_file(tmp_path / "rag.otlp.jsonl")), "--metric", "faithfulness",
        "--formatter", "transcript@1", "--judge", "fake-model", "--base-url",
        fake_server.base_url, "--no-cache", "--out", str(tmp_path / "out"),
    ])  # fmt: skip
    assert result.exit_code == 0, result.stderr
    rows = sorted(load_results(tmp_path / "out"), key=lambda r: r.unit_id)
    assert [(r.unit_id, r.status, r.score) for r in rows] == [
        ("turn:1", "ok", 0.5),
        ("turn:2", "ok", 1.0),
        ("turn:3", "ok", 0.0),
    ]
    assert {r.conversation_id for r in rows} == {trace_id(2)}
    assert "scored + skipped + errored = units: 3 + 0 + 0 = 3" in result.stdout
    units = read_units(tmp_path / "out")
    assert [
        [c["id"] for c in units[(trace_id(2), f"turn:{n}")]["contexts"]] for n in (1, 2, 3)
    ] == [
        ["returns-policy"],
        ["returns-policy", "warranty"],
        ["shipping-policy"],
    ]
    assert sum(r.schema_name == "Statements" for r in fake_server.requests) == 3
