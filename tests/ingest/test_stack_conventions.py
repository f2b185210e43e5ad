"""The convention fixes of issue 32 on the smallest span that shows each (the recorded stacks
are asserted message for message in ``test_recorded_fixtures.py``)."""

from __future__ import annotations

import json
from typing import Any

from agent_eval._trace import AssistantMessage, ToolMessage
from agent_eval.ingest._spans import SourceLocation, SpanRecord
from agent_eval.ingest.conventions._genai import GenAIConvention
from agent_eval.ingest.conventions._messages import message_from_mapping
from agent_eval.ingest.conventions._openinference import OpenInferenceConvention
from agent_eval.ingest.conventions._text_hints import AUTOGEN_TRACING_HINT, HAYSTACK_CHAIN_HINT


def span(attrs: dict[str, Any], name: str = "chat") -> SpanRecord:
    return SpanRecord(
        trace_id="a" * 32, span_id="1" * 16, parent_span_id=None, name=name,
        start_time_unix_nano=1, end_time_unix_nano=2, attributes=attrs,
        source=SourceLocation("in.json", None),
    )  # fmt: skip


def test_autogen_function_message_is_one_tool_message_per_result() -> None:
    results = [
        {"name": "get_weather", "content": '{"temp": 18}', "call_id": "c1", "is_error": False},
        {"name": "get_weather", "content": '{"temp": 24}', "call_id": "c2", "is_error": False},
    ]
    attrs = {
        "openinference.span.kind": "LLM",
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.content": "Weather in Paris and Rome?",
        "llm.input_messages.1.message.role": "assistant",
        "llm.input_messages.1.message.tool_calls.0.tool_call.id": "c1",
        "llm.input_messages.1.message.tool_calls.0.tool_call.function.name": "get_weather",
        "llm.input_messages.1.message.tool_calls.1.tool_call.id": "c2",
        "llm.input_messages.1.message.tool_calls.1.tool_call.function.name": "get_weather",
        "llm.input_messages.2.message.role": "function",
        "llm.input_messages.2.function.0": json.dumps(results[0]),
        "llm.input_messages.2.function.1": json.dumps(results[1]),
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": "18 and 24.",
    }
    inputs = OpenInferenceConvention().extract(span(attrs)).input_messages
    tools = [m for m in inputs if isinstance(m, ToolMessage)]
    assert [(m.tool_call_id, m.tool_name, m.content) for m in tools] == [
        ("c1", "get_weather", '{"temp": 18}'),
        ("c2", "get_weather", '{"temp": 24}'),
    ]
    assert len(inputs) == 4


def test_assistant_message_name_is_its_agent() -> None:
    attrs = {
        "openinference.span.kind": "LLM",
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.content": "hi",
        "llm.input_messages.1.message.role": "assistant",
        "llm.input_messages.1.message.name": "weather_agent",
        "llm.input_messages.1.message.content": "Paris is sunny.",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.name": "supervisor",
        "llm.output_messages.0.message.content": "It is sunny in Paris.",
    }
    extraction = OpenInferenceConvention().extract(span(attrs))
    assert [m.agent_name for m in extraction.input_messages if isinstance(m, AssistantMessage)] == [
        "weather_agent"
    ]
    (out,) = extraction.output_messages
    assert isinstance(out, AssistantMessage) and out.agent_name == "supervisor"
    openai_shape = {"role": "assistant", "name": "weather_agent", "content": "Paris is sunny."}
    message = message_from_mapping(openai_shape)
    assert isinstance(message, AssistantMessage) and message.agent_name == "weather_agent"
    tool = message_from_mapping({"role": "tool", "name": "get_weather", "content": "x"})
    assert isinstance(tool, ToolMessage) and tool.tool_name == "get_weather"


def test_empty_handoff_arguments_come_from_the_chat_completion_output() -> None:
    completion = {
        "id": "x",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_h",
                            "type": "function",
                            "function": {"name": "transfer_to_booking_agent", "arguments": "{}"},
                        }
                    ],
                },
            }
        ],
    }
    attrs = {
        "openinference.span.kind": "LLM",
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.content": "Book a flight.",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_h",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.name":
            "transfer_to_booking_agent",
        "output.value": json.dumps(completion),
        "output.mime_type": "application/json",
    }  # fmt: skip
    (out,) = OpenInferenceConvention().extract(span(attrs)).output_messages
    assert isinstance(out, AssistantMessage) and out.tool_calls
    (call,) = out.tool_calls
    assert (call.id, call.name, call.arguments) == ("call_h", "transfer_to_booking_agent", {})


def test_autogen_tracing_spans_carry_their_hint() -> None:
    attrs = {"gen_ai.operation.name": "invoke_agent", "gen_ai.system": "autogen",
             "gen_ai.agent.name": "concierge_agent"}  # fmt: skip
    extraction = GenAIConvention().extract(span(attrs, "invoke_agent concierge_agent"))
    assert extraction.text_hint == AUTOGEN_TRACING_HINT
    other = GenAIConvention().extract(span({**attrs, "gen_ai.system": "openai"}))
    assert other.text_hint is None


def test_haystack_chain_spans_carry_their_hint() -> None:
    value = "[ChatMessage(_role=<ChatRole.USER: 'user'>, _content=[TextContent(text='hi')])]"
    attrs = {"openinference.span.kind": "CHAIN", "input.value": value}
    extraction = OpenInferenceConvention().extract(span(attrs, "OpenAIChatGenerator"))
    assert extraction.text_hint == HAYSTACK_CHAIN_HINT


def test_litellm_raw_span_reprs_are_read_as_literals_never_run() -> None:
    from agent_eval.ingest.conventions._litellm import LiteLLMConvention

    messages = [{"role": "user", "content": "hi"}]
    choices = [
        {
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "function": {"name": "f", "arguments": "{}"}, "type": "function"}
                ],
            }
        }
    ]
    attrs = {"llm.openai.messages": repr(messages), "llm.openai.choices": repr(choices),
             "llm.openai.model": "m"}  # fmt: skip
    convention = LiteLLMConvention()
    raw = span(attrs, "raw_gen_ai_request")
    assert convention.detect(raw) and not convention.detect(span(attrs, "other"))
    extraction = convention.extract(raw)
    (out,) = extraction.output_messages
    assert isinstance(out, AssistantMessage) and out.tool_calls
    assert (out.tool_calls[0].id, out.tool_calls[0].arguments) == ("c1", {})
    for bad in ("__import__('os').system('false')", "[" * 5000, "{'a': ", "1" * 10):
        broken = convention.extract(span({"llm.openai.messages": bad}, "raw_gen_ai_request"))
        assert broken.ignored_reason == "no_message_content"


def test_langgraph_agent_is_the_graph_a_call_ran_in_not_its_node() -> None:
    metadata = {"langgraph_node": "agent", "checkpoint_ns": "weather_agent:1f2e",
                "langgraph_checkpoint_ns": "weather_agent:1f2e|agent:9a"}  # fmt: skip
    attrs = {"openinference.span.kind": "LLM", "metadata": json.dumps(metadata),
             "llm.input_messages.0.message.role": "user",
             "llm.input_messages.0.message.content": "hi",
             "llm.output_messages.0.message.role": "assistant",
             "llm.output_messages.0.message.content": "sunny"}  # fmt: skip
    assert OpenInferenceConvention().extract(span(attrs)).agent_name == "weather_agent"
    top = {**attrs, "metadata": json.dumps({"langgraph_node": "agent", "checkpoint_ns": ""})}
    assert OpenInferenceConvention().extract(span(top)).agent_name is None


def test_litellm_parts_messages_keep_their_openai_tool_calls_and_ids() -> None:
    inputs = [
        {"role": "user", "parts": [{"type": "text", "content": "weather?"}]},
        {"role": "assistant", "parts": [{"type": "text", "content": ""}],
         "tool_calls": [{"id": "c1", "type": "function",
                         "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
        {"role": "tool", "parts": [{"type": "text", "content": "sunny"}], "tool_call_id": "c1"},
    ]  # fmt: skip
    outputs = [{"role": "assistant", "parts": [], "finish_reason": "tool_calls"}]
    attrs = {"gen_ai.operation.name": "chat", "gen_ai.input.messages": json.dumps(inputs),
             "gen_ai.output.messages": json.dumps(outputs),
             "gen_ai.completion.0.function_call.name": "get_weather",
             "gen_ai.completion.0.function_call.arguments": '{"city": "Rome"}'}  # fmt: skip
    extraction = GenAIConvention().extract(span(attrs, "litellm_request"))
    _, assistant, tool = extraction.input_messages
    assert isinstance(assistant, AssistantMessage) and assistant.tool_calls
    assert assistant.tool_calls[0].id == "c1"
    assert isinstance(tool, ToolMessage) and tool.tool_call_id == "c1"
    (reply,) = extraction.output_messages
    assert isinstance(reply, AssistantMessage) and reply.tool_calls
    call = reply.tool_calls[0]
    assert (call.name, call.arguments) == ("get_weather", {"city": "Rome"})
