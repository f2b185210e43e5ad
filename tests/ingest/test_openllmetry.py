"""OpenLLMetry / Traceloop convention."""

from __future__ import annotations

import json
from typing import Any

from agent_eval._trace import AssistantMessage, SystemMessage, ToolCall, ToolMessage, UserMessage
from agent_eval.ingest._spans import SpanRecord
from agent_eval.ingest.conventions._openllmetry import OpenLLMetryConvention

CONVENTION = OpenLLMetryConvention()


def span(attributes: dict[str, Any]) -> SpanRecord:
    return SpanRecord(
        trace_id="a" * 32, span_id="b" * 16, name="openai.chat", attributes=attributes
    )


def test_flattened_history_with_tool_calls_and_tool_results() -> None:
    attrs = {
        "gen_ai.prompt.0.role": "system",
        "gen_ai.prompt.0.content": "Be helpful.",
        "gen_ai.prompt.1.role": "user",
        "gen_ai.prompt.1.content": "list all Helm releases",
        "gen_ai.prompt.2.role": "assistant",
        "gen_ai.prompt.2.tool_calls.0.id": "call_1",
        "gen_ai.prompt.2.tool_calls.0.name": "helm_list_releases",
        "gen_ai.prompt.2.tool_calls.0.arguments": '{"namespace": "kagent"}',
        "gen_ai.prompt.3.role": "tool",
        "gen_ai.prompt.3.content": "NAME kagent",
        "gen_ai.prompt.3.tool_call_id": "call_1",
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.content": "One release: kagent.",
        "gen_ai.completion.0.finish_reason": "stop",
        "gen_ai.request.model": "gpt-4.1-mini",
        "gen_ai.response.model": "gpt-4.1-mini-2025-04-14",
        "gen_ai.usage.prompt_tokens": 1956,
        "gen_ai.usage.completion_tokens": 117,
        "traceloop.association.properties.session_id": "s-1",
    }
    assert CONVENTION.detect(span(attrs))
    ex = CONVENTION.extract(span(attrs))
    assert ex.kind == "llm"
    assert ex.input_messages == (
        SystemMessage(content="Be helpful."),
        UserMessage(content="list all Helm releases"),
        AssistantMessage(
            tool_calls=(
                ToolCall(id="call_1", name="helm_list_releases", arguments={"namespace": "kagent"}),
            )
        ),
        ToolMessage(content="NAME kagent", tool_call_id="call_1"),
    )
    assert ex.output_messages == (AssistantMessage(content="One release: kagent."),)
    assert (ex.model, ex.input_tokens, ex.output_tokens) == ("gpt-4.1-mini-2025-04-14", 1956, 117)
    assert ex.conversation_id == "s-1"


def test_completion_tool_calls_and_legacy_function_call_and_bad_arguments() -> None:
    attrs = {
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.tool_calls.0.id": "c1",
        "gen_ai.completion.0.tool_calls.0.name": "search",
        "gen_ai.completion.0.tool_calls.0.arguments": "{not json",
        "gen_ai.completion.1.role": "assistant",
        "gen_ai.completion.1.function_call.name": "lookup",
        "gen_ai.completion.1.function_call.arguments": '{"q": 1}',
    }
    ex = CONVENTION.extract(span(attrs))
    first, second = ex.output_messages
    assert isinstance(first, AssistantMessage) and first.tool_calls == (
        ToolCall(id="c1", name="search", arguments=None, raw_arguments="{not json"),
    )
    assert isinstance(second, AssistantMessage) and second.tool_calls == (
        ToolCall(id=None, name="lookup", arguments={"q": 1}),
    )


def test_parts_json_content_is_read_as_text_and_koog_tool_call_json_as_tool_calls() -> None:
    koog_calls = [
        {
            "function": {"name": "HelloTool", "arguments": '{"name": "Bob"}'},
            "id": "call_n2",
            "type": "function",
        }
    ]
    attrs = {
        "gen_ai.prompt.0.role": "user",
        "gen_ai.prompt.0.content": json.dumps(
            [{"type": "text", "text": "Hi "}, {"type": "text", "text": "there"}]
        ),
        "gen_ai.prompt.1.role": "tool",
        "gen_ai.prompt.1.content": json.dumps(koog_calls),
    }
    user, call = CONVENTION.extract(span(attrs)).input_messages
    assert user == UserMessage(content="Hi there")
    assert call == AssistantMessage(
        tool_calls=(ToolCall(id="call_n2", name="HelloTool", arguments={"name": "Bob"}),)
    )


def test_functions_alone_are_detected_and_reported_as_an_llm_call_without_content() -> None:
    attrs = {"llm.request.functions.0.name": "helm_list_releases", "gen_ai.usage.prompt_tokens": 5}
    ex = CONVENTION.extract(span(attrs))
    assert CONVENTION.detect(span(attrs))
    assert (ex.kind, ex.input_tokens, ex.ignored_reason) == ("llm", 5, "no_message_content")


def test_traceloop_entities_tool_and_agent() -> None:
    tool = {
        "traceloop.span.kind": "tool",
        "traceloop.entity.name": "get_weather",
        "traceloop.entity.input": json.dumps({"args": [], "kwargs": {"city": "Paris"}}),
        "traceloop.entity.output": json.dumps("rainy"),
    }
    ex = CONVENTION.extract(span(tool))
    assert ex.kind == "tool" and ex.tool is not None
    assert (ex.tool.name, ex.tool.arguments, ex.tool.result) == (
        "get_weather",
        {"city": "Paris"},
        '"rainy"',
    )
    agent = CONVENTION.extract(
        span({"traceloop.span.kind": "agent", "traceloop.entity.name": "planner"})
    )
    assert (agent.kind, agent.agent_name) == ("agent", "planner")


def test_gen_ai_prompt_without_index_is_not_openllmetry() -> None:
    assert not CONVENTION.detect(span({"gen_ai.prompt": "[]", "gen_ai.system": "openai"}))


def test_session_id_next_to_genai_messages_gives_the_conversation() -> None:
    attrs = {"traceloop.association.properties.session_id": "s-9", "gen_ai.input.messages": "[]"}
    assert CONVENTION.detect(span(attrs))
    ex = CONVENTION.extract(span(attrs))
    assert (ex.conversation_id, ex.is_empty) == ("s-9", True)
