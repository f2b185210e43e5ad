"""LlamaIndex ``CondensePlusContextChatEngine`` turns under OpenInference (trial9 #1, #3).

The spans are recorded through a real ``TracerProvider``, shaped like
openinference-instrumentation-llama-index 4.6 writes them (llama-index-core 0.14): per
``engine.chat`` a root CHAIN span (``input.value`` ``{"message": ...}``, ``output.value``
``{"response": ...}``), from the second turn on a condense-question call first (an
``OpenAI.complete`` LLM span sent ``llm.prompts``, its reply the standalone question in
``output.value``, no ``llm.output_messages``), a RETRIEVER span, then the chat call
(``OpenAI.chat``, flattened input and output messages, under an ``OpenAI.predict`` LLM span
without usage). A question the retriever
finds nothing for makes no chat call: LlamaIndex answers "Empty Response" itself.

#1: the last turn's condense call was taken for the final reply (output tokens, no output
messages): ``final_reply_missing`` was set and the previous turn's answer, a hallucination, was
skipped by every judge metric. #3: the turn answered without an LLM call vanished without a note
(with a session id), or its trace was skipped with the advice to turn content capture on, which
was on.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Tracer
from typer.testing import CliRunner

from agent_eval._trace import AgentTrace
from agent_eval.cli import app
from agent_eval.ingest._sdk import install
from agent_eval.ingest._spans import SpanRecord
from agent_eval.ingest.conventions._openinference import OpenInferenceConvention
from agent_eval.run._store import load_results
from agent_eval.testing import ClaimScript, FakeModelServer

SCOPE = "openinference.instrumentation.llama_index"
KIND = "openinference.span.kind"
JSON = "application/json"
REDACTED = "__REDACTED__"
SYSTEM = "You are the shop's support assistant. Context:\n{context}"
DOCS = {
    "returns-policy": "Returns are accepted within 14 calendar days of receipt.",
    "shipping-policy": "We ship to the EU and the UK only. Shipping takes 3-5 business days.",
}
TURNS: list[tuple[str, tuple[str, ...], str]] = [
    ("Can I return the kettle?", ("returns-policy",), "You can return it within 14 days."),
    (
        "Do you ship to Mars?",
        ("shipping-policy",),
        "Yes, we ship to Mars within 3-5 business days, and shipping is free.",
    ),
    ("Is the sky green on Tuesdays?", (), "Empty Response"),
]
"""(question, ids the retriever returns, answer); the last retrieves nothing: no chat call."""
runner = CliRunner()


def _engine_chat(
    tracer: Tracer,
    question: str,
    found: Sequence[str],
    answer: str,
    history: list[tuple[str, str]],
    session: str | None,
    *,
    reply_recorded: bool = True,
    response_key: str = "response",
    inner_retrieve: bool = False,
) -> None:
    """One ``CondensePlusContextChatEngine.chat`` call as the instrumentation records it."""
    common = {"session.id": session} if session else {}
    reply = json.dumps({response_key: answer, "sources": []})
    root = {KIND: "CHAIN", "input.value": json.dumps({"message": question}),
            "input.mime_type": JSON, "output.mime_type": JSON, "output.value": reply,
            **common}  # fmt: skip
    with tracer.start_as_current_span("CondensePlusContextChatEngine.chat", attributes=root):
        if history:
            prompt = f"Given the conversation {history!r}, rephrase: {question}"
            condense = {KIND: "LLM", "llm.model_name": "gpt-4o-mini", "llm.prompts": [prompt],
                        "input.value": json.dumps({"args": [prompt]}), "input.mime_type": JSON,
                        "output.value": question, "llm.token_count.prompt": 79,
                        "llm.token_count.completion": 7, **common}  # fmt: skip
            with tracer.start_as_current_span("OpenAI.complete", attributes=condense):
                pass
        retrieved = {KIND: "RETRIEVER", "input.value": question, "output.mime_type": JSON,
                     "output.value": json.dumps([f"<NodeWithScore({i})>" for i in found]),
                     **common}  # fmt: skip
        for n, doc in enumerate(found):
            retrieved |= {f"retrieval.documents.{n}.document.id": doc,
                          f"retrieval.documents.{n}.document.content": DOCS[doc],
                          f"retrieval.documents.{n}.document.score": 1.0}  # fmt: skip
        with tracer.start_as_current_span("KeywordRetriever.retrieve", attributes=retrieved):
            if inner_retrieve:  # the retriever's own _retrieve: no documents, the same output
                inner = {KIND: "RETRIEVER", "input.value": json.dumps({"qb": {"query_str":
                         question}}), "input.mime_type": JSON, "output.mime_type": JSON,
                         "output.value": retrieved["output.value"], **common}  # fmt: skip
                with tracer.start_as_current_span("KeywordRetriever._retrieve", attributes=inner):
                    pass
        synth = {KIND: "CHAIN", "input.value": question, "output.value": answer, **common}
        with tracer.start_as_current_span("CompactAndRefine.synthesize", attributes=synth):
            if found:
                _chat_call(tracer, question, found, answer, history, common, reply_recorded)
    history.append((question, answer))


def _chat_call(
    tracer: Tracer,
    question: str,
    found: Sequence[str],
    answer: str,
    history: list[tuple[str, str]],
    common: dict[str, str],
    reply_recorded: bool,
) -> None:
    context = "\n".join(DOCS[d] for d in found)
    turns = [("system", SYSTEM.format(context=context))]
    turns += [m for q, a in history for m in (("user", q), ("assistant", a))]
    turns.append(("user", question))
    chat = {KIND: "LLM", "llm.model_name": "gpt-4o-mini", "llm.token_count.prompt": 131,
            "llm.token_count.completion": 15, **common}  # fmt: skip
    for n, (role, text) in enumerate(turns):
        chat |= {f"llm.input_messages.{n}.message.role": role,
                 f"llm.input_messages.{n}.message.content": text}  # fmt: skip
    if reply_recorded:
        chat |= {"llm.output_messages.0.message.role": "assistant",
                 "llm.output_messages.0.message.content": answer,
                 "output.value": f"assistant: {answer}"}  # fmt: skip
    predict = {KIND: "LLM", "llm.model_name": "gpt-4o-mini", "output.value": answer, **common}
    with (
        tracer.start_as_current_span("OpenAI.predict", attributes=predict),
        tracer.start_as_current_span("OpenAI.chat", attributes=chat),
    ):
        pass


def _record(tracer: Tracer, session: str | None, **last_turn: object) -> None:
    history: list[tuple[str, str]] = []
    for n, (question, found, answer) in enumerate(TURNS):
        extra = last_turn if n == len(TURNS) - 1 else {}
        _engine_chat(tracer, question, found, answer, history, session, inner_retrieve=True,
                     **extra)  # type: ignore[arg-type]  # fmt: skip


@pytest.fixture
def provider() -> Iterator[TracerProvider]:
    sdk = TracerProvider()
    yield sdk
    sdk.shutdown()


def _texts(trace: AgentTrace) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in trace.messages if m.role != "system"]


def test_a_condense_call_after_the_last_answer_is_not_the_missing_final_reply(
    provider: TracerProvider,
) -> None:
    collector = install(provider)
    _record(provider.get_tracer(SCOPE), "sess-42")
    run = collector.traces()
    (trace,) = list(run)
    assert trace.final_reply_missing is None
    assert not any("final reply" in n for n in trace.notes)
    assert _texts(trace) == [
        ("user", "Can I return the kettle?"),
        ("assistant", "You can return it within 14 days."),
        ("user", "Do you ship to Mars?"),
        ("assistant", "Yes, we ship to Mars within 3-5 business days, and shipping is free."),
        ("user", "Is the sky green on Tuesdays?"),
        ("assistant", "Empty Response"),
    ]
    # the condense calls add no message but count as calls: 2 chat + 2 condense
    (usage,) = trace.usage
    assert (usage.calls, usage.input_tokens, usage.output_tokens) == (4, 2 * 131 + 2 * 79, 44)
    # each answered turn keeps its own passages, placed before its answer; the retriever that
    # returned nothing (trial10 N1) is a retrieval with no documents, placed after its question
    placed = [(r.after_message, [d.id for d in r.documents]) for r in trace.retrievals]
    answers = [i for i, m in enumerate(trace.messages) if m.role == "assistant"]
    assert placed == [
        (answers[0], ["returns-policy"]),
        (answers[1], ["shipping-policy"]),
        (answers[2], []),
    ]
    empty = trace.retrievals[-1]
    assert empty.query == "Is the sky green on Tuesdays?"
    assert empty.span_id is not None
    assert empty.span_id not in {r.span_id for r in trace.retrievals[:2]}
    # LlamaIndex's inner _retrieve spans: two with a result list say nothing (no documents),
    # the empty one beneath the empty retrieve repeats it
    assert run.report.spans_ignored["duplicate_of_parent_retrieval"] == 1
    (note,) = [n for n in trace.notes if "without an LLM call" in n]
    root = trace.messages[-1].span_ids[0]
    assert note.startswith(f"span {root} ('CondensePlusContextChatEngine.chat', trace ")
    assert note.endswith("input.value and output.value")  # grouped by its session id
    assert run.report.spans_read == run.report.spans_used + sum(run.report.spans_ignored.values())


def test_a_chat_call_without_its_reply_is_still_marked_before_a_later_condense_call(
    provider: TracerProvider,
) -> None:
    """Only the call whose reply is the final assistant message decides the mark."""
    collector = install(provider)
    tracer = provider.get_tracer(SCOPE)
    history: list[tuple[str, str]] = []
    for n, (question, found, answer) in enumerate(TURNS[:2]):
        _engine_chat(tracer, question, found, answer, history, "s", reply_recorded=n == 0)
    # a third turn's condense call, then a root span whose output is not read as a reply
    _engine_chat(tracer, "And to Venus?", (), "Empty Response", history, "s", response_key="x")
    (trace,) = list(collector.traces())
    assert _texts(trace) == [("user", TURNS[0][0]), ("assistant", TURNS[0][2]),
                             ("user", TURNS[1][0])]  # fmt: skip
    chat_span = trace.messages[-1].span_ids[0]  # the Mars question: the chat call that lost it
    assert trace.final_reply_missing == chat_span
    (note,) = [n for n in trace.notes if "final reply" in n]
    assert note.startswith(f"span {chat_span} ")
    assert "recorded 15 output token(s) but no output content" in note


def test_completions_call_output_is_read_as_its_completion() -> None:
    convention = OpenInferenceConvention()
    base = {KIND: "LLM", "llm.prompts": ["Rephrase: ship to Mars?"],
            "llm.token_count.completion": 6}  # fmt: skip
    plain = SpanRecord(trace_id="t", span_id="s", name="OpenAI.complete",
                       attributes=base | {"output.value": "Do you ship to Mars?"})  # fmt: skip
    extraction = convention.extract(plain)
    assert extraction.completion == "Do you ship to Mars?"
    assert extraction.output_messages == () and extraction.input_messages == ()
    body = json.dumps({"object": "text_completion", "choices": [{"text": "Mars?", "index": 0}]})
    as_json = SpanRecord(trace_id="t", span_id="s", name="completion",
                         attributes=base | {"output.value": body,
                                            "output.mime_type": JSON})  # fmt: skip
    assert convention.extract(as_json).completion == "Mars?"
    chat = SpanRecord(trace_id="t", span_id="s", name="OpenAI.predict",
                      attributes={KIND: "LLM", "output.value": "text"})  # fmt: skip
    assert convention.extract(chat).completion is None  # no llm.prompts: not a completions call


def test_a_trace_answered_without_an_llm_call_is_its_turn_not_a_capture_hint(
    provider: TracerProvider,
) -> None:
    """Without a session id each engine.chat is a trace; the last one made no chat call."""
    collector = install(provider)
    _record(provider.get_tracer(SCOPE), None)
    run = collector.traces()
    last = next(t for t in run if _texts(t)[0] == ("user", "Is the sky green on Tuesdays?"))
    assert _texts(last) == [
        ("user", "Is the sky green on Tuesdays?"),
        ("assistant", "Empty Response"),
    ]
    assert last.final_reply_missing is None
    (note,) = [n for n in last.notes if "turn answered without an LLM call" in n]
    assert note.endswith("so it is a conversation of its own: set one (openinference "
                         "using_session, or gen_ai.conversation.id)")  # fmt: skip
    assert not [s for s in run.report.skipped if s.reason == "no_message_content"]


def test_a_turn_whose_root_span_does_not_read_as_a_reply_says_what_is_missing(
    provider: TracerProvider,
) -> None:
    collector = install(provider)
    history = [("Can I return the kettle?", "You can return it within 14 days.")]
    _engine_chat(provider.get_tracer(SCOPE), "Is the sky green?", (), "Empty Response", history,
                 None, response_key="result")  # fmt: skip
    run = collector.traces()
    assert list(run) == []
    (skipped,) = run.report.skipped
    assert skipped.reason == "no_message_content"
    assert "turn content capture on" not in skipped.detail  # capture was on
    assert "content capture is on (span " in skipped.detail
    assert "its 1 LLM call(s) were completions-API calls sent prompts (llm.prompts: " in (
        skipped.detail
    )
    assert sum(run.report.spans_ignored.values()) == run.report.spans_read == 4


def test_hidden_values_are_no_turn_and_the_hint_says_they_were_hidden(
    provider: TracerProvider,
) -> None:
    """OPENINFERENCE_HIDE_INPUTS/OUTPUTS: the root span's values are the marker, not a turn."""
    collector = install(provider)
    tracer = provider.get_tracer(SCOPE)
    hidden = {"input.value": REDACTED, "output.value": REDACTED}
    with tracer.start_as_current_span("CondensePlusContextChatEngine.chat",
                                      attributes={KIND: "CHAIN", **hidden}):  # fmt: skip
        condense = {KIND: "LLM", "llm.prompts": [REDACTED], "llm.token_count.completion": 7}
        with tracer.start_as_current_span("OpenAI.complete", attributes=condense | hidden):
            pass
    run = collector.traces()
    assert list(run) == []
    (skipped,) = run.report.skipped
    assert "turn answered" not in skipped.detail
    assert "the text was hidden by OpenInference" in skipped.detail
    assert sum(run.report.spans_ignored.values()) == run.report.spans_read == 2


def test_a_chat_call_with_its_content_left_out_keeps_the_root_span_out(
    provider: TracerProvider,
) -> None:
    """An LLM call ran (usage, no messages recorded): the turn was not answered without one."""
    collector = install(provider)
    tracer = provider.get_tracer(SCOPE)
    root = {KIND: "CHAIN", "input.value": "Can I return it?", "output.value": "Yes, in 14 days."}
    with tracer.start_as_current_span("CondensePlusContextChatEngine.chat", attributes=root):
        chat = {KIND: "LLM", "llm.model_name": "gpt-4o-mini", "llm.token_count.completion": 9}
        with tracer.start_as_current_span("OpenAI.chat", attributes=chat) as call:
            chat_span = format(call.get_span_context().span_id, "016x")
    run = collector.traces()
    assert list(run) == []
    (skipped,) = run.report.skipped
    assert skipped.reason == "no_message_content"
    assert "turn answered" not in skipped.detail
    assert f"its chat call(s) {chat_span} recorded usage and no messages" in skipped.detail
    assert "OPENINFERENCE_HIDE_INPUT_MESSAGES" in skipped.detail


def test_score_judges_the_answer_before_a_condense_call(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    """The hallucinated answer of trial9 #1 reaches faithfulness: 1 of 3 statements supported."""
    memory = InMemorySpanExporter()
    sdk = TracerProvider()
    sdk.add_span_processor(SimpleSpanProcessor(memory))
    _record(sdk.get_tracer(SCOPE), "sess-42")
    sdk.shutdown()
    spans = tmp_path / "rag.pb"
    spans.write_bytes(encode_spans(memory.get_finished_spans()).SerializeToString())
    mars = TURNS[1][2]
    ClaimScript(
        statements={
            mars: ["They ship to Mars.", "Shipping takes 3-5 business days.", "Shipping is free."],
            TURNS[0][2]: ["Returns are accepted within 14 days."],
        },
        labels={
            "Shipping takes 3-5 business days.": ("SUPPORTED", "3-5 business days"),
            "Returns are accepted within 14 days.": ("SUPPORTED", "within 14 calendar days"),
        },
    ).install(fake_server)
    args = ["score", str(spans), "--metric", "faithfulness", "--formatter", "transcript@1",
            "--judge", "m", "--base-url", fake_server.base_url,
            "--out", str(tmp_path / "run")]  # fmt: skip
    result = runner.invoke(app, args, env={"COLUMNS": "200"})
    rows = sorted(load_results(tmp_path / "run"), key=lambda r: int(r.unit_id.split(":")[1]))
    by_status = [(r.status, r.error_type, r.score) for r in rows]
    assert by_status == [
        ("ok", None, 1.0),
        ("ok", None, pytest.approx(1 / 3)),
        ("skipped", "no_context", None),  # "Empty Response": nothing was retrieved
    ], result.output
    assert "final_reply_missing" not in result.output
    # trial10 N1: the turn whose retriever returned nothing says so, and is a retrieval miss
    shown = runner.invoke(app, ["show", str(spans)], env={"COLUMNS": "120"})
    assert shown.exit_code == 0, shown.output
    assert "retrieval: Is the sky green on Tuesdays? (0 documents)" in shown.output
    assert "the retriever returned nothing" in shown.output
    rag = runner.invoke(app, ["rag", str(tmp_path / "run")], env={"COLUMNS": "200"})
    assert rag.exit_code == 0, rag.output
    assert rag.output.count("passages: none retrieved") == 1
    assert "retrieval failures: retrieval_miss: 1" in rag.output
    turns = json.loads(runner.invoke(app, ["rag", str(tmp_path / "run"), "--json"]).output)
    by_turn = {t["unit_id"]: t for t in turns["turns"]}
    assert [by_turn[f"turn:{n}"]["failures"] for n in (1, 2, 3)] == [
        [],
        ["hallucination"],
        ["retrieval_miss"],
    ]
