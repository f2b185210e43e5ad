"""Google ADK convention."""

from __future__ import annotations

import json
from typing import Any

from agent_eval._trace import AssistantMessage, SystemMessage, ToolCall, ToolMessage, UserMessage
from agent_eval.ingest._spans import SpanRecord
from agent_eval.ingest.conventions._google_adk import GoogleADKConvention

CONVENTION = GoogleADKConvention()
MCP_RESULT = {"content": [{"type": "text", "text": "NAME kagent"}], "isError": False}


def span(attributes: dict[str, Any], name: str = "call_llm") -> SpanRecord:
    return SpanRecord(trace_id="a" * 32, span_id="b" * 16, name=name, attributes=attributes)


def test_llm_request_and_response_json() -> None:
    request = {
        "model": "gpt-4.1-mini",
        "config": {
            "system_instruction": "You are Helm.",
            "labels": {"adk_agent_name": "helm_agent"},
        },
        "contents": [
            {"role": "user", "parts": [{"text": "list all Helm releases"}]},
            {
                "role": "model",
                "parts": [
                    {"function_call": {"id": "c1", "name": "helm_list_releases", "args": {}}}
                ],
            },
            {
                "role": "user",
                "parts": [
                    {
                        "function_response": {
                            "id": "c1",
                            "name": "helm_list_releases",
                            "response": MCP_RESULT,
                        }
                    }
                ],
            },
        ],
    }
    response = {
        "content": {
            "role": "model",
            "parts": [
                {"text": "One release.", "thought": False},
                {"text": "think", "thought": True},
            ],
        },
        "usage_metadata": {"prompt_token_count": 10, "candidates_token_count": 2},
    }
    attrs = {
        "gcp.vertex.agent.llm_request": json.dumps(request),
        "gcp.vertex.agent.llm_response": json.dumps(response),
        "gcp.vertex.agent.session_id": "ctx-1",
    }
    assert CONVENTION.detect(span(attrs))
    ex = CONVENTION.extract(span(attrs))
    assert ex.kind == "llm"
    assert ex.input_messages == (
        SystemMessage(content="You are Helm."),
        UserMessage(content="list all Helm releases"),
        AssistantMessage(tool_calls=(ToolCall(id="c1", name="helm_list_releases", arguments={}),)),
        ToolMessage(content="NAME kagent", tool_call_id="c1", tool_name="helm_list_releases"),
    )
    assert ex.output_messages == (AssistantMessage(content="One release.", reasoning="think"),)
    assert (ex.agent_name, ex.model, ex.conversation_id) == ("helm_agent", "gpt-4.1-mini", "ctx-1")
    assert (ex.input_tokens, ex.output_tokens) == (10, 2)


def test_tool_span_with_wrapped_result() -> None:
    attrs = {
        "gcp.vertex.agent.tool_call_args": json.dumps({"city": "Paris"}),
        "gcp.vertex.agent.tool_response": json.dumps({"result": "rainy"}),
        "gcp.vertex.agent.llm_request": "{}",
        "gen_ai.tool.name": "get_weather",
        "gen_ai.tool.call.id": "c9",
    }
    ex = CONVENTION.extract(span(attrs, name="execute_tool get_weather"))
    assert ex.kind == "tool" and ex.tool is not None
    assert (ex.tool.name, ex.tool.call_id, ex.tool.arguments, ex.tool.result) == (
        "get_weather",
        "c9",
        {"city": "Paris"},
        "rainy",
    )


def test_span_with_only_ids_carries_nothing() -> None:
    ex = CONVENTION.extract(span({"gcp.vertex.agent.event_id": "e1"}, name="generate_content"))
    assert (ex.kind, ex.ignored_reason, ex.is_empty) == ("other", "no_message_content", True)
