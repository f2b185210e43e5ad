"""OpenInference convention: flattened messages, span kinds, tools, retrievals, agents."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_eval._trace import (
    AssistantMessage,
    OpaquePart,
    RetrievedDocument,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from agent_eval.errors import InvalidSpanError
from agent_eval.ingest._spans import SpanRecord
from agent_eval.ingest.conventions._openinference import OpenInferenceConvention

oi = OpenInferenceConvention()


def make_span(attrs: dict[str, Any], name: str = "span") -> SpanRecord:
    return SpanRecord(trace_id="1" * 32, span_id="2" * 16, name=name, attributes=attrs)


def test_llm_span_flattened_messages() -> None:
    p = "llm.input_messages"
    attrs = {
        "openinference.span.kind": "LLM",
        f"{p}.0.message.role": "system",
        f"{p}.0.message.content": "Be helpful.",
        f"{p}.1.message.role": "user",
        f"{p}.1.message.contents.0.message_content.type": "text",
        f"{p}.1.message.contents.0.message_content.text": "What is in this picture?",
        f"{p}.1.message.contents.1.message_content.type": "image",
        f"{p}.1.message.contents.1.message_content.image.image.url": "http://x/cat.png",
        f"{p}.2.message.role": "assistant",
        f"{p}.2.message.tool_calls.0.tool_call.id": "call_1",
        f"{p}.2.message.tool_calls.0.tool_call.function.name": "describe",
        f"{p}.2.message.tool_calls.0.tool_call.function.arguments": '{"detail": "high"}',
        f"{p}.2.message.tool_calls.1.tool_call.function.name": "bad",
        f"{p}.2.message.tool_calls.1.tool_call.function.arguments": "{oops",
        f"{p}.10.message.role": "tool",
        f"{p}.10.message.content": "a cat",
        f"{p}.10.message.tool_call_id": "call_1",
        f"{p}.10.message.name": "describe",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": "A cat.",
        "llm.model_name": "gpt-4o-mini",
        "llm.token_count.prompt": 40,
        "llm.token_count.completion": "5",
        "session.id": "sess-9",
    }
    span = make_span(attrs)
    assert oi.detect(span)
    ex = oi.extract(span)
    assert ex.kind == "llm"
    assert ex.input_messages == (
        SystemMessage(content="Be helpful."),
        UserMessage(
            content="What is in this picture?",
            parts=(
                OpaquePart(
                    type="image",
                    data={
                        "message_content.type": "image",
                        "message_content.image.image.url": "http://x/cat.png",
                    },
                ),
            ),
        ),
        AssistantMessage(
            tool_calls=(
                ToolCall(id="call_1", name="describe", arguments={"detail": "high"}),
                ToolCall(name="bad", raw_arguments="{oops"),
            )
        ),
        ToolMessage(content="a cat", tool_call_id="call_1", tool_name="describe"),
    )
    assert ex.output_messages == (AssistantMessage(content="A cat."),)
    assert (ex.model, ex.input_tokens, ex.output_tokens) == ("gpt-4o-mini", 40, 5)
    assert ex.conversation_id == "sess-9"


def test_llm_span_without_flattened_messages_reads_json_input_value() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hey"}]}
    reply = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "hello"}}]}
    ex = oi.extract(
        make_span(
            {
                "openinference.span.kind": "LLM",
                "input.value": json.dumps(body),
                "input.mime_type": "application/json",
                "output.value": json.dumps(reply),
                "output.mime_type": "application/json",
            }
        )
    )
    assert ex.input_messages == (UserMessage(content="hey"),)
    assert ex.output_messages == (AssistantMessage(content="hello"),)


def test_tool_span() -> None:
    ex = oi.extract(
        make_span(
            {
                "openinference.span.kind": "TOOL",
                "tool.name": "lookup",
                "tool.parameters": '{"type": "object"}',
                "tool_call.id": "call_7",
                "input.value": '{"q": "x"}',
                "output.value": "found",
            }
        )
    )
    assert ex.kind == "tool"
    assert ex.tool is not None
    assert (ex.tool.name, ex.tool.call_id, ex.tool.arguments, ex.tool.result) == (
        "lookup",
        "call_7",
        {"q": "x"},
        "found",
    )


def test_langchain_tool_span_output_is_the_tool_message_content() -> None:
    # openinference-instrumentation-langchain dumps the returned ToolMessage as output.value
    message = {
        "type": "tool",
        "data": {
            "content": '{"temp_c": 18}',
            "tool_call_id": "call_9",
            "name": "get_weather",
            "type": "tool",
        },
    }
    attrs = {
        "openinference.span.kind": "TOOL",
        "tool.name": "get_weather",
        "input.value": "Paris",
        "output.value": json.dumps(message),
    }
    ex = oi.extract(make_span(attrs))
    assert ex.tool is not None
    assert (ex.tool.call_id, ex.tool.result) == ("call_9", '{"temp_c": 18}')


def test_retriever_span_documents() -> None:
    d = "retrieval.documents"
    ex = oi.extract(
        make_span(
            {
                "openinference.span.kind": "RETRIEVER",
                "input.value": "refund policy",
                f"{d}.0.document.content": "Refunds within 30 days.",
                f"{d}.0.document.id": "doc-1",
                f"{d}.0.document.score": 0.92,
                f"{d}.0.document.metadata": '{"source": "faq"}',
                f"{d}.1.document.content": "No refunds on sale items.",
            }
        )
    )
    assert ex.kind == "retriever"
    assert ex.retrieval_query == "refund policy"
    assert ex.documents == (
        RetrievedDocument(
            content="Refunds within 30 days.", id="doc-1", score=0.92, metadata={"source": "faq"}
        ),
        RetrievedDocument(content="No refunds on sale items."),
    )


@pytest.mark.parametrize(
    ("attrs", "name", "expected"),
    [
        ({"openinference.span.kind": "AGENT", "agent.name": "planner"}, "x", "planner"),
        ({"openinference.span.kind": "AGENT", "graph.node.name": "router"}, "x", "router"),
        ({"openinference.span.kind": "AGENT"}, "Triage Agent", "Triage Agent"),
        ({"openinference.span.kind": "CHAIN"}, "Triage Agent", None),
    ],
)
def test_agent_names(attrs: dict[str, Any], name: str, expected: str | None) -> None:
    ex = oi.extract(make_span(attrs, name))
    assert ex.agent_name == expected


def test_chain_span_is_empty_with_reason_and_detect() -> None:
    ex = oi.extract(make_span({"openinference.span.kind": "CHAIN", "input.value": "hi"}))
    assert (ex.kind, ex.ignored_reason) == ("chain", "no_genai_content")
    assert not oi.detect(make_span({"gen_ai.operation.name": "chat"}))


def test_bad_token_count_raises_invalid_span() -> None:
    with pytest.raises(InvalidSpanError, match=r"llm\.token_count\.prompt"):
        oi.extract(make_span({"openinference.span.kind": "LLM", "llm.token_count.prompt": "lots"}))


def test_structured_message_list_and_legacy_function_call() -> None:
    # some exporters keep the list as one kvlist/array value instead of indexed keys
    attrs = {
        "openinference.span.kind": "LLM",
        "llm.input_messages": [
            {"message": {"role": "user", "content": "add 2 and 3"}},
            {
                "message": {
                    "role": "assistant",
                    "function_call_name": "add",
                    "function_call_arguments_json": '{"a": 2, "b": 3}',
                }
            },
            {"message": {"role": "function", "name": "add", "content": "5"}},
        ],
    }
    ex = oi.extract(make_span(attrs))
    assert ex.input_messages == (
        UserMessage(content="add 2 and 3"),
        AssistantMessage(tool_calls=(ToolCall(name="add", arguments={"a": 2, "b": 3}),)),
        ToolMessage(content="5", tool_name="add"),
    )
