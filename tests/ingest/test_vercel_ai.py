"""Vercel AI SDK convention."""

from __future__ import annotations

import json
from typing import Any

from agent_eval._trace import AssistantMessage, SystemMessage, ToolCall, ToolMessage, UserMessage
from agent_eval.ingest._spans import SpanRecord
from agent_eval.ingest.conventions._vercel_ai import VercelAIConvention

CONVENTION = VercelAIConvention()


def span(attributes: dict[str, Any], name: str = "ai.generateText.doGenerate") -> SpanRecord:
    return SpanRecord(trace_id="a" * 32, span_id="b" * 16, name=name, attributes=attributes)


def test_provider_call_with_prompt_messages_of_both_sdk_versions() -> None:
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "Weather in SF?"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "reasoning", "text": "need a tool"},
                {
                    "type": "tool-call",
                    "toolCallId": "c1",
                    "toolName": "getWeather",
                    "args": {"location": "SF"},
                },
                {
                    "type": "tool-call",
                    "toolCallId": "c2",
                    "toolName": "getTime",
                    "input": {"tz": "PST"},
                },
            ],
        },
        {
            "role": "tool",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": "c1",
                    "toolName": "getWeather",
                    "result": {"t": 64},
                },
                {
                    "type": "tool-result",
                    "toolCallId": "c2",
                    "toolName": "getTime",
                    "output": {"type": "text", "value": "9am"},
                },
            ],
        },
    ]
    attrs = {
        "ai.operationId": "ai.generateText.doGenerate",
        "ai.prompt.messages": json.dumps(messages),
        "ai.response.text": "64F at 9am.",
        "ai.model.id": "gpt-5",
        "ai.response.model": "gpt-5-2025-08-07",
        "ai.usage.promptTokens": "62",
        "ai.usage.completionTokens": 85,
        "ai.telemetry.metadata.sessionId": "thread-7",
        "ai.telemetry.functionId": "weather-agent",
    }
    ex = CONVENTION.extract(span(attrs))
    assert ex.kind == "llm"
    assert ex.input_messages == (
        SystemMessage(content="Be brief."),
        UserMessage(content="Weather in SF?"),
        AssistantMessage(
            reasoning="need a tool",
            tool_calls=(
                ToolCall(id="c1", name="getWeather", arguments={"location": "SF"}),
                ToolCall(id="c2", name="getTime", arguments={"tz": "PST"}),
            ),
        ),
        ToolMessage(content='{"t":64}', tool_call_id="c1", tool_name="getWeather"),
        ToolMessage(content="9am", tool_call_id="c2", tool_name="getTime"),
    )
    assert ex.output_messages == (AssistantMessage(content="64F at 9am."),)
    assert (ex.model, ex.input_tokens, ex.output_tokens) == ("gpt-5-2025-08-07", 62, 85)
    assert (ex.conversation_id, ex.agent_name) == ("thread-7", "weather-agent")


def test_wrapper_span_is_a_chain_without_usage() -> None:
    attrs = {
        "ai.operationId": "ai.generateText",
        "ai.prompt": json.dumps({"system": "S", "prompt": "What is the weather?"}),
        "ai.response.toolCalls": json.dumps(
            [{"toolCallId": "c1", "toolName": "getWeather", "input": '{"location":"SF"}'}]
        ),
        "ai.usage.promptTokens": 14,
    }
    ex = CONVENTION.extract(span(attrs, name="ai.generateText"))
    assert (ex.kind, ex.input_tokens) == ("chain", None)
    assert ex.input_messages == (
        SystemMessage(content="S"),
        UserMessage(content="What is the weather?"),
    )
    assert ex.output_messages == (
        AssistantMessage(
            tool_calls=(ToolCall(id="c1", name="getWeather", arguments={"location": "SF"}),)
        ),
    )


def test_tool_call_span() -> None:
    attrs = {
        "ai.operationId": "ai.toolCall",
        "ai.toolCall.name": "getWeather",
        "ai.toolCall.id": "c1",
        "ai.toolCall.args": '{"location":"San Francisco"}',
        "ai.toolCall.result": '{"location":"San Francisco","temperature":64}',
    }
    ex = CONVENTION.extract(span(attrs, name="ai.toolCall"))
    assert ex.kind == "tool" and ex.tool is not None
    assert ex.tool.arguments == {"location": "San Francisco"}
    assert ex.tool.result == '{"location":"San Francisco","temperature":64}'
    assert (ex.tool.name, ex.tool.call_id) == ("getWeather", "c1")


def test_detects_only_ai_sdk_spans() -> None:
    assert CONVENTION.detect(span({"ai.operationId": "ai.streamText"}))
    assert not CONVENTION.detect(span({"gen_ai.system": "openai"}))
