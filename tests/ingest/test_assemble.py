"""Assembly: grouping, ordering, transcript dedupe, tool pairing, agents, accounting."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_eval._trace import AgentTrace, AssistantMessage, ToolMessage
from agent_eval.ingest._accounting import FileReport, IngestReport
from agent_eval.ingest._assemble import Assembler
from agent_eval.ingest._spans import LogRecord, SpanEvent, SpanRecord

T1 = "a" * 32
T2 = "b" * 32


def sid(n: int) -> str:
    return f"{n:016x}"


# GenAI v1.37 messages ---------------------------------------------------------------------------


def sys(text: str) -> dict[str, Any]:
    return {"role": "system", "parts": [{"type": "text", "content": text}]}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"type": "text", "content": text}]}


def say(text: str) -> dict[str, Any]:
    return {"role": "assistant", "parts": [{"type": "text", "content": text}]}


def call(name: str, args: Any, call_id: str | None = None) -> dict[str, Any]:
    part: dict[str, Any] = {"type": "tool_call", "name": name, "arguments": args}
    if call_id is not None:
        part["id"] = call_id
    return {"role": "assistant", "parts": [part]}


def result(text: str, call_id: str | None = None) -> dict[str, Any]:
    part: dict[str, Any] = {"type": "tool_call_response", "response": text}
    if call_id is not None:
        part["id"] = call_id
    return {"role": "tool", "parts": [part]}


def llm(
    n: int,
    inputs: list[dict[str, Any]],
    outputs: list[dict[str, Any]],
    *,
    start: int,
    trace: str = T1,
    parent: int | None = None,
    **attrs: Any,
) -> SpanRecord:
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": json.dumps(inputs),
        "gen_ai.output.messages": json.dumps(outputs),
        **{k.replace("__", "."): v for k, v in attrs.items()},
    }
    return SpanRecord(
        trace_id=trace,
        span_id=sid(n),
        parent_span_id=None if parent is None else sid(parent),
        name="chat",
        start_time_unix_nano=start,
        end_time_unix_nano=start + 1,
        attributes=attributes,
    )


def plain(
    n: int, attrs: dict[str, Any], *, start: int, trace: str = T1, parent: int | None = None
) -> SpanRecord:
    return SpanRecord(
        trace_id=trace,
        span_id=sid(n),
        parent_span_id=None if parent is None else sid(parent),
        name=f"span{n}",
        start_time_unix_nano=start,
        attributes=attrs,
    )


def tool_span(
    n: int, name: str, call_id: str | None, result_text: str, *, start: int, **kw: Any
) -> SpanRecord:
    attrs = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.result": result_text,
    }
    if call_id is not None:
        attrs["gen_ai.tool.call.id"] = call_id
    return plain(n, attrs, start=start, **kw)


class Run:
    """Feeds an Assembler the way the pipeline does (reads counted on the file report)."""

    def __init__(self) -> None:
        self.report = IngestReport()
        self.file = FileReport(path="in.json", container="otlp-json")
        self.report.files.append(self.file)
        self.assembler = Assembler(self.report)

    def spans(self, *spans: SpanRecord) -> Run:
        for span in spans:
            self.file.spans_read += 1
            self.assembler.add_span(span, self.file)
        return self

    def logs(self, *logs: LogRecord) -> Run:
        for record in logs:
            self.file.logs_read += 1
            self.assembler.add_log(record, self.file)
        return self

    def finish(self) -> list[AgentTrace]:
        traces = list(self.assembler.finish())
        assert self.report.balanced, self.report.to_json()
        return traces


def transcript(trace: AgentTrace) -> list[tuple[str, str]]:
    out = []
    for m in trace.messages:
        text = m.content
        if isinstance(m, AssistantMessage) and m.tool_calls:
            text += "|" + ",".join(f"{c.name}:{c.id}" for c in m.tool_calls)
        if isinstance(m, ToolMessage):
            text += f"|{m.tool_call_id}:{m.tool_name}"
        out.append((m.role, text))
    return out


# Dedupe -----------------------------------------------------------------------------------------


def test_replayed_history_is_deduplicated_with_span_ids() -> None:
    h1 = [sys("S"), user("weather in Paris?")]
    o1 = [call("weather", {"city": "Paris"}, "c1")]
    h2 = [*h1, *o1, result("rainy", "c1")]
    o2 = [say("It is rainy.")]
    h3 = [*h2, *o2, user("thanks")]
    o3 = [say("You're welcome.")]
    run = Run().spans(llm(1, h1, o1, start=10), llm(2, h2, o2, start=20), llm(3, h3, o3, start=30))
    [trace] = run.finish()
    assert transcript(trace) == [
        ("system", "S"),
        ("user", "weather in Paris?"),
        ("assistant", "|weather:c1"),
        ("tool", "rainy|c1:weather"),
        ("assistant", "It is rainy."),
        ("user", "thanks"),
        ("assistant", "You're welcome."),
    ]
    assert trace.messages[0].span_ids == (sid(1), sid(2), sid(3))
    assert trace.messages[3].span_ids == (sid(2), sid(3))
    assert trace.messages[6].span_ids == (sid(3),)
    assert trace.conversation_id == T1
    assert trace.trace_ids == (T1,)
    assert run.report.spans_used == 3
    assert trace.notes == ()


def test_stateful_server_inputs_hold_only_new_messages() -> None:
    run = Run().spans(
        llm(1, [user("yes")], [call("book", {"id": 1}, "c1")], start=1),
        llm(2, [result("booked", "c1")], [say("Booked. Anything else?")], start=2),
        llm(3, [user("yes")], [say("What else?")], start=3),
    )
    [trace] = run.finish()
    assert transcript(trace) == [
        ("user", "yes"),
        ("assistant", "|book:c1"),
        ("tool", "booked|c1:book"),
        ("assistant", "Booked. Anything else?"),
        ("user", "yes"),
        ("assistant", "What else?"),
    ]


def test_tool_results_from_tool_spans_when_next_input_lacks_them() -> None:
    run = Run().spans(
        llm(1, [user("go")], [call("a", {}, "c1")], start=1),
        tool_span(2, "a", "c1", "A-out", start=2),
        llm(3, [user("go"), call("a", {}, "c1")], [say("done")], start=3),
    )
    [trace] = run.finish()
    assert transcript(trace) == [
        ("user", "go"),
        ("assistant", "|a:c1"),
        ("tool", "A-out|c1:a"),
        ("assistant", "done"),
    ]
    assert trace.messages[2].span_ids == (sid(2),)


def test_tool_span_result_not_duplicated_when_next_input_has_it() -> None:
    run = Run().spans(
        llm(1, [user("go")], [call("a", {}, "c1")], start=1),
        tool_span(2, "a", "c1", "A-out", start=2),
        llm(3, [user("go"), call("a", {}, "c1"), result("A-out", "c1")], [say("done")], start=3),
    )
    [trace] = run.finish()
    assert [m.role for m in trace.messages] == ["user", "assistant", "tool", "assistant"]
    assert trace.messages[2].span_ids == (sid(2), sid(3))


def test_tool_span_without_call_id_pairs_by_order_with_note() -> None:
    run = Run().spans(
        llm(1, [user("go")], [call("a", {"x": 1}, "c1")], start=1),
        tool_span(2, "a", None, "A-out", start=2),
    )
    [trace] = run.finish()
    assert transcript(trace)[-1] == ("tool", "A-out|c1:a")
    assert any("paired to call c1 by order" in n for n in trace.notes)


def test_pairing_by_id_and_by_order() -> None:
    inputs = [
        user("two things"),
        {
            "role": "assistant",
            "parts": [
                {"type": "tool_call", "name": "f", "arguments": {}},
                {"type": "tool_call", "name": "g", "arguments": {}, "id": "g1"},
            ],
        },
        result("G!", "g1"),
        result("F!"),
    ]
    [trace] = Run().spans(llm(1, inputs, [say("ok")], start=1)).finish()
    tools = [m for m in trace.messages if isinstance(m, ToolMessage)]
    assert (tools[0].tool_call_id, tools[0].tool_name) == ("g1", "g")
    assert (tools[1].tool_call_id, tools[1].tool_name) == (None, "f")
    assert any("paired by order with call 'f'" in n for n in trace.notes)


# Agents, conversations, ordering ------------------------------------------------------------------


def test_multi_agent_names_per_assistant_message() -> None:
    agent = {"gen_ai.operation.name": "invoke_agent"}
    run = Run().spans(
        plain(1, {**agent, "gen_ai.agent.name": "triage"}, start=1),
        llm(2, [user("refund please")], [call("handoff", {}, "h1")], start=2, parent=1),
        plain(3, {**agent, "gen_ai.agent.name": "refunds"}, start=3),
        llm(
            4,
            [
                sys("You do refunds."),
                user("refund please"),
                call("handoff", {}, "h1"),
                result("ok", "h1"),
            ],
            [say("Refund issued.")],
            start=4,
            parent=3,
        ),
    )
    [trace] = run.finish()
    assistants = [m for m in trace.messages if isinstance(m, AssistantMessage)]
    assert [a.agent_name for a in assistants] == ["triage", "refunds"]
    assert trace.agent_names == ("triage", "refunds")
    # the refunds agent's instructions stand where it takes over: after the handoff's result,
    # not between the handoff call and its result (trial7 #2)
    assert transcript(trace) == [
        ("user", "refund please"),
        ("assistant", "|handoff:h1"),
        ("tool", "ok|h1:handoff"),
        ("system", "You do refunds."),
        ("assistant", "Refund issued."),
    ]
    assert run.report.spans_used == 4


def test_conversation_spread_over_several_traces() -> None:
    conv = {"gen_ai__conversation__id": "conv-7"}
    run = Run().spans(
        llm(1, [user("hi")], [say("hello")], start=1, trace=T1, **conv),
        # no conversation id of its own: joins the conversation of its trace
        llm(2, [user("hi"), say("hello"), user("and?")], [say("more")], start=2, trace=T1),
        llm(
            3,
            [user("hi"), say("hello"), user("and?"), say("more"), user("bye")],
            [say("ciao")],
            start=10,
            trace=T2,
            **conv,
        ),
        llm(4, [user("other")], [say("thread")], start=5, trace="c" * 32),
    )
    traces = run.finish()
    assert [t.conversation_id for t in traces] == ["conv-7", "c" * 32]
    assert traces[0].trace_ids == (T1, T2)
    assert [m.content for m in traces[0].messages] == ["hi", "hello", "and?", "more", "bye", "ciao"]
    assert run.report.conversations == 2
    assert run.file.conversations == 2


def test_parent_cycles_and_orphans_are_noted_not_fatal() -> None:
    a = llm(1, [user("q")], [say("a")], start=1, parent=2)
    b = plain(
        2, {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "loop"}, start=1, parent=1
    )
    orphan = llm(3, [user("q"), say("a"), user("q2")], [say("a2")], start=5, parent=99)
    [trace] = Run().spans(a, b, orphan).finish()
    assert [m.content for m in trace.messages] == ["q", "a", "q2", "a2"]
    assert any("parent cycle" in n for n in trace.notes)
    assert any("orphan" in n and sid(99) in n for n in trace.notes)


def test_duplicate_framework_span_over_client_span_counted_once() -> None:
    msgs = [user("hi")], [say("hello")]
    framework = SpanRecord(
        trace_id=T1,
        span_id=sid(1),
        name="ChatOpenAI",
        start_time_unix_nano=1,
        attributes={
            "openinference.span.kind": "LLM",
            "llm.input_messages.0.message.role": "user",
            "llm.input_messages.0.message.content": "hi",
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.content": "hello",
            "llm.model_name": "gpt",
            "llm.token_count.prompt": 5,
        },
    )
    client = llm(
        2, *msgs, start=1, parent=1, gen_ai__request__model="gpt", gen_ai__usage__input_tokens=5
    )
    run = Run().spans(framework, client)
    [trace] = run.finish()
    assert [m.content for m in trace.messages] == ["hi", "hello"]
    assert trace.messages[0].span_ids == (sid(2),)
    assert [(u.model, u.input_tokens, u.calls) for u in trace.usage] == [("gpt", 5, 1)]
    assert run.report.spans_ignored == {"duplicate_of_child_llm_span": 1}


def test_two_conventions_on_one_span_give_each_message_once() -> None:
    span = llm(1, [user("hi")], [say("hello")], start=1)
    both = SpanRecord(
        trace_id=span.trace_id,
        span_id=span.span_id,
        attributes={
            **span.attributes,
            "openinference.span.kind": "LLM",
            "llm.input_messages.0.message.role": "user",
            "llm.input_messages.0.message.content": "hi",
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.content": "hello",
        },
    )
    run = Run().spans(both)
    [trace] = run.finish()
    assert [m.content for m in trace.messages] == ["hi", "hello"]
    assert trace.source.conventions == ("genai",)
    assert any("also matched convention 'openinference'" in n for n in trace.notes)
    assert run.report.spans_used == 1


# Logs, retrievals, usage, errors, accounting ------------------------------------------------------


def event_log(name: str, body: Any, span: int, t: int = 0, trace: str = T1) -> LogRecord:
    return LogRecord(
        event_name=name, trace_id=trace, span_id=sid(span), time_unix_nano=t, body=body
    )


def test_genai_log_records_join_before_and_after_their_span() -> None:
    span = plain(1, {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}, start=1)
    run = Run()
    run.logs(event_log("gen_ai.user.message", {"content": "hi"}, 1, t=1))
    run.spans(span)
    run.logs(
        event_log("gen_ai.choice", {"index": 0, "message": {"content": "hello"}}, 1, t=2),
        event_log("gen_ai.user.message", {"content": "lost"}, 42),  # no such span
        LogRecord(event_name="gen_ai.user.message", body={"content": "no ids"}),
        event_log("app.log", "just a log line", 1),
    )
    [trace] = run.finish()
    assert [m.content for m in trace.messages] == ["hi", "hello"]
    assert run.report.logs_used == 2
    assert run.report.logs_ignored == {
        "log_span_not_found": 1,
        "log_without_span_context": 1,
        "not_genai_event": 1,
    }
    assert trace.source.conventions == ("genai",)


def test_retrieval_attached_where_it_happened_and_usage_and_errors() -> None:
    retriever = plain(
        2,
        {
            "openinference.span.kind": "RETRIEVER",
            "input.value": "policy",
            "retrieval.documents.0.document.content": "30 days",
        },
        start=2,
    )
    failing = SpanRecord(
        trace_id=T1,
        span_id=sid(4),
        name="tool boom",
        start_time_unix_nano=4,
        status_code="ERROR",
        status_message="timeout",
        attributes={"error.type": "TimeoutError"},
        events=(
            SpanEvent("exception", 4, {"exception.type": "ValueError", "exception.message": "bad"}),
        ),
    )
    run = Run().spans(
        llm(
            1,
            [user("policy?")],
            [say("checking")],
            start=1,
            gen_ai__request__model="m1",
            gen_ai__usage__input_tokens=3,
            gen_ai__usage__output_tokens=1,
        ),
        retriever,
        llm(
            3,
            [user("policy?"), say("checking")],
            [say("30 days")],
            start=3,
            gen_ai__request__model="m1",
            gen_ai__usage__input_tokens=6,
            gen_ai__usage__output_tokens=2,
        ),
        failing,
        llm(
            5,
            [user("policy?"), say("checking"), say("30 days"), user("ok")],
            [say("bye")],
            start=5,
            gen_ai__response__model="m2",
            gen_ai__usage__input_tokens=9,
            gen_ai__usage__output_tokens=1,
        ),
    )
    [trace] = run.finish()
    [retrieval] = trace.retrievals
    assert (retrieval.after_message, retrieval.query, retrieval.span_id) == (2, "policy", sid(2))
    assert retrieval.documents[0].content == "30 days"
    assert [(u.model, u.input_tokens, u.output_tokens, u.calls) for u in trace.usage] == [
        ("m1", 9, 3, 2),
        ("m2", 9, 1, 1),
    ]
    assert [(e.span_id, e.error_type, e.message) for e in trace.errors] == [
        (sid(4), "ValueError", "bad")
    ]


def test_accounting_adds_up_with_reasons() -> None:
    run = Run().spans(
        llm(1, [user("hi")], [say("hello")], start=1),
        llm(1, [user("hi")], [say("hello")], start=1),  # same span twice
        plain(2, {"http.request.method": "POST", "url.full": "http://x"}, start=2),
        plain(3, {"db.system": "sqlite"}, start=3),
        plain(4, {"some.attr": 1}, start=4),
        plain(5, {"openinference.span.kind": "CHAIN", "input.value": "x"}, start=5),
        plain(6, {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": "lots"}, start=6),
        plain(
            7, {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 3}, start=7, trace=T2
        ),
    )
    traces = run.finish()
    assert len(traces) == 1
    assert run.report.spans_used == 1
    assert run.report.spans_ignored == {
        "duplicate_span": 1,
        "http_span": 1,
        "db_span": 1,
        "no_genai_content": 2,
        "invalid_span": 1,
        "no_message_content": 1,
    }
    skipped, no_content = run.report.skipped
    assert skipped.span_id == sid(6) and "lots" in skipped.detail
    # The usage-only conversation is skipped with its location and how to capture content.
    assert (no_content.reason, no_content.trace_id, no_content.span_id) == (
        "no_message_content", T2, sid(7),
    )  # fmt: skip
    assert no_content.source is not None and "CAPTURE_MESSAGE_CONTENT" in no_content.detail
    assert run.file.conventions == {"genai"}
    assert run.report.spans_read == 8


def test_assembler_is_reusable_after_finish() -> None:
    run = Run().spans(llm(1, [user("a")], [say("b")], start=1))
    assert len(run.finish()) == 1
    run.spans(llm(2, [user("c")], [say("d")], start=1, trace=T2))
    [trace] = run.finish()
    assert trace.trace_ids == (T2,)


def test_same_call_on_sibling_spans_is_one_call() -> None:
    # LangChain's ChatOpenAI span and the OpenAI client span are siblings under the agent span
    # when both instrumentations run; the call must appear, and be counted, once.
    inputs, outputs = [sys("S"), user("weather?")], [call("w", {"c": "P"}, "c1")]
    run = Run().spans(
        plain(1, {"gen_ai.operation.name": "invoke_agent"}, start=0),
        llm(
            2,
            inputs,
            outputs,
            start=1,
            parent=1,
            gen_ai__request__model="m",
            gen_ai__usage__input_tokens=5,
        ),
        llm(
            3,
            inputs,
            outputs,
            start=2,
            parent=1,
            gen_ai__request__model="m",
            gen_ai__usage__input_tokens=5,
        ),
        llm(4, [*inputs, *outputs, result("rain", "c1")], [say("Rain.")], start=3, parent=1),
    )
    [trace] = run.finish()
    assert transcript(trace) == [
        ("system", "S"),
        ("user", "weather?"),
        ("assistant", "|w:c1"),
        ("tool", "rain|c1:w"),
        ("assistant", "Rain."),
    ]
    assert trace.messages[1].span_ids == (sid(2), sid(3), sid(4))
    assert [(u.model, u.input_tokens, u.calls) for u in trace.usage] == [
        ("m", 5, 1),
    ]


def test_a_failing_conversation_is_skipped_with_a_reason_and_the_rest_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agent_eval.ingest import _assemble as assemble
    from agent_eval.ingest._conversation import ConversationBuilder

    class Broken(ConversationBuilder):
        def _trace(self) -> AgentTrace:
            if self.conversation.id == T1:
                raise RuntimeError("boom")
            return super()._trace()

    monkeypatch.setattr(assemble, "ConversationBuilder", Broken)
    run = Run().spans(
        llm(1, [user("a")], [say("b")], start=1),
        plain(2, {"http.request.method": "GET"}, start=2),
        llm(3, [user("c")], [say("d")], start=3, trace=T2),
    )
    [trace] = run.finish()
    assert trace.trace_ids == (T2,)
    assert run.report.spans_ignored == {"http_span": 1, "internal_error": 1}
    assert run.report.internal_errors == 1
    [skipped] = run.report.skipped
    assert "RuntimeError: boom" in skipped.detail and skipped.trace_id == T1


def test_retrieval_before_the_call_it_feeds_sits_after_that_calls_input() -> None:
    retriever = plain(
        2,
        {
            "openinference.span.kind": "RETRIEVER",
            "input.value": "refunds",
            "retrieval.documents.0.document.content": "30 days",
            "retrieval.documents.0.document.score": 0.5,
        },
        start=2,
    )
    run = Run().spans(
        llm(1, [user("hi")], [say("hello")], start=1),
        retriever,
        llm(3, [user("hi"), say("hello"), user("refunds?")], [say("30 days")], start=3),
    )
    [trace] = run.finish()
    [retrieval] = trace.retrievals
    assert retrieval.after_message == 3
    assert trace.messages[retrieval.after_message - 1].content == "refunds?"
    assert retrieval.documents[0].score == 0.5


def test_tool_span_before_any_recorded_output_then_the_replay_fills_the_call() -> None:
    run = Run().spans(
        llm(1, [user("go")], [], start=1),  # output not captured
        tool_span(2, "a", "c1", "A-out", start=2),
        llm(
            3,
            [
                user("go"),
                {
                    **call("a", {"x": 1}, "c1"),
                    "parts": [
                        {"type": "text", "content": "Let me run a."},
                        {"type": "tool_call", "name": "a", "arguments": {"x": 1}, "id": "c1"},
                    ],
                },
                result("A-out", "c1"),
            ],
            [say("done")],
            start=3,
        ),
    )
    [trace] = run.finish()
    assert transcript(trace) == [
        ("user", "go"),
        ("assistant", "Let me run a.|a:c1"),
        ("tool", "A-out|c1:a"),
        ("assistant", "done"),
    ]
    assert trace.messages[1].span_ids == (sid(2), sid(3))


def test_unreadable_log_records_are_counted_invalid_and_the_span_kept() -> None:
    span = llm(1, [user("hi")], [say("hello")], start=1)
    run = Run().spans(span, plain(2, {"gen_ai.operation.name": "chat"}, start=2))
    run.logs(
        event_log("gen_ai.user.message", {"role": "narrator", "content": "x"}, 2),
        event_log("gen_ai.user.message", {"content": "dup"}, 1),  # span 1 has its own messages
        event_log("gen_ai.user.message", {}, 2, t=5),  # no content captured
    )
    [trace] = run.finish()
    assert [m.content for m in trace.messages] == ["hi", "hello"]
    assert run.report.logs_ignored == {"invalid_log": 2, "duplicate_of_span_messages": 1}
    assert run.report.spans_ignored == {"no_genai_content": 1}


def test_two_sessions_in_one_trace_split_by_nearest_ancestor() -> None:
    session = "openinference.span.kind"
    run = Run().spans(
        plain(1, {session: "AGENT", "session.id": "s-1", "agent.name": "a"}, start=1),
        llm(2, [user("first")], [say("one")], start=2, parent=1),
        plain(3, {session: "AGENT", "session.id": "s-2", "agent.name": "b"}, start=3),
        llm(4, [user("second")], [say("two")], start=4, parent=3),
    )
    traces = run.finish()
    assert [(t.conversation_id, [m.content for m in t.messages]) for t in traces] == [
        ("s-1", ["first", "one"]),
        ("s-2", ["second", "two"]),
    ]
    assert [t.agent_names for t in traces] == [("a",), ("b",)]
