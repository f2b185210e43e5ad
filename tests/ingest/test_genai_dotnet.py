"""GenAI v1.37 as written by .NET Microsoft.Extensions.AI and Microsoft Agent Framework.

``OpenTelemetryChatClient`` (Microsoft.Extensions.AI 9.x) and Agent Framework write
``gen_ai.input.messages`` / ``gen_ai.output.messages`` with typed parts; the results of parallel
tool calls travel in ONE ``tool`` message holding several ``tool_call_response`` parts, tool-call
arguments are JSON objects (not strings), a response may be any JSON value, and
``FunctionInvokingChatClient`` records ``execute_tool`` spans with ``gen_ai.tool.call.arguments``
/ ``gen_ai.tool.call.result``. The ``genai`` convention must read each of those messages once.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_eval._trace import AssistantMessage, SystemMessage, ToolCall, ToolMessage, UserMessage
from agent_eval.ingest import ingest
from agent_eval.ingest._spans import SpanRecord
from agent_eval.ingest.conventions._genai import GenAIConvention

INPUT = [
    {"role": "system", "parts": [{"type": "text", "content": "You answer weather questions."}]},
    {"role": "user", "parts": [{"type": "text", "content": "Weather in Tokyo and Paris?"}]},
    {
        "role": "assistant",
        "parts": [
            {
                "type": "tool_call",
                "id": "call_1",
                "name": "GetWeather",
                "arguments": {"city": "Tokyo"},
            },
            {
                "type": "tool_call",
                "id": "call_2",
                "name": "GetWeather",
                "arguments": {"city": "Paris"},
            },
        ],
    },
    {
        "role": "tool",
        "parts": [
            {"type": "tool_call_response", "id": "call_1", "response": "Stormy, 23C"},
            {"type": "tool_call_response", "id": "call_2", "response": {"sky": "rain", "c": 14}},
        ],
    },
]
OUTPUT = [
    {
        "role": "assistant",
        "parts": [{"type": "text", "content": "Tokyo stormy, Paris rain."}],
        "finish_reason": "stop",
    }
]


def chat_span(**attributes: Any) -> SpanRecord:
    attrs = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.input.messages": json.dumps(INPUT),
        "gen_ai.output.messages": json.dumps(OUTPUT),
        "gen_ai.usage.input_tokens": 120,
        "gen_ai.usage.output_tokens": 9,
        **attributes,
    }
    return SpanRecord(
        trace_id="c" * 32,
        span_id="d" * 16,
        name="chat gpt-4o-mini",
        kind="CLIENT",
        attributes=attrs,
        scope_name="Experimental.Microsoft.Extensions.AI",
    )


def test_parallel_tool_results_in_one_tool_message_become_one_message_each() -> None:
    ex = GenAIConvention().extract(chat_span())
    assert ex.input_messages == (
        SystemMessage(content="You answer weather questions."),
        UserMessage(content="Weather in Tokyo and Paris?"),
        AssistantMessage(
            tool_calls=(
                ToolCall(id="call_1", name="GetWeather", arguments={"city": "Tokyo"}),
                ToolCall(id="call_2", name="GetWeather", arguments={"city": "Paris"}),
            )
        ),
        ToolMessage(content="Stormy, 23C", tool_call_id="call_1"),
        ToolMessage(content='{"sky":"rain","c":14}', tool_call_id="call_2"),
    )
    assert ex.output_messages == (AssistantMessage(content="Tokyo stormy, Paris rain."),)
    assert (ex.kind, ex.input_tokens, ex.output_tokens) == ("llm", 120, 9)


def test_tool_results_in_a_user_message_are_tool_messages() -> None:
    parts = [
        {"type": "tool_call_response", "id": "call_1", "response": "ok"},
        {"type": "text", "content": "and now?"},
    ]
    span = chat_span(**{"gen_ai.input.messages": json.dumps([{"role": "user", "parts": parts}])})
    assert GenAIConvention().extract(span).input_messages == (
        ToolMessage(content="ok", tool_call_id="call_1"),
        UserMessage(content="and now?"),
    )


def test_agent_framework_conversation_from_dotnet_spans(tmp_path: Path) -> None:
    """invoke_agent > chat + execute_tool + chat, as the Agent Framework nests them."""
    from agent_eval.testing._otlp import export_request, span

    trace = "0af7651916cd43dd8448eb211c80319c"
    first_in = INPUT[:2]
    first_out = [INPUT[2]]
    tool_attrs = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "GetWeather",
        "gen_ai.tool.call.id": "call_1",
        "gen_ai.tool.call.arguments": '{"city":"Tokyo"}',
        "gen_ai.tool.call.result": "Stormy, 23C",
    }
    spans = [
        span(
            trace,
            "a000000000000001",
            "invoke_agent Weather",
            start=1,
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "Weather",
                "gen_ai.conversation.id": "thread-1",
            },
        ),
        span(
            trace,
            "a000000000000002",
            "chat",
            start=2,
            parent_span_id="a000000000000001",
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": json.dumps(first_in),
                "gen_ai.output.messages": json.dumps(first_out),
            },
        ),
        span(
            trace,
            "a000000000000003",
            "execute_tool GetWeather",
            start=3,
            parent_span_id="a000000000000001",
            attributes=tool_attrs,
        ),
        span(
            trace,
            "a000000000000004",
            "chat",
            start=4,
            parent_span_id="a000000000000001",
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": json.dumps(INPUT),
                "gen_ai.output.messages": json.dumps(OUTPUT),
            },
        ),
    ]
    path = tmp_path / "maf.json"
    path.write_text(json.dumps(export_request(spans)))
    (conversation,) = ingest(path).collect()
    assert conversation.conversation_id == "thread-1"
    assert [(m.role, getattr(m, "tool_call_id", None)) for m in conversation.messages] == [
        ("system", None),
        ("user", None),
        ("assistant", None),
        ("tool", "call_1"),
        ("tool", "call_2"),
        ("assistant", None),
    ]
    assert conversation.messages[-1].content == "Tokyo stormy, Paris rain."
    assert {m.agent_name for m in conversation.messages if isinstance(m, AssistantMessage)} == {
        "Weather"
    }


def test_a_json_encoded_string_tool_result_is_read_as_its_text() -> None:
    """Agent Framework (Python) json-dumps string results into ``gen_ai.tool.call.result``."""
    attrs = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "get_weather",
        "gen_ai.tool.call.id": "call_1",
        "gen_ai.tool.call.result": json.dumps("Stormy, 23\u00b0C"),
    }
    span = SpanRecord(trace_id="c" * 32, span_id="d" * 16, name="execute_tool", attributes=attrs)
    tool = GenAIConvention().extract(span).tool
    assert tool is not None and tool.result == "Stormy, 23\u00b0C"
    attrs["gen_ai.tool.call.result"] = '"quoted" and more "text"'
    tool = GenAIConvention().extract(span).tool
    assert tool is not None and tool.result == '"quoted" and more "text"'
