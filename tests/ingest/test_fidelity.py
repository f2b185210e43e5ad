"""Ingest fidelity, one class of input per test (issue 19): each yields the exact conversation.

The recorded frameworks (Strands, smolagents, the Agents SDK, pydantic-ai, Traceloop, openai-v2)
are asserted message for message in ``test_fixtures.py``; these tests pin each class on the
smallest input that shows it, so a regression names its class.
"""

from __future__ import annotations

import json
from typing import Any

from agent_eval._trace import AgentTrace, AssistantMessage, ToolCall, ToolMessage, UserMessage
from agent_eval.ingest._accounting import FileReport, IngestReport
from agent_eval.ingest._assemble import Assembler
from agent_eval.ingest._spans import SourceLocation, SpanEvent, SpanRecord
from agent_eval.ingest.conventions._attachments import strip_inline_data
from agent_eval.ingest.conventions._genai import GenAIConvention
from agent_eval.ingest.conventions._openinference import OpenInferenceConvention

T1, T2, T3 = "a" * 32, "b" * 32, "c" * 32
IMAGE = "data:image/png;base64," + "iVBORw0KGgo" * 4000


def sid(n: int) -> str:
    return f"{n:016x}"


def span(n: int, attrs: dict[str, Any], *, start: int, trace: str = T1,
         parent: int | None = None, events: tuple[SpanEvent, ...] = (), name: str = "chat",
         line: int | None = None) -> SpanRecord:  # fmt: skip
    return SpanRecord(
        trace_id=trace, span_id=sid(n), parent_span_id=None if parent is None else sid(parent),
        name=name, start_time_unix_nano=start, end_time_unix_nano=start + 1, attributes=attrs,
        events=events, source=SourceLocation("in.jsonl", line),
    )  # fmt: skip


def assemble(*spans: SpanRecord) -> tuple[list[AgentTrace], IngestReport]:
    report = IngestReport()
    file = FileReport(path="in.jsonl", container="otlp-json")
    report.files.append(file)
    assembler = Assembler(report)
    for one in spans:
        file.spans_read += 1
        assembler.add_span(one, file)
    traces = list(assembler.finish())
    assert report.balanced, report.to_json()
    return traces, report


def text(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": content}]}


def chat(n: int, inputs: list[Any], outputs: list[Any], **kw: Any) -> SpanRecord:
    attrs = {"gen_ai.operation.name": "chat", "gen_ai.input.messages": json.dumps(inputs),
             "gen_ai.output.messages": json.dumps(outputs), **kw.pop("attrs", {})}  # fmt: skip
    return span(n, attrs, **kw)


def plain(messages: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for m in messages:
        if isinstance(m, AssistantMessage):
            calls = tuple((c.id, c.name, json.dumps(c.arguments)) for c in m.tool_calls or ())
            out.append((m.role, m.content, calls))
        elif isinstance(m, ToolMessage):
            out.append((m.role, m.content, m.tool_call_id))
        else:
            out.append((m.role, m.content))
    return out


# 3. session.id groups GenAI-convention spans -------------------------------------------------


def test_session_id_groups_genai_spans_over_traces() -> None:
    first = chat(1, [text("user", "hi")], [text("assistant", "hello")], start=1,
                 attrs={"session.id": "s-1"})  # fmt: skip
    second = chat(2, [text("user", "hi"), text("assistant", "hello"), text("user", "bye")],
                  [text("assistant", "ciao")], start=2, trace=T2,
                  attrs={"session.id": "s-1"})  # fmt: skip
    (trace,), _ = assemble(first, second)
    assert trace.conversation_id == "s-1" and trace.trace_ids == (T1, T2)
    assert [m.content for m in trace.messages] == ["hi", "hello", "bye", "ciao"]


def test_gen_ai_conversation_id_wins_over_session_id() -> None:
    attrs = {
        "gen_ai.conversation.id": "conv",
        "session.id": "sess",
        "gen_ai.operation.name": "chat",
    }
    assert GenAIConvention().extract(span(1, attrs, start=1)).conversation_id == "conv"


# 4. every operation.details event ---------------------------------------------------------------


def test_every_operation_details_event_is_read() -> None:
    event = "gen_ai.client.inference.operation.details"
    events = (
        SpanEvent(event, 1, {"gen_ai.system_instructions": json.dumps([{"type": "text",
                                                                         "content": "Be nice."}])}),
        SpanEvent(event, 2, {"gen_ai.input.messages": json.dumps([text("user", "Hi")])}),
        SpanEvent(event, 3, {"gen_ai.output.messages": json.dumps([text("assistant", "Hey")])}),
    )  # fmt: skip
    (trace,), _ = assemble(span(1, {"gen_ai.operation.name": "chat"}, start=1, events=events))
    assert plain(trace.messages) == [("system", "Be nice."), ("user", "Hi"),
                                     ("assistant", "Hey", ())]  # fmt: skip


# 5. gen_ai.choice with tool_calls beside message -------------------------------------------------


def test_choice_tool_calls_beside_message() -> None:
    calls = [{"id": "c1", "type": "function",
              "function": {"name": "lookup", "arguments": '{"q": "x"}'}}]  # fmt: skip
    events = (
        SpanEvent("gen_ai.user.message", 1, {"content": "Find x"}),
        SpanEvent("gen_ai.choice", 2, {"index": 0, "finish_reason": "tool_calls",
                                       "message": json.dumps({"content": None}),
                                       "tool_calls": json.dumps(calls)}),
    )  # fmt: skip
    ex = GenAIConvention().extract(span(1, {"gen_ai.operation.name": "chat"}, start=1,
                                            events=events))  # fmt: skip
    (out,) = ex.output_messages
    assert isinstance(out, AssistantMessage)
    assert out.tool_calls == (ToolCall(id="c1", name="lookup", arguments={"q": "x"}),)


def test_choice_message_as_plain_text() -> None:
    events = (SpanEvent("gen_ai.user.message", 1, {"content": "Hi"}),
              SpanEvent("gen_ai.choice", 2, {"message": "Hello there"}))  # fmt: skip
    ex = GenAIConvention().extract(span(1, {"gen_ai.operation.name": "chat"}, start=1,
                                            events=events))  # fmt: skip
    assert [m.content for m in ex.output_messages] == ["Hello there"]


# 6. parallel tool calls replayed in another order -----------------------------------------------


def test_parallel_results_replayed_out_of_order_appear_once_each() -> None:
    ask = text("user", "Weather in Paris and Rome?")
    calls = {"role": "assistant", "parts": [
        {"type": "tool_call", "id": "p", "name": "wx", "arguments": {"city": "Paris"}},
        {"type": "tool_call", "id": "r", "name": "wx", "arguments": {"city": "Rome"}}]}  # fmt: skip
    results = [
        {
            "role": "tool",
            "parts": [{"type": "tool_call_response", "id": i, "response": f"{i} sunny"}],
        }
        for i in ("r", "p")
    ]
    tool_runs = [
        span(10 + i, {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "wx",
                      "gen_ai.tool.call.id": cid, "gen_ai.tool.call.result": f"{cid} sunny"},
             start=2 + i, name="execute_tool wx")
        for i, cid in enumerate(("p", "r"))
    ]  # fmt: skip
    (trace,), _ = assemble(
        chat(1, [ask], [calls], start=1), *tool_runs,
        chat(2, [ask, calls, *results], [text("assistant", "Both sunny.")], start=5),
    )  # fmt: skip
    tools = [m for m in trace.messages if isinstance(m, ToolMessage)]
    assert sorted((m.tool_call_id, m.content) for m in tools) == [("p", "p sunny"),
                                                                  ("r", "r sunny")]  # fmt: skip
    assert trace.notes == ()


# 7. attachments never reach the judge as base64 text --------------------------------------------


def test_images_become_placeholders_in_every_path() -> None:
    openai_parts = [{"type": "text", "text": "What is this?"},
                    {"type": "image_url", "image_url": {"url": IMAGE}}]  # fmt: skip
    oi = {"openinference.span.kind": "LLM",
          "llm.input_messages.0.message.role": "user",
          "llm.input_messages.0.message.contents.0.message_content.type": "text",
          "llm.input_messages.0.message.contents.0.message_content.text": "What is this?",
          "llm.input_messages.0.message.contents.1.message_content.type": "image",
          "llm.input_messages.0.message.contents.1.message_content.image.image.url": IMAGE,
          "llm.output_messages.0.message.role": "assistant",
          "llm.output_messages.0.message.content": "A cat."}  # fmt: skip
    genai = chat(2, [{"role": "user", "content": openai_parts}], [text("assistant", "A cat.")],
                 start=1, trace=T2)  # fmt: skip
    for ex in (OpenInferenceConvention().extract(span(1, oi, start=1)),
               GenAIConvention().extract(genai)):  # fmt: skip
        (user,) = ex.input_messages
        assert isinstance(user, UserMessage) and user.content == "What is this?"
        (part,) = user.parts
        dumped = json.dumps(part.data)
        assert "iVBORw0KGgo" not in dumped and "chars omitted" in dumped and len(dumped) < 500


def test_strip_inline_data_keeps_structure() -> None:
    assert strip_inline_data({"format": "png", "source": {"bytes": b"\x89PNG" * 10}}) == {
        "format": "png", "source": {"bytes": "<40 bytes omitted>"},
    }  # fmt: skip
    assert strip_inline_data({"url": "https://example.com/cat.png"}) == {
        "url": "https://example.com/cat.png"
    }


# 9. an unknown role skips the message, not the span ---------------------------------------------


def test_unknown_role_leaves_out_that_message_with_a_note() -> None:
    attrs = {"openinference.span.kind": "LLM",
             "llm.input_messages.0.message.role": "user",
             "llm.input_messages.0.message.content": "Hi",
             "llm.input_messages.1.message.role": "critic",
             "llm.input_messages.1.message.content": "meh",
             "llm.output_messages.0.message.role": "assistant",
             "llm.output_messages.0.message.content": "Hello"}  # fmt: skip
    (trace,), report = assemble(span(1, attrs, start=1))
    assert plain(trace.messages) == [("user", "Hi"), ("assistant", "Hello", ())]
    assert any("critic" in note and "llm.input_messages.1" in note for note in trace.notes)
    assert report.spans_used == 1


def test_unknown_role_under_genai_leaves_out_that_message_with_a_note() -> None:
    inputs = [text("user", "Hi"), text("critic", "meh"), text("assistant", "Hello"),
              text("user", "Bye")]  # fmt: skip
    (trace,), report = assemble(chat(1, inputs, [text("assistant", "Ciao")], start=1))
    assert plain(trace.messages) == [("user", "Hi"), ("assistant", "Hello", ()), ("user", "Bye"),
                                     ("assistant", "Ciao", ())]  # fmt: skip
    assert any("critic" in n and "gen_ai.input.messages[1]" in n for n in trace.notes)
    assert report.spans_used == 1


# 10. a bare client: one trace per call ----------------------------------------------------------


def test_bare_client_calls_fold_into_the_call_that_replays_them() -> None:
    u1, a1 = text("user", "Hi"), text("assistant", "Hello")
    u2, a2 = text("user", "Bye"), text("assistant", "Ciao")
    other = chat(3, [text("user", "Unrelated")], [text("assistant", "Sure")], start=3, trace=T3)
    traces, report = assemble(
        chat(1, [u1], [a1], start=1, trace=T1), chat(2, [u1, a1, u2], [a2], start=2, trace=T2),
        other,
    )  # fmt: skip
    assert [(t.conversation_id, t.trace_ids) for t in traces] == [(T2, (T1, T2)), (T3, (T3,))]
    assert [m.content for m in traces[0].messages] == ["Hi", "Hello", "Bye", "Ciao"]
    assert any("folded in" in note for note in traces[0].notes)
    assert report.conversations == 2 and report.files[0].conversations == 2


# 11. usage only on the agent span ---------------------------------------------------------------


def test_usage_only_on_the_agent_span_is_counted_once() -> None:
    agent = span(1, {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "a",
                     "gen_ai.request.model": "m", "gen_ai.usage.input_tokens": 30,
                     "gen_ai.usage.output_tokens": 7}, start=0, name="invoke_agent a")  # fmt: skip
    inner = span(2, {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "b",
                     "gen_ai.request.model": "m", "gen_ai.usage.input_tokens": 10},
                 start=1, parent=1, name="invoke_agent b")  # fmt: skip
    calls = [chat(3 + i, [text("user", "Hi")], [text("assistant", f"r{i}")], start=2 + i,
                  parent=2) for i in range(2)]  # fmt: skip
    (trace,), _ = assemble(agent, inner, *calls)
    assert [(u.model, u.input_tokens, u.output_tokens, u.calls) for u in trace.usage] == [
        ("m", 30, 7, 2)
    ]
    assert any("usage taken from agent span" in note for note in trace.notes)


# 14/15. spans that are not a conversation; the guard -------------------------------------------


def test_create_agent_span_alone_is_no_conversation() -> None:
    attrs = {
        "gen_ai.operation.name": "create_agent",
        "gen_ai.agent.name": "a",
        "gen_ai.system_instructions": json.dumps([{"type": "text", "content": "Be nice."}]),
    }
    traces, report = assemble(span(1, attrs, start=1, name="create_agent a", line=7))
    assert traces == []
    (skipped,) = report.skipped
    assert (skipped.reason, str(skipped.source), skipped.trace_id, skipped.span_id) == (
        "no_message_content", "in.jsonl:7", T1, sid(1),
    )  # fmt: skip


def test_content_capture_off_is_skipped_with_how_to_turn_it_on() -> None:
    events = (SpanEvent("gen_ai.user.message", 1, {}),
              SpanEvent("gen_ai.choice", 2, {"index": 0, "finish_reason": "tool_calls",
                                             "message": json.dumps({"tool_calls": [
                                                 {"id": "c1", "type": "function",
                                                  "function": {"name": "lookup"}}]})}))  # fmt: skip
    traces, report = assemble(span(1, {"gen_ai.operation.name": "chat",
                                       "gen_ai.usage.input_tokens": 5}, start=1, events=events,
                                   line=3))  # fmt: skip
    assert traces == []
    (skipped,) = report.skipped
    assert skipped.reason == "no_message_content" and str(skipped.source) == "in.jsonl:3"
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true" in skipped.detail
    assert report.spans_ignored == {"no_message_content": 1}


# 13. tool-span wrappers unwrapped when no LLM input replays the result ------------------------


LC_TOOL_MESSAGE = {
    "lc": 1,
    "type": "constructor",
    "id": ["langchain", "schema", "messages", "ToolMessage"],
    "kwargs": {"content": "18C", "type": "tool", "name": "weather", "tool_call_id": "call_1",
               "status": "success"},
}  # fmt: skip


def traceloop_llm(n: int, *, start: int) -> SpanRecord:
    """A LangChain chat-model span as Traceloop's LangChain instrumentation writes it."""
    attrs = {"traceloop.span.kind": "task", "llm.request.type": "chat",
             "gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "Weather in Paris?",
             "gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.content": "",
             "gen_ai.completion.0.tool_calls.0.id": "call_1",
             "gen_ai.completion.0.tool_calls.0.name": "weather",
             "gen_ai.completion.0.tool_calls.0.arguments": '{"city": "Paris"}'}  # fmt: skip
    return span(n, attrs, start=start, parent=1, name="ChatOpenAI.chat")


def traceloop_tool(n: int, output: Any, *, start: int) -> SpanRecord:
    attrs = {"traceloop.span.kind": "tool", "traceloop.entity.name": "weather",
             "traceloop.entity.input": json.dumps({"inputs": "{'city': 'Paris'}",
                                                   "tags": None, "metadata": {},
                                                   "kwargs": {"city": "Paris"}}),
             "traceloop.entity.output": json.dumps(output)}  # fmt: skip
    return span(n, attrs, start=start, parent=1, name="weather.tool")


def test_langchain_tool_message_under_traceloop_is_unwrapped() -> None:
    for output in (
        {"output": LC_TOOL_MESSAGE, "kwargs": {"tags": [], "name": "weather"}},
        {"output": json.dumps({**LC_TOOL_MESSAGE["kwargs"], "additional_kwargs": {},  # type: ignore[dict-item]
                               "response_metadata": {}, "id": None, "artifact": None}),
         "kwargs": {}},
    ):  # fmt: skip
        root = span(1, {"traceloop.span.kind": "workflow", "traceloop.entity.name": "agent"},
                    start=0, name="agent.workflow")  # fmt: skip
        (trace,), _ = assemble(root, traceloop_llm(2, start=1), traceloop_tool(3, output, start=2))
        assert plain(trace.messages) == [
            ("user", "Weather in Paris?"),
            ("assistant", "", (("call_1", "weather", '{"city": "Paris"}'),)),
            ("tool", "18C", "call_1"),
        ]


def test_llama_index_tool_output_under_openinference_is_unwrapped() -> None:
    tool_output = {"blocks": [{"block_type": "text", "text": "18C"}], "tool_name": "weather",
                   "raw_input": {"args": [], "kwargs": {"city": "Paris"}}, "raw_output": "18C",
                   "is_error": False}  # fmt: skip
    llm = {"openinference.span.kind": "LLM",
           "llm.input_messages.0.message.role": "user",
           "llm.input_messages.0.message.content": "Weather in Paris?",
           "llm.output_messages.0.message.role": "assistant",
           "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_1",
           "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "weather",
           "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments":
               '{"city": "Paris"}'}  # fmt: skip
    tool = {"openinference.span.kind": "TOOL", "tool.name": "weather",
            "input.value": '{"city": "Paris"}',
            "output.value": json.dumps(tool_output)}  # fmt: skip
    root = span(1, {"openinference.span.kind": "AGENT"}, start=0, name="FunctionAgent.run")
    (trace,), _ = assemble(root, span(2, llm, start=1, parent=1), span(3, tool, start=2, parent=1))
    assert plain(trace.messages) == [
        ("user", "Weather in Paris?"),
        ("assistant", "", (("call_1", "weather", '{"city": "Paris"}'),)),
        ("tool", "18C", "call_1"),
    ]
