"""OTel GenAI convention: v1.26 events, v1.28-1.36 message events/logs, v1.37 JSON attributes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_eval._trace import (
    AssistantMessage,
    OpaquePart,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from agent_eval.errors import InvalidSpanError
from agent_eval.ingest._spans import LogRecord, SpanEvent, SpanRecord
from agent_eval.ingest.conventions._genai import GenAIConvention

TRACE = "0af7651916cd43dd8448eb211c80319c"
SPAN = "b7ad6b7169203331"
genai = GenAIConvention()


def make_span(attrs: dict[str, Any], events: tuple[SpanEvent, ...] = ()) -> SpanRecord:
    return SpanRecord(trace_id=TRACE, span_id=SPAN, name="chat m", attributes=attrs, events=events)


def log(name: str, body: Any, t: int = 0) -> LogRecord:
    return LogRecord(event_name=name, trace_id=TRACE, span_id=SPAN, time_unix_nano=t, body=body)


def test_v137_messages_parts_and_system_instructions() -> None:
    inputs = [
        {"role": "user", "parts": [{"type": "text", "content": "Book a flight"}]},
        {
            "role": "assistant",
            "parts": [
                {"type": "reasoning", "content": "need the date"},
                {"type": "tool_call", "id": "c1", "name": "search", "arguments": {"to": "SFO"}},
                {"type": "tool_call", "id": "c2", "name": "broken", "arguments": "{not json"},
            ],
        },
        {
            "role": "tool",
            "parts": [{"type": "tool_call_response", "id": "c1", "response": {"n": 2}}],
        },
        {
            "role": "user",
            "parts": [{"type": "blob", "modality": "image", "mime_type": "image/png"}],
        },
    ]
    outputs = [
        {
            "role": "assistant",
            "parts": [{"type": "text", "content": "Done"}],
            "finish_reason": "stop",
        }
    ]
    span = make_span(
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.system_instructions": json.dumps([{"type": "text", "content": "Be brief."}]),
            "gen_ai.input.messages": json.dumps(inputs),
            "gen_ai.output.messages": json.dumps(outputs),
            "gen_ai.request.model": "gpt-4o",
            "gen_ai.response.model": "gpt-4o-2024-08-06",
            "gen_ai.usage.input_tokens": 10,
            "gen_ai.usage.output_tokens": 3,
            "gen_ai.conversation.id": "conv-1",
            "gen_ai.agent.name": "booker",
        }
    )
    assert genai.detect(span)
    ex = genai.extract(span)
    assert ex.kind == "llm"
    assert ex.input_messages == (
        SystemMessage(content="Be brief."),
        UserMessage(content="Book a flight"),
        AssistantMessage(
            reasoning="need the date",
            tool_calls=(
                ToolCall(id="c1", name="search", arguments={"to": "SFO"}),
                ToolCall(id="c2", name="broken", arguments=None, raw_arguments="{not json"),
            ),
        ),
        ToolMessage(content='{"n":2}', tool_call_id="c1"),
        UserMessage(
            parts=(
                OpaquePart(
                    type="blob",
                    data={"type": "blob", "modality": "image", "mime_type": "image/png"},
                ),
            )
        ),
    )
    assert ex.output_messages == (AssistantMessage(content="Done"),)
    assert (ex.model, ex.input_tokens, ex.output_tokens) == ("gpt-4o-2024-08-06", 10, 3)
    assert (ex.conversation_id, ex.agent_name) == ("conv-1", "booker")


def test_v126_prompt_and_completion_span_events() -> None:
    prompt = [{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"}]
    completion = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "x", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}
            ],
        }
    ]
    span = make_span(
        {
            "gen_ai.system": "openai",
            "gen_ai.usage.prompt_tokens": 7,
            "gen_ai.usage.completion_tokens": 2,
        },
        events=(
            SpanEvent("gen_ai.content.prompt", 1, {"gen_ai.prompt": json.dumps(prompt)}),
            SpanEvent(
                "gen_ai.content.completion", 2, {"gen_ai.completion": json.dumps(completion)}
            ),
        ),
    )
    ex = genai.extract(span)
    assert ex.kind == "llm"
    assert [m.role for m in ex.input_messages] == ["system", "user"]
    assert ex.output_messages == (
        AssistantMessage(tool_calls=(ToolCall(id="x", name="f", arguments={"a": 1}),)),
    )
    assert (ex.input_tokens, ex.output_tokens) == (7, 2)


def test_v128_message_events_as_log_records() -> None:
    logs = [
        log("gen_ai.system.message", {"content": "sys"}, 1),
        log("gen_ai.user.message", {"content": "weather?"}, 1),
        log(
            "gen_ai.assistant.message",
            {
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "w", "arguments": {"c": "P"}},
                    }
                ]
            },
            1,
        ),
        log("gen_ai.tool.message", {"content": "rainy", "id": "c1"}, 1),
        log(
            "gen_ai.choice",
            {"index": 1, "finish_reason": "stop", "message": {"content": "second"}},
            2,
        ),
        log(
            "gen_ai.choice",
            {"index": 0, "finish_reason": "stop", "message": {"content": "It rains"}},
            2,
        ),
    ]
    span = make_span({"gen_ai.operation.name": "chat", "gen_ai.system": "openai"})
    ex = genai.extract(span, logs)
    assert ex.input_messages == (
        SystemMessage(content="sys"),
        UserMessage(content="weather?"),
        AssistantMessage(tool_calls=(ToolCall(id="c1", name="w", arguments={"c": "P"}),)),
        ToolMessage(content="rainy", tool_call_id="c1"),
    )
    assert ex.output_messages == (AssistantMessage(content="It rains"),)


def test_v128_events_as_span_events_and_content_capture_off() -> None:
    events = (
        SpanEvent("gen_ai.user.message", 1, {"content": "hello"}),
        SpanEvent("gen_ai.user.message", 1, {}),  # content not captured: dropped
        SpanEvent("gen_ai.choice", 2, {"index": 0, "message": json.dumps({"content": "hi!"})}),
    )
    ex = genai.extract(make_span({"gen_ai.operation.name": "chat"}, events))
    assert ex.input_messages == (UserMessage(content="hello"),)
    assert ex.output_messages == (AssistantMessage(content="hi!"),)


def test_execute_tool_span() -> None:
    span = make_span(
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "get_weather",
            "gen_ai.tool.call.id": "call_9",
            "gen_ai.tool.call.arguments": '{"city": "Paris"}',
            "gen_ai.tool.call.result": "sunny",
        }
    )
    ex = genai.extract(span)
    assert ex.kind == "tool"
    assert ex.tool is not None
    assert (ex.tool.name, ex.tool.call_id, ex.tool.arguments, ex.tool.result) == (
        "get_weather",
        "call_9",
        {"city": "Paris"},
        "sunny",
    )


def test_execute_tool_invalid_arguments_kept_verbatim() -> None:
    span = make_span(
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "t",
            "gen_ai.tool.call.arguments": "a=1",
        }
    )
    tool = genai.extract(span).tool
    assert tool is not None
    assert (tool.arguments, tool.raw_arguments, tool.result) == (None, "a=1", None)


def test_invoke_agent_span_and_empty_reason() -> None:
    ex = genai.extract(
        make_span({"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "triage"})
    )
    assert (ex.kind, ex.agent_name) == ("agent", "triage")
    assert ex.is_empty
    assert ex.ignored_reason == "no_genai_content"


def test_detect_ignores_other_spans() -> None:
    assert not genai.detect(make_span({"http.request.method": "GET"}))
    assert genai.detect(make_span({}, events=(SpanEvent("gen_ai.user.message", 0, {}),)))


def test_bad_token_count_raises_invalid_span() -> None:
    with pytest.raises(InvalidSpanError, match=r"gen_ai.usage.input_tokens.*'many'") as info:
        genai.extract(
            make_span({"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": "many"})
        )
    assert info.value.span_id == SPAN


def test_unknown_role_leaves_out_only_that_message_with_a_note() -> None:
    """Issue 19, item 9: an unknown role once rejected the whole span (InvalidSpanError)."""
    inputs = json.dumps([
        {"role": "user", "parts": [{"type": "text", "content": "Hi"}]},
        {"role": "narrator", "parts": [{"type": "text", "content": "Meanwhile..."}]},
    ])  # fmt: skip
    outputs = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": "Hey"}]}])
    ex = genai.extract(make_span({"gen_ai.operation.name": "chat",
                                  "gen_ai.input.messages": inputs,
                                  "gen_ai.output.messages": outputs}))  # fmt: skip
    assert [(m.role, m.content) for m in ex.input_messages] == [("user", "Hi")]
    assert [(m.role, m.content) for m in ex.output_messages] == [("assistant", "Hey")]
    (note,) = ex.notes
    assert note.startswith(f"span {SPAN}: message gen_ai.input.messages[1] left out")
    assert "'narrator'" in note


def test_unknown_role_in_a_message_event_leaves_out_that_event() -> None:
    events = (
        SpanEvent("gen_ai.user.message", 1, {"content": "Hi"}),
        SpanEvent("gen_ai.user.message", 2, {"role": "critic", "content": "meh"}),
        SpanEvent("gen_ai.choice", 3, {"index": 0, "finish_reason": "stop",
                                        "message": {"role": "assistant", "content": "Hey"}}),
    )  # fmt: skip
    ex = genai.extract(make_span({"gen_ai.operation.name": "chat"}, events=events))
    assert [(m.role, m.content) for m in ex.input_messages] == [("user", "Hi")]
    assert [(m.role, m.content) for m in ex.output_messages] == [("assistant", "Hey")]
    (note,) = ex.notes
    assert note.startswith(f"span {SPAN}: event 1 (gen_ai.user.message) left out")
    assert "'critic'" in note


@pytest.mark.parametrize("value", [float("inf"), float("nan"), [1, 2], True, "3.5"])
def test_unusable_token_counts_are_invalid_span_errors(value: object) -> None:
    with pytest.raises(InvalidSpanError, match=r"gen_ai\.usage\.output_tokens"):
        genai.extract(
            make_span({"gen_ai.operation.name": "chat", "gen_ai.usage.output_tokens": value})
        )


def test_non_string_operation_name_is_not_fatal() -> None:
    ex = genai.extract(make_span({"gen_ai.operation.name": ["chat"], "gen_ai.agent.name": "a"}))
    assert ex.kind == "other"


def test_v137_inference_details_event_as_span_event_and_as_log_record() -> None:
    details = {
        "gen_ai.system_instructions": [{"type": "text", "content": "Be brief."}],
        "gen_ai.input.messages": [{"role": "user", "parts": [{"type": "text", "content": "hi"}]}],
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": "hello"}]}]
        ),
    }
    expected_in = (SystemMessage(content="Be brief."), UserMessage(content="hi"))
    expected_out = (AssistantMessage(content="hello"),)
    event = SpanEvent("gen_ai.client.inference.operation.details", 1, details)
    ex = genai.extract(make_span({"gen_ai.operation.name": "chat"}, (event,)))
    assert (ex.input_messages, ex.output_messages) == (expected_in, expected_out)
    record = LogRecord(
        event_name="gen_ai.client.inference.operation.details",
        trace_id=TRACE,
        span_id=SPAN,
        attributes=details,
    )
    ex = genai.extract(make_span({"gen_ai.operation.name": "chat"}), [record])
    assert (ex.input_messages, ex.output_messages) == (expected_in, expected_out)


def test_structured_tool_result_becomes_json_text() -> None:
    span = make_span(
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "t",
            "gen_ai.tool.call.result": {"temp": 12, "sky": ["rain"]},
        }
    )
    tool = genai.extract(span).tool
    assert tool is not None
    assert json.loads(tool.result or "") == {"temp": 12, "sky": ["rain"]}


def test_tool_result_as_text_parts_becomes_their_text() -> None:
    parts = [{"type": "text", "text": "line 1"}, {"type": "text", "text": "line 2"}]
    span = make_span({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.call.result": parts})
    tool = genai.extract(span).tool
    assert tool is not None and tool.result == "line 1\nline 2"
