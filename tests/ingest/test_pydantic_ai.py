"""pydantic-ai convention: messages form, events form, tool spans."""

from __future__ import annotations

import json
from typing import Any

from agent_eval._trace import AssistantMessage, SystemMessage, ToolCall, ToolMessage, UserMessage
from agent_eval.ingest._spans import SpanRecord
from agent_eval.ingest.conventions._pydantic_ai import PydanticAIConvention

CONVENTION = PydanticAIConvention()


def span(attributes: dict[str, Any], scope: str = "pydantic-ai", name: str = "chat") -> SpanRecord:
    return SpanRecord(
        trace_id="a" * 32, span_id="b" * 16, name=name, attributes=attributes, scope_name=scope
    )


def test_tool_span_reads_tool_arguments_and_tool_response() -> None:
    attrs = {
        "gen_ai.tool.name": "get_pun_suggestion",
        "gen_ai.tool.call.id": "call_X0",
        "tool_arguments": '{"topic": "programming"}',
        "tool_response": "Pun idea: homophones",
    }
    assert CONVENTION.detect(span(attrs, scope=""))
    ex = CONVENTION.extract(span(attrs, name="running tool: get_pun_suggestion"))
    assert ex.kind == "tool" and ex.tool is not None
    assert (ex.tool.name, ex.tool.call_id, ex.tool.arguments, ex.tool.result) == (
        "get_pun_suggestion",
        "call_X0",
        {"topic": "programming"},
        "Pun idea: homophones",
    )


def test_agent_run_transcript_in_the_messages_form() -> None:
    messages = [
        {"role": "user", "parts": [{"type": "text", "content": "Jokes about 'programming'."}]},
        {
            "role": "assistant",
            "parts": [
                {"type": "thinking", "content": "call tools"},
                {"type": "tool_call", "id": "c1", "name": "get_pun", "arguments": {"topic": "p"}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {"type": "tool_call_response", "id": "c1", "name": "get_pun", "result": "pun!"},
                {"type": "text", "content": "Now write it."},
            ],
        },
        {
            "role": "assistant",
            "parts": [
                {"type": "text", "content": "A joke."},
                {"type": "image-url", "url": "http://x/y.png"},
            ],
        },
    ]
    attrs = {
        "pydantic_ai.all_messages": json.dumps(messages),
        "gen_ai.system_instructions": json.dumps([{"type": "text", "content": "Be funny."}]),
        "agent_name": "joke_agent",
        "gen_ai.usage.input_tokens": 682,
    }
    ex = CONVENTION.extract(span(attrs, name="joke_agent run"))
    assert (ex.kind, ex.agent_name, ex.input_tokens) == ("agent", "joke_agent", None)
    system, user, call, result, user2, answer = ex.input_messages
    assert system == SystemMessage(content="Be funny.")
    assert user == UserMessage(content="Jokes about 'programming'.")
    assert call == AssistantMessage(
        reasoning="call tools",
        tool_calls=(ToolCall(id="c1", name="get_pun", arguments={"topic": "p"}),),
    )
    assert result == ToolMessage(content="pun!", tool_call_id="c1", tool_name="get_pun")
    assert user2 == UserMessage(content="Now write it.")
    assert isinstance(answer, AssistantMessage) and answer.content == "A joke."
    assert [p.type for p in answer.parts] == ["image-url"]


def test_chat_span_in_the_events_form() -> None:
    events = [
        {"event.name": "gen_ai.system.message", "role": "system", "content": "Be brief."},
        {"event.name": "gen_ai.user.message", "role": "user", "content": "Add 123 and 456"},
        {
            "event.name": "gen_ai.assistant.message",
            "role": "assistant",
            "tool_calls": [
                {
                    "id": "call_My",
                    "type": "function",
                    "function": {"name": "add", "arguments": {"a": 123, "b": 456}},
                }
            ],
        },
        {
            "event.name": "gen_ai.tool.message",
            "role": "tool",
            "content": "579.0",
            "name": "add",
            "id": "call_My",
        },
        {
            "event.name": "gen_ai.choice",
            "index": 0,
            "message": {"role": "assistant", "content": "123 + 456 equals 579."},
        },
    ]
    attrs = {
        "events": json.dumps(events),
        "gen_ai.request.model": "gpt-4o",
        "gen_ai.usage.input_tokens": 9,
    }
    ex = CONVENTION.extract(span(attrs))
    assert (ex.kind, ex.model, ex.input_tokens) == ("llm", "gpt-4o", 9)
    assert ex.input_messages == (
        SystemMessage(content="Be brief."),
        UserMessage(content="Add 123 and 456"),
        AssistantMessage(
            tool_calls=(ToolCall(id="call_My", name="add", arguments={"a": 123, "b": 456}),)
        ),
        ToolMessage(content="579.0", tool_call_id="call_My", tool_name="add"),
    )
    assert ex.output_messages == (AssistantMessage(content="123 + 456 equals 579."),)


def test_agent_run_in_the_events_form() -> None:
    events = [
        {"event.name": "gen_ai.user.message", "role": "user", "content": "Hello"},
        {"event.name": "gen_ai.choice", "message": {"role": "assistant", "content": "Hi"}},
    ]
    ex = CONVENTION.extract(span({"all_messages_events": json.dumps(events), "agent_name": "a"}))
    assert ex.kind == "agent"
    assert ex.input_messages == (UserMessage(content="Hello"), AssistantMessage(content="Hi"))


def test_scope_span_without_messages_carries_nothing() -> None:
    ex = CONVENTION.extract(span({"logfire.msg": "running 3 tools"}, name="running 3 tools"))
    assert (ex.kind, ex.ignored_reason) == ("other", "no_message_content")
